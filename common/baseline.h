/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel baseline of devwl-run: a scratch cgroup that denies every device, so that
 * a call devwl answers with CONTINUE is judged by a kernel that grants nothing devwl did
 * not grant itself (see devwl-run(1), "KERNEL BASELINE"); and the device cgroups a
 * process is in, which devwld's and the plugin's kernel mode program.
 */
#ifndef DEVWL_BASELINE_H
#define DEVWL_BASELINE_H

#include <stdbool.h>
#include <sys/types.h>

enum baseline_kind {
	BASELINE_AUTO = 0, /* v1 devices controller if mounted, else cgroup-v2 BPF */
	BASELINE_NONE,
	BASELINE_V1, /* cgroup-v1 devices controller, "a" written to devices.deny */
	BASELINE_V2, /* cgroup-v2 BPF_PROG_TYPE_CGROUP_DEVICE program returning 0 */
};

struct baseline {
	enum baseline_kind kind;     /* BASELINE_V1 or _V2 once created, else _NONE */
	char *dir;		     /* absolute path of the scratch cgroup */
	char *outer;		     /* v1: its parent, devwl-run's own too; else NULL */
	struct devwl_cgroup *cgroup; /* programs dir (baseline_create only) */
	char *report_dir; /* v1 on a hybrid host: the run's cgroup2 cgroup, its reporter's */
};

#define BASELINE_INIT                                                                              \
	{                                                                                          \
		.kind = BASELINE_NONE, .dir = NULL, .cgroup = NULL, .report_dir = NULL             \
	}

/* "auto", "none", "v1", "v2". Returns 0, or -EINVAL. */
int baseline_kind_parse(const char *s, enum baseline_kind *ret_kind);
const char *baseline_kind_name(enum baseline_kind kind);

/*
 * Create the cgroup `name` below the caller's own cgroup of the chosen kind, denying every
 * device. want is AUTO, V1 or V2. A v1 one on a hybrid host gets a cgroup2 one of the same
 * name beside it (report_dir), whose reporter records what the v1 rules decide
 * (devwl_cgroup_set_reporter()); where that cannot be made the baseline is the same,
 * unreported. flags: 0 or DEVWL_CGROUP_RECORD_ACCESSES (the program reports what it
 * allows too). On failure nothing is left behind. Errors: -ENOENT the
 * hierarchy is not mounted, -EPERM/-EACCES/-EROFS not privileged enough, others from
 * mkdir/write/bpf.
 */
int baseline_create(enum baseline_kind want, const char *name, unsigned int flags,
		    struct baseline *ret);

struct devwl_node;
/*
 * Make the baseline enforce the node's allow list in the kernel (devwl_cgroup_apply):
 * the fast mode, where opens need not be trapped. On failure it denies every device
 * again, a baseline as before. Returns what devwl_cgroup_apply returns; -EOPNOTSUPP for
 * a baseline that baseline_create did not make.
 */
int baseline_program(struct baseline *b, const struct devwl_node *node);

/* Move a process into the baseline (and its report_dir: failing that, it goes unreported). */
int baseline_add(const struct baseline *b, pid_t pid);

/*
 * Move the calling process into a cgroup of its own, run-PID, below `name` below its own
 * cgroup: run-PID denies every device; `name` holds no rules, so that whoever programs
 * run-PID later (devwld, for the container the process becomes) may grant there exactly
 * its node, and no run's grants reach another. Nobody stays behind to remove run-PID (the
 * process execs): each call first removes the runs whose processes are all gone.
 * ret->dir names it; free it with free() (do not baseline_destroy it). v1 on a hybrid
 * host: the process also goes into run-PID below `name` on the cgroup2 hierarchy, its
 * alone, where whoever programs run-PID can report what the v1 rules decide (best effort).
 */
int baseline_join_run(enum baseline_kind want, const char *name, struct baseline *ret);

/*
 * Call fn for every cgroup (kind BASELINE_V1) and cgroup2 (BASELINE_V2) mount in
 * /proc/self/mountinfo, with its mount point, its root inside the hierarchy and its super
 * options, until fn returns non-zero. Returns that value, 0 when all were seen, or <0 when
 * mountinfo cannot be read.
 */
typedef int (*baseline_mount_fn)(enum baseline_kind kind, const char *mnt, const char *root,
				 const char *super, void *data);
int baseline_each_mount(baseline_mount_fn fn, void *data);

/*
 * The cgroup of process pid (0: the caller) in the hierarchy of kind (V1: the devices
 * controller's, V2: the cgroup2 one): its path in the hierarchy ("/" at the top, as
 * /proc/PID/cgroup says it) and its directory through the mount this process sees (both
 * heap). Errors: -ENOENT hierarchy not mounted, process not in it, or its cgroup outside
 * what the mount shows; -ESRCH/-EACCES from /proc; -ENOMEM.
 */
int baseline_cgroup_of(enum baseline_kind kind, pid_t pid, char **ret_path, char **ret_dir);

/*
 * A container's own device cgroup, from the cgroup process pid is in: its v1 devices
 * directory if it has one of its own there, else its cgroup2 one. Never the top of a
 * hierarchy, never one at or above the caller's own cgroup (a supervisor never programs
 * the cgroup it runs in: devwld's kernel mode, the plugin's). Returns 0 and the directory
 * (heap); else why (NUL-terminated, at most size) says which rule refused, with -ENOENT
 * (in no device cgroup this process can see) or -EPERM (not its own), or another error
 * of /proc (-ESRCH, -EACCES, -ENOMEM) with why unchanged.
 */
int baseline_container_cgroup(pid_t pid, char **ret_dir, char *why, size_t size);

/*
 * On a hybrid host, the cgroup2 cgroup of process pid, where the reporter of its v1 device
 * cgroup goes (devwl_cgroup_set_reporter()), if it is the workload's own: by the rule of
 * baseline_container_cgroup() (never the top, never at or above the caller's cgroup), and
 * holding nothing but the workload: every process in it and below it is at or below v1,
 * the workload's path in the v1 devices hierarchy. A runtime that ignores the cgroup2
 * hierarchy leaves the workload in its own or the root's, shared: a reporter there would
 * report others' accesses as the workload's. Returns 0 and the directory (heap); else why
 * (NUL-terminated, at most size) with -ENODEV (no cgroup2 mount), -ENOENT (not in it), -EPERM
 * (not its own), or another error of /proc and the cgroup files with why unchanged.
 */
int baseline_container_unified(pid_t pid, const char *v1, char **ret_dir, char *why, size_t size);

/*
 * Where the reporter of the v1 device cgroup of process pid's container goes: its own
 * cgroup2 cgroup, by baseline_container_unified() from pid's v1 devices cgroup. devwld's
 * kernel mode and the plugin's ask it alike. Returns as baseline_container_unified()
 * (-ENODEV: a v1-only host, nothing to report through), or baseline_cgroup_of()'s error.
 */
int baseline_container_reporter(pid_t pid, char **ret_dir, char *why, size_t size);

/* SIGKILL every process in the baseline. Returns how many were still there, or <0. */
int baseline_kill(const struct baseline *b);

/* Remove the cgroup (retrying while the kernel lets go of exited tasks) and free. Safe on
 * an empty struct. Returns 0 or the rmdir error. */
int baseline_destroy(struct baseline *b);

#endif
