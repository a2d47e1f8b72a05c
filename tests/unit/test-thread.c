/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helper threads (base/thread.c): every signal blocked in the thread, the caller's mask kept. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "thread.h"

static void *report_mask(void *arg)
{
	pthread_sigmask(SIG_BLOCK, NULL, arg);
	return NULL;
}

static void test_thread_start_blocks_signals(void **state)
{
	static const int sigs[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGCHLD,
				   SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGWINCH};
	sigset_t caller, seen, after;
	pthread_t t;

	(void)state;
	/* A caller blocking one signal only: the thread must still block them all. */
	sigemptyset(&caller);
	sigaddset(&caller, SIGUSR2);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &caller, NULL), 0);
	sigemptyset(&seen);
	assert_int_equal(devwl_thread_start(&t, report_mask, &seen), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		assert_true(sigismember(&seen, sigs[i]));
	assert_true(sigismember(&seen, SIGRTMIN));
	assert_true(sigismember(&seen, SIGRTMAX));
	/* And the caller's own mask is what it was. */
	assert_int_equal(pthread_sigmask(SIG_BLOCK, NULL, &after), 0);
	assert_true(sigismember(&after, SIGUSR2));
	assert_false(sigismember(&after, SIGTERM));
	assert_false(sigismember(&after, SIGUSR1));
	assert_false(sigismember(&after, SIGRTMIN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_start_blocks_signals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
