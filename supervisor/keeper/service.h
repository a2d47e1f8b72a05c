/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwld as a system service (service.c): its signals, and what it tells systemd. */
#ifndef DEVWLD_SERVICE_H
#define DEVWLD_SERVICE_H

#include <signal.h>

/*
 * The signals devwld reads from a signalfd (devwld(8) SIGNALS). They are blocked from
 * the start of main() on and stay blocked across every exec (keeper to worker, keeper to
 * keeper), so one that arrives before its signalfd exists waits instead of killing.
 */
void devwld_signals(sigset_t *ret_set);

/* A message to $NOTIFY_SOCKET, as sd_notify(3) sends it; a worker's goes through its
 * keeper, the process systemd listens to. */
void service_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
