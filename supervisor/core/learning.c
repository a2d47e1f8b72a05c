/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Learn mode (learning.h). Whether a node learns is devwld's, not the hierarchy's: the
 * policy file's "learn" (d->mapping.learn) and the devwlctl learn changes (d->edits),
 * both of which a reload and a restart keep. A record is kept for each container that
 * learnt (for devwlctl advise CONTAINER) and for each learning node (advise NODE: every
 * container it served, those gone too), in memory only: a restart starts the records
 * anew (devwld(8), LEARN MODE).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "defaults.h"
#include "devwld.h"
#include "follow.h"
#include "learn.h"
#include "learning.h"
#include "log.h"
#include "resolve.h"
#include "util.h"

/* What path itself says: 1 learn, 0 not, -1 nothing (as its parent). */
static int says(const struct devwld *d, const char *path)
{
	int r = edits_learn(&d->edits, path);

	for (size_t i = 0; r < 0 && i < d->mapping.learn.n; i++)
		if (!strcmp(d->mapping.learn.v[i].path, path))
			r = d->mapping.learn.v[i].on;
	return r;
}

struct devwl_node *learning_node(const struct devwld *d, const struct devwl_node *node)
{
	for (struct devwl_node *n = (struct devwl_node *)node; n; n = devwl_node_parent(n)) {
		int r = says(d, devwl_node_path(n));

		if (r >= 0)
			return r ? n : NULL;
	}
	return NULL;
}

/*
 * The ceilings that are no node of the hierarchy, each in a policy of its own: the root's,
 * the default set (made once); and a top-level node's below a root that allows by default,
 * which nobody wrote (devwld(8), DEFAULT DEVICES): the default set less what the root
 * denies, what a top-level node nobody defined gets (policy.c's top_level_default()), made
 * again when the root's listing changes. Loop thread only.
 */
static struct devwl_policy *defaults, *top;
static char *top_of; /* the root's listing top was made from */

static struct devwl_node *root_ceiling(void)
{
	if (!defaults) {
		struct devwl_policy *p = devwl_policy_new();

		if (!p || devwl_node_set_defaults(devwl_policy_find(p, "/")) < 0) {
			devwl_policy_free(p);
			return NULL;
		}
		defaults = p;
	}
	return devwl_policy_find(defaults, "/");
}

static struct devwl_node *top_ceiling(const struct devwl_node *root)
{
	_cleanup_free_ char *show = NULL;
	struct devwl_policy *p = NULL;
	struct devwl_node *r = NULL;
	size_t n = devwl_node_exception_count(root);

	if (devwl_node_show(root, &show) < 0)
		return NULL;
	if (top && !strcmp(show, top_of))
		return devwl_policy_find(top, "/ceiling");
	p = devwl_policy_new();
	r = p ? devwl_policy_find(p, "/") : NULL;
	for (size_t i = 0; r && i < n; i++) {
		struct devwl_rule rule;

		/* An allow-by-default root's exceptions are its denies. */
		if (devwl_node_exception(root, i, &rule) < 0 ||
		    devwl_node_update(r, DEVWL_FILE_DENY, &rule) < 0)
			r = NULL;
	}
	if (!r || devwl_policy_mkdir(p, "/ceiling") < 0 ||
	    devwl_node_set_defaults(devwl_policy_find(p, "/ceiling")) < 0) {
		devwl_policy_free(p);
		return NULL;
	}
	devwl_policy_free(top);
	free(top_of);
	top = p;
	top_of = TAKE_PTR(show);
	return devwl_policy_find(top, "/ceiling");
}

struct devwl_node *learning_ceiling(struct devwl_node *learner)
{
	struct devwl_node *parent = devwl_node_parent(learner);

	if (!parent)
		return root_ceiling();
	if (!devwl_node_parent(parent) && devwl_node_behavior(parent) == DEVWL_BEHAVIOR_ALLOW)
		return top_ceiling(parent);
	return parent;
}

/* The policy ceiling is a node of (learn_advise() makes a child of it there). */
static struct devwl_policy *ceiling_policy(struct devwld *d, const struct devwl_node *ceiling)
{
	if (defaults && ceiling == devwl_policy_find(defaults, "/"))
		return defaults;
	if (top && ceiling == devwl_policy_find(top, "/ceiling"))
		return top;
	return d->policy;
}

const struct devwl_node *learning_served(const struct devwld *d, const struct container *c)
{
	struct devwl_node *learner = learning_node(d, c->node);
	struct devwl_node *ceiling = learner ? learning_ceiling(learner) : NULL;

	return ceiling ? ceiling : c->node;
}

/* The record of learning node path: found, or made when make. */
static struct learn *node_record(struct devwld *d, const char *path, bool make)
{
	struct learning_rec *rec;

	for (size_t i = 0; i < d->n_learnt; i++)
		if (!strcmp(d->learnt[i].path, path))
			return d->learnt[i].rec;
	if (!make || ARRAY_RESERVE(d->learnt, d->cap_learnt, d->n_learnt + 1) < 0)
		return NULL;
	rec = &d->learnt[d->n_learnt];
	*rec = (struct learning_rec){.path = strdup(path), .rec = learn_new()};
	if (!rec->path || !rec->rec) {
		free(rec->path);
		learn_free(rec->rec);
		return NULL;
	}
	d->n_learnt++;
	return rec->rec;
}

void learning_restart(struct devwld *d, const char *path)
{
	for (size_t i = 0; i < d->n_learnt; i++)
		if (!strcmp(d->learnt[i].path, path)) {
			learn_free(d->learnt[i].rec);
			free(d->learnt[i].path);
			d->learnt[i] = d->learnt[--d->n_learnt];
			return;
		}
}

void learning_record(struct devwld *d, struct container *c, const struct devwl_event *ev,
		     const struct learn_program *prog)
{
	static const char *const no_dirs[1] = {NULL};
	struct devwl_node *learner = learning_node(d, c->node);
	const char *path = learner ? devwl_node_path(learner) : c->learn_path;
	struct selector_env env;
	struct learn *rec;
	int r = 0;

	if (!path || !ev->type)
		return;
	/* What names it is read now, on the loop: sysfs and /dev, never the CDI specs, which
	 * advise reads on a work thread (it names every device again). */
	follow_env(d, &env);
	env.cdi_dirs = no_dirs;
	env.n_cdi_dirs = 0;
	env.cdi = NULL;
	if (!c->learn || (c->learn_path && strcmp(c->learn_path, path))) {
		learn_free(c->learn);
		free(c->learn_path);
		c->learn = learn_new();
		c->learn_path = strdup(path);
		if (!c->learn || !c->learn_path)
			r = -ENOMEM;
	}
	if (r >= 0)
		r = learn_record(c->learn, ev, prog, &env);
	rec = node_record(d, path, true);
	if (r >= 0)
		r = rec ? learn_record(rec, ev, prog, &env) : -ENOMEM;
	if (r < 0)
		log_msg("container %s: learning on %s: %s", c->id, path, strerror(-r));
}

static void warn_advice(void *userdata, const char *msg)
{
	log_msg("advise %s: %s", (const char *)userdata, msg);
}

int learning_advise(struct devwld *d, uid_t owner, const char *name, FILE *out,
		    struct devwl_error *err)
{
	const struct learn *rec = NULL;
	const char *path = name;
	struct devwl_node *node, *ceiling;
	_cleanup_free_ char *json = NULL;
	struct selector_env env;
	int r;

	if (name[0] != '/') {
		struct container *c = NULL;

		r = resolve_owned_container(d, owner, name, &c, err);
		if (r < 0)
			return r;
		if (!c->learn)
			return devwl_error_set(err, -ENOENT, 0,
					       "container %s has learnt nothing: its node %s does "
					       "not learn (devwlctl learn NODE on)",
					       c->id, c->node_path);
		rec = c->learn;
		path = c->learn_path;
	} else {
		rec = node_record(d, path, false);
		if (!rec)
			return devwl_error_set(err, -ENOENT, 0,
					       "node %s has learnt nothing yet (devwlctl learn %s "
					       "on, then run its containers)",
					       path, path);
	}
	node = devwl_policy_find(d->policy, path);
	if (!node)
		return devwl_error_set(err, -ENOENT, 0, "no node %s (it learnt, and is gone)",
				       path);
	ceiling = learning_ceiling(node);
	if (!ceiling)
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	follow_env(d, &env);
	r = learn_advise(rec, ceiling_policy(d, ceiling), ceiling, path, &env, warn_advice,
			 (void *)name, &json);
	if (r < 0)
		return devwl_error_set(err, r, 0, "advise %s: %s", name, strerror(-r));
	fputs(json, out);
	return 0;
}

void learning_container_gone(struct container *c)
{
	learn_free(c->learn);
	free(c->learn_path);
	c->learn = NULL;
	c->learn_path = NULL;
}

void learning_fini(struct devwld *d)
{
	for (size_t i = 0; i < d->n_learnt; i++) {
		learn_free(d->learnt[i].rec);
		free(d->learnt[i].path);
	}
	free(d->learnt);
	d->learnt = NULL;
	d->n_learnt = d->cap_learnt = 0;
	devwl_policy_free(defaults);
	devwl_policy_free(top);
	free(top_of);
	defaults = top = NULL;
	top_of = NULL;
}
