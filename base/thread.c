/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <signal.h>

#include "thread.h"

int devwl_thread_start(pthread_t *ret_thread, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int r;

	/* A new thread inherits its creator's mask: block everything for the moment of
	 * creation, so that no signal can land on it before it could block them itself. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(ret_thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -r;
}
