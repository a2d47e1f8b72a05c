/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Learning a workload's devices: a recorder of the device accesses a workload made while
 * it ran under a ceiling (devwl-run --learn: its node's parent), and the advice drawn from
 * them, the minimal policy that grants exactly those devices, each named by its most
 * stable identity (devwl-run(1), LEARN MODE). Above libdevwl's API and the selectors
 * only, so that devwld can record the workloads it serves the same way.
 *
 * Not thread-safe: one recorder per workload, fed from the thread that handles it.
 */
#ifndef DEVWL_LEARN_H
#define DEVWL_LEARN_H

#include <sys/types.h>

#include "devwl.h"
#include "selector.h"

struct learn;

/* An empty recorder, or NULL when out of memory. */
struct learn *learn_new(void);
void learn_free(struct learn *l);

/* Who made an access, as /proc names it: read while the caller is alive ("?" if not). */
struct learn_program {
	char comm[32];
	char exe[256];
};
/* pid 0: thread tid's process, found in /proc. */
void learn_program_of(pid_t pid, pid_t tid, struct learn_program *ret);

/*
 * Record ev, a notification devwl_notify_handle() decided, made by prog: device accesses
 * (ev->type set) only; the others are no device's and are ignored. The device is named
 * now as well as at the end, since what names some devices can go before the workload
 * does (a loop device it detaches). env may be NULL (the host's roots). 0 or -ENOMEM.
 */
int learn_record(struct learn *l, const struct devwl_event *ev, const struct learn_program *prog,
		 const struct selector_env *env);

/* How many devices were recorded, refused ones included. */
size_t learn_count(const struct learn *l);

/*
 * The advice: a policy file (devwl-policy(5) JSON, NUL-terminated, caller frees) whose
 * node node_path (its missing ancestors made, copies of an allow-all root) denies every
 * device but those the workload was granted under ceiling, one "allow" rule each with
 * the access it asked for, and a "why" entry per rule saying which program touched it
 * and how. A device is named by its identity (loop:FILE, cdi:, usb:, by-id:, /dev/NAME,
 * char-NAME) only where that name resolves now to rules that cover it and that ceiling
 * allows; by its numbers otherwise. A temporary child of ceiling is made and removed to
 * check that. warn (may be NULL) is told of each device the ceiling refused (not in the
 * advice). 0, or -ENOMEM, -EINVAL (node_path invalid), errors of devwl_policy_mkdir().
 */
int learn_advise(const struct learn *l, struct devwl_policy *policy, struct devwl_node *ceiling,
		 const char *node_path, const struct selector_env *env,
		 void (*warn)(void *userdata, const char *msg), void *userdata, char **ret_json);

#endif
