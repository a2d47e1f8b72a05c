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
 * a planned restart or a stop writes synchronously (state_sync). A crash loses at most the
 * processes attached since the last finished write: a new worker lets their fds go (the
 * keeper's too), so their calls fail ENOSYS, never hang; every process attached before
 * that write is served again.
 * Read all or nothing: a file that does not parse or validate is renamed aside
 * (FILE.corrupt-TIMESTAMP) and devwld starts from the policy file instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "allowlist.h"

#include "devwld.h"
#include "fileio.h"
#include "jsonutil.h"
#include "keeper.h"
#include "sink.h"
#include "util.h"

#define STATE_VERSION 1
/* A policy text is at most 16 MiB; the hierarchy and the table come on top. */
#define STATE_TEXT_MAX (64u << 20)
/* After a failed write (disk full, say), try again this much later, not every round. */
#define RETRY_MS 1000
/* At most one write per this long: attaches in between are coalesced into it. */
#define STATE_INTERVAL_MS 100

struct saved_proc {
	uint32_t slot;
	uint64_t tag;
	pid_t pid, peer_pid;
	uid_t peer_uid;
};

struct saved_container {
	char *id, *node;
	bool created;
	bool kernel; /* in kernel mode (kernelmode.c) */
	struct saved_proc *procs;
	size_t nprocs;
};

struct saved {
	struct devwl_policy *policy;
	char *policy_text;
	struct strset ondemand;
	struct edits edits;
	struct saved_container *containers;
	size_t ncontainers;
};

static void saved_clear(struct saved *s)
{
	devwl_policy_free(s->policy);
	free(s->policy_text);
	strset_clear(&s->ondemand);
	edits_clear(&s->edits);
	for (size_t i = 0; i < s->ncontainers; i++) {
		free(s->containers[i].id);
		free(s->containers[i].node);
		free(s->containers[i].procs);
	}
	free(s->containers);
	*s = (struct saved){0};
}

/* ---- writing ------------------------------------------------------------------------ */

/* json-c's null is the NULL object, which json_add() takes for a failed constructor. */
static int add_string_or_null(struct json_object *obj, const char *key, const char *s)
{
	if (s)
		return json_add(obj, key, json_object_new_string(s));
	return json_object_object_add(obj, key, NULL) < 0 ? -ENOMEM : 0;
}

static struct json_object *container_json(const struct container *c)
{
	struct json_object *obj = json_object_new_object(), *procs = json_object_new_array();
	int r = obj && procs ? 0 : -ENOMEM;

	if (r >= 0)
		r = json_add(obj, "id", json_object_new_string(c->id));
	if (r >= 0)
		r = json_add(obj, "node", json_object_new_string(c->node_path));
	if (r >= 0)
		r = json_add(obj, "created_node", json_object_new_boolean(c->created_node));
	/* Absent means false: state files of earlier versions read the same. */
	if (r >= 0 && kernelmode_wanted(c))
		r = json_add(obj, "kernel", json_object_new_boolean(true));
	for (struct list_head *l = c->procs.next; r >= 0 && l != &c->procs; l = l->next) {
		const struct cproc *p = container_of(l, struct cproc, link);
		struct json_object *po;
		char tag[17];

		if (!p->has_slot)
			continue;
		po = json_object_new_object();
		if (!po) {
			r = -ENOMEM;
			break;
		}
		snprintf(tag, sizeof(tag), "%016" PRIx64, p->tag);
		r = json_add(po, "slot", json_object_new_int64(p->slot));
		if (r >= 0)
			r = json_add(po, "tag", json_object_new_string(tag));
		if (r >= 0)
			r = json_add(po, "pid", json_object_new_int64(p->pid));
		if (r >= 0)
			r = json_add(po, "peer_uid", json_object_new_int64(p->peer_uid));
		if (r >= 0)
			r = json_add(po, "peer_pid", json_object_new_int64(p->peer_pid));
		if (r >= 0)
			r = json_push(procs, po);
		else
			json_object_put(po);
	}
	if (r >= 0)
		r = json_add(obj, "procs", procs);
	else
		json_object_put(procs);
	if (r < 0) {
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

static int state_text(struct devwld *d, char **ret_text)
{
	_cleanup_free_ char *hier_text = NULL;
	struct json_object *top = NULL, *hier = NULL, *arr = NULL;
	const char *s;
	int r;

	r = devwl_policy_to_string(d->policy, &hier_text);
	if (r < 0)
		return r;
	hier = json_tokener_parse(hier_text);
	top = json_object_new_object();
	r = hier && top ? 0 : -ENOMEM;
	if (r >= 0)
		r = json_add(top, "devwld_state", json_object_new_int(STATE_VERSION));
	if (r >= 0)
		r = add_string_or_null(top, "policy_file", d->cfg.policy_file);
	if (r >= 0)
		r = add_string_or_null(top, "policy_text", d->policy_text);
	if (r >= 0) {
		r = json_add(top, "hierarchy", hier);
		hier = NULL;
	}
	if (r >= 0) {
		arr = json_object_new_array();
		for (size_t i = 0; arr && r >= 0 && i < d->ondemand.n; i++)
			r = json_push(arr, json_object_new_string(d->ondemand.v[i]));
		r = r >= 0 ? json_add(top, "ondemand", arr) : (json_object_put(arr), r);
	}
	if (r >= 0) {
		arr = json_object_new_array();
		for (size_t i = 0; arr && r >= 0 && i < d->edits.n; i++)
			r = json_push(arr, json_object_new_string_len(d->edits.v[i].line,
								      (int)d->edits.v[i].len));
		r = r >= 0 ? json_add(top, "edits", arr) : (json_object_put(arr), r);
	}
	if (r >= 0) {
		arr = json_object_new_array();
		for (struct list_head *l = d->containers.next; arr && r >= 0 && l != &d->containers;
		     l = l->next)
			r = json_push(arr, container_json(container_of(l, struct container, link)));
		r = r >= 0 ? json_add(top, "containers", arr) : (json_object_put(arr), r);
	}
	if (r >= 0) {
		s = json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY |
								JSON_C_TO_STRING_NOSLASHESCAPE);
		*ret_text = s ? strdup(s) : NULL;
		r = *ret_text ? 0 : -ENOMEM;
	}
	json_object_put(hier);
	json_object_put(top);
	return r;
}

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

	if (r == -ENOENT && mkdir_parents(file) >= 0)
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

/* Start the thread (once, lazily: after the feature probe's fork). Without it, writes
 * happen on the loop, as a fallback. */
static struct state_writer *writer_get(struct devwld *d)
{
	struct state_writer *w = d->state_writer;
	int r;

	if (w || d->state_no_thread)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto fail;
	w->file = d->cfg.state_file;
	w->src.kind = SOURCE_STATE;
	w->src.free_fn = writer_src_free;
	w->src.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->src.fd < 0)
		goto fail;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	r = thread_start(&w->thread, writer_main, w);
	if (r != 0) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		errno = r;
		goto fail;
	}
	/* Unwatched, finished writes are still seen each round (state_flush). */
	if (loop_arm(d, &w->src, POLLIN) < 0)
		log_msg("state: cannot watch the writer's eventfd; checking each round");
	d->state_writer = w;
	return w;
fail:
	log_msg("state: no writer thread (%m): writing on the event loop");
	if (w && w->src.fd >= 0)
		close(w->src.fd);
	free(w);
	d->state_no_thread = true;
	return NULL;
}

/* A write finished (text written, or not: r): take it into account. */
static void finished(struct devwld *d, char *text, uint64_t seq, int r)
{
	if (r < 0) {
		if (!d->state_retry_ms)
			log_msg("state %s: cannot write: %s (retrying)", d->cfg.state_file,
				strerror(-r));
		d->state_retry_ms = now_ms() + RETRY_MS;
		d->state_dirty = true;
		free(text);
	} else {
		if (d->state_retry_ms)
			log_msg("state %s: written again", d->cfg.state_file);
		d->state_retry_ms = 0;
		free(d->state_last);
		d->state_last = text;
		d->state_writes++;
	}
	/* Tried, at least: what waited for it may go on (a failure is logged). */
	if (seq > d->state_tried_seq)
		d->state_tried_seq = seq;
	control_state_written(d);
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

void state_ready(struct devwld *d)
{
	struct state_writer *w = d->state_writer;
	uint64_t n;

	while (read(w->src.fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		;
	collect(d, w);
	if (loop_arm(d, &w->src, POLLIN) < 0)
		log_msg("state: cannot watch the writer's eventfd; checking each round");
}

/* Serialise now and hand the text on (or write it here, without a thread). */
static void start_write(struct devwld *d, struct state_writer *w)
{
	char *text = NULL;
	uint64_t seq = d->state_seq;
	int r = state_text(d, &text);

	d->state_last_start_ms = now_ms();
	d->state_urgent = false;
	if (r < 0) {
		finished(d, NULL, seq, r);
		return;
	}
	d->state_dirty = false;
	if (d->state_last && !strcmp(text, d->state_last)) {
		free(text);
		if (seq > d->state_tried_seq)
			d->state_tried_seq = seq;
		control_state_written(d);
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
	d->state_dirty = true;
	d->state_seq++;
}

void state_urgent(struct devwld *d)
{
	d->state_urgent = true;
}

bool state_written(const struct devwld *d, uint64_t seq)
{
	return d->state_tried_seq >= seq;
}

int state_flush(struct devwld *d)
{
	struct state_writer *w;
	uint64_t now, due;

	if (!d->cfg.state_file || d->state_frozen)
		return -1;
	w = writer_get(d);
	if (w)
		collect(d, w);
	if (!d->state_dirty || (w && !writer_idle(w)))
		return -1;
	now = now_ms();
	due = d->state_urgent ? now : d->state_last_start_ms + STATE_INTERVAL_MS;
	if (due < d->state_retry_ms)
		due = d->state_retry_ms;
	if (now < due)
		return (int)(due - now);
	start_write(d, w);
	return -1;
}

void state_sync(struct devwld *d)
{
	struct state_writer *w;

	if (!d->cfg.state_file || d->state_frozen)
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
		if (pass == 0 && d->state_dirty)
			start_write(d, w);
	}
}

void state_fini(struct devwld *d)
{
	struct state_writer *w = d->state_writer;

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
		d->state_writer = NULL;
	}
	free(d->state_last);
	d->state_last = NULL;
}

/* ---- reading ------------------------------------------------------------------------ */

static int get(struct json_object *obj, const char *key, enum json_type type,
	       struct json_object **ret, bool nullable, struct devwl_error *err)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(obj, key, &v))
		return devwl_error_set(err, -EINVAL, 0, "\"%s\" missing", key);
	if (nullable && json_object_is_type(v, json_type_null)) {
		*ret = NULL;
		return 0;
	}
	if (!json_object_is_type(v, type))
		return devwl_error_set(err, -EINVAL, 0, "\"%s\" has the wrong type", key);
	*ret = v;
	return 0;
}

static int get_uint(struct json_object *obj, const char *key, uint64_t max, uint64_t *ret,
		    struct devwl_error *err)
{
	struct json_object *v = NULL;
	int64_t n;
	int r = get(obj, key, json_type_int, &v, false, err);

	if (r < 0)
		return r;
	n = json_object_get_int64(v);
	if (n < 0 || (uint64_t)n > max)
		return devwl_error_set(err, -EINVAL, 0, "\"%s\" out of range", key);
	*ret = (uint64_t)n;
	return 0;
}

static int parse_proc(struct json_object *po, struct saved_proc *p, struct devwl_error *err)
{
	struct json_object *tag = NULL;
	uint64_t v = 0;
	char *end = NULL;
	int r;

	if (!json_object_is_type(po, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "a process is not an object");
	r = get_uint(po, "slot", KEEPER_SLOTS_MAX - 1, &v, err);
	p->slot = (uint32_t)v;
	if (r >= 0)
		r = get_uint(po, "pid", INT32_MAX, &v, err);
	p->pid = (pid_t)v;
	if (r >= 0)
		r = get_uint(po, "peer_pid", INT32_MAX, &v, err);
	p->peer_pid = (pid_t)v;
	if (r >= 0)
		r = get_uint(po, "peer_uid", UINT32_MAX, &v, err);
	p->peer_uid = (uid_t)v;
	if (r >= 0)
		r = get(po, "tag", json_type_string, &tag, false, err);
	if (r < 0)
		return r;
	errno = 0;
	p->tag = strtoull(json_object_get_string(tag), &end, 16);
	if (errno || json_object_get_string_len(tag) != 16 || *end)
		return devwl_error_set(err, -EINVAL, 0, "bad process \"tag\"");
	return 0;
}

static int parse_container(struct json_object *co, struct saved_container *c,
			   struct devwl_error *err)
{
	struct json_object *v = NULL, *procs = NULL;
	int r;

	if (!json_object_is_type(co, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "a container is not an object");
	r = get(co, "id", json_type_string, &v, false, err);
	if (r < 0)
		return r;
	c->id = strdup(json_object_get_string(v));
	r = get(co, "node", json_type_string, &v, false, err);
	if (r < 0)
		return r;
	c->node = strdup(json_object_get_string(v));
	if (!c->id || !c->node)
		return -ENOMEM;
	if (!*c->id || devwl_node_path_valid(c->node) < 0)
		return devwl_error_set(err, -EINVAL, 0, "container \"%.64s\": bad id or node",
				       c->id);
	r = get(co, "created_node", json_type_boolean, &v, false, err);
	if (r < 0)
		return r;
	c->created = json_object_get_boolean(v);
	if (json_object_object_get_ex(co, "kernel", NULL)) {
		r = get(co, "kernel", json_type_boolean, &v, false, err);
		if (r < 0)
			return r;
		c->kernel = json_object_get_boolean(v);
	}
	r = get(co, "procs", json_type_array, &procs, false, err);
	if (r < 0)
		return r;
	c->procs = calloc(json_object_array_length(procs) + 1, sizeof(*c->procs));
	if (!c->procs)
		return -ENOMEM;
	for (size_t i = 0; i < json_object_array_length(procs); i++) {
		r = parse_proc(json_object_array_get_idx(procs, i), &c->procs[c->nprocs], err);
		if (r < 0)
			return r;
		c->nprocs++;
	}
	return 0;
}

static int parse_state(const char *file, const char *text, struct saved *s, struct devwl_error *err)
{
	enum json_tokener_error jerr = json_tokener_success;
	struct json_object *top = json_tokener_parse_verbose(text, &jerr);
	struct json_object *v = NULL, *arr = NULL;
	int r;

	if (!top)
		return devwl_error_set(err, -EINVAL, 0, "%s", json_tokener_error_desc(jerr));
	r = get(top, "devwld_state", json_type_int, &v, false, err);
	if (r >= 0 && json_object_get_int(v) != STATE_VERSION)
		r = devwl_error_set(err, -EINVAL, 0, "version %d, not %d", json_object_get_int(v),
				    STATE_VERSION);
	if (r >= 0)
		r = get(top, "policy_text", json_type_string, &v, true, err);
	if (r >= 0 && v && !(s->policy_text = strdup(json_object_get_string(v))))
		r = -ENOMEM;
	if (r >= 0)
		r = get(top, "hierarchy", json_type_object, &v, false, err);
	if (r >= 0) {
		struct devwl_error perr = {0};

		r = devwl_policy_load_string(json_object_to_json_string(v), file, &s->policy,
					     &perr);
		if (r < 0)
			devwl_error_set(err, r, 0, "hierarchy: %s", perr.msg);
	}
	if (r >= 0)
		r = get(top, "ondemand", json_type_array, &arr, false, err);
	for (size_t i = 0; r >= 0 && i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		if (!json_object_is_type(e, json_type_string) ||
		    devwl_node_path_valid(json_object_get_string(e)) < 0)
			r = devwl_error_set(err, -EINVAL, 0, "\"ondemand\"[%zu] is not a node path",
					    i);
		else
			r = strset_add(&s->ondemand, json_object_get_string(e));
	}
	/* Optional: states written before edits were kept have none. */
	if (r >= 0 && json_object_object_get_ex(top, "edits", &arr)) {
		if (!json_object_is_type(arr, json_type_array))
			r = devwl_error_set(err, -EINVAL, 0, "\"edits\" has the wrong type");
		for (size_t i = 0; r >= 0 && i < json_object_array_length(arr); i++) {
			struct json_object *e = json_object_array_get_idx(arr, i);
			const char *line = json_object_get_string(e);
			size_t len = (size_t)json_object_get_string_len(e);

			if (!json_object_is_type(e, json_type_string) || !edit_is_change(line, len))
				r = devwl_error_set(err, -EINVAL, 0,
						    "\"edits\"[%zu] is not a devwlctl change", i);
			else
				r = edits_add(&s->edits, line, len);
		}
	}
	if (r >= 0)
		r = get(top, "containers", json_type_array, &arr, false, err);
	if (r >= 0) {
		s->containers = calloc(json_object_array_length(arr) + 1, sizeof(*s->containers));
		if (!s->containers)
			r = -ENOMEM;
	}
	for (size_t i = 0; r >= 0 && i < json_object_array_length(arr); i++) {
		r = parse_container(json_object_array_get_idx(arr, i),
				    &s->containers[s->ncontainers], err);
		s->ncontainers++;
	}
	json_object_put(top);
	return r;
}

/* Keep a bad state file for a post-mortem, out of the way of the next write. */
static void set_aside(const char *file)
{
	_cleanup_free_ char *to = NULL;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (asprintf(&to, "%s.corrupt-%s", file, stamp) < 0)
		return;
	if (rename(file, to) < 0)
		log_msg("state %s: cannot set it aside: %m", file);
	else
		log_msg("state %s: set aside as %s", file, to);
}

/* Put what was read in place: it is all valid, so nothing here can half-fail. */
static void commit(struct devwld *d, struct saved *s)
{
	unsigned int kept = 0, lost = 0;

	devwl_policy_free(d->policy);
	d->policy = TAKE_PTR(s->policy);
	strset_clear(&d->ondemand);
	d->ondemand = s->ondemand;
	s->ondemand = (struct strset){0};
	edits_clear(&d->edits);
	d->edits = s->edits;
	s->edits = (struct edits){0};
	if (d->cfg.policy_file && s->policy_text) {
		struct devwl_error err = {0};
		struct mapping m = {0};

		/* The mapping comes from the text the hierarchy came from: the two match. */
		if (store_parse_text(d->cfg.policy_file, s->policy_text, NULL, &m, &err) >= 0) {
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
		unsigned int attached = 0;

		for (size_t j = 0; j < c->nprocs; j++) {
			struct saved_proc *p = &c->procs[j];
			int fd = keeper_link_claim(d, p->slot, p->tag);

			if (fd < 0) {
				lost++;
				continue;
			}
			if (container_restore(d, c->id, c->node, c->created, fd, p->pid,
					      p->peer_uid, p->peer_pid, p->slot, p->tag) < 0) {
				lost++;
				continue;
			}
			attached++;
			kept++;
			/* Its opens are not trapped: its cgroup must follow the policy again. */
			if (c->kernel)
				kernelmode_restore(d, container_find(d, c->id), p->pid);
		}
		/* Gone while nobody watched: its node goes as it would have then. */
		if (!attached)
			store_forget_node(d, c->node);
	}
	keeper_link_release_unclaimed(d);
	log_msg("state: restored %zu nodes, %u containers, %u processes%s",
		devwl_policy_count(d->policy), d->ncontainers, kept,
		lost ? " (processes that exited meanwhile were dropped)" : "");
}

int state_restore(struct devwld *d)
{
	_cleanup_free_ char *text = NULL;
	struct devwl_error err = {0};
	struct saved s = {0};
	size_t len = 0;
	int r;

	if (!d->cfg.state_file)
		return 0;
	r = read_text(d->cfg.state_file, STATE_TEXT_MAX, &text, &len, &err);
	if (r == -ENOENT)
		return 0;
	if (r >= 0)
		r = parse_state(d->cfg.state_file, text, &s, &err);
	if (r < 0) {
		log_msg("state %s is unusable, starting from the policy file: %s",
			d->cfg.state_file, err.msg[0] ? err.msg : strerror(-r));
		saved_clear(&s);
		if (r != -ENOMEM)
			set_aside(d->cfg.state_file);
		return 0;
	}
	commit(d, &s);
	saved_clear(&s);
	state_changed(d);
	return 1;
}
