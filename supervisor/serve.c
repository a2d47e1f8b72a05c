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
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/seccomp.h>

#include "clock.h"
#include "devwld.h"
#include "kernelmode.h"
#include "serve.h"
#include "util.h"

/* A notification that keeps failing for a reason other than a vanished target would
 * re-fire forever: drop that process after this many failures in a row. */
#define MAX_CONSECUTIVE_ERRORS 64
/* A busy fd's records reach the loop thread at most this often: each wake of the loop
 * also parts the caller from the handler on their shared CPU (SYNC_WAKE_UP's pairing),
 * which cost one container's calls 40 % of their throughput when it came every 16 calls
 * (bench/RESULTS.md). Whatever wakes the loop takes every record waiting. */
#define SERVE_ACCOUNT_MS 10

/* A private copy of one node, read by handler threads (devwl_node_check needs only the
 * node's own behavior and exceptions). */
struct serve_view {
	atomic_uint refs;
	uint64_t gen;		     /* s->gen it was made at */
	const struct devwl_node *of; /* the node it copies (compared, never read by handlers) */
	struct devwl_policy *policy; /* holding only "/", the copy */
	struct devwl_node *node;
};

/* Per container: what outlives it while a handler thread still works for it. */
struct serve_box {
	atomic_uint refs;
	atomic_uint stuck; /* threads abandoned while serving it, not yet back */
	char *id, *node_path;
	struct serve_view *view; /* the current copy; the loop thread's reference */
};

/* One call handled, for the loop thread to audit. */
struct result {
	int r;
	struct devwl_event ev;
	char *path; /* copied when the event will be recorded */
	/* Static text: why it was answered so (the audit's "reason"). */
	const char *reason;
};

/* One fd's turn on a thread, and what came of it. */
struct job {
	struct list_head link; /* in s->queue, then s->done */
	struct cproc *p;       /* the loop thread's; handlers never dereference it */
	int fd;		       /* p's, kept open meanwhile (p->src.held) */
	bool owns_fd;	       /* a stuck thread's: fd is its own to close */
	struct serve_box *box;
	struct serve_view *view;
	bool has_slot;
	uint32_t slot;
	bool deny_only; /* the container has a stuck call: answer EPERM without looking */
	bool enforced;	/* its device cgroup holds its node: the kernel opens what is granted */
	bool baseline;	/* a root runtime's: its device rules deny what devwl does not grant */
	bool released;	/* the watchdog took it from a stuck thread: p needs a new fd */
	bool partial;	/* more of the same job follows: account, do not re-arm */
	uint64_t taken_ns, last_ns; /* when a thread took it, and its last call */
	unsigned int n;
	struct result res[]; /* cfg.burst + 1 (the watchdog's answer) */
};

struct worker {
	struct serve *s;
	struct list_head link; /* in s->workers */
	struct devwl_notify *notify;
	struct job *job;		  /* under s->lock: the one in a call now, or NULL */
	struct job *held[SERVE_HOLD_MAX]; /* under s->lock: the fds this thread serves */
	unsigned int nheld;
	bool abandoned;	     /* under s->lock: the watchdog answered for it */
	bool spared;	     /* under s->lock: in a slow call, a spare started in its place */
	bool surplus;	     /* under s->lock: back from a slow call to a full pool: retire */
	atomic_bool in_call; /* between RECV and the answer */
	atomic_uint_fast64_t call_id, call_start_ns;
	atomic_uint_fast64_t seen_gen; /* the hierarchy's generation before its next RECV */
	atomic_bool waiting;	       /* in next_pending: looks at the generation next */
	uint64_t gone_id;	       /* the watchdog found this call's target gone once already */
	struct seccomp_notif *req;     /* deny-only service */
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
};

struct serve {
	struct devwld *d;
	pthread_mutex_t lock;
	pthread_cond_t work, quit_cond;
	struct list_head queue, done, workers;
	atomic_uint queued;
	unsigned int target, live, stuck; /* threads wanted, serving, abandoned */
	unsigned int slow;		  /* threads in a call a spare stands in for */
	unsigned int burst;		  /* calls per job: cfg.burst, bounded */
	bool quit;
	pthread_t watchdog;
	bool watchdog_running;
	struct source src;	  /* the eventfd */
	atomic_uint_fast64_t gen; /* of the hierarchy, bumped on every change */
	int kick;	   /* eventfd: a job waits and no thread is free (see next_pending) */
	unsigned int idle; /* threads waiting for a job */
	uint64_t account_wake_ns; /* the last wake for a busy fd's records */
	uint64_t answered, abandoned_total, deny_only, spawn_failed;
	struct seccomp_notif_sizes sizes;
};

/* ---- views and boxes ------------------------------------------------------------------ */

static void view_put(struct serve_view *v)
{
	if (v && atomic_fetch_sub(&v->refs, 1) == 1) {
		devwl_policy_free(v->policy);
		free(v);
	}
}

struct devwl_policy *serve_node_copy(const struct devwl_node *node)
{
	static const struct devwl_rule all = {.type = DEVWL_DEV_ALL,
					      .access = DEVWL_ACC_MASK,
					      .major = DEVWL_ANY,
					      .minor = DEVWL_ANY};
	struct devwl_policy *copy = devwl_policy_new();
	struct devwl_node *root = copy ? devwl_policy_find(copy, "/") : NULL;
	bool deny = devwl_node_behavior(node) == DEVWL_BEHAVIOR_DENY;
	size_t n = devwl_node_exception_count(node);

	if (!root || (deny && devwl_node_update(root, DEVWL_FILE_DENY, &all) < 0))
		goto fail;
	for (size_t i = 0; i < n; i++) {
		struct devwl_rule r;

		/* On the root nothing is refused: an allow on DENY, a deny on ALLOW add. */
		if (devwl_node_exception(node, i, &r) < 0 ||
		    devwl_node_update(root, deny ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY, &r) < 0)
			goto fail;
	}
	devwl_node_set_mknod_needs_cap(root, devwl_node_mknod_needs_cap(node));
	return copy;
fail:
	devwl_policy_free(copy);
	return NULL;
}

static struct serve_view *view_new(const struct devwl_node *node, uint64_t gen)
{
	struct serve_view *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	atomic_init(&v->refs, 1);
	v->gen = gen;
	v->of = node;
	v->policy = serve_node_copy(node);
	v->node = v->policy ? devwl_policy_find(v->policy, "/") : NULL;
	if (!v->node) {
		view_put(v);
		return NULL;
	}
	return v;
}

static void box_put(struct serve_box *b)
{
	if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
		view_put(b->view);
		free(b->id);
		free(b->node_path);
		free(b);
	}
}

/* The container's box with a view of its node as it is now (loop thread). */
static struct serve_box *box_current(struct serve *s, struct container *c)
{
	struct serve_box *b = c->serve;

	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		atomic_init(&b->refs, 1);
		atomic_init(&b->stuck, 0);
		b->id = strdup(c->id);
		b->node_path = strdup(c->node_path);
		if (!b->id || !b->node_path) {
			box_put(b);
			return NULL;
		}
		c->serve = b;
	}
	if (!b->view || b->view->gen != atomic_load(&s->gen) || b->view->of != c->node) {
		struct serve_view *v = view_new(c->node, atomic_load(&s->gen));

		if (!v)
			return NULL;
		view_put(b->view);
		b->view = v;
	}
	return b;
}

void serve_container_gone(struct container *c)
{
	box_put(c->serve);
	c->serve = NULL;
}

/*
 * A change is in force once no thread can receive a call and still decide it by the old
 * hierarchy: wait until every thread serving an fd has looked at the new generation
 * (handlers look before each RECV and end their job on a stale copy), or is about to
 * look (waiting for its fd's next call), or is in a call received before the change (decided as the
 * kernel would an open already past its device check), or was set aside. Microseconds, normally;
 * bounded anyway.
 */
void serve_policy_changed(struct devwld *d)
{
	struct serve *s = d->serve;
	uint64_t gen = 0, bumped = 0;

	if (!s)
		return;
	gen = atomic_fetch_add(&s->gen, 1) + 1;
	bumped = now_ns();
	for (int round = 0; round < 5000; round++) {
		bool waiting = false;

		pthread_mutex_lock(&s->lock);
		for (struct list_head *l = s->workers.next; l != &s->workers && !waiting;
		     l = l->next) {
			struct worker *w = container_of(l, struct worker, link);

			if ((!w->job && !w->nheld) || w->abandoned || atomic_load(&w->waiting) ||
			    atomic_load(&w->seen_gen) >= gen)
				continue;
			if (atomic_load(&w->in_call) && atomic_load(&w->call_start_ns) < bumped)
				continue;
			waiting = true;
		}
		pthread_mutex_unlock(&s->lock);
		if (!waiting)
			return;
		nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
	}
	log_msg("policy change: a handler thread did not take it up within 100 ms");
}

/* ---- jobs ------------------------------------------------------------------------------ */

static void job_free(struct job *j)
{
	if (!j)
		return;
	for (unsigned int i = 0; i < j->n; i++)
		free(j->res[i].path);
	if (j->owns_fd)
		close(j->fd);
	view_put(j->view);
	box_put(j->box);
	free(j);
}

static void wake_loop(struct serve *s)
{
	uint64_t one = 1;

	(void)!write(s->src.fd, &one, sizeof(one));
}

/* Under s->lock: the record goes to the loop thread. */
static void job_done(struct serve *s, struct job *j)
{
	list_add_tail(&j->link, &s->done);
	wake_loop(s);
}

/* ---- the handler threads --------------------------------------------------------------- */

/* libdevwl's receive hook: the call is in our hands from now until answered. */
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
		loop_test_stop(d, j->box->id, false);
	if (j->has_slot && d->keeper.table)
		keeper_link_inflight(d, j->slot, id);
	if (d->test_stop_file)
		loop_test_stop(d, j->box->id, true);
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
	*ev = (struct devwl_event){
		.id = w->req->id,
		.tid = (pid_t)w->req->pid,
		.syscall_nr = w->req->data.nr,
		.syscall = "unknown",
		.path = "",
		.verdict = DEVWL_VERDICT_DENY,
		.error = EPERM,
	};
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, w->resp) < 0)
		return negerrno();
	ev->handling_ns = now_ns() - start;
	return 0;
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
			r = devwl_notify_handle(w->notify, j->fd, j->view->node, &ev);
		}
		atomic_store(&w->in_call, false);
		pthread_mutex_lock(&s->lock);
		if (w->abandoned) {
			pthread_mutex_unlock(&s->lock);
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
			keeper_link_answered(d, j->slot);
		res = &j->res[j->n++];
		res->r = r;
		res->ev = ev;
		res->ev.path = "";
		res->path = NULL;
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

static void *worker_main(void *arg);

/* Under s->lock. A thread is made with every signal blocked (see the top). */
static int spawn(struct serve *s)
{
	struct worker *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	pthread_attr_t attr;
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
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = -pthread_create(&t, &attr, worker_main, w);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		goto fail;
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
static void *worker_main(void *arg)
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
		keeper_link_answered(d, j->slot);
	if (r == 0) {
		s->answered++;
		res->r = 0;
		/* A record job_continue() made is malloc'ed: nothing in it is NULL unless set. */
		res->path = NULL;
		res->reason = "watchdog: stuck past --handler-timeout";
		res->ev = (struct devwl_event){
			.id = id,
			.syscall = "unknown",
			.path = "",
			.verdict = DEVWL_VERDICT_DENY,
			.error = EPERM,
			.handling_ns = now - start,
		};
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

static void *watchdog_main(void *arg)
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

/* ---- the loop thread's side ------------------------------------------------------------ */

/* The eventfd's ready hook: audit what the handlers did, re-arm or drop their fds. */
static void serve_completions(struct devwld *d, struct source *src, int revents);

int serve_init(struct devwld *d)
{
	struct serve *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;
	sigset_t all, old;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int r = 0;

	if (!s)
		return -ENOMEM;
	/* One malloc arena for all threads: handlers allocate little (a record now and then),
	 * and an arena per thread only holds on to memory (the soak's RSS bound). */
	mallopt(M_ARENA_MAX, 1);
	s->d = d;
	atomic_init(&s->gen, 1);
	s->src.kind = SOURCE_SERVE;
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
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&s->watchdog, NULL, watchdog_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return r;
	s->watchdog_running = true;
	return loop_arm(d, &s->src, POLLIN);
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
	int r = loop_arm(d, &p->src, POLLIN);

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
	/* The kernel opens its grants only where its own cgroup holds its node. */
	if (!p->held_known && kernelmode_enforced(p->container)) {
		p->held = kernelmode_holds(p->container, p->pid);
		p->held_known = true;
	}
	j->enforced = p->held && kernelmode_enforced(p->container);
	/*
	 * A root runtime's device cgroup denies what it was not told to allow (devwld(8),
	 * LIMITATIONS); a runtime of another uid (--allow-uid) can program none, so nothing
	 * but devwl stands behind its calls: no baseline, and device nodes made for it only
	 * on nodev mounts.
	 */
	j->baseline = p->peer_uid == 0;
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

/* What a job did, accounted as the loop did it when it handled calls itself; true when
 * the process is to be dropped. */
static bool job_account(struct devwld *d, struct job *j)
{
	struct cproc *p = j->p;
	struct container view = {.id = j->box->id, .node_path = j->box->node_path};
	bool alive = !p->src.dead, drop = false;

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
			/* On the loop's cancel list it is freed there (cancel_retry). */
			if (!p->src.cancel_queued)
				p->src.free_fn(&p->src);
		} else if (drop) {
			cproc_gone(d, p);
		} else {
			rearm_or_drop(d, p);
		}
		job_free(j);
	}
	r = loop_arm(d, &s->src, POLLIN);
	if (r < 0)
		loop_fatal(d, "cannot watch the handler threads", r);
}

void serve_stats(struct devwld *d, FILE *out)
{
	struct serve *s = d->serve;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	fprintf(out,
		"handler_threads %u\nhandler_stuck %u\nhandler_slow %u\nwatchdog_answered %llu\n"
		"watchdog_abandoned %llu\ndenied_while_stuck_jobs %llu\n",
		s->live, s->stuck, s->slow, (unsigned long long)s->answered,
		(unsigned long long)s->abandoned_total, (unsigned long long)s->deny_only);
	pthread_mutex_unlock(&s->lock);
}
