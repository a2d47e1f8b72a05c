/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The event loop: one io_uring watching every notify fd, the two sockets, their
 * connections, a signalfd and the handler threads' eventfd, with one-shot POLL_ADDs
 * re-armed after each event. This thread is the ring's only user (SINGLE_ISSUER,
 * DEFER_TASKRUN, below) and never handles a notification itself: a ready notify fd goes
 * to the handler threads (serve.c), and comes back through their eventfd to be re-armed,
 * so a call that blocks costs one handler thread, never the loop.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <time.h>

#include "clock.h"
#include "list.h"
#include "log.h"
#include "notify_loop.h"
#include "service.h"
#include "util.h"

#ifdef DEVWL_TEST_HOOKS
/*
 * Fault injection, compiled only with -DDEVWL_TEST_HOOKS=ON (tests/oci/81-83):
 *   DEVWLD_TEST_FAIL_ARM=ID:N[,ID:N...]  arming a notify fd of container ID fails from
 *                               its N-th arm on (1: at once; 2: after its first call)
 *   DEVWLD_TEST_NO_SQE=destroy  loop_destroy finds no free SQE (the sync cancel serves)
 *   DEVWLD_TEST_NO_SQE=all      ... and the sync cancel fails too (the deferred retry)
 */
static struct {
	struct {
		char id[64];
		unsigned int from, seen;
	} arm[4];
	int no_sqe; /* 1 destroy, 2 all */
} test_hook;

static void test_hooks_init(void)
{
	const char *v = secure_getenv("DEVWLD_TEST_FAIL_ARM");

	for (size_t i = 0; v && *v && i < ARRAY_SIZE(test_hook.arm); i++) {
		size_t len = strcspn(v, ":,");

		if (v[len] != ':' || len >= sizeof(test_hook.arm[i].id))
			break;
		memcpy(test_hook.arm[i].id, v, len);
		test_hook.arm[i].from = (unsigned int)strtoul(v + len + 1, NULL, 10);
		v += len + 1 + strcspn(v + len + 1, ",");
		v += *v == ',';
	}
	v = secure_getenv("DEVWLD_TEST_NO_SQE");
	test_hook.no_sqe = !v ? 0 : !strcmp(v, "all") ? 2 : 1;
}

static bool test_arm_fails(const struct source *src)
{
	if (!src->label)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(test_hook.arm); i++)
		if (test_hook.arm[i].from && !strcmp(src->label, test_hook.arm[i].id))
			return ++test_hook.arm[i].seen >= test_hook.arm[i].from;
	return false;
}
#else
static void test_hooks_init(void)
{
}
#endif

static struct io_uring_sqe *get_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	return sqe;
}

int loop_arm(struct loop *l, struct source *src, short events)
{
	struct io_uring_sqe *sqe = NULL;

#ifdef DEVWL_TEST_HOOKS
	if (test_arm_fails(src))
		return -EBUSY;
#endif
	sqe = get_sqe(&l->ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, src->fd, (unsigned)events);
	io_uring_sqe_set_data(sqe, src);
	src->events = events;
	src->armed = true;
	return 0;
}

void loop_fatal(struct loop *l, const char *what, int err)
{
	log_msg("%s: %s; exiting so that a new worker takes over", what, strerror(-err));
	l->failed = err;
	l->quit = true;
}

/*
 * Ask the ring to cancel src's poll; its completion then frees src. An SQE if there is
 * one (after submitting what is queued), else a synchronous cancel, which needs none; if
 * that fails too, false: the caller retries each round (loop_run), never leaks.
 */
static bool cancel_poll(struct loop *l, struct source *src, bool first)
{
	struct io_uring_sync_cancel_reg reg = {
		.addr = (__u64)(uintptr_t)src,
		.timeout = {.tv_sec = -1, .tv_nsec = -1},
	};
	struct io_uring_sqe *sqe = NULL;
	int r;

	(void)first; /* only the test hooks look at it */
#ifdef DEVWL_TEST_HOOKS
	if (!first || !test_hook.no_sqe)
#endif
		sqe = get_sqe(&l->ring);
	if (sqe) {
		io_uring_prep_poll_remove(sqe, (__u64)(uintptr_t)src);
		io_uring_sqe_set_data(sqe, NULL);
		return true;
	}
	/* The poll's own SQE may still be queued: it must reach the kernel first. */
	if (io_uring_submit(&l->ring) < 0 && io_uring_sq_ready(&l->ring) > 0)
		return false;
#ifdef DEVWL_TEST_HOOKS
	if (first && test_hook.no_sqe == 2)
		return false;
#endif
	r = io_uring_register_sync_cancel(&l->ring, &reg);
	/* -ENOENT: it completed meanwhile; that completion frees it. */
	return r >= 0 || r == -ENOENT || r == -EALREADY;
}

void loop_destroy(struct loop *l, struct source *src)
{
	if (src->fd >= 0 && !src->held) {
		close(src->fd);
		src->fd = -1;
	}
	/* At exit the ring goes away unread: nothing will complete, free at once. */
	if (src->armed && !l->quit) {
		src->dead = true;
		list_add_tail(&src->dying, &l->dying);
		src->cancel_queued = !cancel_poll(l, src, true);
		if (src->cancel_queued)
			log_msg("no io_uring entry to cancel a poll: retrying next round");
		return;
	}
	src->free_fn(src);
}

void loop_release(struct source *src)
{
	list_del(&src->dying);
	src->free_fn(src);
}

/* Retry the cancels loop_destroy could not make (a source whose poll completed
 * meanwhile was freed by dispatch() and is no longer on the list). */
static void cancel_retry(struct loop *l)
{
	for (struct list_head *n = l->dying.next; n != &l->dying; n = n->next) {
		struct source *src = container_of(n, struct source, dying);

		if (src->cancel_queued && cancel_poll(l, src, false))
			src->cancel_queued = false;
	}
}

static void signal_ready(struct devwld *owner, struct source *src, int revents);

int loop_init(struct loop *l, struct devwld *owner, const char *policy_file)
{
	sigset_t mask;
	int r;

	list_init(&l->dying);
	/*
	 * DEFER_TASKRUN: completions run only when we enter the ring. Otherwise io_uring
	 * interrupts this thread for its task work (TIF_NOTIFY_SIGNAL), and an interrupted
	 * SECCOMP_IOCTL_NOTIF_ADDFD with FLAG_SEND is restarted, fails EINPROGRESS, and
	 * leaves the target's call returning 0 instead of the fd (seen on 6.18: about one
	 * granted open in ten under load). Older kernels get a plain ring and a warning.
	 */
	r = io_uring_queue_init(512, &l->ring,
				IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	if (r == -EINVAL) {
		log_msg("io_uring without DEFER_TASKRUN (kernel < 6.1): a granted open racing"
			" a completion can return 0 to the container");
		r = io_uring_queue_init(512, &l->ring, 0);
	}
	if (r < 0)
		return r;
	l->owner = owner;
	l->policy_file = policy_file;
	test_hooks_init();
	devwld_signals(&mask);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return negerrno();
	l->signal_src.ready = signal_ready;
	l->signal_src.fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (l->signal_src.fd < 0)
		return negerrno();
	return loop_arm(l, &l->signal_src, POLLIN);
}

void loop_fini(struct loop *l)
{
	if (!l->dying.next)
		return; /* a start that failed before loop_init(): nothing of the loop exists */
	/* Destroyed in the last rounds, their completions never read: freed here. */
	while (!list_empty(&l->dying))
		loop_release(container_of(l->dying.next, struct source, dying));
	if (l->signal_src.fd >= 0)
		close(l->signal_src.fd);
	l->signal_src.fd = -1;
	io_uring_queue_exit(&l->ring);
}

/* The signal source's hook: its struct source is the loop's own, so the loop is found
 * from it; owner is what the other hooks get. */
static void signal_ready(struct devwld *owner, struct source *src, int revents)
{
	struct loop *l = container_of(src, struct loop, signal_src);
	struct signalfd_siginfo si;
	int r;

	(void)revents;
	while (read(src->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_msg("SIGHUP: reloading %s",
				l->policy_file ? l->policy_file : "(no policy file)");
			service_notify("RELOADING=1\nMONOTONIC_USEC=%llu",
				       (unsigned long long)(now_ns() / 1000));
			if (l->hooks.reload)
				l->hooks.reload(owner);
			service_notify("READY=1");
		} else if (si.ssi_signo == SIGUSR2) {
			if (!l->hooks.restart || l->hooks.restart(owner) < 0)
				log_msg("SIGUSR2: no keeper to restart us (devwld(8) RESTART)");
		} else {
			log_msg("signal %d: exiting", (int)si.ssi_signo);
			l->quit = true;
		}
	}
	r = loop_arm(l, src, POLLIN);
	if (r < 0)
		loop_fatal(l, "cannot watch for signals", r);
}

static void dispatch(struct loop *l, struct io_uring_cqe *cqe)
{
	struct source *src = io_uring_cqe_get_data(cqe);
	int res = cqe->res;

	if (!src || cqe->user_data == LIBURING_UDATA_TIMEOUT)
		return;
	src->armed = false;
	if (src->dead) {
		loop_release(src);
		return;
	}
	if (res < 0) {
		log_msg("poll on fd %d failed: %s", src->fd, strerror(-res));
		res = POLLERR;
	}
	/*
	 * Whoever made the source says what its events mean: the loop is the layer below
	 * everything it watches and calls none of it by name (supervisor/README.md).
	 */
	src->ready(l->owner, src, res);
}

int loop_run(struct loop *l)
{
	while (!l->quit) {
		int wait_ms = -1;
		struct __kernel_timespec ts;
		struct io_uring_cqe *cqe = NULL;
		unsigned int head, seen = 0;
		int r;

		for (size_t i = 0; i < ARRAY_SIZE(l->hooks.tick) && l->hooks.tick[i]; i++) {
			int ms = l->hooks.tick[i](l->owner, now_ms());

			if (ms >= 0 && (wait_ms < 0 || ms < wait_ms))
				wait_ms = ms;
		}
		/* Wake at least this often for the runtimes' message deadlines. */
		ts = (struct __kernel_timespec){
			.tv_sec = 0,
			.tv_nsec = (wait_ms >= 0 && wait_ms < 250 ? wait_ms : 250) * 1000000L,
		};

		r = io_uring_submit_and_wait_timeout(&l->ring, &cqe, 1, &ts, NULL);
		if (r < 0 && r != -ETIME && r != -EINTR) {
			log_msg("io_uring wait failed: %s", strerror(-r));
			return r;
		}
		io_uring_for_each_cqe(&l->ring, head, cqe)
		{
			dispatch(l, cqe);
			seen++;
		}
		io_uring_cq_advance(&l->ring, seen);
		cancel_retry(l);
		for (size_t i = 0; i < ARRAY_SIZE(l->hooks.after) && l->hooks.after[i]; i++)
			l->hooks.after[i](l->owner, now_ms());
	}
	return l->failed;
}

void loop_stop(struct loop *l)
{
	l->quit = true;
}
