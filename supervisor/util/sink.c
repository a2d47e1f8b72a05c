/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The non-blocking line sink (sink.h). One mutex guards the ring buffer; producers copy a
 * line in and wake the writer only when the buffer was empty, so a busy loop pays one
 * uncontended lock per line. The writer takes the bytes from the head without the lock
 * (producers only ever append past them) in pieces of at most PIPE_BUF that end at a line
 * end where one fits: a pipe takes such a write atomically, so the keeper's own lines on
 * the same stderr never land inside one of ours.
 *
 * A writer stuck in write(2) cannot be woken: at the end sink_free() waits a bounded time
 * and then cancels it. The thread is cancellable only inside that write(), where it holds
 * no lock, so cancelling it leaves nothing behind.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sink.h"
#include "thread.h"

struct sink {
	pthread_mutex_t lock;
	pthread_cond_t more;	/* the writer waits here for lines */
	pthread_cond_t drained; /* sink_free() waits here for the buffer to empty */
	pthread_t thread;
	int fd;
	bool own_fd, stop;
	char *buf;
	size_t cap, head, len; /* queued: len bytes from buf[head], wrapping at cap */
	uint64_t errors;       /* writes the fd refused */
	int last_errno;	       /* the last one's errno */
};

/* The next piece to write: contiguous, at most PIPE_BUF, whole lines where possible. */
static size_t piece(const struct sink *s)
{
	size_t n = s->len < s->cap - s->head ? s->len : s->cap - s->head;
	const char *nl;

	if (n <= PIPE_BUF)
		return n;
	nl = memrchr(s->buf + s->head, '\n', PIPE_BUF);
	return nl ? (size_t)(nl - (s->buf + s->head)) + 1 : PIPE_BUF;
}

static void *writer(void *arg)
{
	struct sink *s = arg;
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_mutex_lock(&s->lock);
	for (;;) {
		size_t n;
		ssize_t w;

		while (!s->len && !s->stop)
			pthread_cond_wait(&s->more, &s->lock);
		if (!s->len)
			break;
		n = piece(s);
		pthread_mutex_unlock(&s->lock);
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
		w = write(s->fd, s->buf + s->head, n);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
		pthread_mutex_lock(&s->lock);
		if (w < 0 && errno == EINTR)
			continue;
		/* A broken fd (EPIPE, EIO, ENOSPC): what it refuses is lost, not retried;
		 * counted, for the owner to report. */
		if (w <= 0) {
			s->errors++;
			s->last_errno = w < 0 ? errno : EIO;
			w = (ssize_t)n;
		}
		s->head = (s->head + (size_t)w) % s->cap;
		s->len -= (size_t)w;
		if (!s->len) {
			/* Start again at the front: a sink that keeps up touches a few pages of
			 * its buffer, not all of it as the lines go round (the worker's RSS). */
			s->head = 0;
			pthread_cond_broadcast(&s->drained);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct sink *sink_new(int fd, bool own_fd, size_t capacity)
{
	struct sink *s = calloc(1, sizeof(*s));
	pthread_condattr_t attr;
	int r;

	if (!s || !(s->buf = malloc(capacity))) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->fd = fd;
	s->own_fd = own_fd;
	s->cap = capacity;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->more, NULL);
	pthread_cond_init(&s->drained, &attr);
	pthread_condattr_destroy(&attr);
	r = devwl_thread_start(&s->thread, writer, s);
	if (r < 0) {
		pthread_cond_destroy(&s->drained);
		pthread_cond_destroy(&s->more);
		pthread_mutex_destroy(&s->lock);
		free(s->buf);
		free(s);
		errno = -r;
		return NULL;
	}
	return s;
}

bool sink_write(struct sink *s, const char *buf, size_t len)
{
	bool ok;

	pthread_mutex_lock(&s->lock);
	ok = !s->stop && len <= s->cap - s->len;
	if (ok && len) {
		size_t tail = (s->head + s->len) % s->cap;
		size_t first = len < s->cap - tail ? len : s->cap - tail;

		memcpy(s->buf + tail, buf, first);
		memcpy(s->buf, buf + first, len - first);
		if (!s->len)
			pthread_cond_signal(&s->more);
		s->len += len;
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

void sink_free(struct sink *s, unsigned int drain_ms)
{
	struct timespec until;
	bool stuck;

	if (!s)
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += drain_ms / 1000;
	until.tv_nsec += (long)(drain_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->lock);
	while (s->len && pthread_cond_timedwait(&s->drained, &s->lock, &until) != ETIMEDOUT)
		;
	stuck = s->len > 0;
	s->stop = true;
	pthread_cond_signal(&s->more);
	pthread_mutex_unlock(&s->lock);
	if (stuck)
		pthread_cancel(s->thread);
	pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->drained);
	pthread_cond_destroy(&s->more);
	pthread_mutex_destroy(&s->lock);
	if (s->own_fd)
		close(s->fd);
	free(s->buf);
	free(s);
}

uint64_t sink_errors(struct sink *s, int *ret_errno)
{
	uint64_t n;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	n = s->errors;
	if (ret_errno)
		*ret_errno = s->last_errno;
	pthread_mutex_unlock(&s->lock);
	return n;
}
