/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The handler threads' private copies of the containers' nodes (serve.c, top). */
#include "serve-internal.h"

/* ---- views and boxes ------------------------------------------------------------------ */

void view_put(struct serve_view *v)
{
	if (v && atomic_fetch_sub(&v->refs, 1) == 1) {
		devwl_policy_free(v->policy);
		free(v);
	}
}

struct devwl_policy *serve_node_copy(const struct devwl_node *node)
{
	static const struct devwl_rule all = {.type = DEVWL_DEV_ALL,
					      .access = DEVWL_ACC_MASK,
					      .major = DEVWL_ANY,
					      .minor = DEVWL_ANY};
	struct devwl_policy *copy = devwl_policy_new();
	struct devwl_node *root = copy ? devwl_policy_find(copy, "/") : NULL;
	bool deny = devwl_node_behavior(node) == DEVWL_BEHAVIOR_DENY;
	size_t n = devwl_node_exception_count(node);

	if (!root || (deny && devwl_node_update(root, DEVWL_FILE_DENY, &all) < 0))
		goto fail;
	for (size_t i = 0; i < n; i++) {
		struct devwl_rule r;

		/* On the root nothing is refused: an allow on DENY, a deny on ALLOW add. */
		if (devwl_node_exception(node, i, &r) < 0 ||
		    devwl_node_update(root, deny ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY, &r) < 0)
			goto fail;
	}
	devwl_node_set_mknod_needs_cap(root, devwl_node_mknod_needs_cap(node));
	return copy;
fail:
	devwl_policy_free(copy);
	return NULL;
}

struct serve_view *view_new(const struct devwl_node *node, uint64_t gen)
{
	struct serve_view *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	atomic_init(&v->refs, 1);
	v->gen = gen;
	v->of = node;
	v->policy = serve_node_copy(node);
	v->node = v->policy ? devwl_policy_find(v->policy, "/") : NULL;
	if (!v->node) {
		view_put(v);
		return NULL;
	}
	return v;
}

void box_put(struct serve_box *b)
{
	if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
		view_put(b->view);
		devwl_nodeset_unref(b->nodeset);
		free(b->id);
		free(b->node_path);
		free(b);
	}
}

/* The container's box with a view of the node it is served with as it is now: its own,
 * or its ceiling while it learns (learning_served()) (loop thread). */
struct serve_box *box_current(struct serve *s, struct container *c)
{
	struct serve_box *b = c->serve;
	const struct devwl_node *served = learning_served(s->d, c);

	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		atomic_init(&b->refs, 1);
		atomic_init(&b->stuck, 0);
		b->id = strdup(c->id);
		b->node_path = strdup(c->node_path);
		b->owner_uid = c->owner_uid;
		b->nodeset = devwl_nodeset_ref(c->nodeset);
		if (!b->id || !b->node_path) {
			box_put(b);
			return NULL;
		}
		c->serve = b;
	}
	if (!b->view || b->view->gen != atomic_load(&s->gen) || b->view->of != served) {
		struct serve_view *v = view_new(served, atomic_load(&s->gen));

		if (!v)
			return NULL;
		view_put(b->view);
		b->view = v;
	}
	return b;
}

void serve_container_gone(struct container *c)
{
	box_put(c->serve);
	c->serve = NULL;
}

/*
 * A change is in force once no thread can receive a call and still decide it by the old
 * hierarchy: wait until every thread serving an fd has looked at the new generation
 * (handlers look before each RECV and end their job on a stale copy), or is about to
 * look (waiting for its fd's next call), or is in a call received before the change (decided as the
 * kernel would an open already past its device check), or was set aside. Microseconds, normally;
 * bounded anyway.
 */
void serve_policy_changed(struct devwld *d)
{
	struct serve *s = d->serve;
	uint64_t gen = 0, bumped = 0;

	if (!s)
		return;
	gen = atomic_fetch_add(&s->gen, 1) + 1;
	bumped = now_ns();
	for (int round = 0; round < 5000; round++) {
		bool waiting = false;

		pthread_mutex_lock(&s->lock);
		for (struct list_head *l = s->workers.next; l != &s->workers && !waiting;
		     l = l->next) {
			struct worker *w = container_of(l, struct worker, link);

			if ((!w->job && !w->nheld) || w->abandoned || atomic_load(&w->waiting) ||
			    atomic_load(&w->seen_gen) >= gen)
				continue;
			if (atomic_load(&w->in_call) && atomic_load(&w->call_start_ns) < bumped)
				continue;
			waiting = true;
		}
		pthread_mutex_unlock(&s->lock);
		if (!waiting)
			return;
		nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
	}
	log_msg("policy change: a handler thread did not take it up within 100 ms");
}
