/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Handler threads: a stuck call costs its own container, never the others.
 *
 * A trapped call can block whoever handles it: its path may sit on a userfaultfd- or
 * FUSE-backed page (process_vm_readv waits for the fault), or lead through a FUSE mount
 * that never answers (openat, fstat wait). So notifications are handled on a small pool
 * of threads, one libdevwl context each (the library unshares the thread's fs context,
 * chroots and switches per-thread credentials), while the event loop only polls:
 *
 *   loop thread: POLLIN on a notify fd -> job queue -> a handler thread RECVs, decides and
 *   answers that fd's calls, cfg.burst in a row at most, and keeps watching the fd
 *   (ppoll, with the other fds it holds and the kick) while it stays busy -> quiet for
 *   cfg.spin_us, or wanted elsewhere: its record on the done list -> eventfd -> loop
 *   thread audits the record and re-arms the fd.
 *
 * A thread asleep on the notify fds themselves is what SYNC_WAKE_UP wakes on the caller's
 * CPU (doc/KERNEL-NOTES.md); going through the ring for every call costs two more wake-ups.
 * An fd is re-armed only once its thread gives it back, so each container process is
 * served by one thread at a time, in order, and a stuck one holds one thread at most.
 * A call slower than SERVE_MIGRATE_MS makes the watchdog move that thread's other fds
 * back to the ring for other threads; one slower than SERVE_SPARE_MS, with no thread
 * idle, gets a spare thread started in its place (spare()), and whichever of the two
 * finds the pool full once the call ends retires. The watchdog answers a call stuck longer than
 * cfg.handler_timeout_ms with EPERM itself
 * (SECCOMP_IOCTL_NOTIF_SEND from another thread is fine; the stuck thread's own answer
 * later fails ENOENT, and libdevwl checks ID_VALID before acting on what it read), hands
 * the fd back to the loop, and starts a replacement thread (at most SERVE_STUCK_MAX
 * stuck threads in all). Until that thread comes back, its container's calls are
 * answered EPERM without being looked at: they cost an ioctl, not another thread.
 *
 * What the handler threads share with the loop thread, and nothing else: the job queue
 * and the done list (under s->lock), the eventfd, the keeper table's per-slot in-flight
 * marks (one writer per slot, since one thread per fd), and read-only copies of the
 * containers' nodes ("views"): the hierarchy itself is the loop thread's alone (devwlctl
 * and reloads change it there), so a handler decides against a private copy of its
 * container's node, rebuilt by the loop thread after a change and freed by whoever drops
 * the last reference. A stuck thread may keep an old copy; its answer no longer counts.
 * Audit records, counters and log lines about calls are made on the loop thread from the
 * done records, so the audit sink (audit.c) stays single-threaded.
 *
 * Every thread but the loop blocks all signals, so no ioctl of theirs (ADDFD with
 * FLAG_SEND above all) is interrupted; io_uring task work only ever targets the loop.
 */
#include "serve-internal.h"

/* ---- the loop thread's side ------------------------------------------------------------ */

/* The eventfd's ready hook: audit what the handlers did, re-arm or drop their fds. */
static void serve_completions(struct devwld *d, struct source *src, int revents);

int serve_init(struct devwld *d)
{
	struct serve *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int r = 0;

	if (!s)
		return -ENOMEM;
	/* One malloc arena for all threads: handlers allocate little (a record now and then),
	 * and an arena per thread only holds on to memory (the soak's RSS bound). */
	mallopt(M_ARENA_MAX, 1);
	s->d = d;
	atomic_init(&s->gen, 1);
	s->src.ready = serve_completions;
	s->src.fd = -1;
	s->kick = -1;
	list_init(&s->queue);
	list_init(&s->done);
	list_init(&s->workers);
	atomic_init(&s->queued, 0);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->work, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->quit_cond, &ca);
	pthread_condattr_destroy(&ca);
	d->serve = s;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &s->sizes) < 0)
		return negerrno();
	s->burst = d->cfg.burst < 256 ? d->cfg.burst : 256;
	s->target = d->cfg.handler_threads;
	if (!s->target)
		s->target = cpus < 2 ? 2 : cpus > 16 ? 16 : (unsigned int)cpus;
	s->src.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->src.fd < 0 || s->kick < 0)
		return negerrno();
	pthread_mutex_lock(&s->lock);
	for (unsigned int i = 0; i < s->target && r >= 0; i++)
		r = spawn(s);
	pthread_mutex_unlock(&s->lock);
	if (r < 0)
		return r;
	r = devwl_thread_start(&s->watchdog, watchdog_main, s);
	if (r < 0)
		return r;
	s->watchdog_running = true;
	return loop_arm(&d->loop, &s->src, POLLIN);
}

void serve_fini(struct devwld *d)
{
	struct serve *s = d->serve;
	struct timespec ts;
	bool leave = false;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->quit = true;
	pthread_cond_broadcast(&s->work);
	pthread_cond_broadcast(&s->quit_cond);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(d->cfg.handler_timeout_ms / 1000) + 1;
	/* A thread in the middle of a burst finishes it; one that is stuck is left behind
	 * (with everything it uses: the process is about to exit). */
	while (s->live > 0 && !leave)
		leave = pthread_cond_timedwait(&s->quit_cond, &s->lock, &ts) == ETIMEDOUT;
	leave = leave || s->stuck > 0;
	while (!list_empty(&s->queue)) {
		struct job *j = container_of(s->queue.next, struct job, link);

		list_del(&j->link);
		job_free(j);
	}
	while (!list_empty(&s->done)) {
		struct job *j = container_of(s->done.next, struct job, link);

		list_del(&j->link);
		job_free(j);
	}
	pthread_mutex_unlock(&s->lock);
	if (s->watchdog_running)
		pthread_join(s->watchdog, NULL);
	if (s->src.fd >= 0)
		close(s->src.fd);
	if (s->kick >= 0)
		close(s->kick);
	d->serve = NULL;
	if (leave) {
		log_msg("exiting with %u handler threads stuck", s->stuck);
		return;
	}
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->quit_cond);
	free(s);
}

/* Unwatched, a process's calls would wait forever: dropped instead, they fail ENOSYS. */
static void rearm_or_drop(struct devwld *d, struct cproc *p)
{
	int r = loop_arm(&d->loop, &p->src, POLLIN);

	if (r < 0) {
		log_msg("container %s pid %d: cannot watch its notify fd (%s); dropping this"
			" process, its calls fail ENOSYS",
			p->container->id, (int)p->pid, strerror(-r));
		cproc_gone(d, p);
	}
}

void serve_notify_ready(struct devwld *d, struct source *src, int revents)
{
	struct cproc *p = container_of(src, struct cproc, src);
	struct serve *s = d->serve;
	struct serve_box *b = NULL;
	struct job *j = NULL;

	if (!(revents & POLLIN)) {
		/* The container's last task using this filter has exited. */
		if (revents & (POLLHUP | POLLERR | POLLNVAL))
			cproc_gone(d, p);
		else
			rearm_or_drop(d, p);
		return;
	}
	b = box_current(s, p->container);
	j = calloc(1, sizeof(*j) + (s->burst + 1) * sizeof(j->res[0]));
	if (!b || !j) {
		free(j);
		log_msg("container %s pid %d: out of memory; dropping this process",
			p->container->id, (int)p->pid);
		cproc_gone(d, p);
		return;
	}
	j->fd = p->src.fd;
	p->src.held = true;
	j->p = p;
	j->box = b;
	atomic_fetch_add(&b->refs, 1);
	j->view = b->view;
	atomic_fetch_add(&j->view->refs, 1);
	j->has_slot = p->has_slot;
	j->slot = p->slot;
	j->deny_only = atomic_load(&b->stuck) > 0;
	/*
	 * The kernel opens its grants only where its own cgroup holds its node. Whether p is
	 * in it is asked once, by the handler, of the first caller it receives, alive then:
	 * the pid a runtime sent may be gone by now, and one that sent none (crun exec)
	 * names p by its first caller, often a child that has exited since.
	 */
	j->check_held =
		!p->held_known && kernelmode_cgroup_id(p->container, &j->cg_dev, &j->cg_ino);
	/* A learning container is decided by its ceiling, here: every open trapped is one
	 * devwld decides, whatever its cgroup holds (kernelmode.c programs the ceiling). */
	j->learning = learning_node(d, p->container->node) != NULL;
	j->enforced = p->held_known && p->held && kernelmode_enforced(p->container) && !j->learning;
	/* Without one, device nodes are made for it only on nodev mounts (the node gate). */
	j->baseline = container_has_baseline(p->container);
	/* A completion is due (our eventfd's): loop_destroy defers the free until then. */
	p->src.armed = true;
	pthread_mutex_lock(&s->lock);
	list_add_tail(&j->link, &s->queue);
	atomic_fetch_add(&s->queued, 1);
	if (j->deny_only)
		s->deny_only++;
	if (s->idle)
		pthread_cond_signal(&s->work);
	else
		(void)!write(s->kick, &(uint64_t){1}, sizeof(uint64_t));
	pthread_mutex_unlock(&s->lock);
}

/*
 * An open trapped for a process its cgroup enforces was trapped to be seen, not decided:
 * the kernel would have refused or opened the same device itself. Said once per
 * container, since only the profile, chosen before the container started, can stop it.
 */
static void seen_only(struct container *c, const char *call)
{
	if (!call || (strncmp(call, "open", 4) && strcmp(call, "creat")))
		return;
	if (!c->seen_only_opens++)
		log_msg("container %s: %s, and its profile traps opens too: its cgroup decides "
			"them, so the mknod-only profile would serve it at native speed",
			c->id, kernelmode_name(c));
}

/* What a job did, accounted as the loop did it when it handled calls itself; true when
 * the process is to be dropped. */
static bool job_account(struct devwld *d, struct job *j)
{
	struct cproc *p = j->p;
	struct container view = {
		.id = j->box->id, .node_path = j->box->node_path, .owner_uid = j->box->owner_uid};
	bool alive = !p->src.dead, drop = false;

	if (j->held_found && alive) {
		p->held = j->held;
		p->held_known = true;
	}
	for (unsigned int i = 0; i < j->n; i++) {
		struct result *res = &j->res[i];
		int r = res->r;

		if (res->path)
			res->ev.path = res->path;
		if (r >= 0) {
			if (alive)
				p->container->notifications++;
			audit_event(&d->audit, &res->ev, &view, res->reason,
				    alive ? p->container->node : NULL);
			if (alive && j->enforced)
				seen_only(p->container, res->ev.syscall);
			if (alive && res->prog)
				learning_record(d, p->container, &res->ev, res->prog);
			/* A node made with no baseline may be one only devwld opens, kept in
			 * the container's nodeset: the state file must have it too. */
			if (!j->baseline && !j->enforced && res->ev.access == DEVWL_ACC_MKNOD &&
			    res->ev.verdict == DEVWL_VERDICT_ALLOW && d->store_hooks.changed)
				d->store_hooks.changed(d);
			/* A process its runtime sent without a pid is named by its calls. */
			if (alive && res->ev.pid > 0)
				cproc_pid_known(d, p, res->ev.pid);
			if (alive)
				p->errors = 0;
		} else if (r == -ENOENT) {
			/* The target went away mid-call: nothing to answer. */
			audit_gone(&d->audit);
		} else if (r != -EAGAIN && r != -EINTR && alive) {
			/* Worth a line, but a flood must not fill the log. */
			if (audit_error(&d->audit) <= 100 || p->errors == 0)
				log_msg("container %s pid %d: handling a notification: %s", view.id,
					(int)p->pid, strerror(-r));
			if (++p->errors == MAX_CONSECUTIVE_ERRORS) {
				log_msg("container %s pid %d: %d failures in a row, last: %s;"
					" dropping this process",
					view.id, (int)p->pid, MAX_CONSECUTIVE_ERRORS, strerror(-r));
				drop = true;
			}
		}
	}
	return drop;
}

static void serve_completions(struct devwld *d, struct source *src, int revents)
{
	struct serve *s = d->serve;
	struct list_head done;
	uint64_t n = 0;
	int r = 0;

	(void)src, (void)revents;
	(void)!read(s->src.fd, &n, sizeof(n));
	list_init(&done);
	pthread_mutex_lock(&s->lock);
	if (!list_empty(&s->done)) {
		done = s->done;
		done.next->prev = &done;
		done.prev->next = &done;
		list_init(&s->done);
	}
	pthread_mutex_unlock(&s->lock);
	while (!list_empty(&done)) {
		struct job *j = container_of(done.next, struct job, link);
		struct cproc *p = j->p;
		bool drop = false;

		list_del(&j->link);
		drop = job_account(d, j);
		if (j->partial) {
			/* The job goes on: a drop waits for its end (loop_destroy defers it). */
			if (drop && !p->src.dead)
				cproc_gone(d, p);
			job_free(j);
			continue;
		}
		p->src.armed = false;
		p->src.held = false;
		if (j->released) {
			/* The old fd number is the stuck thread's now: go on with the copy. */
			if (p->src.dead && j->fd >= 0)
				close(j->fd);
			else if (j->fd < 0)
				drop = true;
			p->src.fd = p->src.dead ? -1 : j->fd;
			if (drop)
				log_msg("container %s pid %d: no fd to go on with; dropping this"
					" process",
					j->box->id, (int)p->pid);
		}
		if (p->src.dead) {
			if (p->src.fd >= 0)
				close(p->src.fd); /* loop_destroy left it to us */
			p->src.fd = -1;
			loop_release(&p->src);
		} else if (drop) {
			cproc_gone(d, p);
		} else {
			rearm_or_drop(d, p);
		}
		job_free(j);
	}
	r = loop_arm(&d->loop, &s->src, POLLIN);
	if (r < 0)
		loop_fatal(&d->loop, "cannot watch the handler threads", r);
}

void serve_counts(struct devwld *d, struct serve_counts *ret)
{
	struct serve *s = d->serve;

	*ret = (struct serve_counts){0};
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	*ret = (struct serve_counts){
		.threads = s->live,
		.stuck = s->stuck,
		.slow = s->slow,
		.watchdog_answered = s->answered,
		.abandoned = s->abandoned_total,
		.denied_while_stuck = s->deny_only,
	};
	pthread_mutex_unlock(&s->lock);
}

void serve_stats(struct devwld *d, FILE *out)
{
	struct serve_counts c;

	if (!d->serve)
		return;
	serve_counts(d, &c);
	fprintf(out,
		"handler_threads %u\nhandler_stuck %u\nhandler_slow %u\nwatchdog_answered %llu\n"
		"watchdog_abandoned %llu\ndenied_while_stuck_jobs %llu\n",
		c.threads, c.stuck, c.slow, (unsigned long long)c.watchdog_answered,
		(unsigned long long)c.abandoned, (unsigned long long)c.denied_while_stuck);
}
