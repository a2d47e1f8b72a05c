/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the listener and the control socket share (sockets.c). */
#ifndef DEVWLD_SOCKETS_H
#define DEVWLD_SOCKETS_H

#include <sys/types.h>

/* A listening unix socket at path with mode; refuses to replace anything but a socket. */
int socket_listen(const char *path, mode_t mode);
int peer_cred(int fd, uid_t *ret_uid, pid_t *ret_pid);
/* One connection waiting on listening socket lfd, with its peer's uid and pid (uid -1,
 * pid 0: unknown, which no check admits): its fd, or a negative errno, -EAGAIN when none
 * is waiting (an error other than "none now" is logged as who's). */
int socket_accept(int lfd, const char *who, uid_t *ret_uid, pid_t *ret_pid);
/* A listening socket's ready hook: unless handing over, accept_some(d) takes a bounded
 * number of connections; then src is watched again, or the loop stops (what: why). */
struct devwld;
struct source;
void socket_ready(struct devwld *d, struct source *src, void (*accept_some)(struct devwld *d),
		  const char *what);

#endif
