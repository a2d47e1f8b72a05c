/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The loop's sources (supervisor/loop/notify_loop.c) are freed once each, whatever the
 * loop's last round saw: one destroyed while its poll is in flight waits for that
 * completion, and the worker may exit before it comes; a handler thread's gives it back
 * later; a cancel the ring takes no entry for is retried.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "notify_loop.h"

static int frees;

static void count_free(struct source *src)
{
	frees++;
	free(src);
}

static void never_ready(struct devwld *d, struct source *src, int revents)
{
	(void)d, (void)src, (void)revents;
	fail_msg("a destroyed source's completion reached its owner");
}

/* The owner the loop hands its hooks is the loop itself here. */
static void stop_after_round(struct devwld *owner, uint64_t now)
{
	(void)now;
	loop_stop((struct loop *)owner);
}

struct fixture {
	struct loop loop;
	int pipe[2];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || pipe(f->pipe) < 0)
		return -1;
	if (loop_init(&f->loop, (struct devwld *)&f->loop, NULL) < 0)
		return -1;
	f->loop.hooks.after[0] = stop_after_round;
	frees = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	close(f->pipe[0]);
	close(f->pipe[1]);
	free(f);
	unsetenv("DEVWLD_TEST_NO_SQE");
	return 0;
}

/* Rounds of the loop until something is freed (the cancel's and the poll's completions
 * may come in different rounds), at most three. */
static void run_until_freed(struct fixture *f)
{
	for (int i = 0; i < 3 && !frees; i++) {
		f->loop.quit = false;
		assert_int_equal(loop_run(&f->loop), 0);
	}
}

/* A source watching the pipe's read end (a copy, which loop_destroy closes), armed. */
static struct source *armed_source(struct fixture *f)
{
	struct source *src = calloc(1, sizeof(*src));

	assert_non_null(src);
	src->fd = dup(f->pipe[0]);
	assert_true(src->fd >= 0);
	src->ready = never_ready;
	src->free_fn = count_free;
	assert_int_equal(loop_arm(&f->loop, src, POLLIN), 0);
	return src;
}

/* Destroyed in the worker's last round: its completion is never read, loop_fini frees it. */
static void test_dead_at_exit(void **state)
{
	struct fixture *f = *state;

	loop_destroy(&f->loop, armed_source(f));
	assert_int_equal(frees, 0);
	loop_stop(&f->loop);
	loop_fini(&f->loop);
	assert_int_equal(frees, 1);
}

/* Destroyed, then a round: the cancelled poll's completion frees it, and only that. */
static void test_dead_then_round(void **state)
{
	struct fixture *f = *state;

	loop_destroy(&f->loop, armed_source(f));
	run_until_freed(f);
	assert_int_equal(frees, 1);
	loop_fini(&f->loop);
	assert_int_equal(frees, 1);
}

/* A handler thread's source (held): destroy leaves its fd and memory to loop_release. */
static void test_held(void **state)
{
	struct fixture *f = *state;
	struct source *src = armed_source(f);
	int fd = src->fd;

	assert_int_equal(loop_run(&f->loop), 0); /* submit the poll: it stays in flight */
	f->loop.quit = false;
	src->held = true;
	loop_destroy(&f->loop, src);
	assert_int_equal(frees, 0);
	assert_int_equal(src->fd, fd);
	close(src->fd);
	src->fd = -1;
	loop_release(src);
	assert_int_equal(frees, 1);
	loop_fini(&f->loop);
	assert_int_equal(frees, 1);
}

/* No entry for the cancel, nor a synchronous one: retried each round, freed once. */
static void test_cancel_retried(void **state)
{
	struct fixture *f = *state;

#ifndef DEVWL_TEST_HOOKS
	skip();
#endif
	/* The hook is read when the loop starts: start it again with the fault. */
	loop_fini(&f->loop);
	setenv("DEVWLD_TEST_NO_SQE", "all", 1);
	assert_int_equal(loop_init(&f->loop, (struct devwld *)&f->loop, NULL), 0);
	f->loop.hooks.after[0] = stop_after_round;
	loop_destroy(&f->loop, armed_source(f));
	assert_int_equal(frees, 0);
	run_until_freed(f);
	assert_int_equal(frees, 1);
	loop_fini(&f->loop);
	assert_int_equal(frees, 1);
}

/* A worker whose start failed before its loop's (an audit file that cannot be opened)
 * still calls loop_fini() on the zeroed loop. */
static void test_fini_never_started(void **state)
{
	struct loop l = {0};

	(void)state;
	loop_fini(&l);
	assert_null(l.dying.next);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dead_at_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_then_round, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_retried, setup, teardown),
		cmocka_unit_test(test_fini_never_started),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
