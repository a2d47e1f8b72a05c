/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel mode (kernelmode.c): devwld programs a container's own device cgroup with its
 * node's allow list, so the kernel decides every open at native speed and the container's
 * profile need trap only mknod (devwld(8), KERNEL MODE). The store calls in where a
 * container attaches or goes and where the hierarchy changes; loop thread only.
 */
#ifndef DEVWLD_KERNELMODE_H
#define DEVWLD_KERNELMODE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct devwld;
struct container;
struct oci_state;

/* --kernel-mode: which containers get their device cgroup programmed. */
enum kernel_when {
	KERNEL_AUTO = 0, /* every container of a root runtime; loud where mode=kernel fails */
	KERNEL_ALWAYS,	 /* the same, loud wherever it fails, non-root runtimes included */
	KERNEL_NEVER,
};

/* "auto", "always", "never". 0 or -EINVAL. */
int kernelmode_parse(const char *s, enum kernel_when *ret);

/*
 * A process of c attached (st: what its runtime sent, peer_uid: who sent it). If c is
 * to be in kernel mode and is not yet, find its device cgroup from st->pid and program
 * it. A container that asked for kernel mode and cannot have it is logged loudly: its
 * opens are not trapped, so only its runtime's device rules decide them.
 */
void kernelmode_attach(struct devwld *d, struct container *c, const struct oci_state *st,
		       uid_t peer_uid);
/* Is c to be in kernel mode once this process, sent by a runtime of peer_uid, attaches
 * (the keeper's record says so)? */
bool kernelmode_asked(const struct devwld *d, const struct container *c, const struct oci_state *st,
		      uid_t peer_uid);
/* Does c's device cgroup hold its node's allow list now? */
bool kernelmode_enforced(const struct container *c);
/*
 * Does a deny baseline stand behind c: its runtime's device cgroup, which denies what it
 * was not told to allow (devwld(8), LIMITATIONS)? Only a root runtime's: one of another
 * uid (--allow-uid) programs none devwld trusts. The handlers' baseline and the node
 * gate's confinement of c are this answer.
 */
bool container_has_baseline(const struct container *c);
/* ... and which cgroup that is (its directory's st_dev, st_ino): false where c is not
 * enforced. Loop thread. */
bool kernelmode_cgroup_id(const struct container *c, dev_t *ret_dev, ino_t *ret_ino);
/* Is thread pid in that very cgroup (another run under the same id may not be)? Reads
 * /proc/PID/cgroup, from any thread: callers keep the answer (a contained process cannot
 * move). */
bool kernelmode_holds_id(dev_t dev, ino_t ino, pid_t pid);
/* A container a previous worker had in kernel mode (the state file or the keeper's
 * record): program it again, refused as kernelmode_attach() refuses. */
void kernelmode_restore(struct devwld *d, struct container *c, pid_t pid, uid_t peer_uid);
/* A process of c attached without a pid made a call as pid (the kernel's word): program
 * c's cgroup now if that pid was all it waited for. */
void kernelmode_pid_known(struct devwld *d, struct container *c, pid_t pid);
/* The hierarchy may have changed: every programmed cgroup whose node changed is applied
 * again before this returns, so a revocation reaches running containers at once. */
void kernelmode_policy_changed(struct devwld *d);
/* c is freed: stop reading its denials, close its cgroup handle (what was applied stays
 * until the cgroup goes). */
void kernelmode_gone(struct devwld *d, struct container *c);
/* Did c ask for kernel mode (kept across restarts)? */
bool kernelmode_wanted(const struct container *c);
/* "kernel-v1", "kernel-v2", "unprogrammed" (wanted, not in force) or "authoritative". */
const char *kernelmode_name(const struct container *c);
/* What the metrics show: containers programmed and wanted but not, programs applied
 * since the worker started, the size of what is programmed now (instructions on v2,
 * writes on v1), and the refusals the v2 programs recorded since the worker started,
 * the accesses they allowed and reported. */
struct kernel_counts {
	unsigned int programmed, unprogrammed;
	unsigned int unreported;   /* programmed, whose allowed accesses are not reported */
	unsigned int unreportable; /* v1 on a hybrid host, with no cgroup2 cgroup of its own */
	uint64_t applies, size, denied;
	uint64_t drift_repairs;	   /* cgroups another writer changed, applied again */
	unsigned int foreign;	   /* programmed cgroups with another's program beside ours */
	uint64_t allowed, reports; /* accesses allowed and reported, in how many records */
	uint64_t seen_only_opens;  /* opens trapped though the cgroup decided them */
};
void kernelmode_counts(struct devwld *d, struct kernel_counts *ret);
/* "name value" lines for devwlctl stats. */
void kernelmode_stats(struct devwld *d, FILE *out);
/* Repairs of c's cgroup since the worker started (another writer changed it). */
uint64_t kernelmode_drift_repairs(const struct container *c);
/*
 * The loop's tick: read the programmed cgroups that are due, and where another writer
 * changed one, apply its node again and report it (devwld(8), KERNEL MODE: drift).
 * Returns ms until the next is due.
 */
int kernelmode_tick(struct devwld *d, uint64_t now);

#endif
