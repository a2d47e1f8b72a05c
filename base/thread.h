/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helper threads of the programs (base/thread.c). */
#ifndef DEVWL_THREAD_H
#define DEVWL_THREAD_H

#include <pthread.h>

/*
 * pthread_create(ret_thread, NULL, fn, arg) with every signal blocked in the new thread:
 * a program's signals are for its main loop's signalfd, and the kernel hands a process's
 * signal to any thread that does not block it. The caller's own mask is left as it was.
 * 0, or the negative errno pthread_create failed with (-EAGAIN: no thread to be had).
 */
int devwl_thread_start(pthread_t *ret_thread, void *(*fn)(void *), void *arg);

#endif
