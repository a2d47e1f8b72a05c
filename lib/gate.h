/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The node gate: where a device node may be made for a workload. Every path of libdevwl
 * that makes one (a trapped mknod, devwl_node_place() for hot-plug and its re-push after a
 * replug) asks gate_node_dir() on the very directory fd it then makes the node in, and
 * nowhere else decides it (DESIGN.md, "The node gate").
 */
#ifndef DEVWL_GATE_H
#define DEVWL_GATE_H

#include <stdbool.h>

/* What keeps a node made for the workload from opening more than its grant. */
enum gate_confinement {
	GATE_CONFINED,	 /* a device cgroup (enforced, or a deny baseline) holds every user */
	GATE_UNCONFINED, /* none: the node itself must not open (a nodev mount) */
};

/* gate_node_dir()'s yes: 0 make it (confined); 1 make it: dir is proven nodev. */
#define GATE_NODEV 1

/*
 * May a device node be made in dir for a workload confined as conf? 0 yes, the cgroup
 * confines it; GATE_NODEV yes, the kernel opens no device node in dir, so only devwl can
 * open it (for the caller, as the policy says). -EPERM no (*ret_reason says why); any
 * other -errno: the probe itself failed in dir with the current thread's credentials
 * (the caller's own answer where it acts as the caller). proc: an fd of our /proc.
 */
int gate_node_dir(int proc, int dir, enum gate_confinement conf, const char **ret_reason);

/*
 * Is a twin (a node of devwl's own tmpfs, which the kernel opens: DESIGN.md, "nodev
 * mounts") bound over a node made for a workload? Whoever reaches a twin opens it
 * natively, so only where the caller's device cgroup holds its allow list (enforced); and
 * only for a caller in another user namespace, whose mounts are nodev. Both paths that
 * make a node ask it: the trapped mknod (enforced: devwl_notify_set_enforced()) and
 * devwl_node_place() (enforced: the embedder's DEVWL_PLACE_TWIN).
 */
bool gate_twin(bool enforced, bool other_userns);

#endif
