/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The handler threads: a job is one fd's turn on a thread (serve.c, top). */
#include "event.h"
#include "serve-internal.h"

/* ---- jobs ------------------------------------------------------------------------------ */

void job_free(struct job *j)
{
	if (!j)
		return;
	for (unsigned int i = 0; i < j->n; i++) {
		free(j->res[i].path);
		free(j->res[i].prog);
	}
	if (j->owns_fd)
		close(j->fd);
	view_put(j->view);
	box_put(j->box);
	free(j);
}

void wake_loop(struct serve *s)
{
	uint64_t one = 1;

	(void)!write(s->src.fd, &one, sizeof(one));
}

/* Under s->lock: the record goes to the loop thread. */
void job_done(struct serve *s, struct job *j)
{
	list_add_tail(&j->link, &s->done);
	wake_loop(s);
}

/* ---- the handler threads --------------------------------------------------------------- */

/* libdevwl's receive hook: the call is in our hands from now until answered. */
#ifdef DEVWL_TEST_HOOKS
/*
 * Tests only (DEVWLD_TEST_STOP_FILE, built with -DDEVWL_TEST_HOOKS=ON): when that file names the
 * container whose notification was just received, remove it and stop, holding the notification, so
 * a test can kill a worker mid-call: after the keeper's table records the call, or before
 * ("ID unrecorded": the window between RECV and the record).
 */
static void test_stop(struct devwld *d, const char *id, bool recorded)
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
static void test_stop(struct devwld *d, const char *id, bool recorded)
{
	(void)d, (void)id, (void)recorded;
}
#endif

static void on_recv(int notify_fd, uint64_t id, void *userdata)
{
	struct worker *w = userdata;
	struct devwld *d = w->s->d;
	struct job *j = w->job; /* ours while we run it; the watchdog only takes it under lock */

	(void)notify_fd;
	/* Start last but one: the watchdog reads start, id, in_call, start again. */
	atomic_store(&w->call_id, id);
	atomic_store(&w->call_start_ns, now_ns());
	atomic_store(&w->in_call, true);
	if (d->test_stop_file)
		test_stop(d, j->box->id, false);
	if (j->has_slot && d->keeper.table)
		keeper_link_inflight(&d->keeper, j->slot, id);
	if (d->test_stop_file)
		test_stop(d, j->box->id, true);
}

/* Answer the pending call EPERM without reading anything of the caller's. */
static int deny_one(struct worker *w, int fd, struct devwl_event *ev)
{
	uint64_t start = 0;

	memset(w->req, 0, w->req_size);
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, w->req) < 0)
		return negerrno();
	on_recv(fd, w->req->id, w);
	start = now_ns();
	memset(w->resp, 0, w->resp_size);
	w->resp->id = w->req->id;
	w->resp->error = -EPERM;
	devwl_event_init(ev, w->req->id, (pid_t)w->req->pid, w->req->data.nr, NULL);
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, w->resp) < 0)
		return negerrno();
	ev->handling_ns = now_ns() - start;
	return 0;
}

/*
 * A call received here, where who made it must be known before it is decided. A learning
 * container's: its program is named before the answer lets it run on (a short one, such
 * as tunctl, is often ended and reaped right after, leaving "?" in the record; the name is
 * for the advice only, never for a decision). The first of a process not yet known to be
 * in its container's programmed cgroup: whether its caller is, which decides whether the
 * kernel opens its grants (a node on a nodev mount then gets its twin).
 */
static int handle_received(struct worker *w, struct job *j, struct devwl_event *ev,
			   struct learn_program **ret_prog)
{
	struct learn_program *prog = NULL;
	int r;

	memset(w->req, 0, w->req_size);
	if (ioctl(j->fd, SECCOMP_IOCTL_NOTIF_RECV, w->req) < 0)
		return negerrno();
	on_recv(j->fd, w->req->id, w);
	/* req->pid: the calling thread, in our pid namespace; its cgroup is what the kernel
	 * checks its opens against. */
	if (j->check_held) {
		j->check_held = false;
		j->held_found = true;
		j->held = kernelmode_holds_id(j->cg_dev, j->cg_ino, (pid_t)w->req->pid);
		j->enforced = j->held && !j->learning;
		devwl_notify_set_enforced(w->notify, j->enforced);
	}
	if (j->learning && (prog = malloc(sizeof(*prog))))
		learn_program_of(0, (pid_t)w->req->pid, prog);
	r = devwl_notify_handle_request(w->notify, j->fd, w->req, w->req_size, j->view->node, ev);
	if (r >= 0 && ev->type)
		*ret_prog = prog;
	else
		free(prog);
	return r;
}

/* Is another notification pending on fd? Only looks. */
static bool next_pending(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	if (poll(&pfd, 1, 0) <= 0)
		return false;
	return (pfd.revents & (POLLIN | POLLHUP | POLLERR)) == POLLIN;
}

static int held_index(const struct worker *w, const struct job *j)
{
	for (unsigned int i = 0; i < w->nheld; i++)
		if (w->held[i] == j)
			return (int)i;
	return -1;
}

/* Under s->lock: the fd goes back to the ring. */
static void give_back(struct serve *s, struct worker *w, struct job *j)
{
	int i = held_index(w, j);

	if (i >= 0)
		w->held[i] = w->held[--w->nheld];
	job_done(s, j);
}

/* Under s->lock: hand the results so far to the loop and go on with a fresh record; the
 * loop is woken for them only every SERVE_ACCOUNT_MS. */
static struct job *job_continue(struct serve *s, struct worker *w, struct job *j, uint64_t now)
{
	struct job *nj = malloc(sizeof(*j) + (s->burst + 1) * sizeof(j->res[0]));
	int i = held_index(w, j);

	if (!nj || i < 0) {
		free(nj);
		return j;
	}
	memcpy(nj, j, sizeof(*j));
	nj->n = 0;
	atomic_fetch_add(&nj->view->refs, 1);
	atomic_fetch_add(&nj->box->refs, 1);
	j->partial = true;
	list_add_tail(&j->link, &s->done);
	if (now - s->account_wake_ns >= SERVE_ACCOUNT_MS * 1000000ULL) {
		s->account_wake_ns = now;
		wake_loop(s);
	}
	w->held[i] = nj;
	return nj;
}

enum turn {
	TURN_KEEP,  /* served what was pending: keep watching the fd */
	TURN_BACK,  /* give the fd back to the ring (an error, a stale copy of the node) */
	TURN_TAKEN, /* the watchdog took over while we were stuck */
};

/*
 * Under s->lock: a thread back from a call another thread stood in for (a spare, or the
 * replacement of an abandoned one) takes a place in the pool if one is free; false: it
 * is one too many, and retires.
 */
static bool rejoin(struct serve *s)
{
	if (s->quit || s->live >= s->target)
		return false;
	s->live++;
	return true;
}

/* Up to s->burst calls of one fd, while they come; *jp follows a record continued. */
static enum turn serve_fd(struct worker *w, struct job **jp)
{
	struct serve *s = w->s;
	struct devwld *d = s->d;
	struct job *j = *jp;

	for (unsigned int k = 0; k < s->burst; k++) {
		struct devwl_event ev = {0};
		struct learn_program *prog = NULL;
		struct result *res = NULL;
		uint64_t gen = atomic_load(&s->gen);
		int r;

		atomic_store(&w->seen_gen, gen);
		/* The hierarchy changed: the loop makes a fresh copy first. */
		if (!j->deny_only && j->view->gen != gen)
			return TURN_BACK;
		pthread_mutex_lock(&s->lock);
		w->job = j;
		pthread_mutex_unlock(&s->lock);
		if (j->deny_only)
			r = deny_one(w, j->fd, &ev);
		else {
			devwl_notify_set_baseline(w->notify, j->baseline);
			devwl_notify_set_enforced(w->notify, j->enforced);
			devwl_notify_set_nodeset(w->notify, j->box->nodeset);
			r = j->learning || j->check_held
				    ? handle_received(w, j, &ev, &prog)
				    : devwl_notify_handle(w->notify, j->fd, j->view->node, &ev);
		}
		atomic_store(&w->in_call, false);
		pthread_mutex_lock(&s->lock);
		if (w->abandoned) {
			pthread_mutex_unlock(&s->lock);
			free(prog);
			return TURN_TAKEN;
		}
		w->job = NULL;
		if (w->spared) {
			/* Back from a slow call: its spare serves on, so one of them goes. */
			w->spared = false;
			s->slow--;
			w->surplus = !rejoin(s);
		}
		/* Not after an abandon: the slot may already mark another thread's call. */
		if (j->has_slot && d->keeper.table)
			keeper_link_answered(&d->keeper, j->slot);
		res = &j->res[j->n++];
		res->r = r;
		res->ev = ev;
		res->ev.path = "";
		res->path = NULL;
		res->prog = prog;
		res->reason = j->deny_only ? "watchdog: the container has a stuck call"
					   : devwl_notify_reason(w->notify);
		if (r >= 0 && ev.path && ev.path[0] &&
		    (ev.verdict != DEVWL_VERDICT_CONTINUE || d->audit.all))
			res->path = strdup(ev.path);
		j->last_ns = now_ns();
		if (j->n >= s->burst)
			j = *jp = job_continue(s, w, j, j->last_ns);
		pthread_mutex_unlock(&s->lock);
		if (r < 0 && r != -ENOENT)
			return TURN_BACK;
		if (atomic_load(&s->queued) > 0 || !next_pending(j->fd))
			break;
	}
	return TURN_KEEP;
}

/* Under s->lock. A thread is made with every signal blocked (see the top). */
int spawn(struct serve *s)
{
	struct worker *w = calloc(1, sizeof(*w));
	pthread_t t;
	int r;

	if (!w)
		return -ENOMEM;
	w->s = s;
	w->notify = devwl_notify_new();
	w->req_size =
		s->sizes.seccomp_notif > sizeof(*w->req) ? s->sizes.seccomp_notif : sizeof(*w->req);
	w->resp_size = s->sizes.seccomp_notif_resp > sizeof(*w->resp) ? s->sizes.seccomp_notif_resp
								      : sizeof(*w->resp);
	w->req = calloc(1, w->req_size);
	w->resp = calloc(1, w->resp_size);
	if (!w->notify || !w->req || !w->resp) {
		r = -ENOMEM;
		goto fail;
	}
	devwl_notify_set_recv_hook(w->notify, on_recv, w);
	r = devwl_thread_start(&t, worker_main, w);
	if (r < 0)
		goto fail;
	/* Nobody joins a handler: a retired or abandoned one frees its own. */
	pthread_detach(t);
	list_add_tail(&w->link, &s->workers);
	s->live++;
	return 0;
fail:
	devwl_notify_free(w->notify);
	free(w->req);
	free(w->resp);
	free(w);
	return r;
}

/* Under s->lock: the thread leaves the pool. */
static void retire(struct worker *w)
{
	list_del(&w->link);
	devwl_notify_free(w->notify);
	free(w->req);
	free(w->resp);
	free(w);
}

/*
 * A thread serves the fds it holds (at most SERVE_HOLD_MAX), sleeping on them and on the
 * kick (a job waits) at once, and gives an fd back to the ring once it has been quiet for
 * cfg.spin_us, or when it is the longest held and another fd waits for a free place.
 */
void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct serve *s = w->s;
	struct devwld *d = s->d;
	uint64_t hold = (uint64_t)d->cfg.spin_us * 1000ULL;
	bool counted = true; /* in s->live */

	(void)prctl(PR_SET_NAME, "devwld-handler");
	pthread_mutex_lock(&s->lock);
	while (!s->quit) {
		struct pollfd pfd[SERVE_HOLD_MAX + 1];
		struct job *jobs[SERVE_HOLD_MAX];
		unsigned int n = 0;
		uint64_t now = now_ns(), wait = hold;
		struct timespec ts;

		if (!list_empty(&s->queue) && w->nheld == SERVE_HOLD_MAX) {
			struct job *oldest = w->held[0];

			for (unsigned int i = 1; i < w->nheld; i++)
				if (w->held[i]->taken_ns < oldest->taken_ns)
					oldest = w->held[i];
			give_back(s, w, oldest);
		}
		while (w->nheld < SERVE_HOLD_MAX && !list_empty(&s->queue)) {
			struct job *j = container_of(s->queue.next, struct job, link);

			list_del(&j->link);
			if (atomic_fetch_sub(&s->queued, 1) == 1) {
				uint64_t v = 0;

				(void)!read(s->kick, &v, sizeof(v)); /* nobody waits any more */
			}
			j->taken_ns = j->last_ns = now;
			w->held[w->nheld++] = j;
		}
		if (w->nheld == 0) {
			/* Its last container's root must not stay pinned by an idle thread. */
			devwl_notify_forget(w->notify);
			s->idle++;
			while (!s->quit && list_empty(&s->queue))
				pthread_cond_wait(&s->work, &s->lock);
			s->idle--;
			continue;
		}
		for (unsigned int i = 0; i < w->nheld; i++) {
			uint64_t quiet = now - w->held[i]->last_ns;

			jobs[n] = w->held[i];
			pfd[n++] = (struct pollfd){.fd = w->held[i]->fd, .events = POLLIN};
			/* A job just taken: its fd is ready (the ring said so). */
			wait = quiet >= hold ? 0 : (hold - quiet < wait ? hold - quiet : wait);
		}
		pfd[n] = (struct pollfd){.fd = s->kick, .events = POLLIN};
		pthread_mutex_unlock(&s->lock);

		ts = (struct timespec){.tv_sec = (time_t)(wait / 1000000000ULL),
				       .tv_nsec = (long)(wait % 1000000000ULL)};
		atomic_store(&w->waiting, true);
		if (ppoll(pfd, n + 1, &ts, NULL) < 0)
			memset(pfd, 0, sizeof(pfd));
		atomic_store(&w->waiting, false);

		for (unsigned int i = 0; i < n; i++) {
			enum turn t = TURN_KEEP;
			struct job *j = NULL;

			/*
			 * The watchdog may have moved it away while another call was slow, and
			 * the loop freed it: a record job_continue() made since may have its
			 * address, for another of our fds. Held, it can be read: same fd?
			 */
			pthread_mutex_lock(&s->lock);
			j = held_index(w, jobs[i]) >= 0 && jobs[i]->fd == pfd[i].fd ? jobs[i]
										    : NULL;
			pthread_mutex_unlock(&s->lock);
			if (!j)
				continue;
			if (pfd[i].revents & POLLIN) {
				t = serve_fd(w, &j);
				if (t == TURN_TAKEN)
					break;
			}
			pthread_mutex_lock(&s->lock);
			if (held_index(w, j) >= 0 &&
			    (t == TURN_BACK || (pfd[i].revents & (POLLHUP | POLLERR | POLLNVAL)) ||
			     now_ns() - j->last_ns >= hold))
				give_back(s, w, j);
			pthread_mutex_unlock(&s->lock);
		}
		pthread_mutex_lock(&s->lock);
		if (w->surplus) {
			counted = false; /* its spare took its place in s->live */
			break;
		}
		if (!w->abandoned)
			continue;
		/* Back from a call the watchdog answered: its fd is the loop's again. */
		atomic_fetch_sub(&w->job->box->stuck, 1);
		s->stuck--;
		w->abandoned = false;
		job_free(w->job);
		w->job = NULL;
		if (!rejoin(s)) {
			counted = false; /* replaced meanwhile */
			break;
		}
	}
	while (w->nheld)
		give_back(s, w, w->held[0]);
	if (counted)
		s->live--;
	retire(w);
	pthread_cond_broadcast(&s->quit_cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}
