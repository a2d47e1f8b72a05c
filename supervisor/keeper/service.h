/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwld as a system service (service.c): its signals, and what it tells systemd. */
#ifndef DEVWLD_SERVICE_H
#define DEVWLD_SERVICE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The signals devwld reads from a signalfd (devwld(8) SIGNALS). They are blocked from
 * the start of main() on and stay blocked across every exec (keeper to worker, keeper to
 * keeper), so one that arrives before its signalfd exists waits instead of killing.
 */
void devwld_signals(sigset_t *ret_set);

/* A message to $NOTIFY_SOCKET, as sd_notify(3) sends it; a worker's goes through its
 * keeper, the process systemd listens to. */
void service_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * systemd's file descriptor store (devwld(8) RESTART; the unit's FileDescriptorStoreMax=):
 * fds the service manager holds for us across a stop and start of the service, given
 * back at the next start as LISTEN_FDS. Only the main process, the keeper, uses it.
 */
#define SD_LISTEN_FDS_START 3
/* The longest name devwld gives a stored fd, NUL included. */
#define SERVICE_FDNAME_MAX 64
/* More than this many passed at a start is no store of ours. */
#define SERVICE_STORED_MAX (1u << 20)

struct stored_fd {
	int fd;
	char name[SERVICE_FDNAME_MAX];
};

/* Whether systemd started us with a notify socket, to which fds can be handed. */
bool service_fdstore(void);
/* Hand systemd a duplicate of fd under name (FDSTORE=1, FDNAME=); poll false: systemd
 * does not drop it when it reports POLLHUP (FDPOLL=0). 0 or a negative errno. */
int service_store_fd(int fd, const char *name, bool poll);
/* Drop every fd stored under name (FDSTOREREMOVE=1). */
void service_forget_fd(const char *name);
/* The fds systemd passed at our start (LISTEN_PID our pid, LISTEN_FDS, LISTEN_FDNAMES),
 * close-on-exec now, into a new array the caller frees (the fds are the caller's). The
 * three variables are removed from the environment. None passed: 0 and *ret_n 0. */
int service_stored_fds(struct stored_fd **ret_fds, size_t *ret_n);

#endif
