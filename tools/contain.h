/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What keeps devwl-run's command inside its kernel baseline when it runs as root (see
 * devwl-run(1), "CONTAINMENT"): a private mount namespace in which the cgroup hierarchy is
 * read-only, a cgroup namespace rooted at the baseline when that is a cgroup-v2 program,
 * and the capabilities that would undo either, or reach past them, dropped.
 */
#ifndef DEVWL_CONTAIN_H
#define DEVWL_CONTAIN_H

#include <stddef.h>
#include <sys/capability.h>

#include "baseline.h"

/* The capabilities a contained command loses (with any it is told to drop). */
extern const cap_value_t contain_caps[];
extern const size_t contain_n_caps;

/*
 * In the calling process, once it is in the baseline of kind (BASELINE_V1 or _V2) and
 * before it drops capabilities: enter a new mount namespace (slave to the host's, so
 * nothing mounted here leaks out), make every cgroup mount in it read-only, and for a v2
 * baseline enter a new cgroup namespace and replace every cgroup2 mount with a read-only
 * one of that namespace, which shows nothing above the baseline. On failure *ret_step
 * names the step and the process is left half set up: it must not go on to run the
 * command.
 */
int contain_enter(enum baseline_kind kind, const char **ret_step);

/*
 * Refuse file descriptors that would survive exec and reach past the read-only view: a
 * directory (its mount belongs to the namespace it was opened in, whose cgroup hierarchy
 * is writable) or anything on a cgroup file system. Returns 0, or -EBADF with *ret_fd set
 * to the first such descriptor, or another error reading /proc/self/fd.
 */
int contain_check_fds(int *ret_fd);

#endif
