/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File descriptor plumbing of devwld and the tools (common/fds.c). */
#ifndef DEVWL_FDS_H
#define DEVWL_FDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Set (on) or clear FD_CLOEXEC on fd; fd < 0 is ignored. */
void set_cloexec(int fd, bool on);

/*
 * Take the fds that the SCM_RIGHTS messages of msg (as recvmsg(2) filled it) carry:
 * into fds[*nfds..max), advancing *nfds; any beyond max are closed, so none leaks.
 * Returns how many the message carried (taken or closed).
 */
size_t scm_rights_take(struct msghdr *msg, int *fds, size_t max, size_t *nfds);

/* Control data with room for n fds, aligned as a cmsghdr: the buf scm_rights_put() fills. */
#define SCM_RIGHTS_BUF(n)                                                                          \
	union {                                                                                    \
		char buf[CMSG_SPACE((n) * sizeof(int))];                                           \
		struct cmsghdr align;                                                              \
	}

/* Attach fds[0..n) to msg as one SCM_RIGHTS message in buf (an SCM_RIGHTS_BUF(n) or
 * larger); n == 0 attaches nothing. */
void scm_rights_put(struct msghdr *msg, void *buf, const int *fds, size_t n);

#endif
