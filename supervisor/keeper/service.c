/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwld as a system service: the signals it handles, and what it tells systemd. */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include "fds.h"
#include "keeper_link.h"
#include "log.h"
#include "service.h"
#include "util.h"

void devwld_signals(sigset_t *ret_set)
{
	sigemptyset(ret_set);
	sigaddset(ret_set, SIGHUP);
	sigaddset(ret_set, SIGTERM);
	sigaddset(ret_set, SIGINT);
	sigaddset(ret_set, SIGUSR2);
}

/* One datagram to $NOTIFY_SOCKET, with fd (SCM_RIGHTS) unless it is -1: -ENOTCONN when
 * systemd did not start us. The protocol is sd_notify(3)'s, written here: a socket
 * address and a sendmsg are all of it, not worth a library. */
static int notify_send(const char *msg, size_t n, int fd)
{
	const char *sock = secure_getenv("NOTIFY_SOCKET");
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	SCM_RIGHTS_BUF(1) cmsg;
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = n};
	struct msghdr mh = {.msg_name = &addr, .msg_iov = &iov, .msg_iovlen = 1};
	_cleanup_close_ int s = -1;
	size_t len;

	if (!sock || (sock[0] != '/' && sock[0] != '@') ||
	    (len = strlen(sock)) >= sizeof(addr.sun_path))
		return -ENOTCONN;
	memcpy(addr.sun_path, sock, len);
	if (addr.sun_path[0] == '@')
		addr.sun_path[0] = '\0';
	mh.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	scm_rights_put(&mh, cmsg.buf, &fd, fd >= 0);
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || sendmsg(s, &mh, MSG_NOSIGNAL) < 0) {
		int r = negerrno();

		log_msg("cannot notify systemd at %s: %s", sock, strerror(-r));
		return r;
	}
	return 0;
}

/*
 * Tell systemd (Type=notify) how we are: READY=1 once both sockets exist, STOPPING=1
 * at exit, RELOADING=1 ... READY=1 around a reload (systemd >= 253 waits for that with
 * Type=notify-reload; older ones ignore it). Nothing when not started by systemd.
 */
void service_notify(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return;
	/* A worker: systemd only listens to its main process, the keeper. */
	if (keeper_link_notify(msg))
		return;
	(void)notify_send(msg, (size_t)n, -1);
}

bool service_fdstore(void)
{
	const char *sock = secure_getenv("NOTIFY_SOCKET");

	return sock && (sock[0] == '/' || sock[0] == '@');
}

int service_store_fd(int fd, const char *name, bool poll)
{
	char msg[64 + SERVICE_FDNAME_MAX];
	int n = snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s%s", name,
			 poll ? "" : "\nFDPOLL=0");

	if (n < 0 || (size_t)n >= sizeof(msg))
		return -ENAMETOOLONG;
	return notify_send(msg, (size_t)n, fd);
}

void service_forget_fd(const char *name)
{
	char msg[64 + SERVICE_FDNAME_MAX];
	int n = snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);

	if (n > 0 && (size_t)n < sizeof(msg))
		(void)notify_send(msg, (size_t)n, -1);
}

/* Read once, then gone from the environment: a worker or a successor must not take
 * LISTEN_FDS for its own. */
static const char *take_env(const char *name, char *buf, size_t size)
{
	const char *v = secure_getenv(name);

	if (!v || strlen(v) >= size) {
		unsetenv(name);
		return NULL;
	}
	strcpy(buf, v);
	unsetenv(name);
	return buf;
}

int service_stored_fds(struct stored_fd **ret_fds, size_t *ret_n)
{
	/* A name is at most SERVICE_FDNAME_MAX: FileDescriptorStoreMax= bounds how many. */
	_cleanup_free_ char *names = NULL;
	_cleanup_free_ struct stored_fd *fds = NULL;
	char pid_buf[32], n_buf[32], *next, *end;
	const char *pid_s = take_env("LISTEN_PID", pid_buf, sizeof(pid_buf));
	const char *n_s = take_env("LISTEN_FDS", n_buf, sizeof(n_buf));
	const char *names_s = secure_getenv("LISTEN_FDNAMES");
	unsigned long pid, n;

	if (names_s)
		names = strdup(names_s);
	unsetenv("LISTEN_FDNAMES");
	*ret_fds = NULL;
	*ret_n = 0;
	if (!pid_s || !n_s)
		return 0;
	errno = 0;
	pid = strtoul(pid_s, &end, 10);
	/* For another process (one that passed its environment on to us): not ours. */
	if (errno || *end || pid != (unsigned long)getpid())
		return 0;
	n = strtoul(n_s, &end, 10);
	if (errno || *end || n == 0)
		return 0;
	if (n > SERVICE_STORED_MAX)
		return -E2BIG;
	fds = calloc(n, sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	next = names;
	for (unsigned long i = 0; i < n; i++) {
		const char *name = next ? strsep(&next, ":") : "";

		fds[i].fd = SD_LISTEN_FDS_START + (int)i;
		snprintf(fds[i].name, sizeof(fds[i].name), "%s", name);
		set_cloexec(fds[i].fd, true);
	}
	*ret_fds = TAKE_PTR(fds);
	*ret_n = n;
	return 0;
}
