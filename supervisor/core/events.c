/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `devwlctl events`: a live stream of decisions, one audit line (common/audit-line.c) per
 * decision, to every control connection that asked for it.
 *
 * Nothing a subscriber does may slow devwld down. audit_event() formats each decision
 * once, when anyone subscribes or an audit file takes it, and hands the line to
 * events_publish_line(), which appends it to each matching subscriber's buffer of EVENTS_BUFFER
 * bytes under a mutex held for a memcpy; a line that does not fit is dropped and counted, and the
 * subscriber is told how many it missed ({"missed":N}) as soon as there is room again. The sockets
 * belong to one thread of their own that sends without blocking and is woken through an eventfd:
 * the notification path never makes a system call for a subscriber, and whichever thread handles
 * notifications may publish.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "events.h"
#include "list.h"
#include "log.h"
#include "thread.h"
#include "util.h"

#define EVENTS_BUFFER (256 * 1024)
#define EVENTS_MAX    16

struct subscriber {
	int fd;
	bool all;	 /* CONTINUE answers too */
	char *container; /* only this container's (of owner); NULL: every one */
	uid_t owner;
	char *buf; /* EVENTS_BUFFER bytes */
	size_t len;
	uint64_t missed; /* not yet told */
};

static struct {
	pthread_mutex_t lock;
	pthread_t thread;
	bool started, stop;
	int wake; /* eventfd */
	struct subscriber *subs[EVENTS_MAX];
	atomic_uint nsubs;
	uint64_t dropped; /* over all subscribers, for stats */
} ev = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = -1};

static void subscriber_free(struct subscriber *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->container);
	free(s->buf);
	free(s);
}

static void wake(void)
{
	uint64_t one = 1;

	if (write(ev.wake, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, the thread is awake anyway. */
	}
}

/* Append a line whole or not at all; the caller holds the lock. */
static bool append(struct subscriber *s, const char *line, size_t n)
{
	if (EVENTS_BUFFER - s->len < n)
		return false;
	memcpy(s->buf + s->len, line, n);
	s->len += n;
	return true;
}

/* s follows another container than owner's container: ids are per owner (store.c), so
 * the same id of another uid is another container. */
static bool other_container(const struct subscriber *s, uid_t owner, const char *container)
{
	return s->container && (strcmp(s->container, container) ||
				(owner != EVENTS_ANY_OWNER && owner != s->owner));
}

/* A formatted line to every subscriber that wants it (cont: a CONTINUE answer). */
static void publish(const char *line, size_t n, uid_t owner, const char *container, bool cont)
{
	bool woke = false;

	pthread_mutex_lock(&ev.lock);
	for (size_t i = 0; i < EVENTS_MAX; i++) {
		struct subscriber *s = ev.subs[i];

		if (!s || (cont && !s->all) || other_container(s, owner, container))
			continue;
		if (s->missed) {
			char note[64];
			int m = snprintf(note, sizeof(note), "{\"missed\":%llu}\n",
					 (unsigned long long)s->missed);

			/* The note and the line together, or neither. */
			if (EVENTS_BUFFER - s->len < (size_t)m + n) {
				s->missed++;
				ev.dropped++;
				continue;
			}
			append(s, note, (size_t)m);
			s->missed = 0;
		}
		if (!append(s, line, n)) {
			s->missed++;
			ev.dropped++;
			continue;
		}
		woke = true;
	}
	pthread_mutex_unlock(&ev.lock);
	if (woke)
		wake();
}

bool events_listening(void)
{
	return atomic_load_explicit(&ev.nsubs, memory_order_relaxed) > 0;
}

void events_publish_line(const char *line, size_t n, uid_t owner, const char *container, bool cont)
{
	if (atomic_load_explicit(&ev.nsubs, memory_order_relaxed) == 0)
		return;
	publish(line, n, owner, container, cont);
}

/* Send what a subscriber has; false when it is gone. Lock held. */
static bool flush(struct subscriber *s)
{
	while (s->len) {
		ssize_t n = send(s->fd, s->buf, s->len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		memmove(s->buf, s->buf + n, s->len - (size_t)n);
		s->len -= (size_t)n;
	}
	return true;
}

static void drop_locked(size_t i)
{
	subscriber_free(ev.subs[i]);
	ev.subs[i] = NULL;
	atomic_fetch_sub(&ev.nsubs, 1);
}

static void *events_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd pfd[EVENTS_MAX + 1] = {{.fd = ev.wake, .events = POLLIN}};
		size_t idx[EVENTS_MAX + 1], n = 1;
		uint64_t v;

		pthread_mutex_lock(&ev.lock);
		if (ev.stop) {
			pthread_mutex_unlock(&ev.lock);
			return NULL;
		}
		for (size_t i = 0; i < EVENTS_MAX; i++) {
			struct subscriber *s = ev.subs[i];

			if (!s)
				continue;
			if (!flush(s)) {
				drop_locked(i);
				continue;
			}
			/* POLLIN: the client closed (or sent something: it must not). */
			pfd[n] = (struct pollfd){.fd = s->fd, .events = POLLIN};
			if (s->len)
				pfd[n].events |= POLLOUT;
			idx[n++] = i;
		}
		pthread_mutex_unlock(&ev.lock);
		if (poll(pfd, n, -1) < 0 && errno != EINTR)
			continue;
		if (pfd[0].revents & POLLIN)
			(void)!read(ev.wake, &v, sizeof(v));
		pthread_mutex_lock(&ev.lock);
		for (size_t k = 1; k < n; k++)
			if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR) && ev.subs[idx[k]])
				drop_locked(idx[k]);
		pthread_mutex_unlock(&ev.lock);
	}
}

int events_subscribe(int fd, bool all, uid_t owner, const char *container)
{
	struct subscriber *s = calloc(1, sizeof(*s));
	static const char ok[] = "ok\n";
	int r = -ENOMEM;

	if (!s)
		return -ENOMEM;
	s->fd = fd;
	s->all = all;
	s->owner = owner;
	s->buf = malloc(EVENTS_BUFFER);
	if (!s->buf || (container && !(s->container = strdup(container))))
		goto fail;
	memcpy(s->buf, ok, sizeof(ok) - 1);
	s->len = sizeof(ok) - 1;
	pthread_mutex_lock(&ev.lock);
	if (!ev.started) {
		ev.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (ev.wake < 0 || devwl_thread_start(&ev.thread, events_thread, NULL) < 0) {
			r = ev.wake < 0 ? negerrno() : -EAGAIN;
			if (ev.wake >= 0)
				close(ev.wake);
			ev.wake = -1;
			pthread_mutex_unlock(&ev.lock);
			goto fail;
		}
		ev.started = true;
	}
	r = -EBUSY;
	for (size_t i = 0; i < EVENTS_MAX; i++) {
		if (!ev.subs[i]) {
			ev.subs[i] = s;
			atomic_fetch_add(&ev.nsubs, 1);
			r = 0;
			break;
		}
	}
	pthread_mutex_unlock(&ev.lock);
	if (r < 0)
		goto fail;
	wake();
	return 0;
fail:
	s->fd = -1; /* the caller's on failure */
	subscriber_free(s);
	return r;
}

void events_stats(unsigned int *ret_subscribers, uint64_t *ret_dropped)
{
	pthread_mutex_lock(&ev.lock);
	*ret_subscribers = atomic_load(&ev.nsubs);
	*ret_dropped = ev.dropped;
	pthread_mutex_unlock(&ev.lock);
}

void events_fini(void)
{
	pthread_mutex_lock(&ev.lock);
	if (!ev.started) {
		pthread_mutex_unlock(&ev.lock);
		return;
	}
	ev.stop = true;
	pthread_mutex_unlock(&ev.lock);
	wake();
	pthread_join(ev.thread, NULL);
	pthread_mutex_lock(&ev.lock);
	for (size_t i = 0; i < EVENTS_MAX; i++)
		if (ev.subs[i])
			drop_locked(i);
	close(ev.wake);
	ev.wake = -1;
	ev.started = ev.stop = false;
	pthread_mutex_unlock(&ev.lock);
}
