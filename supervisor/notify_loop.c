/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The event loop: one io_uring watching every notify fd, the two sockets, their
 * connections and a signalfd, with one-shot POLL_ADDs re-armed after each event.
 *
 * The hot path is shaped by one measurement (KERNEL-NOTES): SYNC_WAKE_UP only pays
 * when the supervisor sleeps on the notify fd's own wait queue; waiting in io_uring
 * loses half of it. So after answering a notification we look at the same fd again
 * with poll() and handle the next one at once, at most cfg.burst in a row, before
 * going back to the ring: a busy container stays off the ring, and no container gets
 * more than a bounded amount of work per round. The look is non-blocking by default:
 * measured here (open-loop under devwl-run --connect, 2 vCPUs, noisy), waiting on the
 * fd (--spin-us 20..200) gave no steady gain over it (CONTINUE 6-10 µs either way,
 * injected opens 20-40 µs) and costs an idle wait at the end of every burst, while
 * DEFER_TASKRUN (below) already brought the ring's own wait path to ~6 µs.
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

/* A notification that keeps failing for a reason other than a vanished target would
 * re-fire forever: drop that process after this many failures in a row. */
#define MAX_CONSECUTIVE_ERRORS 64
/* How long a planned restart waits for open runtime and devwlctl connections. */
#define HANDOVER_WAIT_MS 2000

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
	struct io_uring_sqe *sqe = get_sqe(&d->ring);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, src->fd, (unsigned)events);
	io_uring_sqe_set_data(sqe, src);
	src->events = events;
	src->armed = true;
	return 0;
}

void loop_destroy(struct devwld *d, struct source *src)
{
	if (src->fd >= 0) {
		close(src->fd);
		src->fd = -1;
	}
	/* At exit the ring goes away unread: nothing will complete, free at once. */
	if (src->armed && !d->quit) {
		struct io_uring_sqe *sqe = get_sqe(&d->ring);

		src->dead = true;
		if (sqe) {
			io_uring_prep_poll_remove(sqe, (__u64)(uintptr_t)src);
			io_uring_sqe_set_data(sqe, NULL);
		}
		return;
	}
	src->free_fn(src);
}

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
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return negerrno();
	d->signal_src.kind = SOURCE_SIGNAL;
	d->signal_src.fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->signal_src.fd < 0)
		return negerrno();
	return loop_arm(d, &d->signal_src, POLLIN);
}

void loop_fini(struct devwld *d)
{
	if (d->signal_src.fd >= 0)
		close(d->signal_src.fd);
	d->signal_src.fd = -1;
	io_uring_queue_exit(&d->ring);
}

static void signal_ready(struct devwld *d)
{
	struct signalfd_siginfo si;

	while (read(d->signal_src.fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			struct timespec ts = {0};

			log_msg("SIGHUP: reloading %s",
				d->cfg.policy_file ? d->cfg.policy_file : "(no policy file)");
			clock_gettime(CLOCK_MONOTONIC, &ts);
			service_notify("RELOADING=1\nMONOTONIC_USEC=%llu",
				       (unsigned long long)ts.tv_sec * 1000000ULL +
					       (unsigned long long)ts.tv_nsec / 1000);
			store_reload(d);
			service_notify("READY=1");
		} else if (si.ssi_signo == SIGUSR2) {
			if (handover_begin(d) < 0)
				log_msg("SIGUSR2: no keeper to restart us (devwld(8) RESTART)");
		} else {
			log_msg("signal %d: exiting", (int)si.ssi_signo);
			d->quit = true;
		}
	}
	loop_arm(d, &d->signal_src, POLLIN);
}

/* Is another notification pending on fd? Waits up to spin_us on the fd itself. */
static bool next_pending(int fd, unsigned int spin_us)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)spin_us * 1000};

	if (ppoll(&pfd, 1, &ts, NULL) <= 0)
		return false;
	return (pfd.revents & (POLLIN | POLLHUP | POLLERR)) == POLLIN;
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
static void test_stop(struct devwld *d, const struct cproc *p, bool recorded)
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
	if (strcmp(buf, p->container->id))
		return;
	unlink(d->test_stop_file);
	log_msg("test: stopping with a notification of container %s in hand", buf);
	raise(SIGSTOP);
}
#else
static inline void test_stop(struct devwld *d, const struct cproc *p, bool recorded)
{
	(void)d, (void)p, (void)recorded;
}
#endif

/* Called by the library between receiving a notification and answering it. */
void loop_on_recv(int notify_fd, uint64_t id, void *userdata)
{
	struct devwld *d = userdata;
	struct cproc *p = d->current;

	(void)notify_fd;
	if (!p)
		return;
	if (d->test_stop_file)
		test_stop(d, p, false);
	if (p->has_slot && d->keeper.table)
		keeper_link_inflight(d, p->slot, id);
	if (d->test_stop_file)
		test_stop(d, p, true);
}

/*
 * Is any other source waiting? A busy container keeps its burst only while nobody else
 * needs the loop: measured (bench/fairness.sh), a flood's full bursts of 16 kept quiet
 * containers waiting 20x longer than unloaded. With DEFER_TASKRUN completions only
 * arrive when asked for, so ask.
 */
static bool others_ready(struct devwld *d)
{
	io_uring_get_events(&d->ring);
	return io_uring_cq_ready(&d->ring) > d->round_seen;
}

static void notify_ready(struct devwld *d, struct cproc *p, int revents)
{
	struct container *c = p->container;
	unsigned int n = 0;

	if (revents & POLLIN) {
		for (;;) {
			struct devwl_event ev;
			int r;

			d->current = p;
			r = devwl_notify_handle(d->notify, p->src.fd, c->node, &ev);
			d->current = NULL;
			if (p->has_slot && d->keeper.table)
				keeper_link_answered(d, p->slot);

			if (r >= 0) {
				c->notifications++;
				audit_event(&d->audit, &ev, c);
				p->errors = 0;
			} else if (r == -ENOENT) {
				/* The target went away mid-call: nothing to answer. */
				d->audit.gone++;
			} else if (r == -EAGAIN || r == -EINTR) {
				break;
			} else {
				audit_error(&d->audit);
				/* Worth a line, but a flood must not fill the log. */
				if (d->audit.errors <= 100 || p->errors == 0)
					log_msg("container %s pid %d: handling a notification: %s",
						c->id, (int)p->pid, strerror(-r));
				if (++p->errors == MAX_CONSECUTIVE_ERRORS) {
					log_msg("container %s pid %d: %d failures in a row, last: "
						"%s;"
						" dropping this process",
						c->id, (int)p->pid, MAX_CONSECUTIVE_ERRORS,
						strerror(-r));
					cproc_gone(d, p);
					return;
				}
				break;
			}
			if (++n >= d->cfg.burst || others_ready(d) ||
			    !next_pending(p->src.fd, d->cfg.spin_us))
				break;
		}
	} else if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
		/* The container's last task using this filter has exited. */
		cproc_gone(d, p);
		return;
	}
	loop_arm(d, &p->src, POLLIN);
}

static void dispatch(struct devwld *d, struct io_uring_cqe *cqe)
{
	struct source *src = io_uring_cqe_get_data(cqe);
	int res = cqe->res;

	if (!src || cqe->user_data == LIBURING_UDATA_TIMEOUT)
		return;
	src->armed = false;
	if (src->dead) {
		src->free_fn(src);
		return;
	}
	if (res < 0) {
		log_msg("poll on fd %d failed: %s", src->fd, strerror(-res));
		res = POLLERR;
	}
	switch (src->kind) {
	case SOURCE_SIGNAL:
		signal_ready(d);
		break;
	case SOURCE_LISTENER:
		/* Handing over: what connects now waits in the backlog for our successor. */
		if (d->handover)
			break;
		listener_accept(d);
		loop_arm(d, src, POLLIN);
		break;
	case SOURCE_CONTROL:
		if (d->handover)
			break;
		control_accept(d);
		loop_arm(d, src, POLLIN);
		break;
	case SOURCE_OCI_CONN:
		oci_conn_ready(d, src, res);
		break;
	case SOURCE_CTL_CONN:
		ctl_conn_ready(d, src, res);
		break;
	case SOURCE_NOTIFY:
		notify_ready(d, container_of(src, struct cproc, src), res);
		break;
	case SOURCE_WATCH:
		watch_ready(d);
		break;
	}
}

int loop_run(struct devwld *d)
{
	while (!d->quit) {
		/* Wake at least this often for the runtimes' message deadlines. */
		int wait_ms = watch_tick(d, now_ms());
		struct __kernel_timespec ts = {
			.tv_sec = 0,
			.tv_nsec = (wait_ms >= 0 && wait_ms < 250 ? wait_ms : 250) * 1000000L,
		};
		struct io_uring_cqe *cqe = NULL;
		unsigned int head, seen = 0;
		int r;

		r = io_uring_submit_and_wait_timeout(&d->ring, &cqe, 1, &ts, NULL);
		if (r < 0 && r != -ETIME && r != -EINTR) {
			log_msg("io_uring wait failed: %s", strerror(-r));
			return r;
		}
		io_uring_for_each_cqe(&d->ring, head, cqe)
		{
			d->round_seen = seen + 1;
			dispatch(d, cqe);
			seen++;
		}
		io_uring_cq_advance(&d->ring, seen);
		oci_conn_expire(d, now_ms());
		state_flush(d);
		/* A runtime's message half read or a devwlctl batch half answered would be
		 * lost with us: let them finish first, for a bounded time. */
		if (d->handover && ((list_empty(&d->oci_conns) && list_empty(&d->ctl_conns)) ||
				    now_ms() >= d->handover_deadline))
			d->quit = true;
	}
	return 0;
}
