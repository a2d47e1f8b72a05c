/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state file (--state, devwld(8) STATE): the live hierarchy (nodes, rules, mknod
 * waivers), the nodes made on demand, the policy text the hierarchy and the container
 * mapping came from, the devwlctl changes made since (edits.c), and the container table (id, node,
 * and for each process its keeper slot and tag, pid and peer). A new worker starts from it, after a
 * restart or a crash.
 *
 * Written whole and atomically (temporary file in the same directory, fsync, rename,
 * fsync of the directory), off the serving path: the loop serialises a snapshot, a thread
 * of its own writes it. At most one write per STATE_INTERVAL_MS, so a burst of attaches
 * costs one serialisation and one write, not one each; a control command that changed
 * something has its answer held until a write made after it is done (state_written), and
 * a planned restart or a stop writes synchronously (state_sync). A crash loses no process:
 * one attached since the last finished write is restored from the record the keeper holds
 * with its fd (slotrec.h); only a slot without a usable record, or whose container cannot
 * be restored, is let go (its calls fail ENOSYS, never hang).
 * Read all or nothing: a file that does not parse or validate is renamed aside
 * (FILE.corrupt-TIMESTAMP) and devwld starts from the policy file instead; so is one
 * written under a policy file when devwld runs without one (FILE.other-policy-TIMESTAMP).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "attach.h"
#include "devwld.h"
#include "fileio.h"
#include "follow.h"
#include "keeper_table.h"
#include "log.h"
#include "policy.h"
#include "sink.h"
#include "slotrec.h"
#include "state.h"
#include "statefile.h"
#include "store.h"
#include "thread.h"
#include "util.h"

/* A policy text is at most 16 MiB; the hierarchy and the table come on top. */
#define STATE_TEXT_MAX (64u << 20)
/* After a failed write (disk full, say), try again this much later, not every round. */
#define RETRY_MS 1000
/* At most one write per this long: attaches in between are coalesced into it. */
#define STATE_INTERVAL_MS 100

#ifdef DEVWL_TEST_HOOKS
/* Tests (tests/oci/97): while the file DEVWLD_TEST_STATE_STALL names exists, a write
 * waits before it starts (on whichever thread makes it), as on a disk that does not answer. */
static void test_stall(void)
{
	const char *f = secure_getenv("DEVWLD_TEST_STATE_STALL");

	while (f && access(f, F_OK) == 0)
		usleep(10000);
}
#else
static void test_stall(void)
{
}
#endif

static int write_atomic(const char *file, const char *text)
{
	int r;

	test_stall();
	r = devwl_write_file_atomic(file, text, 0600);

	if (r == -ENOENT && devwl_mkdir_parents(file) >= 0)
		r = devwl_write_file_atomic(file, text, 0600);
	return r;
}

/* ---- the writer thread ---------------------------------------------------------------- */

/*
 * The loop serialises (it owns the data); this thread writes, fsyncs and renames, and
 * hands the text back. One write at a time: changes made meanwhile go into the next.
 */
struct state_writer {
	struct source src; /* an eventfd: a write finished */
	pthread_mutex_t lock;
	pthread_cond_t cond; /* work for the thread; a finished write for state_sync() */
	pthread_t thread;
	const char *file;
	bool stop;
	bool busy;  /* todo taken, being written */
	char *todo; /* the text to write next, or NULL */
	uint64_t todo_seq;
	bool has_done; /* done* hold a finished write the loop has not seen */
	char *done;
	uint64_t done_seq;
	int done_result;
};

static void *writer_main(void *arg)
{
	struct state_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		uint64_t one = 1, seq;
		char *text;
		int r;

		while (!w->todo && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->todo)
			break;
		text = TAKE_PTR(w->todo);
		seq = w->todo_seq;
		w->busy = true;
		pthread_mutex_unlock(&w->lock);
		r = write_atomic(w->file, text);
		pthread_mutex_lock(&w->lock);
		free(w->done);
		w->done = text;
		w->done_seq = seq;
		w->done_result = r;
		w->has_done = true;
		w->busy = false;
		pthread_cond_broadcast(&w->cond);
		(void)!write(w->src.fd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void writer_src_free(struct source *src)
{
	(void)src; /* part of struct state_writer, freed by state_fini() */
}

static void state_ready(struct devwld *d, struct source *src, int revents);

/* What waited for a write may go on: control.c's answers, through a hook because control
 * asks the state, not the other way round. */
static void written(struct devwld *d)
{
	if (d->state_written_hook)
		d->state_written_hook(d);
}

/* Start the thread (once, lazily, when the first write is due). Without it, writes
 * happen on the loop, as a fallback. */
static struct state_writer *writer_get(struct devwld *d)
{
	struct state_writer *w = d->state.writer;
	int r;

	if (w || d->state.no_thread)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto fail;
	w->file = d->cfg.state_file;
	w->src.ready = state_ready;
	w->src.free_fn = writer_src_free;
	w->src.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->src.fd < 0)
		goto fail;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	r = devwl_thread_start(&w->thread, writer_main, w);
	if (r < 0) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		errno = -r;
		goto fail;
	}
	/* Unwatched, finished writes are still seen each round (state_flush). */
	if (loop_arm(&d->loop, &w->src, POLLIN) < 0)
		log_msg("state: cannot watch the writer's eventfd; checking each round");
	d->state.writer = w;
	return w;
fail:
	log_msg("state: no writer thread (%m): writing on the event loop");
	if (w && w->src.fd >= 0)
		close(w->src.fd);
	free(w);
	d->state.no_thread = true;
	return NULL;
}

/* A write finished (text written, or not: r): take it into account. */
static void finished(struct devwld *d, char *text, uint64_t seq, int r)
{
	if (r < 0) {
		if (!d->state.retry_ms)
			log_msg("state %s: cannot write: %s (retrying)", d->cfg.state_file,
				strerror(-r));
		d->state.retry_ms = now_ms() + RETRY_MS;
		d->state.dirty = true;
		free(text);
	} else {
		if (d->state.retry_ms)
			log_msg("state %s: written again", d->cfg.state_file);
		d->state.retry_ms = 0;
		free(d->state.last);
		d->state.last = text;
		d->state.writes++;
	}
	/* Tried, at least: what waited for it may go on (a failure is logged). */
	if (seq > d->state.tried_seq)
		d->state.tried_seq = seq;
	written(d);
}

/* Take a finished write, if there is one. */
static void collect(struct devwld *d, struct state_writer *w)
{
	char *text;
	uint64_t seq;
	int r;

	pthread_mutex_lock(&w->lock);
	if (!w->has_done) {
		pthread_mutex_unlock(&w->lock);
		return;
	}
	w->has_done = false;
	text = TAKE_PTR(w->done);
	seq = w->done_seq;
	r = w->done_result;
	pthread_mutex_unlock(&w->lock);
	finished(d, text, seq, r);
}

static bool writer_idle(struct state_writer *w)
{
	bool idle;

	pthread_mutex_lock(&w->lock);
	idle = !w->todo && !w->busy;
	pthread_mutex_unlock(&w->lock);
	return idle;
}

static void state_ready(struct devwld *d, struct source *src, int revents)
{
	struct state_writer *w = d->state.writer;
	uint64_t n;

	(void)src, (void)revents;
	while (read(w->src.fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		;
	collect(d, w);
	if (loop_arm(&d->loop, &w->src, POLLIN) < 0)
		log_msg("state: cannot watch the writer's eventfd; checking each round");
}

/* The nodes only devwld opens for c, as the state file keeps them (heap, in sc). */
static int saved_nodev(const struct container *c, struct saved_container *sc)
{
	uint64_t dev = 0, ino = 0;
	size_t n = 0;

	while (devwl_nodeset_get(c->nodeset, n, &dev, &ino) == 0)
		n++;
	sc->nodev = calloc(n + 1, sizeof(*sc->nodev));
	if (!sc->nodev)
		return -ENOMEM;
	for (size_t i = 0; i < n && devwl_nodeset_get(c->nodeset, i, &dev, &ino) == 0; i++)
		if (ino) /* a removed one */
			sc->nodev[sc->nnodev++] = (struct saved_nodev){.dev = dev, .ino = ino};
	return 0;
}

/* Serialise now and hand the text on (or write it here, without a thread). */
/* The state file text of d: a view of its store (borrowed pointers) for statefile.c. */
int state_text(struct devwld *d, char **ret_text)
{
	struct saved view = {
		.policy = d->policy,
		.policy_text = d->policy_text,
		.ondemand = d->ondemand,
		.ruled = d->ruled,
		.edits = d->edits,
		.bindings = d->bindings,
	};
	size_t i = 0, n = 0;
	int r = 0;

	/* Sized by the lists themselves, not by counters kept beside them. */
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next)
		n++;
	view.containers = calloc(n ? n : 1, sizeof(*view.containers));
	if (!view.containers)
		return -ENOMEM;
	for (struct list_head *l = d->containers.next; l != &d->containers && r >= 0;
	     l = l->next, i++) {
		const struct container *c = container_of(l, struct container, link);
		struct saved_container *sc = &view.containers[i];

		*sc = (struct saved_container){.id = c->id,
					       .node = c->node_path,
					       .owner = c->owner_uid,
					       .created = c->created_node,
					       .kernel = kernelmode_wanted(c),
					       .k8s_name = c->k8s_name,
					       .rt_name = c->rt_name,
					       .attached = c->attached,
					       .nattached = c->nattached};
		n = 0;
		for (struct list_head *pl = c->procs.next; pl != &c->procs; pl = pl->next)
			n++;
		sc->procs = calloc(n ? n : 1, sizeof(*sc->procs));
		if (!sc->procs) {
			r = -ENOMEM;
			break;
		}
		r = saved_nodev(c, sc);
		if (r < 0)
			break;
		/* Only a process the keeper holds can be served again after a restart. */
		for (struct list_head *pl = c->procs.next; pl != &c->procs; pl = pl->next) {
			const struct cproc *p = container_of(pl, struct cproc, link);

			if (p->has_slot)
				sc->procs[sc->nprocs++] =
					(struct saved_proc){.slot = p->slot,
							    .tag = p->tag,
							    .pid = p->pid,
							    .peer_pid = p->peer_pid,
							    .peer_uid = p->peer_uid};
		}
	}
	view.ncontainers = i;
	if (r >= 0)
		r = statefile_text(&view, d->cfg.policy_file, ret_text);
	for (size_t k = 0; k < view.ncontainers; k++) {
		free(view.containers[k].procs);
		free(view.containers[k].nodev);
	}
	free(view.containers);
	return r;
}

static void start_write(struct devwld *d, struct state_writer *w)
{
	char *text = NULL;
	uint64_t seq = d->state.seq;
	int r = state_text(d, &text);

	d->state.last_start_ms = now_ms();
	d->state.urgent = false;
	if (r < 0) {
		finished(d, NULL, seq, r);
		return;
	}
	d->state.dirty = false;
	if (d->state.last && !strcmp(text, d->state.last)) {
		free(text);
		if (seq > d->state.tried_seq)
			d->state.tried_seq = seq;
		written(d);
		return;
	}
	if (!w) {
		finished(d, text, seq, write_atomic(d->cfg.state_file, text));
		return;
	}
	pthread_mutex_lock(&w->lock);
	w->todo = text;
	w->todo_seq = seq;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

void state_changed(struct devwld *d)
{
	d->state.dirty = true;
	d->state.seq++;
}

void state_urgent(struct devwld *d)
{
	d->state.urgent = true;
}

bool state_written(const struct devwld *d, uint64_t seq)
{
	return d->state.tried_seq >= seq;
}

int state_flush(struct devwld *d)
{
	struct state_writer *w;
	uint64_t now, due;

	if (!d->cfg.state_file || d->state.frozen)
		return -1;
	w = writer_get(d);
	if (w)
		collect(d, w);
	if (!d->state.dirty || (w && !writer_idle(w)))
		return -1;
	now = now_ms();
	due = d->state.urgent ? now : d->state.last_start_ms + STATE_INTERVAL_MS;
	if (due < d->state.retry_ms)
		due = d->state.retry_ms;
	if (now < due)
		return (int)(due - now);
	start_write(d, w);
	return -1;
}

void state_sync(struct devwld *d)
{
	struct state_writer *w;

	if (!d->cfg.state_file || d->state.frozen)
		return;
	w = writer_get(d);
	for (int pass = 0; pass < 2; pass++) {
		if (w) {
			pthread_mutex_lock(&w->lock);
			while (w->todo || w->busy)
				pthread_cond_wait(&w->cond, &w->lock);
			pthread_mutex_unlock(&w->lock);
			collect(d, w);
		}
		/* The first pass writes what changed, the second waits for that write. */
		if (pass == 0 && d->state.dirty)
			start_write(d, w);
	}
}

void state_fini(struct devwld *d)
{
	struct state_writer *w = d->state.writer;

	if (w) {
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		free(w->todo);
		free(w->done);
		close(w->src.fd);
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		free(w);
		d->state.writer = NULL;
	}
	free(d->state.last);
	d->state.last = NULL;
}

/* Keep a state file not taken (why: corrupt, other-policy) out of the way of the next
 * write, for a post-mortem. */
static void set_aside(const char *file, const char *why)
{
	_cleanup_free_ char *to = NULL;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (asprintf(&to, "%s.%s-%s", file, why, stamp) < 0)
		return;
	if (rename(file, to) < 0)
		log_msg("state %s: cannot set it aside: %m", file);
	else
		log_msg("state %s: set aside as %s", file, to);
}

/*
 * The inherited slots the state does not name: a process attached after the last write
 * (or before a write that failed). The keeper's record says whose it is; it comes from
 * shared memory a dead worker wrote, so it is checked like any input, and one that does
 * not pass is let go loudly. Returns the processes restored.
 */
static unsigned int restore_recorded(struct devwld *d)
{
	unsigned char rec[KEEPER_REC_MAX];
	uint32_t n = keeper_link_nslots(&d->keeper);
	unsigned int restored = 0;

	for (uint32_t slot = 0; slot < n; slot++) {
		struct slot_owner_buf b;
		const char *why = "";
		uint64_t tag = 0;
		ssize_t len = keeper_link_record(&d->keeper, slot, rec, &tag);
		int fd, r;

		if (len == -ENOENT)
			continue;
		if (len == 0) {
			log_msg("keeper: slot %u is in no state and has no record", slot);
			continue;
		}
		r = len < 0 ? (int)len : slotrec_decode(rec, (size_t)len, &b, &why);
		if (r < 0) {
			log_msg("keeper: slot %u: its record is unusable (%s)", slot,
				len < 0 ? "length out of bounds" : why);
			continue;
		}
		fd = keeper_link_claim(&d->keeper, slot, tag);
		if (fd < 0)
			continue;
		r = container_restore(d, b.owner.id, b.owner.node, b.owner.created, fd, b.owner.pid,
				      b.owner.peer_uid, b.owner.peer_pid, slot, tag);
		if (r < 0) {
			/* container_restore let go of it (the keeper's copy too). */
			log_msg("keeper: slot %u: process %d of container %s: cannot restore it "
				"(%s); let go",
				slot, (int)b.owner.pid, b.owner.id, strerror(-r));
			continue;
		}
		log_msg("container %s: process %d restored from the keeper's record (slot %u, "
			"attached after the last state write)",
			b.owner.id, (int)b.owner.pid, slot);
		if (b.owner.kernel)
			kernelmode_restore(d, container_find(d, b.owner.peer_uid, b.owner.id),
					   b.owner.pid, b.owner.peer_uid);
		restored++;
	}
	return restored;
}

/* Put what was read in place: it is all valid, so nothing here can half-fail. */
static void commit(struct devwld *d, struct saved *s)
{
	unsigned int kept = 0, lost = 0, recorded;

	devwl_policy_free(d->policy);
	d->policy = TAKE_PTR(s->policy);
	strset_clear(&d->ondemand);
	d->ondemand = s->ondemand;
	s->ondemand = (struct strset){0};
	strset_clear(&d->ruled);
	d->ruled = s->ruled;
	s->ruled = (struct strset){0};
	/* An older state: the nodes its containers were on are what was made for them. */
	for (size_t i = 0; !s->has_ruled && i < s->ncontainers; i++)
		if (strset_find(&d->ondemand, s->containers[i].node) >= 0 &&
		    strset_add(&d->ruled, s->containers[i].node) < 0)
			log_msg("state: out of memory");
	edits_clear(&d->edits);
	d->edits = s->edits;
	s->edits = (struct edits){0};
	/* What the bindings were last written as is in the hierarchy restored; what changed
	 * while no worker listened is written now, before any container is served again. */
	bindings_clear(&d->bindings);
	d->bindings = s->bindings;
	s->bindings = (struct bindings){0};
	if (follow_refresh(d, false, "devwld restarted"))
		state_changed(d);
	if (d->cfg.policy_file && s->policy_text) {
		struct devwl_error err = {0};
		struct mapping m = {0};

		/* The mapping comes from the text the hierarchy came from: the two match. */
		if (policy_parse_text(d->cfg.policy_file, s->policy_text, NULL, &m, NULL, &err) >=
		    0) {
			mapping_clear(&d->mapping);
			d->mapping = m;
			free(d->policy_text);
			d->policy_len = strlen(s->policy_text);
			d->policy_text = TAKE_PTR(s->policy_text);
		} else {
			log_msg("state: its policy text no longer parses (%s); container matching"
				" comes from %s",
				err.msg, d->cfg.policy_file);
		}
	}
	for (size_t i = 0; i < s->ncontainers; i++) {
		struct saved_container *c = &s->containers[i];

		for (size_t j = 0; j < c->nprocs; j++) {
			struct saved_proc *p = &c->procs[j];
			int fd = keeper_link_claim(&d->keeper, p->slot, p->tag);

			if (fd < 0) {
				lost++;
				continue;
			}
			if (container_restore(d, c->id, c->node, c->created, fd, p->pid,
					      p->peer_uid, p->peer_pid, p->slot, p->tag) < 0) {
				lost++;
				continue;
			}
			kept++;
			/* Its opens are not trapped: its cgroup must follow the policy again. */
			if (c->kernel)
				kernelmode_restore(d, container_find(d, c->owner, c->id), p->pid,
						   p->peer_uid);
		}
	}
	/* The devices attached to them: their grants are in the hierarchy restored. */
	for (size_t i = 0; i < s->ncontainers; i++) {
		struct saved_container *sc = &s->containers[i];
		struct container *c = container_find(d, sc->owner, sc->id);

		/* As store.c takes it: a state file an older devwld wrote may hold a name
		 * another owner's runtime claimed. */
		if (c && !c->k8s_name && sc->k8s_name)
			container_set_k8s_name(c, strdup(sc->k8s_name));
		if (c && !c->rt_name && sc->rt_name)
			container_set_rt_name(c, strdup(sc->rt_name));
		/* Its nodes on nodev mounts open after a restart as before it. */
		for (size_t j = 0; c && j < sc->nnodev; j++)
			(void)devwl_nodeset_add(c->nodeset, sc->nodev[j].dev, sc->nodev[j].ino);
		/* Once: tested before the first, not after each (which stopped at one). */
		if (!c || c->nattached)
			continue;
		for (size_t j = 0; j < sc->nattached; j++)
			if (attach_restore(c, &sc->attached[j]) < 0)
				log_msg("state: container %s: out of memory restoring its attached"
					" devices",
					c->id);
	}
	/* Then those attached after the write, whose container may be one of the state's.
	 * Only with a state: without one, the hierarchy they were served under (devwlctl's
	 * revocations among it) is unknown, and the policy file alone could grant them
	 * more; they are let go (daemon.c), as every process is. */
	recorded = restore_recorded(d);
	keeper_link_release_unclaimed(&d->keeper);
	/* Gone while nobody watched: its node goes as it would have then. */
	for (size_t i = 0; i < s->ncontainers; i++)
		if (!container_find(d, s->containers[i].owner, s->containers[i].id))
			policy_forget_node(d, s->containers[i].node);
	log_msg("state: restored %zu nodes, %u containers, %u processes (%u of them from the "
		"keeper's records)%s",
		devwl_policy_count(d->policy), d->ncontainers, kept + recorded, recorded,
		lost ? " (processes that exited meanwhile were dropped)" : "");
}

/*
 * The state file, opened if it is devwld's own: not a symlink, a regular file of our uid
 * that nobody else may read or write (what state writes make). Anything else is what
 * someone else could have written, or could have read the slot tags from: -EPERM with
 * why; -ENOENT when there is none.
 */
static int open_own(const char *file, const char **ret_why)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	/* O_NONBLOCK: a FIFO in its place must not stall the start. */
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0 && errno == ELOOP)
		*ret_why = "a symlink";
	if (fd < 0)
		return errno == ELOOP ? -EPERM : negerrno();
	if (fstat(fd, &st) < 0)
		return negerrno();
	if (!S_ISREG(st.st_mode))
		*ret_why = "not a regular file";
	else if (st.st_uid != geteuid())
		*ret_why = "owned by another uid";
	else if (st.st_mode & 077)
		*ret_why = "readable or writable by others than its owner";
	else
		return TAKE_FD(fd);
	return -EPERM;
}

int state_restore(struct devwld *d)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	struct devwl_error err = {0};
	struct saved s = {0};
	const char *why = "";
	size_t len = 0;
	int r;

	if (!d->cfg.state_file)
		return 0;
	fd = open_own(d->cfg.state_file, &why);
	if (fd == -ENOENT)
		return 0;
	if (fd == -EPERM) {
		/* Set aside unread: its grants are nobody's word, as if it were corrupt. */
		log_msg("state %s is not trusted (%s; devwld's own are mode 0600, uid %u): set "
			"aside unread, starting from the policy file",
			d->cfg.state_file, why, (unsigned int)geteuid());
		set_aside(d->cfg.state_file, "untrusted");
		return 0;
	}
	r = fd < 0 ? devwl_error_set(&err, fd, 0, "%s: %s", d->cfg.state_file, strerror(-fd))
		   : read_text_fd(fd, d->cfg.state_file, STATE_TEXT_MAX, &text, &len, &err);
	if (r >= 0)
		r = parse_state(d->cfg.state_file, text, &s, &err);
	if (r < 0) {
		log_msg("state %s is unusable, starting from the policy file: %s",
			d->cfg.state_file, err.msg[0] ? err.msg : strerror(-r));
		saved_clear(&s);
		if (r != -ENOMEM)
			set_aside(d->cfg.state_file, "corrupt");
		return 0;
	}
	if (!d->cfg.policy_file && s.policy_text) {
		/*
		 * Its hierarchy came from a policy file this devwld was not given: taken as is,
		 * it would keep whatever that file granted, where containers should get the
		 * default device set. Not this configuration's state.
		 */
		log_msg("state %s was written under a policy file, and devwld now runs without"
			" --policy: set aside, starting with the default device set",
			d->cfg.state_file);
		saved_clear(&s);
		set_aside(d->cfg.state_file, "other-policy");
		return 0;
	}
	commit(d, &s);
	saved_clear(&s);
	state_changed(d);
	return 1;
}

uint64_t state_seq(const struct devwld *d)
{
	return d->state.seq;
}

uint64_t state_writes(const struct devwld *d)
{
	return d->state.writes;
}

void state_freeze(struct devwld *d)
{
	d->state.frozen = true;
}
