/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The watchdog: spares, migrations and answers for stuck calls (serve.c, top). */
#include "event.h"
#include "serve-internal.h"

/* ---- the watchdog ---------------------------------------------------------------------- */

/*
 * Under s->lock: answer w's stuck call id, received at start (or note its target gone), and
 * take its job. What to log goes to msg, written once the lock is dropped (stderr may be
 * slow).
 */
static void take_over(struct serve *s, struct worker *w, uint64_t id, uint64_t start, uint64_t now,
		      char *msg, size_t size)
{
	struct devwld *d = s->d;
	struct job *j = w->job;
	struct seccomp_notif_resp resp = {.id = id, .error = -EPERM};
	struct result *res = &j->res[j->n];
	int r = 0;

	r = ioctl(j->fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 ? negerrno() : 0;
	if (r == -ENOENT && w->gone_id != id) {
		/* Answered by the thread itself just now, or the caller died while the thread
		 * stays stuck: the next round tells them apart. */
		w->gone_id = id;
		return;
	}
	if (r < 0 && r != -ENOENT) {
		snprintf(msg, size, "watchdog: cannot answer a stuck call of container %s: %s",
			 j->box->id, strerror(-r));
		return;
	}
	if (j->has_slot && d->keeper.table)
		keeper_link_answered(&d->keeper, j->slot);
	if (r == 0) {
		s->answered++;
		res->r = 0;
		/* A record job_continue() made is malloc'ed: nothing in it is NULL unless set. */
		res->path = NULL;
		res->reason = "watchdog: stuck past --handler-timeout";
		devwl_event_init(&res->ev, id, 0, 0, NULL);
		res->ev.handling_ns = now - start;
		j->n++;
	}
	snprintf(msg, size,
		 "watchdog: container %s: a call stuck for %llu ms %s; its thread is set aside"
		 " and the container's calls are denied until it is back",
		 j->box->id, (unsigned long long)((now - start) / 1000000),
		 r == 0 ? "answered EPERM" : "(caller gone)");
	w->abandoned = true;
	j->released = true;
	/* The fd number stays the stuck thread's (it may still ADDFD or SEND on it); the
	 * loop gives the process a duplicate to go on with (serve_completions). */
	j->owns_fd = true;
	/* The thread keeps its own references; the record for the loop gets new ones. */
	{
		size_t len = sizeof(*j) + (s->burst + 1) * sizeof(j->res[0]);
		struct job *rel = malloc(len);

		if (rel) {
			memcpy(rel, j, len);
			/* Made here, before the stuck thread can come back and close its own. */
			rel->fd = fcntl(j->fd, F_DUPFD_CLOEXEC, 3);
			rel->owns_fd = false;
			atomic_fetch_add(&rel->view->refs, 1);
			atomic_fetch_add(&rel->box->refs, 1);
			j->n = 0; /* the paths now belong to rel */
			job_done(s, rel);
		} else {
			snprintf(msg, size,
				 "watchdog: out of memory: container %s is no longer served",
				 j->box->id);
		}
	}
	/* The thread's other fds go back to the ring at once. */
	for (unsigned int i = 0; i < w->nheld; i++)
		if (w->held[i] != j)
			job_done(s, w->held[i]);
	w->nheld = 0;
	atomic_fetch_add(&j->box->stuck, 1);
	s->abandoned_total++;
	s->stuck++;
	if (w->spared) {
		/* Its spare is serving already. */
		w->spared = false;
		s->slow--;
		return;
	}
	s->live--;
	if (s->live < s->target && s->stuck + s->slow <= SERVE_STUCK_MAX && spawn(s) < 0)
		s->spawn_failed++;
}

/*
 * Under s->lock: w has been in one call for SERVE_SPARE_MS and nobody is idle: start a
 * spare in its place, so that two or three slow calls (as many as the CPUs) do not
 * leave every other container waiting for the watchdog's timeout.
 */
static void spare(struct serve *s, struct worker *w)
{
	if (w->spared || s->idle > 0 || s->stuck + s->slow >= SERVE_STUCK_MAX)
		return;
	s->live--;
	if (spawn(s) < 0) {
		s->live++;
		s->spawn_failed++;
		return;
	}
	w->spared = true;
	s->slow++;
}

void *watchdog_main(void *arg)
{
	struct serve *s = arg;
	uint64_t timeout = (uint64_t)s->d->cfg.handler_timeout_ms * 1000000ULL;
	uint64_t tick = timeout / 4;
	bool rescan = false; /* look at the threads again at once */

	(void)prctl(PR_SET_NAME, "devwld-watchdog");

	if (tick < 1000000)
		tick = 1000000;
	if (tick > 500000000)
		tick = 500000000;
	pthread_mutex_lock(&s->lock);
	while (!s->quit) {
		uint64_t t = tick, now;
		struct timespec ts;

		if (!rescan) {
			/*
			 * Often while a thread serves several fds (a slow call must not hold
			 * them) or any at all (a slow call gets a spare); seldom when all idle.
			 */
			for (struct list_head *l = s->workers.next; l != &s->workers; l = l->next) {
				unsigned int nheld = container_of(l, struct worker, link)->nheld;

				if (nheld > 1)
					t = SERVE_MIGRATE_MS * 1000000ULL / 2;
				else if (nheld == 1 && t > SERVE_SPARE_MS * 1000000ULL / 2)
					t = SERVE_SPARE_MS * 1000000ULL / 2;
			}
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += (long)(t % 1000000000ULL);
			ts.tv_sec += (time_t)(t / 1000000000ULL) + ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
			pthread_cond_timedwait(&s->quit_cond, &s->lock, &ts);
			if (s->quit)
				break;
		}
		rescan = false;
		now = now_ns();
		for (struct list_head *l = s->workers.next; l != &s->workers; l = l->next) {
			struct worker *w = container_of(l, struct worker, link);
			char msg[512] = "";

			uint64_t start = atomic_load(&w->call_start_ns), id = 0;

			if (!w->job || w->abandoned)
				continue;
			/* One call's id and start: the thread may be on to the next meanwhile. */
			id = atomic_load(&w->call_id);
			if (!atomic_load(&w->in_call) || atomic_load(&w->call_start_ns) != start)
				continue;
			now = now_ns();
			if (start > now || now - start <= SERVE_MIGRATE_MS * 1000000ULL)
				continue;
			/* Slow already: whoever else this thread serves is served elsewhere. */
			for (unsigned int i = 0; i < w->nheld;) {
				if (w->held[i] == w->job) {
					i++;
					continue;
				}
				job_done(s, w->held[i]);
				w->held[i] = w->held[--w->nheld];
			}
			if (now - start > SERVE_SPARE_MS * 1000000ULL)
				spare(s, w);
			if (now - start <= timeout)
				continue;
			take_over(s, w, id, start, now, msg, sizeof(msg));
			if (msg[0]) {
				/* The list may change meanwhile: look again at once, for the
				 * other stuck calls. */
				pthread_mutex_unlock(&s->lock);
				log_msg("%s", msg);
				pthread_mutex_lock(&s->lock);
				rescan = true;
				break;
			}
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}
