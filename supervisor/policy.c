/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy store and the container table: which node each container uses, nodes
 * created on demand (with their ancestors, inheriting as a new cgroup does), pinned
 * with devwl_node_ref while a container uses them, and the atomic SIGHUP reload.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "devwld.h"
#include "util.h"

/* Debian 12's headers predate 6.6; the flag is passed by value (KERNEL-NOTES). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

int store_load(struct devwld *d)
{
	struct devwl_error err = {0};
	int r;

	if (!d->cfg.policy_file) {
		d->policy = devwl_policy_new();
		return d->policy ? 0 : -ENOMEM;
	}
	r = devwl_policy_load_file(d->cfg.policy_file, &d->policy, &err);
	if (r < 0)
		log_msg("policy %s: %s", d->cfg.policy_file, err.msg[0] ? err.msg : strerror(-r));
	return r;
}

/* An absolute path of non-empty components other than "." and "..", or "/". */
static bool valid_node_path(const char *path)
{
	const char *p = path;

	if (path[0] != '/' || strlen(path) >= 4096)
		return false;
	if (path[1] == '\0')
		return true;
	while (*p == '/') {
		const char *end = strchrnul(p + 1, '/');
		size_t n = (size_t)(end - p - 1);

		if (n == 0 || (n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
			return false;
		p = end;
	}
	return *p == '\0';
}

static bool valid_component(const char *s)
{
	return s && s[0] && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..") && strlen(s) < 256;
}

/* Expand {id} {namespace} {pod} {container} in a template. */
static int expand(const char *tmpl, const struct oci_state *st, char **ret)
{
	static const char *const keys[] = {"{id}", "{namespace}", "{pod}", "{container}"};
	const char *vals[] = {st->id, st->k8s_ns, st->k8s_pod, st->k8s_ctr};
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return -ENOMEM;
	for (const char *p = tmpl; *p;) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(keys); i++)
			if (!strncmp(p, keys[i], strlen(keys[i])))
				break;
		if (i < ARRAY_SIZE(keys)) {
			fputs(vals[i] ? vals[i] : "", f);
			p += strlen(keys[i]);
		} else {
			fputc(*p++, f);
		}
	}
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}

int store_node_path(struct devwld *d, const struct oci_state *st, char **ret_path)
{
	char *path = NULL;
	const char *why;
	int r;

	if (st->anno_node) {
		why = "annotation org.devwl.node";
		path = strdup(st->anno_node);
	} else if (st->metadata && !strncmp(st->metadata, "node=", 5)) {
		why = "listenerMetadata";
		path = strdup(st->metadata + 5);
	} else if (st->k8s_ns || st->k8s_pod || st->k8s_ctr) {
		why = "Kubernetes annotations";
		if (!valid_component(st->k8s_ns) || !valid_component(st->k8s_pod) ||
		    !valid_component(st->k8s_ctr)) {
			log_msg("container %s: incomplete or unusable Kubernetes annotations",
				st->id);
			return -EINVAL;
		}
		r = expand(d->cfg.k8s_template, st, &path);
		if (r < 0)
			return r;
	} else {
		why = "the default template";
		r = expand(d->cfg.default_template, st, &path);
		if (r < 0)
			return r;
	}
	if (!path)
		return -ENOMEM;
	if (!valid_node_path(path)) {
		log_msg("container %s: %s gives \"%s\", not a node path", st->id, why, path);
		free(path);
		return -EINVAL;
	}
	*ret_path = path;
	return 0;
}

static int ensure_node(struct devwl_policy *policy, const char *path, struct devwl_node **ret_node,
		       bool *ret_created)
{
	_cleanup_free_ char *buf = NULL;
	struct devwl_node *node;
	bool created = false;
	int r;

	if (!valid_node_path(path))
		return -EINVAL;
	node = devwl_policy_find(policy, path);
	if (!node) {
		buf = strdup(path);
		if (!buf)
			return -ENOMEM;
		/* Create each missing ancestor in turn, so each inherits from its parent. */
		for (char *slash = buf + 1;; slash++) {
			slash = strchrnul(slash, '/');
			char saved = *slash;

			*slash = '\0';
			if (!devwl_policy_find(policy, buf)) {
				r = devwl_policy_mkdir(policy, buf);
				if (r < 0)
					return r;
			}
			*slash = saved;
			if (!saved)
				break;
		}
		node = devwl_policy_find(policy, path);
		if (!node)
			return -ENOENT;
		created = true;
	}
	*ret_node = node;
	if (ret_created)
		*ret_created = created;
	return 0;
}

int store_ensure_node(struct devwld *d, const char *path, struct devwl_node **ret_node,
		      bool *ret_created)
{
	return ensure_node(d->policy, path, ret_node, ret_created);
}

struct container *container_find(struct devwld *d, const char *id)
{
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		struct container *c = container_of(l, struct container, link);

		if (!strcmp(c->id, id))
			return c;
	}
	return NULL;
}

static void cproc_free(struct source *src)
{
	free(container_of(src, struct cproc, src));
}

static void container_free(struct devwld *d, struct container *c)
{
	list_del(&c->link);
	d->ncontainers--;
	if (c->node)
		devwl_node_unref(c->node);
	if (c->created_node) {
		/* Made for this container only; a node someone else made stays. */
		int r = devwl_policy_rmdir(d->policy, c->node_path);
		if (r < 0 && r != -ENOENT && r != -EBUSY)
			log_msg("container %s: removing node %s: %s", c->id, c->node_path,
				strerror(-r));
	}
	log_msg("container %s: gone (%llu notifications)", c->id,
		(unsigned long long)c->notifications);
	free(c->id);
	free(c->node_path);
	free(c);
}

int container_attach(struct devwld *d, const struct oci_state *st, int notify_fd, uid_t peer_uid,
		     pid_t peer_pid)
{
	_cleanup_close_ int fd = notify_fd;
	struct container *c = container_find(d, st->id);
	struct cproc *p;
	int r;

	if (!c) {
		_cleanup_free_ char *path = NULL;
		struct devwl_node *node = NULL;
		bool created = false;

		r = store_node_path(d, st, &path);
		if (r < 0)
			return r;
		r = store_ensure_node(d, path, &node, &created);
		if (r < 0) {
			log_msg("container %s: node %s: %s", st->id, path, strerror(-r));
			return r;
		}
		c = calloc(1, sizeof(*c));
		if (!c || !(c->id = strdup(st->id))) {
			free(c);
			return -ENOMEM;
		}
		c->node_path = TAKE_PTR(path);
		c->node = node;
		c->created_node = created;
		devwl_node_ref(node);
		list_init(&c->procs);
		list_add_tail(&c->link, &d->containers);
		d->ncontainers++;
		log_msg("container %s: node %s%s", c->id, c->node_path,
			created ? " (created)" : "");
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		if (c->nprocs == 0)
			container_free(d, c);
		return -ENOMEM;
	}
	if (devwl_features() & DEVWL_FEATURE_SYNC_WAKE_UP)
		(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	p->src.kind = SOURCE_NOTIFY;
	p->src.fd = TAKE_FD(fd);
	p->src.free_fn = cproc_free;
	p->container = c;
	p->pid = st->pid;
	p->peer_uid = peer_uid;
	p->peer_pid = peer_pid;
	list_add_tail(&p->link, &c->procs);
	c->nprocs++;
	d->nprocs++;
	loop_arm(d, &p->src, POLLIN);
	log_msg("container %s: process %d attached (%u in all)", c->id, (int)p->pid, c->nprocs);
	return 0;
}

void cproc_gone(struct devwld *d, struct cproc *p)
{
	struct container *c = p->container;

	list_del(&p->link);
	c->nprocs--;
	d->nprocs--;
	loop_destroy(d, &p->src);
	if (c->nprocs == 0)
		container_free(d, c);
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

int store_reload(struct devwld *d)
{
	struct devwl_policy *fresh = NULL;
	struct devwl_error err = {0};
	_cleanup_free_ struct devwl_node **nodes = NULL;
	_cleanup_free_ bool *created = NULL;
	size_t i = 0;
	int r;

	if (!d->cfg.policy_file) {
		log_msg("reload: devwld runs without --policy; nothing to reload");
		return -ENOENT;
	}
	r = devwl_policy_load_file(d->cfg.policy_file, &fresh, &err);
	if (r < 0) {
		log_msg("reload of %s failed, keeping the current policy: %s", d->cfg.policy_file,
			err.msg[0] ? err.msg : strerror(-r));
		return r;
	}
	nodes = calloc(d->ncontainers + 1, sizeof(*nodes));
	created = calloc(d->ncontainers + 1, sizeof(*created));
	if (!nodes || !created) {
		devwl_policy_free(fresh);
		return -ENOMEM;
	}
	/* First find every container's node in the new policy; only then switch, so a
	 * failure leaves everything as it was. */
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next, i++) {
		struct container *c = container_of(l, struct container, link);

		r = ensure_node(fresh, c->node_path, &nodes[i], &created[i]);
		if (r < 0) {
			log_msg("reload of %s failed, keeping the current policy: container %s:"
				" node %s: %s",
				d->cfg.policy_file, c->id, c->node_path, strerror(-r));
			devwl_policy_free(fresh);
			return r;
		}
	}
	i = 0;
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next, i++) {
		struct container *c = container_of(l, struct container, link);

		devwl_node_unref(c->node);
		c->node = nodes[i];
		c->created_node = created[i];
		devwl_node_ref(c->node);
	}
	devwl_policy_free(d->policy);
	d->policy = fresh;
	log_msg("reloaded %s (%zu nodes, %u containers re-pointed)", d->cfg.policy_file,
		devwl_policy_count(fresh), d->ncontainers);
	return 0;
}

void store_fini(struct devwld *d)
{
	while (!list_empty(&d->containers))
		container_drop(d, container_of(d->containers.next, struct container, link));
	devwl_policy_free(d->policy);
	d->policy = NULL;
}
