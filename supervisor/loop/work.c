/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The work threads (work.h). A piece of work is on the pending list from its submit until
 * its thread returns or its deadline passes, whichever is first; the lock decides which,
 * so that done() is called exactly once:
 *
 *   thread returns first   it moves to the done list and wakes the loop (an eventfd),
 *                          which calls done(0);
 *   deadline first         the loop (a timerfd set to the earliest deadline) calls
 *                          done(-ETIMEDOUT); the thread, when it returns, calls late().
 *
 * Both hold a reference; the last to let go frees it.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "notify_loop.h"
#include "thread.h"
#include "util.h"
#include "work.h"

enum { WORK_PENDING, WORK_DONE, WORK_ABANDONED };

struct workers {
	struct loop *loop;
	struct source done_src;	 /* eventfd: a thread returned */
	struct source timer_src; /* timerfd: the earliest deadline */
	pthread_mutex_t lock;
	struct list_head pending, done; /* under lock */
	atomic_uint threads;
	bool stopped; /* under lock: work_stop() ran; the last thread frees the pool */
};

static void work_put(struct workers *p, struct work *w)
{
	int refs;

	pthread_mutex_lock(&p->lock);
	refs = --w->refs;
	pthread_mutex_unlock(&p->lock);
	if (!refs)
		w->free_fn(w);
}

/* Set the timer to the earliest deadline still pending (under lock). */
static void rearm_timer(struct workers *p)
{
	struct itimerspec its = {0};
	uint64_t first = UINT64_MAX;

	for (struct list_head *l = p->pending.next; l != &p->pending; l = l->next) {
		struct work *w = container_of(l, struct work, link);

		if (w->deadline_ms < first)
			first = w->deadline_ms;
	}
	if (first != UINT64_MAX) {
		/* Absolute, on the clock deadlines are measured on; 0 would disarm it. */
		its.it_value.tv_sec = (time_t)(first / 1000);
		its.it_value.tv_nsec = (long)(first % 1000) * 1000000L + 1;
	}
	(void)timerfd_settime(p->timer_src.fd, TFD_TIMER_ABSTIME, &its, NULL);
}

struct start {
	struct workers *p;
	struct work *w;
};

static void *work_main(void *arg)
{
	struct workers *p = ((struct start *)arg)->p;
	struct work *w = ((struct start *)arg)->w;
	bool late, last;

	free(arg);
	w->run(w);
	pthread_mutex_lock(&p->lock);
	late = w->state == WORK_ABANDONED;
	if (!late) {
		uint64_t one = 1;

		/* The loop's now: its reference is the last. Under the lock, so that
		 * work_stop() never closes the eventfd under this write. */
		w->state = WORK_DONE;
		w->refs--;
		list_del(&w->link);
		list_add_tail(&w->link, &p->done);
		(void)!write(p->done_src.fd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&p->lock);
	if (late) {
		if (w->late)
			w->late(w);
		work_put(p, w);
	}
	/* The last touch of p. Whoever is last frees it: work_stop() when no thread is left
	 * by then, else the last thread to end after it (a worker that exits with a read
	 * under way, a planned restart's, must not leave the pool behind). */
	pthread_mutex_lock(&p->lock);
	last = atomic_fetch_sub(&p->threads, 1) == 1 && p->stopped;
	pthread_mutex_unlock(&p->lock);
	if (last) {
		pthread_mutex_destroy(&p->lock);
		free(p);
	}
	return NULL;
}

static void rearm(struct workers *p, struct source *src)
{
	int r = loop_arm(p->loop, src, POLLIN);

	if (r < 0)
		loop_fatal(p->loop, "cannot watch the work threads", r);
}

/* The eventfd: call done() for what the threads finished. */
static void done_ready(struct devwld *d, struct source *src, int revents)
{
	struct workers *p = container_of(src, struct workers, done_src);
	struct list_head done;
	uint64_t n;

	(void)revents;
	(void)!read(src->fd, &n, sizeof(n));
	list_init(&done);
	pthread_mutex_lock(&p->lock);
	while (!list_empty(&p->done)) {
		struct list_head *l = p->done.next;

		list_del(l);
		list_add_tail(l, &done);
	}
	rearm_timer(p);
	pthread_mutex_unlock(&p->lock);
	while (!list_empty(&done)) {
		struct work *w = container_of(done.next, struct work, link);

		list_del(&w->link);
		w->done(d, w, 0);
		work_put(p, w);
	}
	rearm(p, src);
}

/* The timer: done(-ETIMEDOUT) for what is past its deadline; its thread goes on alone. */
static void timer_ready(struct devwld *d, struct source *src, int revents)
{
	struct workers *p = container_of(src, struct workers, timer_src);
	struct list_head expired;
	uint64_t n, now = now_ms();

	(void)revents;
	(void)!read(src->fd, &n, sizeof(n));
	list_init(&expired);
	pthread_mutex_lock(&p->lock);
	for (struct list_head *l = p->pending.next; l != &p->pending;) {
		struct work *w = container_of(l, struct work, link);

		l = l->next;
		if (w->deadline_ms > now)
			continue;
		w->state = WORK_ABANDONED;
		list_del(&w->link);
		list_add_tail(&w->link, &expired);
	}
	rearm_timer(p);
	pthread_mutex_unlock(&p->lock);
	while (!list_empty(&expired)) {
		struct work *w = container_of(expired.next, struct work, link);

		/* Its link is the loop's now: the thread no longer moves it. */
		list_del(&w->link);
		w->done(d, w, -ETIMEDOUT);
		work_put(p, w);
	}
	rearm(p, src);
}

static void no_free(struct source *src)
{
	(void)src;
}

int work_start(struct loop *l)
{
	struct workers *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	p->loop = l;
	pthread_mutex_init(&p->lock, NULL);
	list_init(&p->pending);
	list_init(&p->done);
	p->done_src = (struct source){.ready = done_ready, .free_fn = no_free};
	p->timer_src = (struct source){.ready = timer_ready, .free_fn = no_free};
	p->done_src.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->timer_src.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	l->workers = p;
	if (p->done_src.fd < 0 || p->timer_src.fd < 0)
		r = negerrno();
	else if ((r = loop_arm(l, &p->done_src, POLLIN)) >= 0)
		r = loop_arm(l, &p->timer_src, POLLIN);
	if (r < 0)
		work_stop(l);
	return r;
}

void work_stop(struct loop *l)
{
	struct workers *p = l->workers;
	bool last;

	if (!p)
		return;
	l->workers = NULL;
	pthread_mutex_lock(&p->lock);
	/* The threads still running finish alone (late(), then free); what they finished
	 * is freed here, told no one. */
	while (!list_empty(&p->pending)) {
		struct work *w = container_of(p->pending.next, struct work, link);

		w->state = WORK_ABANDONED;
		list_del(&w->link);
		w->refs--;
	}
	while (!list_empty(&p->done)) {
		struct work *w = container_of(p->done.next, struct work, link);

		list_del(&w->link);
		w->free_fn(w);
	}
	if (p->done_src.fd >= 0)
		loop_destroy(l, &p->done_src);
	if (p->timer_src.fd >= 0)
		loop_destroy(l, &p->timer_src);
	p->done_src.fd = p->timer_src.fd = -1;
	p->stopped = true;
	last = atomic_load(&p->threads) == 0;
	pthread_mutex_unlock(&p->lock);
	/* A thread still running (stuck on a filesystem) locks the pool to let go of its
	 * work: the pool stays for it, and it frees the pool as it ends (work_main()). */
	if (last) {
		pthread_mutex_destroy(&p->lock);
		free(p);
	}
}

int work_submit(struct loop *l, struct work *w, unsigned int timeout_ms)
{
	struct workers *p = l->workers;
	struct start *s = NULL;
	pthread_t t;
	int r;

	if (!p)
		return -ENOSYS;
	if (atomic_fetch_add(&p->threads, 1) >= WORK_MAX) {
		atomic_fetch_sub(&p->threads, 1);
		return -EBUSY;
	}
	s = malloc(sizeof(*s));
	if (!s) {
		atomic_fetch_sub(&p->threads, 1);
		return -ENOMEM;
	}
	*s = (struct start){p, w};
	w->state = WORK_PENDING;
	w->refs = 2;
	w->deadline_ms = now_ms() + timeout_ms;
	pthread_mutex_lock(&p->lock);
	list_add_tail(&w->link, &p->pending);
	rearm_timer(p);
	r = devwl_thread_start(&t, work_main, s);
	if (r < 0) {
		list_del(&w->link);
		rearm_timer(p);
	}
	pthread_mutex_unlock(&p->lock);
	if (r < 0) {
		free(s);
		atomic_fetch_sub(&p->threads, 1);
		return r;
	}
	pthread_detach(t);
	return 0;
}

unsigned int work_threads(const struct loop *l)
{
	return l->workers ? atomic_load(&l->workers->threads) : 0;
}
