/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The store (store.c): the container table and its processes; the policy they use is
 * policy.c's. */
#ifndef DEVWLD_STORE_H
#define DEVWLD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "devwld.h"
#include "ocistate.h"

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
/* Drop every container (policy_fini() then frees the policy). */
void store_fini(struct devwld *d);

#endif
