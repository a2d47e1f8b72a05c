/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Unix sockets devwld listens on (OCI listener, control) and who is on the other end. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "devwld.h"
#include "fileio.h"
#include "log.h"
#include "sockets.h"
#include "util.h"

int peer_cred(int fd, uid_t *ret_uid, pid_t *ret_pid)
{
	struct ucred cred = {0};
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return negerrno();
	*ret_uid = cred.uid;
	*ret_pid = cred.pid;
	return 0;
}

int socket_accept(int lfd, const char *who, uid_t *ret_uid, pid_t *ret_pid)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0) {
		int r = negerrno();

		if (r != -EAGAIN && r != -EINTR && r != -ECONNABORTED)
			log_msg("ERROR: %s: accept: %s", who, strerror(-r));
		return r;
	}
	*ret_uid = (uid_t)-1;
	*ret_pid = 0;
	(void)peer_cred(fd, ret_uid, ret_pid);
	return fd;
}

void socket_ready(struct devwld *d, struct source *src, void (*accept_some)(struct devwld *d),
		  const char *what)
{
	int r;

	/* Handing over: what connects now waits in the backlog for our successor. */
	if (d->handover)
		return;
	accept_some(d);
	r = loop_arm(&d->loop, src, POLLIN);
	if (r < 0)
		loop_fatal(&d->loop, what, r);
}

/*
 * Listen on a Unix socket at path. It is bound under a temporary name and renamed into
 * place once listening, so the path existing means devwld is ready (doc/DESIGN.md §5.2).
 */
int socket_listen(const char *path, mode_t mode)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	_cleanup_close_ int fd = -1;
	char tmp[sizeof(addr.sun_path)];
	struct stat st;
	int r;

	if (snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	r = devwl_mkdir_parents(path);
	if (r < 0)
		return r;
	/* Replace a stale socket from an earlier run, never anything else. */
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negerrno();
	memcpy(addr.sun_path, tmp, strlen(tmp) + 1);
	unlink(tmp);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return negerrno();
	if (chmod(tmp, mode) < 0 || listen(fd, SOMAXCONN) < 0 || rename(tmp, path) < 0) {
		r = negerrno();
		unlink(tmp);
		return r;
	}
	return TAKE_FD(fd);
}
