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

#include "devwld.h"
#include "util.h"

/* How long a planned restart waits for open runtime and devwlctl connections. */
#define HANDOVER_WAIT_MS 2000

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
	const struct cproc *p = container_of(src, struct cproc, src);

	if (src->kind != SOURCE_NOTIFY)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(test_hook.arm); i++)
		if (test_hook.arm[i].from && !strcmp(p->container->id, test_hook.arm[i].id))
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

int loop_arm(struct devwld *d, struct source *src, short events)
{
	struct io_uring_sqe *sqe = NULL;

#ifdef DEVWL_TEST_HOOKS
	if (test_arm_fails(src))
		return -EBUSY;
#endif
	sqe = get_sqe(&d->ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, src->fd, (unsigned)events);
	io_uring_sqe_set_data(sqe, src);
	src->events = events;
	src->armed = true;
	return 0;
}

void loop_fatal(struct devwld *d, const char *what, int err)
{
	log_msg("%s: %s; exiting so that a new worker takes over", what, strerror(-err));
	d->failed = err;
	d->quit = true;
}

/*
 * Ask the ring to cancel src's poll; its completion then frees src. An SQE if there is
 * one (after submitting what is queued), else a synchronous cancel, which needs none; if
 * that fails too, false: the caller retries each round (loop_run), never leaks.
 */
static bool cancel_poll(struct devwld *d, struct source *src, bool first)
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
		sqe = get_sqe(&d->ring);
	if (sqe) {
		io_uring_prep_poll_remove(sqe, (__u64)(uintptr_t)src);
		io_uring_sqe_set_data(sqe, NULL);
		return true;
	}
	/* The poll's own SQE may still be queued: it must reach the kernel first. */
	if (io_uring_submit(&d->ring) < 0 && io_uring_sq_ready(&d->ring) > 0)
		return false;
#ifdef DEVWL_TEST_HOOKS
	if (first && test_hook.no_sqe == 2)
		return false;
#endif
	r = io_uring_register_sync_cancel(&d->ring, &reg);
	/* -ENOENT: it completed meanwhile; that completion frees it. */
	return r >= 0 || r == -ENOENT || r == -EALREADY;
}

void loop_destroy(struct devwld *d, struct source *src)
{
	if (src->fd >= 0 && !src->held) {
		close(src->fd);
		src->fd = -1;
	}
	/* At exit the ring goes away unread: nothing will complete, free at once. */
	if (src->armed && !d->quit) {
		src->dead = true;
		if (!cancel_poll(d, src, true)) {
			log_msg("no io_uring entry to cancel a poll: retrying next round");
			src->cancel_next = d->cancel_later;
			d->cancel_later = src;
			src->cancel_queued = true;
		}
		return;
	}
	src->free_fn(src);
}

/* Retry the cancels loop_destroy could not make; those done leave the list (and those
 * whose poll completed meanwhile are freed here, not by dispatch()). */
static void cancel_retry(struct devwld *d)
{
	struct source **pp = &d->cancel_later;

	while (*pp) {
		struct source *src = *pp;

		if (!src->armed || cancel_poll(d, src, false)) {
			*pp = src->cancel_next;
			src->cancel_queued = false;
			if (!src->armed)
				src->free_fn(src);
		} else {
			pp = &src->cancel_next;
		}
	}
}

static void signal_ready(struct devwld *d, struct source *src, int revents);

int loop_init(struct devwld *d)
{
	sigset_t mask;
	int r;

	/*
	 * DEFER_TASKRUN: completions run only when we enter the ring. Otherwise io_uring
	 * interrupts this thread for its task work (TIF_NOTIFY_SIGNAL), and an interrupted
	 * SECCOMP_IOCTL_NOTIF_ADDFD with FLAG_SEND is restarted, fails EINPROGRESS, and
	 * leaves the target's call returning 0 instead of the fd (seen on 6.18: about one
	 * granted open in ten under load). Older kernels get a plain ring and a warning.
	 */
	r = io_uring_queue_init(512, &d->ring,
				IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	if (r == -EINVAL) {
		log_msg("io_uring without DEFER_TASKRUN (kernel < 6.1): a granted open racing"
			" a completion can return 0 to the container");
		r = io_uring_queue_init(512, &d->ring, 0);
	}
	if (r < 0)
		return r;
	test_hooks_init();
	devwld_signals(&mask);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return negerrno();
	d->signal_src.kind = SOURCE_SIGNAL;
	d->signal_src.ready = signal_ready;
	d->signal_src.fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->signal_src.fd < 0)
		return negerrno();
	return loop_arm(d, &d->signal_src, POLLIN);
}

void loop_fini(struct devwld *d)
{
	while (d->cancel_later) {
		struct source *src = d->cancel_later;

		d->cancel_later = src->cancel_next;
		src->free_fn(src);
	}
	if (d->signal_src.fd >= 0)
		close(d->signal_src.fd);
	d->signal_src.fd = -1;
	io_uring_queue_exit(&d->ring);
}

static void signal_ready(struct devwld *d, struct source *src, int revents)
{
	struct signalfd_siginfo si;
	int r;

	(void)revents;
	while (read(src->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_msg("SIGHUP: reloading %s",
				d->cfg.policy_file ? d->cfg.policy_file : "(no policy file)");
			service_notify("RELOADING=1\nMONOTONIC_USEC=%llu",
				       (unsigned long long)(now_ns() / 1000));
			if (d->loop_hooks.reload)
				d->loop_hooks.reload(d);
			service_notify("READY=1");
		} else if (si.ssi_signo == SIGUSR2) {
			if (handover_begin(d) < 0)
				log_msg("SIGUSR2: no keeper to restart us (devwld(8) RESTART)");
		} else {
			log_msg("signal %d: exiting", (int)si.ssi_signo);
			d->quit = true;
		}
	}
	r = loop_arm(d, src, POLLIN);
	if (r < 0)
		loop_fatal(d, "cannot watch for signals", r);
}

int handover_begin(struct devwld *d)
{
	if (!d->keeper.table)
		return -EOPNOTSUPP;
	if (!d->handover) {
		log_msg("restart: handing over to a new devwld");
		d->handover = true;
		d->handover_deadline = now_ms() + HANDOVER_WAIT_MS;
	}
	return 0;
}

#ifdef DEVWL_TEST_HOOKS
/*
 * Tests only (DEVWLD_TEST_STOP_FILE, built with -DDEVWL_TEST_HOOKS=ON): when that file names the
 * container whose notification was just received, remove it and stop, holding the notification, so
 * a test can kill a worker mid-call: after the keeper's table records the call, or before
 * ("ID unrecorded": the window between RECV and the record).
 */
void loop_test_stop(struct devwld *d, const char *id, bool recorded)
{
	static const char unrecorded[] = " unrecorded";
	char buf[1100];
	size_t n;
	FILE *f = fopen(d->test_stop_file, "re");

	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	while (n && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	if (n > strlen(unrecorded) && !strcmp(buf + n - strlen(unrecorded), unrecorded)) {
		if (recorded)
			return;
		buf[n - strlen(unrecorded)] = '\0';
	} else if (!recorded) {
		return;
	}
	if (strcmp(buf, id))
		return;
	unlink(d->test_stop_file);
	log_msg("test: stopping with a notification of container %s in hand", buf);
	raise(SIGSTOP);
}
#else
void loop_test_stop(struct devwld *d, const char *id, bool recorded)
{
	(void)d, (void)id, (void)recorded;
}
#endif

static void dispatch(struct devwld *d, struct io_uring_cqe *cqe)
{
	struct source *src = io_uring_cqe_get_data(cqe);
	int res = cqe->res;

	if (!src || cqe->user_data == LIBURING_UDATA_TIMEOUT)
		return;
	src->armed = false;
	if (src->dead) {
		if (!src->cancel_queued)
			src->free_fn(src);
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
	src->ready(d, src, res);
}

int loop_run(struct devwld *d)
{
	while (!d->quit) {
		int wait_ms = -1;
		struct __kernel_timespec ts;
		struct io_uring_cqe *cqe = NULL;
		unsigned int head, seen = 0;
		int r;

		for (size_t i = 0; i < ARRAY_SIZE(d->loop_hooks.tick) && d->loop_hooks.tick[i];
		     i++) {
			int ms = d->loop_hooks.tick[i](d, now_ms());

			if (ms >= 0 && (wait_ms < 0 || ms < wait_ms))
				wait_ms = ms;
		}
		/* Wake at least this often for the runtimes' message deadlines. */
		ts = (struct __kernel_timespec){
			.tv_sec = 0,
			.tv_nsec = (wait_ms >= 0 && wait_ms < 250 ? wait_ms : 250) * 1000000L,
		};

		r = io_uring_submit_and_wait_timeout(&d->ring, &cqe, 1, &ts, NULL);
		if (r < 0 && r != -ETIME && r != -EINTR) {
			log_msg("io_uring wait failed: %s", strerror(-r));
			return r;
		}
		io_uring_for_each_cqe(&d->ring, head, cqe)
		{
			dispatch(d, cqe);
			seen++;
		}
		io_uring_cq_advance(&d->ring, seen);
		if (d->cancel_later)
			cancel_retry(d);
		for (size_t i = 0; i < ARRAY_SIZE(d->loop_hooks.after) && d->loop_hooks.after[i];
		     i++)
			d->loop_hooks.after[i](d, now_ms());
		/* A runtime's message half read or a devwlctl batch half answered would be
		 * lost with us: let them finish first, for a bounded time. */
		if (d->handover && ((list_empty(&d->oci_conns) && list_empty(&d->ctl_conns)) ||
				    now_ms() >= d->handover_deadline))
			d->quit = true;
	}
	return d->failed;
}
