/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The loop every reference supervisor shares: blocking RECV, one answer, again. */
#ifndef REF_SUPERVISE_H
#define REF_SUPERVISE_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/seccomp.h>

struct ref_notif {
	int fd; /* the notify fd */
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t resp_size;
};

/* Answer one received notification; SEND/ADDFD failing ENOENT is not an error. */
typedef void (*ref_answer_fn)(struct ref_notif *n);

/*
 * Run argv (after an optional "--") as a workload that installs the reference filter
 * itself and hands us its notify fd (REF_NOTIFY_SOCK_ENV), then answer every notification
 * with fn until the workload exits. Returns the exit status to use.
 */
int ref_supervise(int argc, char **argv, ref_answer_fn fn);

/* Wait in poll() on the notify fd before each RECV, as an event loop does (default off). */
extern int ref_poll_first;

/* SEND with the given error/value/flags for n->req. */
void ref_send(struct ref_notif *n, int error, long long val, unsigned int flags);

/*
 * Copy the NUL-terminated string at addr in pid's memory, a page at a time so an
 * unmapped page behind it does not matter. Returns 0, or -1 (unreadable or too long).
 */
int ref_read_path(pid_t pid, unsigned long long addr, char *buf, size_t size);

/* An O_PATH fd of /proc/PID/root, cached per pid; ID_VALID checked when first opened. */
int ref_root_fd(struct ref_notif *n);

#endif
