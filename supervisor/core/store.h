/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The store (store.c): the policy hierarchy, the container table and its processes. */
#ifndef DEVWLD_STORE_H
#define DEVWLD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "devwld.h"
#include "ocistate.h"

/* Read a whole regular file of at most max bytes (NUL-terminated; none inside). */
int read_text(const char *file, size_t max, char **ret_text, size_t *ret_len,
	      struct devwl_error *err);
/* The same from an open fd (file: its name in messages). */
int read_text_fd(int fd, const char *file, size_t max, char **ret_text, size_t *ret_len,
		 struct devwl_error *err);
/* Parse a policy file's text into its hierarchy (ret_policy may be NULL: only checked),
 * its container mapping and its selector bindings (ret_bindings may be NULL): those of
 * the nodes' "rules" first, in the nodes' order, then "selectors". */
int store_parse_text(const char *file, const char *text, struct devwl_policy **ret_policy,
		     struct mapping *ret_mapping, struct bindings *ret_bindings,
		     struct devwl_error *err);
/* A devwlctl change line (edit_is_change()) carried out on the live hierarchy, answered
 * on out; an allow or deny of a selector becomes a binding (follow.c). 0 or -errno. */
int store_change(struct devwld *d, const char *line, size_t len, FILE *out);
int store_load(struct devwld *d);
/* Reload the policy file (SIGHUP, devwlctl reload): everything or nothing; err (may be
 * NULL) says why not, as the log does. */
int store_reload(struct devwld *d, struct devwl_error *err);
/* Read the policy file (logs why not). */
int store_read_policy(struct devwld *d, char **ret_text, size_t *ret_len);
/* Reload from text read from the policy file (taken over): everything or nothing; the
 * devwlctl changes since the last load are applied again on top. */
int store_apply_text(struct devwld *d, char *text, size_t len);
/* Reload the policy file without the devwlctl changes, which are then forgotten. */
int store_reset(struct devwld *d, struct devwl_error *err);
/* Remove a node made on demand, and its made-on-demand ancestors, once unused;
 * true when no node is left at path. */
bool store_forget_node(struct devwld *d, const char *path);
/* The node path for a container, from its annotations/metadata/templates (heap); peer_uid
 * is the uid of the runtime that sent st. */
int store_node_path(struct devwld *d, const struct oci_state *st, uid_t peer_uid, char **ret_path,
		    struct devwl_error *ret_err);
/* Find or create (with ancestors) the node at path. */
int store_ensure_node(struct devwld *d, const char *path, struct devwl_node **ret_node,
		      bool *ret_created);
/*
 * Is c's node its own: one no other container can ever map to, so that a grant on it
 * reaches nobody else? Only when devwld made it for c and it is named for c (its last
 * component is c's id: a template naming {id}, or an attach leaf; or its last three are
 * c's Kubernetes NAMESPACE/POD/CONTAINER, which names one container at a time), and
 * container_attach() refuses every other container that maps to it while c lives. Who
 * else is there now is no part of it (devwld(8) HOT-PLUG).
 */
bool container_owns_node(const struct container *c);
/* The container id of the runtimes of uid owner: each uid has ids of its own. */
struct container *container_find(struct devwld *d, uid_t owner, const char *id);
/* Give c its Kubernetes name NAMESPACE/POD/CONTAINER (taken over; NULL: none): kept for
 * a root runtime's container only, freed for any other owner's. */
void container_set_k8s_name(struct container *c, char *name);
/* Set (taking name, heap or NULL) the runtime's name of c: root's containers only; for
 * another owner's name is freed. */
void container_set_rt_name(struct container *c, char *name);
/* What to do for a container new to devwld before any call of it is served (NULL:
 * nothing): its node made ready for its first process. */
typedef void container_first_fn(struct devwld *d, struct container *c, const struct oci_state *st);
/* Attach a notify fd (taken over) to the container of st, creating it if needed (and
 * calling first on it then). */
int container_attach(struct devwld *d, const struct oci_state *st, int notify_fd, uid_t peer_uid,
		     pid_t peer_pid, container_first_fn *first);
/* c's calls are answered from now on: what it waited for (c->waits) is in force. */
void container_serve(struct devwld *d, struct container *c);
/* Re-attach a process a previous worker served (state.c), to the container id of
 * peer_uid; fd is taken over. */
int container_restore(struct devwld *d, const char *id, const char *node_path, bool created, int fd,
		      pid_t pid, uid_t peer_uid, pid_t peer_pid, uint32_t slot, uint64_t tag);
/* p attached without a pid (crun exec) and a call of it was answered with the credentials
 * of pid: the kernel's word for who it is, kept, logged and given to kernel mode. */
void cproc_pid_known(struct devwld *d, struct cproc *p, pid_t pid);
void cproc_gone(struct devwld *d, struct cproc *p);
/* Forget a container and every process of it (poststop). */
void container_drop(struct devwld *d, struct container *c);
void store_fini(struct devwld *d);

#endif
