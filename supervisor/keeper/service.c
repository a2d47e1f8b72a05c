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
#include <unistd.h>

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

/*
 * Tell systemd (Type=notify) how we are: READY=1 once both sockets exist, STOPPING=1
 * at exit, RELOADING=1 ... READY=1 around a reload (systemd >= 253 waits for that with
 * Type=notify-reload; older ones ignore it). Nothing when not started by systemd.
 */
void service_notify(const char *fmt, ...)
{
	const char *sock = secure_getenv("NOTIFY_SOCKET");
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	_cleanup_close_ int fd = -1;
	char msg[512];
	size_t len;
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
	if (!sock || (sock[0] != '/' && sock[0] != '@') ||
	    (len = strlen(sock)) >= sizeof(addr.sun_path))
		return;
	memcpy(addr.sun_path, sock, len);
	if (addr.sun_path[0] == '@')
		addr.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || sendto(fd, msg, (size_t)n, MSG_NOSIGNAL, (struct sockaddr *)&addr,
			     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		log_msg("cannot notify systemd at %s: %m", sock);
}
