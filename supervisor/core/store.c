/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The container table: each container's processes and notify fds, the node it uses
 * (policy.c finds or makes it), pinned with devwl_node_ref while the container lives.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attachment.h"
#include "devwld.h"
#include "follow.h"
#include "keeper_link.h"
#include "learning.h"
#include "log.h"
#include "policy.h"
#include "rtname.h"
#include "slotrec.h"
#include "store.h"
#include "util.h"

struct container *container_find(struct devwld *d, uid_t owner, const char *id)
{
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		struct container *c = container_of(l, struct container, link);

		if (c->owner_uid == owner && !strcmp(c->id, id))
			return c;
	}
	return NULL;
}

void container_set_rt_name(struct container *c, char *name)
{
	/* As a Kubernetes name: root's runtimes' word alone (and only for them is a file
	 * below the bundle their state names read, rtname_of()). */
	if (c->owner_uid != 0) {
		free(name);
		return;
	}
	free(c->rt_name);
	c->rt_name = name;
}

void container_set_k8s_name(struct container *c, char *name)
{
	/* A Kubernetes name is a kubelet's word, carried by its (root) runtime: a user's
	 * runtime writes the annotations it likes, root's pod names among them, and a name
	 * it claimed would be a name operators' commands reach it by (resolve.c). */
	if (c->owner_uid != 0) {
		free(name);
		return;
	}
	free(c->k8s_name);
	c->k8s_name = name;
}

/* The containers or the hierarchy changed: the state file is to be written again. */
static void changed(struct devwld *d)
{
	if (d->store_hooks.changed)
		d->store_hooks.changed(d);
}

static void cproc_free(struct source *src)
{
	free(container_of(src, struct cproc, src));
}

static void container_free(struct devwld *d, struct container *c)
{
	list_del(&c->link);
	d->ncontainers--;
	if (d->store_hooks.container_gone)
		d->store_hooks.container_gone(c);
	kernelmode_gone(d, c);
	/* Its own node's decisions were its own: a metrics series no container will add to. */
	if (container_owns_node(c))
		tally_forget(&d->audit, c->node_path);
	if (c->node)
		devwl_node_unref(c->node);
	policy_forget_node(d, c->node_path);
	/* What its annotations bound went with its node; if the node stays, not the grant. */
	if (!d->exiting)
		follow_forget_container(d, c->id, c->node_path);
	if (!d->exiting)
		log_msg("container %s: gone (%llu notifications)", c->id,
			(unsigned long long)c->notifications);
	attachments_free(c->attached, c->nattached);
	learning_container_gone(c);
	devwl_nodeset_unref(c->nodeset);
	free(c->k8s_name);
	free(c->rt_name);
	free(c->id);
	free(c->node_path);
	free(c);
}

/* Does path end in the components "/" + name (whole components)? */
static bool ends_in(const char *path, const char *name)
{
	size_t p = strlen(path), n = strlen(name);

	return n && p > n && path[p - n - 1] == '/' && !strcmp(path + p - n, name);
}

bool container_owns_node(const struct container *c)
{
	/* NAMESPACE/POD/CONTAINER names one container at a time, as the Kubernetes
	 * template's /k8s/{namespace}/{pod}/{container} does. */
	return c->created_node && (ends_in(c->node_path, c->id) ||
				   (c->k8s_name && ends_in(c->node_path, c->k8s_name)));
}

/* The live container whose own node is at path (container_owns_node()), or NULL. */
static const struct container *owner_of_node(struct devwld *d, const char *path)
{
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		const struct container *o = container_of(l, struct container, link);

		if (!strcmp(o->node_path, path) && container_owns_node(o))
			return o;
	}
	return NULL;
}

/*
 * The container id of peer_uid's runtimes, made if needed on node_path, or on the node its
 * state maps to. Keyed by uid too: with one namespace of ids, a user of --allow-uid that
 * attached first under the id of a root container-to-be would lock it out, and the other
 * way round.
 */
static int container_get(struct devwld *d, const char *id, const char *node_path, bool created,
			 const struct oci_state *st, uid_t peer_uid, struct container **ret)
{
	_cleanup_free_ char *path = NULL;
	struct devwl_node *node = NULL;
	struct container *c = container_find(d, peer_uid, id);
	const struct container *other = NULL;
	bool made = false;
	int r = 0;

	if (c) {
		*ret = c;
		return 0;
	}
	if (node_path)
		path = strdup(node_path);
	else
		r = policy_node_path(d, st, peer_uid, &path, NULL);
	if (!path)
		return node_path ? -ENOMEM : r;
	other = owner_of_node(d, path);
	if (other) {
		log_msg("container %s: node %s is container %s's own: refused (its grants would "
			"reach this one)",
			id, path, other->id);
		return -EBUSY;
	}
	r = policy_ensure_node(d, path, &node, &made);
	if (r < 0) {
		log_msg("container %s: node %s: %s", id, path, strerror(-r));
		return r;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->id = strdup(id)) || !(c->nodeset = devwl_nodeset_new())) {
		if (c)
			free(c->id);
		free(c);
		return -ENOMEM;
	}
	c->node_path = TAKE_PTR(path);
	c->node = node;
	c->created_node = made || created;
	c->owner_uid = peer_uid;
	/* Only a name to find it by: NULL (restored, or no memory) costs nothing else. */
	if (st)
		container_set_k8s_name(c, mapping_k8s_name(st));
	if (st && peer_uid == 0)
		container_set_rt_name(c, rtname_of(st));
	devwl_node_ref(node);
	list_init(&c->procs);
	list_add_tail(&c->link, &d->containers);
	d->ncontainers++;
	if (!node_path)
		log_msg("container %s: node %s%s", c->id, c->node_path, made ? " (created)" : "");
	*ret = c;
	return 0;
}

/* A process served from now on; on failure fd stays the caller's. */
static int cproc_add(struct devwld *d, struct container *c, int fd, pid_t pid, uid_t peer_uid,
		     pid_t peer_pid, struct cproc **ret)
{
	struct cproc *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	(void)devwl_notify_fd_prepare(fd);
	p->src.ready = d->store_hooks.notify_ready;
	p->src.fd = fd;
	p->src.free_fn = cproc_free;
	p->src.label = c->id;
	p->container = c;
	p->pid = pid;
	p->peer_uid = peer_uid;
	p->peer_pid = peer_pid;
	/* Watched once c is served (container_serve()); its calls wait meanwhile. */
	r = c->waits ? 0 : loop_arm(&d->loop, &p->src, POLLIN);
	if (r < 0) {
		log_msg("container %s pid %d: cannot watch its notify fd (%s); not served, its"
			" calls fail ENOSYS",
			c->id, (int)pid, strerror(-r));
		free(p);
		return r;
	}
	list_add_tail(&p->link, &c->procs);
	c->nprocs++;
	d->nprocs++;
	*ret = p;
	return 0;
}

int container_attach(struct devwld *d, const struct oci_state *st, int notify_fd, uid_t peer_uid,
		     pid_t peer_pid, container_first_fn *first)
{
	_cleanup_close_ int fd = notify_fd;
	struct container *c = NULL;
	struct cproc *p = NULL;
	bool fresh = !container_find(d, peer_uid, st->id);
	uint32_t slot = 0;
	uint64_t tag = 0;
	int r;

	r = container_get(d, st->id, NULL, false, st, peer_uid, &c);
	if (r < 0)
		return r;
	/* Before its fd is served: its first call must already find what first grants. */
	if (fresh && first)
		first(d, c, st);
	/* The keeper holds the fd from now on, and the record of whose it is: a worker
	 * dying after this leaves the process's calls waiting for the next one, which
	 * serves it, whether a state write names it yet or not. */
	if (d->keeper.table) {
		const struct slot_owner owner = {
			.id = c->id,
			.node = c->node_path,
			.created = c->created_node,
			.kernel = kernelmode_asked(d, c, st, peer_uid),
			.pid = st->pid,
			.peer_uid = peer_uid,
			.peer_pid = peer_pid,
		};

		r = keeper_link_add(&d->keeper, fd, &owner, &slot, &tag);
		if (r < 0) {
			log_msg("container %s: cannot hand the notify fd to the keeper: %s", c->id,
				strerror(-r));
			if (c->nprocs == 0)
				container_free(d, c);
			return r;
		}
	}
	r = cproc_add(d, c, fd, st->pid, peer_uid, peer_pid, &p);
	if (r < 0) {
		/* The keeper lets go of its copy too: with ours, the last one goes. */
		if (d->keeper.table)
			keeper_link_del(&d->keeper, slot);
		if (c->nprocs == 0)
			container_free(d, c);
		return r;
	}
	TAKE_FD(fd);
	p->has_slot = d->keeper.table != NULL;
	p->slot = slot;
	p->tag = tag;
	/* crun exec hands over its process without a pid (0): "process 0" named nobody.
	 * The first call answered with the caller's credentials names it (cproc_pid_known);
	 * one the kernel decides, or a CONTINUE that needed none, does not. */
	if (p->pid > 0)
		log_msg("container %s: process %d attached (%u in all)", c->id, (int)p->pid,
			c->nprocs);
	else
		log_msg("container %s: a process attached, pid unknown until a call of it shows"
			" it (its runtime sent none, as crun exec does) (%u in all)",
			c->id, c->nprocs);
	kernelmode_attach(d, c, st, peer_uid);
	/* In the next write (within STATE_INTERVAL_MS); until then a successor after a
	 * crash restores it from the keeper's record. */
	changed(d);
	return 0;
}

void container_serve(struct devwld *d, struct container *c)
{
	struct list_head *pl = c->procs.next;

	c->waits = 0;
	while (pl != &c->procs) {
		struct cproc *p = container_of(pl, struct cproc, link);
		int r = 0;

		/* c goes with its last process: nothing of it is touched after that. */
		pl = pl->next;
		if (!p->src.armed)
			r = loop_arm(&d->loop, &p->src, POLLIN);
		if (r < 0) {
			bool last = c->nprocs == 1;

			log_msg("container %s pid %d: cannot watch its notify fd (%s); not served, "
				"its calls fail ENOSYS",
				c->id, (int)p->pid, strerror(-r));
			cproc_gone(d, p);
			if (last)
				return;
		}
	}
}

int container_restore(struct devwld *d, const char *id, const char *node_path, bool created, int fd,
		      pid_t pid, uid_t peer_uid, pid_t peer_pid, uint32_t slot, uint64_t tag)
{
	struct container *c = NULL;
	struct cproc *p = NULL;
	int r;

	r = container_get(d, id, node_path, created, NULL, peer_uid, &c);
	if (r >= 0)
		r = cproc_add(d, c, fd, pid, peer_uid, peer_pid, &p);
	if (r < 0) {
		/* Not served: every copy of the fd goes, so its calls fail ENOSYS. */
		close(fd);
		keeper_link_del(&d->keeper, slot);
		if (c && c->nprocs == 0)
			container_free(d, c);
		return r;
	}
	p->has_slot = true;
	p->slot = slot;
	p->tag = tag;
	return 0;
}

void cproc_pid_known(struct devwld *d, struct cproc *p, pid_t pid)
{
	if (p->pid > 0 || pid <= 0)
		return;
	p->pid = pid;
	log_msg("container %s: process %d attached (the pid its calls show)", p->container->id,
		(int)pid);
	kernelmode_pid_known(d, p->container, pid);
	changed(d);
}

void cproc_gone(struct devwld *d, struct cproc *p)
{
	struct container *c = p->container;

	list_del(&p->link);
	c->nprocs--;
	d->nprocs--;
	/* At exit the keeper keeps the fd, for the next worker or until it exits too. */
	if (p->has_slot && !d->exiting)
		keeper_link_del(&d->keeper, p->slot);
	loop_destroy(&d->loop, &p->src);
	if (c->nprocs == 0)
		container_free(d, c);
	changed(d);
}

void container_drop(struct devwld *d, struct container *c)
{
	while (!list_empty(&c->procs)) {
		struct cproc *p = container_of(c->procs.next, struct cproc, link);
		bool last = c->nprocs == 1;

		cproc_gone(d, p);
		if (last)
			return;
	}
}

void store_fini(struct devwld *d)
{
	while (!list_empty(&d->containers))
		container_drop(d, container_of(d->containers.next, struct container, link));
	learning_fini(d);
}
