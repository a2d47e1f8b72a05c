/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket for devwlctl: the batch protocol of devwlctl(1), one command per
 * line, answered by the very batch_exec() that `devwlctl batch` uses, so the daemon and
 * the what-if tool answer identically. The daemon adds a few commands of its own:
 *
 *   containers                        "ID NODE PROCESSES NOTIFICATIONS MODE OWNER NAME"
 *                                     lines, then "."
 *   stats                             "name value" lines, then "."
 *   mknod_needs_cap NODE true|false   the CAP_MKNOD waiver (devwl-policy(5))
 *   learn NODE on|off                 learn mode (learning.h): a change kept for reloads
 *   advise [owner=UID] NAME           the policy learnt for a node ("/...") or container,
 *                                     a devwl-policy(5) file, then "."
 *   reload                            as SIGHUP
 *   reset                             reload without the devwlctl changes since the last load
 *   restart                           as SIGUSR2: hand over to a new devwld (devwld(8))
 *   events [all] [[owner=UID] container=NAME]
 *                                     "ok", then one audit line per decision (events.c);
 *                                     the first and only line of its connection
 *   attach JSON                       a device into a running container (attach.c):
 *                                     {"container","device","owner","dry_run","path",
 *                                     "access","mode","uid","gid","parent_grant"}, all
 *                                     but the first two optional; answered by one line
 *                                     saying what was done, then "."
 *   detach JSON                       {"container","device","owner","dry_run"}: a device
 *                                     or its path; answered as attach is. Both answer
 *                                     once the node's walk in the container's root ends
 *                                     on a work thread, or at its deadline (attach.h),
 *                                     the lines after them waiting
 *   devices                           the attached devices (attach-list.c), then ".";
 *                                     the first and only line of its connection,
 *                                     answered by a work thread (list_devices())
 *   selectors                         the selector bindings followed and what each
 *                                     names now (follow_list()), then "."
 *   unbind NODE allow|deny SELECTOR   drop that one binding (follow_unbind()); a change
 *                                     kept for reloads like allow and deny
 *   show NODE                         batch's listing, then the node's bindings and
 *                                     what each names now (follow_show()), then "."
 *   hook-create STATE-JSON            the OCI hook: create the container's node
 *   hook-delete STATE-JSON            the OCI hook: forget the container, remove its node
 *                                     (STATE-JSON: the runtime's state, one line, plus
 *                                     "metadata": the bundle's listenerMetadata, mapped
 *                                     as the listener's by policy_node_path())
 *
 * A container is named as resolve_owned_container() takes it (resolve.h): among root's
 * containers unless "owner" names the uid of another's runtimes.
 *
 * A connection is served until the client half-closes and every answer is written;
 * answers are buffered and written without blocking, and reading pauses while they
 * wait, so a client that does not read cannot grow devwld's memory or stall it.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "access.h"
#include "attach.h"
#include "batch.h"
#include "cdi.h"
#include "control.h"
#include "ctlverb.h"
#include "devwld.h"
#include "events.h"
#include "follow.h"
#include "listener.h"
#include "learning.h"
#include "log.h"
#include "metrics.h"
#include "policy.h"
#include "resolve.h"
#include "serve.h"
#include "sockets.h"
#include "state.h"
#include "store.h"
#include "util.h"
#include "work.h"

/* The longest batch line: a fully escaped 4096-byte rule plus a path and the command. */
#define MAX_LINE      (4 * 4096 + 4096 + 64)
#define MAX_HOOK_LINE (1024 * 1024)
/* Device listings under way at once, each on a work thread (loop/work.h) that may wait on
 * a container's FUSE server (list_devices()); one more is refused until one ends. */
#define LISTINGS_MAX 4
/* How long a listing may wait on the containers' open files before it is answered
 * ETIMEDOUT (its thread goes on alone until they answer). */
#define LISTING_DEADLINE_MS 60000

/* The listing threads under way (list_devices()); stats' device_listings. */
static atomic_uint listings;

struct ctl_conn {
	struct source src;
	struct list_head link;
	char *in;
	size_t in_len, in_cap;
	char *out;
	size_t out_len, out_off;
	bool eof, broken;
	char *events;	   /* the arguments of an "events" line: hand the socket to events.c */
	bool devices;	   /* a "devices" line: its answer comes from a work thread */
	bool busy;	   /* unwatched until a work's answer comes (resume()): attach,
			    * detach, devices, a line waiting for the CDI specs */
	uint64_t need_seq; /* its answers go out once the state covers this (state_written) */
	bool waiting;	   /* unwatched until then */
};

static void control_ready(struct devwld *d, struct source *src, int revents);
static void ctl_conn_ready(struct devwld *d, struct source *src, int revents);
static bool append_text(struct ctl_conn *conn, const char *text, size_t len);
static void resume(struct devwld *d, struct ctl_conn *conn);

int control_open(struct devwld *d, int fd)
{
	if (fd < 0)
		fd = socket_listen(d->cfg.control_path, 0600);
	if (fd < 0)
		return fd;
	d->control_src.ready = control_ready;
	d->control_src.fd = fd;
	return loop_arm(&d->loop, &d->control_src, POLLIN);
}

static void ctl_conn_free(struct source *src)
{
	struct ctl_conn *conn = container_of(src, struct ctl_conn, src);

	free(conn->in);
	free(conn->out);
	free(conn->events);
	free(conn);
}

static void ctl_close(struct devwld *d, struct ctl_conn *conn);

static void control_accept(struct devwld *d)
{
	for (int i = 0; i < 16; i++) {
		struct ctl_conn *conn;
		uid_t uid;
		pid_t pid;
		int fd = socket_accept(d->control_src.fd, "control", &uid, &pid);

		if (fd < 0)
			return;
		if (uid != 0 && uid != geteuid()) {
			log_msg("control: refusing peer pid %d uid %d (root only)", (int)pid,
				(int)uid);
			close(fd);
			continue;
		}
		conn = calloc(1, sizeof(*conn));
		if (!conn) {
			close(fd);
			return;
		}
		conn->src.ready = ctl_conn_ready;
		conn->src.fd = fd;
		conn->src.free_fn = ctl_conn_free;
		d->nctl_conns++;
		list_add_tail(&conn->link, &d->ctl_conns);
		if (loop_arm(&d->loop, &conn->src, POLLIN) < 0) {
			log_msg("control: cannot watch a connection; closing it");
			ctl_close(d, conn);
		}
	}
}

static void control_ready(struct devwld *d, struct source *src, int revents)
{
	(void)revents;
	socket_ready(d, src, control_accept, "cannot watch the control socket");
}

static void do_containers(struct devwld *d, FILE *out)
{
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		const struct container *c = container_of(l, struct container, link);

		const char *name = resolve_shown_name(c);

		fprintf(out, "%s %s %u %llu %s %u %s\n", c->id, c->node_path, c->nprocs,
			(unsigned long long)c->notifications, kernelmode_name(c),
			(unsigned int)c->owner_uid, name ? name : "-");
	}
	fputs(".\n", out);
}

static void do_stats(struct devwld *d, FILE *out)
{
	struct audit_counts a;
	unsigned int subscribers = 0;
	uint64_t dropped = 0;

	audit_counts(&d->audit, &a);
	events_stats(&subscribers, &dropped);
	fprintf(out,
		"containers %u\nprocesses %u\npending_connections %u\nnodes %zu\n"
		"notifications %llu\ncontinued %llu\nallowed %llu\ndenied %llu\n"
		"errors %llu\ngone %llu\nhandling_p50_ns %llu\nhandling_p99_ns %llu\n"
		"audit_dropped %llu\nlog_dropped %llu\nstate_writes %llu\npid %d\n"
		"generation %u\nevents_subscribers %u\nevents_dropped %llu\n"
		"device_listings %u\nwork_threads %u\ncdi_specs_parsed %lu\n",
		d->ncontainers, d->nprocs, d->noci_conns, devwl_policy_count(d->policy),
		(unsigned long long)a.notifications, (unsigned long long)a.continued,
		(unsigned long long)a.allowed, (unsigned long long)a.denied,
		(unsigned long long)a.errors, (unsigned long long)a.gone,
		(unsigned long long)a.p50_ns, (unsigned long long)a.p99_ns,
		(unsigned long long)a.dropped, (unsigned long long)log_dropped(),
		(unsigned long long)state_writes(d), (int)getpid(), d->keeper.gen, subscribers,
		(unsigned long long)dropped, atomic_load(&listings), work_threads(&d->loop),
		cdi_parses());
	/* What the command line asked for and broke after the start (metrics.h). */
	for (int i = 0; i < FEATURE_N; i++)
		fprintf(out, "%s_failures %llu\n", feature_name((enum feature)i),
			(unsigned long long)feature_failures(d, (enum feature)i));
	serve_stats(d, out);
	kernelmode_stats(d, out);
	fputs(".\n", out);
}

/* The JSON value of a command's arguments, text[0..len) (not NUL-terminated); NULL with
 * *ret json_tokener_success: out of memory (json-c 0.16 has no error for it). */
static struct json_object *args_json(const char *text, size_t len, enum json_tokener_error *ret)
{
	json_tokener *tok = json_tokener_new();
	struct json_object *obj;

	*ret = json_tokener_success;
	if (!tok)
		return NULL;
	obj = json_tokener_parse_ex(tok, text, (int)len);
	*ret = json_tokener_get_error(tok);
	json_tokener_free(tok);
	return obj;
}

static int hook_state(const char *text, size_t len, struct oci_state *st, struct devwl_error *err)
{
	enum json_tokener_error jerr;
	struct json_object *obj = args_json(text, len, &jerr);
	int r;

	if (!obj && jerr == json_tokener_success)
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	if (!obj) {
		log_msg("control: hook state: %s", json_tokener_error_desc(jerr));
		return devwl_error_set(err, -EINVAL, 0, "the container state is not JSON: %s",
				       json_tokener_error_desc(jerr));
	}
	r = oci_state_from_json(obj, false, st, err);
	json_object_put(obj);
	if (r < 0) {
		log_msg("control: hook state: %s", err->msg);
		char why[sizeof(err->msg)];

		memcpy(why, err->msg, sizeof(why));
		snprintf(err->msg, sizeof(err->msg), "the container state: %.480s", why);
	}
	return r;
}

static void do_hook(struct devwld *d, bool create, const char *json, size_t len, FILE *out)
{
	_cleanup_free_ char *path = NULL;
	struct devwl_error err = {0};
	struct oci_state st = {0};
	struct devwl_node *node = NULL;
	struct container *c;
	bool created = false;
	int r;

	r = hook_state(json, len, &st, &err);
	if (r < 0)
		goto out;
	/* The control socket is root's: so are the runtimes that run this hook. */
	c = container_find(d, 0, st.id);
	if (c) {
		path = strdup(c->node_path);
		r = path ? 0 : devwl_error_set(&err, -ENOMEM, 0, "out of memory");
	} else {
		r = policy_node_path(d, &st, 0, &path, &err);
	}
	if (r < 0)
		goto out;
	if (create) {
		r = policy_ensure_node(d, path, &node, &created);
		if (r >= 0)
			log_msg("hook: container %s: node %s %s", st.id, path,
				created ? "created" : "exists");
		else
			devwl_error_set(&err, r, 0, "container %s: cannot make node %s: %s", st.id,
					path, strerror(-r));
	} else {
		/* poststop runs once the container's processes are gone, possibly before we
		 * saw their notify fds hang up. */
		if (c)
			container_drop(d, c);
		/* Only a node made for containers goes: one the policy file or devwlctl
		 * mkdir made (org.devwl.node may name it) stays with its rules. */
		log_msg("hook: container %s: node %s %s", st.id, path,
			policy_forget_node(d, path) ? "removed" : "kept");
	}
out:
	if (r < 0)
		batch_reply_error(out, r, "%s", err.msg[0] ? err.msg : strerror(-r));
	else
		fputs("ok\n", out);
	oci_state_clear(&st);
}

/* A member of an attach/detach object: a string, or an unsigned number up to max. */
static int member(struct json_object *o, const char *key, bool number, unsigned long max,
		  const char **ret_s, unsigned long *ret_n, struct devwl_error *err)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!number) {
		if (!json_object_is_type(v, json_type_string))
			return devwl_error_set(err, -EINVAL, 0, "\"%s\" must be a string", key);
		*ret_s = json_object_get_string(v);
		return 1;
	}
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
	    (uint64_t)json_object_get_int64(v) > max)
		return devwl_error_set(err, -EINVAL, 0, "\"%s\" must be a number from 0 to %lu",
				       key, max);
	*ret_n = (unsigned long)json_object_get_int64(v);
	return 1;
}

static void attach_answer(struct devwld *d, void *ctx, int r, const struct devwl_error *err,
			  const char *said);

/* conn: whose line it is, told the answer when the attach or detach ends off the loop;
 * NULL (control_exec()): not waited for, "ok" once it is under way. */
static void do_attach(struct devwld *d, struct ctl_conn *conn, bool attach, const char *json,
		      size_t len, FILE *out)
{
	/* The first four, detach's too. */
	static const char *const known[] = {"container", "device",	"owner", "dry_run",
					    "path",	 "access",	"mode",	 "uid",
					    "gid",	 "parent_grant"};
	struct attach_req req = {.owner = RESOLVE_ROOT, .uid = (uid_t)-1, .gid = (gid_t)-1};
	struct devwl_error err = {0};
	enum json_tokener_error jerr;
	struct json_object *o = args_json(json, len, &jerr), *pg = NULL, *dry = NULL;
	char said[ATTACH_SAID_MAX] = "";
	const char *acc = NULL;
	unsigned long n = 0;
	int r = 0;

	if (!o || !json_object_is_type(o, json_type_object)) {
		r = devwl_error_set(&err, -EINVAL, 0, "%s: the arguments are no JSON object",
				    attach ? "attach" : "detach");
		goto out;
	}
	json_object_object_foreach (o, key, val) {
		size_t i = 0;

		(void)val;
		while (i < (attach ? ARRAY_SIZE(known) : 4) && strcmp(key, known[i]))
			i++;
		if (i == (attach ? ARRAY_SIZE(known) : 4)) {
			r = devwl_error_set(&err, -EINVAL, 0, "unknown argument \"%.32s\"", key);
			goto out;
		}
	}
	if ((r = member(o, "container", false, 0, &req.container, NULL, &err)) < 0 ||
	    (r = member(o, "device", false, 0, &req.device, NULL, &err)) < 0 ||
	    (r = member(o, "path", false, 0, &req.path, NULL, &err)) < 0 ||
	    (r = member(o, "access", false, 0, &acc, NULL, &err)) < 0)
		goto out;
	if (!req.container || !req.device) {
		r = devwl_error_set(&err, -EINVAL, 0, "a container and a device are needed");
		goto out;
	}
	if ((r = member(o, "owner", true, UINT32_MAX - 1, NULL, &n, &err)) < 0)
		goto out;
	if (r > 0)
		req.owner = (uid_t)n;
	if (json_object_object_get_ex(o, "dry_run", &dry)) {
		if (!json_object_is_type(dry, json_type_boolean)) {
			r = devwl_error_set(&err, -EINVAL, 0, "\"dry_run\" must be true or false");
			goto out;
		}
		req.dry_run = json_object_get_boolean(dry);
	}
	if (!attach) {
		r = detach_device(d, req.owner, req.container, req.device, req.dry_run, said,
				  conn ? attach_answer : NULL, conn, &err);
		goto out;
	}
	if (json_object_object_get_ex(o, "parent_grant", &pg)) {
		if (!json_object_is_type(pg, json_type_boolean)) {
			r = devwl_error_set(&err, -EINVAL, 0,
					    "\"parent_grant\" must be true or false");
			goto out;
		}
		req.parent_grant = json_object_get_boolean(pg);
	}
	if ((r = member(o, "mode", true, 07777, NULL, &n, &err)) < 0)
		goto out;
	req.mode_set = r > 0;
	req.mode = (mode_t)n;
	if ((r = member(o, "uid", true, UINT32_MAX - 1, NULL, &n, &err)) < 0)
		goto out;
	if (r > 0)
		req.uid = (uid_t)n;
	if ((r = member(o, "gid", true, UINT32_MAX - 1, NULL, &n, &err)) < 0)
		goto out;
	if (r > 0)
		req.gid = (gid_t)n;
	if (acc && devwl_access_parse(acc, strlen(acc), &req.access) < 0) {
		r = devwl_error_set(&err, -EINVAL, 0,
				    "access \"%.8s\": r, w and m, each at most once", acc);
		goto out;
	}
	r = attach_device(d, &req, said, conn ? attach_answer : NULL, conn, &err);
out:
	if (r > 0 && conn)
		conn->busy = true; /* attach_answer() answers */
	else if (r < 0)
		batch_reply_error(out, r, "%s", err.msg[0] ? err.msg : strerror(-r));
	else if (said[0])
		fprintf(out, "%s\n.\n", said); /* what was done, as a one-line listing */
	else
		fputs("ok\n", out);
	json_object_put(o);
}

/* A change to the hierarchy: carried out, and kept for reloads to apply again (edits.c). */
static void do_change(struct devwld *d, const char *line, size_t len, FILE *out)
{
	int r;

	if (d->edits.n >= EDITS_MAX) {
		log_msg("control: %d devwlctl changes since the policy file was loaded; refusing"
			" more (put them in the file and run devwlctl reset)",
			EDITS_MAX);
		batch_reply_error(out, -ENOSPC,
				  "%d devwlctl changes since the policy file was loaded, the most"
				  " devwld keeps: put them in the file and run devwlctl reset",
				  EDITS_MAX);
		return;
	}
	r = policy_change(d, line, len, out);
	if (r >= 0 && edits_add(&d->edits, line, len) < 0)
		log_msg("control: out of memory: a reload will not apply this change again");
}

/* learn NODE on|off: a change like the others; turned on, the node starts a new record. */
static void do_learn(struct devwld *d, const char *line, size_t len, FILE *out)
{
	struct devwl_node *node = NULL;
	char path[4096];
	bool before = false;

	if (edit_target(line, len, path, sizeof(path)) >= 0 &&
	    (node = devwl_policy_find(d->policy, path)))
		before = learning_node(d, node) == node;
	do_change(d, line, len, out);
	if (node && !before && learning_node(d, node) == node) {
		const struct devwl_node *ceiling = learning_ceiling(node);

		learning_restart(d, path);
		log_msg("node %s learns: its containers run under %s", path,
			ceiling && ceiling == devwl_node_parent(node) ? devwl_node_path(ceiling)
								      : "the default devices");
	}
}

/* advise [owner=UID] NAME: the advice, then ".". */
static void do_advise(struct devwld *d, const char *args, size_t len, FILE *out)
{
	_cleanup_free_ char *copy = strndup(args, len);
	struct devwl_error err = {0};
	uid_t owner = RESOLVE_ROOT;
	char *name = copy;
	int r = copy ? 0 : -ENOMEM;

	if (r >= 0 && !strncmp(name, "owner=", 6)) {
		char *end = NULL;
		unsigned long uid = strtoul(name + 6, &end, 10);

		if (end == name + 6 || *end != ' ' || uid >= UINT32_MAX)
			r = devwl_error_set(&err, -EINVAL, 0,
					    "advise: expects [owner=UID] CONTAINER|NODE");
		else
			owner = (uid_t)uid, name = end + 1;
	}
	if (r >= 0 && (!*name || strchr(name, ' ')))
		r = devwl_error_set(&err, -EINVAL, 0, "advise: expects [owner=UID] CONTAINER|NODE");
	if (r >= 0)
		r = learning_advise(d, owner, name, out, &err);
	if (r < 0)
		batch_reply_error(out, r, "%s", err.msg[0] ? err.msg : strerror(-r));
	else
		fputs(".\n", out);
}

/* show NODE: the node's full listing, then the selector bindings it holds, each with
 * what it resolves to now: the listing says what the node holds, not why. */
/* "learn on", where the node learns (devwld's, not the hierarchy's: no listing has it). */
static void show_learning(struct devwld *d, const struct devwl_node *node, FILE *out)
{
	const struct devwl_node *learner = learning_node(d, node);

	if (learner == node)
		fputs("learn on\n", out);
	else if (learner)
		fprintf(out, "learn on (as %s)\n", devwl_node_path(learner));
}

static void do_show(struct devwld *d, const char *line, size_t len, size_t a, FILE *out)
{
	_cleanup_free_ char *buf = NULL, *path = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f) {
		batch_reply_error(out, -ENOMEM, "out of memory");
		return;
	}
	batch_exec(d->policy, line, len, f);
	if (fclose(f) != 0) {
		batch_reply_error(out, -ENOMEM, "out of memory");
		return;
	}
	/* Answered with a listing, so line named a node: the rest of it is the path. */
	path = strndup(line + a, len - a);
	if (!path || size < 2 || strcmp(buf + size - 2, ".\n") ||
	    (size > 2 && buf[size - 3] != '\n') || !devwl_policy_find(d->policy, path)) {
		fwrite(buf, 1, size, out);
		return;
	}
	fwrite(buf, 1, size - 2, out);
	follow_show(d, path, out);
	show_learning(d, devwl_policy_find(d->policy, path), out);
	fputs(".\n", out);
}

/* A reload or a reset, answered "ok" or with why not. */
static void do_reload(struct devwld *d, bool reset, FILE *out)
{
	struct devwl_error err = {0};
	int r = reset ? policy_reset(d, &err) : policy_reload(d, &err);

	if (r < 0)
		batch_reply_error(out, r, "%s", err.msg[0] ? err.msg : strerror(-r));
	else
		fputs("ok\n", out);
}

static void do_restart(struct devwld *d, FILE *out)
{
	int r = handover_begin(d);

	if (r < 0)
		batch_reply_error(out, r,
				  "this devwld runs without a keeper, which a restart needs"
				  " (devwld(8), RESTART)");
	else
		fputs("ok\n", out);
}

static void do_metrics(struct devwld *d, FILE *out)
{
	int r = metrics_write(d, out);

	if (r < 0)
		batch_reply_error(out, r, "cannot render the metrics: %s", strerror(-r));
	else
		fputs(".\n", out);
}

static void exec_line(struct devwld *d, struct ctl_conn *conn, const char *line, size_t len,
		      FILE *out)
{
	size_t a = 0;
	enum ctl_verb v = ctl_verb_of(line, len, &a);
	/* Anything but a command that only looks may change what the state file holds. */
	bool changes = v == CTL_VERB_COUNT || !(ctl_verbs[v].flags & CTLV_LOOKS);

	if (changes)
		state_changed(d);
	/* Malformed: batch's answer says why, as for a command devwld does not know. */
	if (!ctl_verb_fits(v, a, len))
		v = CTL_VERB_COUNT;
	switch (v) {
	case CTL_MKDIR:
	case CTL_RMDIR:
	case CTL_ALLOW:
	case CTL_DENY:
	case CTL_MKNOD_CAP:
	case CTL_UNBIND:
		do_change(d, line, len, out);
		break;
	case CTL_LEARN:
		do_learn(d, line, len, out);
		break;
	case CTL_ADVISE:
		do_advise(d, line + a, len - a, out);
		break;
	case CTL_SHOW:
		do_show(d, line, len, a, out);
		break;
	case CTL_CONTAINERS:
		do_containers(d, out);
		break;
	case CTL_SELECTORS:
		follow_list(d, out);
		break;
	case CTL_STATS:
		do_stats(d, out);
		break;
	case CTL_METRICS:
		do_metrics(d, out);
		break;
	case CTL_RELOAD:
	case CTL_RESET:
		do_reload(d, v == CTL_RESET, out);
		break;
	case CTL_RESTART:
		do_restart(d, out);
		break;
	case CTL_ATTACH:
	case CTL_DETACH:
		do_attach(d, conn, v == CTL_ATTACH, line + a, len - a, out);
		break;
	case CTL_HOOK_CREATE:
	case CTL_HOOK_DELETE:
		do_hook(d, v == CTL_HOOK_CREATE, line + a, len - a, out);
		break;
	case CTL_EVENTS:
	case CTL_DEVICES:
		/* run_lines() takes them as the first line of a connection only. */
		batch_reply_error(out, -EINVAL, "%s: only as the first line of its connection",
				  ctl_verbs[v].wire);
		break;
	case CTL_LIST:
	case CTL_CHECK:
	case CTL_VERB_COUNT:
		batch_exec(d->policy, line, len, out);
		break;
	}
	/* Before the answer goes out: from then on, every call is decided by the change. */
	if (changes) {
		serve_policy_changed(d);
		kernelmode_policy_changed(d);
	}
	fflush(out);
}

void control_exec(struct devwld *d, const char *line, size_t len, FILE *out)
{
	exec_line(d, NULL, line, len, out);
}

static void ctl_close(struct devwld *d, struct ctl_conn *conn)
{
	d->nctl_conns--;
	list_del(&conn->link);
	loop_destroy(&d->loop, &conn->src);
}

static int append_out(struct ctl_conn *conn, const char *line, size_t len, struct devwld *d)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return -ENOMEM;
	exec_line(d, conn, line, len, f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	if (size) {
		char *n = realloc(conn->out, conn->out_len + size);
		if (!n) {
			free(buf);
			return -ENOMEM;
		}
		conn->out = n;
		memcpy(conn->out + conn->out_len, buf, size);
		conn->out_len += size;
	}
	free(buf);
	return 0;
}

/*
 * Does the line read the CDI specs? A cdi: selector it names (allow, deny, attach,
 * detach), the bindings an unbind writes again or a reload or reset the policy file's
 * resolve. Specs are files others write: while none are followed (d->cdi_now), such a
 * line waits for a work thread to read them (follow_with_specs()) instead of reading
 * them on the loop.
 */
static bool reads_specs(const struct devwld *d, enum ctl_verb v, const char *line, size_t len)
{
	if (d->cdi_now)
		return false;
	switch (v) {
	case CTL_RELOAD:
	case CTL_RESET:
	case CTL_ADVISE: /* names devices by CDI specs (learn.c) */
		return true;
	case CTL_UNBIND:
		if (follow_cdi_needed(d, false))
			return true;
		/* fall through */
	case CTL_ALLOW:
	case CTL_DENY:
	case CTL_ATTACH:
	case CTL_DETACH:
		return memmem(line, len, "cdi:", 4) != NULL;
	default:
		return false;
	}
}

struct line_wait {
	struct ctl_conn *conn;
	size_t len;
	char line[];
};

/* The line, on the loop, with the specs as a work thread read them (or none past the
 * deadline: a cdi: selector then names nothing). */
static void line_with_specs(struct devwld *d, void *ctx, int r)
{
	struct line_wait *lw = ctx;
	struct ctl_conn *conn = lw->conn;

	(void)r;
	conn->busy = false;
	if (append_out(conn, lw->line, lw->len, d) < 0)
		conn->broken = true;
	/* An attach may wait for its own work again. */
	if (!conn->busy)
		resume(d, conn);
}

/* Hand line to a work thread's read of the specs: true when it waits for it (conn busy);
 * false with the refusal answered when no work thread is free. */
static bool wait_for_specs(struct devwld *d, struct ctl_conn *conn, const char *line, size_t len)
{
	struct line_wait *lw = malloc(sizeof(*lw) + len);
	int r = lw ? 0 : -ENOMEM;

	if (lw) {
		*lw = (struct line_wait){.conn = conn, .len = len};
		memcpy(lw->line, line, len);
		r = follow_with_specs(d, line_with_specs, free, lw);
	}
	if (r < 0) {
		char *b = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&b, &size);

		free(lw);
		if (f)
			batch_reply_error(f, r, "%s",
					  r == -EBUSY
						  ? "the CDI specs this needs cannot be read now"
						    " (no work thread is free): try again"
						  : strerror(-r));
		if (!f || fclose(f) != 0 || !append_text(conn, b, size))
			conn->broken = true;
		free(b);
		return false;
	}
	conn->busy = true;
	return true;
}

/* Execute every complete line in the input buffer (and the last one at EOF). */
static void run_lines(struct devwld *d, struct ctl_conn *conn)
{
	size_t start = 0;

	for (;;) {
		char *nl = memchr(conn->in + start, '\n', conn->in_len - start);
		size_t end = nl ? (size_t)(nl - conn->in) : conn->in_len, a = 0;
		enum ctl_verb v;
		bool alone;

		if (!nl && !(conn->eof && end > start))
			break;
		v = ctl_verb_of(conn->in + start, end - start, &a);
		alone = ctl_verb_fits(v, a, end - start) && ctl_verbs[v].flags & CTLV_ALONE;
		if (alone && v == CTL_EVENTS) {
			/* The connection becomes a stream: nothing after this line counts. */
			conn->events = strndup(conn->in + start + 6, end - start - 6);
			if (!conn->events)
				conn->broken = true;
			start = conn->in_len;
			break;
		}
		if (alone && v == CTL_DEVICES) {
			/* Answered by a work thread (list_devices()): nothing after it counts. */
			conn->devices = true;
			start = conn->in_len;
			break;
		}
		if (reads_specs(d, v, conn->in + start, end - start)) {
			bool waits = wait_for_specs(d, conn, conn->in + start, end - start);

			start = nl ? end + 1 : end;
			if (waits)
				break;
			continue;
		}
		if (append_out(conn, conn->in + start, end - start, d) < 0) {
			conn->broken = true;
			break;
		}
		start = nl ? end + 1 : end;
		/* Its answer comes from a work thread: the next lines wait for it. */
		if (conn->busy)
			break;
	}
	memmove(conn->in, conn->in + start, conn->in_len - start);
	conn->in_len -= start;
}

static int flush_out(struct ctl_conn *conn)
{
	while (conn->out_off < conn->out_len) {
		ssize_t n = send(conn->src.fd, conn->out + conn->out_off,
				 conn->out_len - conn->out_off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : negerrno();
		conn->out_off += (size_t)n;
	}
	conn->out_off = conn->out_len = 0;
	return 0;
}

/* Queue "error ENAME: why" for r; if even that fails, the connection just closes. */
static void reply_error(struct ctl_conn *conn, int r, const char *why)
{
	char *b = NULL, *n;
	size_t size = 0;
	FILE *f = open_memstream(&b, &size);

	if (!f)
		return;
	batch_reply_error(f, r, "%s", why);
	if (fclose(f) == 0 && (n = realloc(conn->out, conn->out_len + size))) {
		memcpy(n + conn->out_len, b, size);
		conn->out = n;
		conn->out_len += size;
	}
	free(b);
}

/* "events [all] [owner=UID] [container=NAME]": parse (container= last, the rest of the
 * line); 0 or -EINVAL. */
static int events_args(const char *args, bool *ret_all, uid_t *ret_owner,
		       const char **ret_container)
{
	bool owned = false;

	*ret_all = false;
	*ret_owner = RESOLVE_ROOT;
	*ret_container = NULL;
	for (const char *p = args; *p;) {
		const char *end;
		char *num_end = NULL;
		unsigned long uid;

		if (*p++ != ' ')
			return -EINVAL;
		end = strchrnul(p, ' ');
		if (end - p == 3 && !memcmp(p, "all", 3) && !*ret_all) {
			*ret_all = true;
		} else if (end - p > 6 && !memcmp(p, "owner=", 6) && !owned) {
			errno = 0;
			uid = strtoul(p + 6, &num_end, 10);
			if (num_end != end || errno || p[6] == '-' || uid > UINT32_MAX - 1)
				return -EINVAL;
			*ret_owner = (uid_t)uid;
			owned = true;
		} else if (end - p > 10 && !memcmp(p, "container=", 10) && !*ret_container &&
			   !*end) {
			*ret_container = p + 10;
		} else {
			return -EINVAL;
		}
		p = end;
	}
	return owned && !*ret_container ? -EINVAL : 0;
}

/*
 * The container an events stream follows, resolved once, as it starts: the stream keeps
 * that one (its owner and full id), whatever starts later. A full id that names nothing
 * yet is taken as it is, for a container about to start; any other name must name one
 * now, or the stream would wait silently for what never comes.
 */
static int events_container(struct devwld *d, uid_t owner, const char *name, const char **ret_id,
			    struct devwl_error *err)
{
	struct container *c = NULL;
	int r = resolve_owned_container(d, owner, name, &c, err);

	if (r == -ENOENT && resolve_full_id(name)) {
		*ret_id = name;
		return 0;
	}
	if (r < 0)
		return r;
	*ret_id = c->id;
	return 0;
}

/* Hand the connection to events.c, or answer why not. true: conn is gone. */
static bool subscribe(struct devwld *d, struct ctl_conn *conn)
{
	const char *container = NULL, *id = NULL;
	struct devwl_error err = {0};
	uid_t owner = RESOLVE_ROOT;
	bool all = false;
	int fd, r;

	const char *why = "events: only \"all\", \"owner=UID\" and, last, \"container=NAME\" "
			  "may follow, each once (owner with a container)";

	if (conn->out_len) {
		r = -EINVAL;
		why = "events must be the first and only line of its connection";
	} else {
		r = events_args(conn->events, &all, &owner, &container);
	}
	if (r >= 0 && container && (r = events_container(d, owner, container, &id, &err)) < 0)
		why = err.msg;
	fd = r < 0 ? -1 : fcntl(conn->src.fd, F_DUPFD_CLOEXEC, 0);
	if (r >= 0 && fd < 0)
		r = negerrno();
	if (r >= 0)
		r = events_subscribe(fd, all, owner, id);
	if (r >= 0) {
		ctl_close(d, conn);
		return true;
	}
	if (r == -EBUSY)
		why = "events: as many subscribers as devwld takes (16) already follow it";
	else if (r != -EINVAL && !err.msg[0])
		why = strerror(-r);
	if (fd >= 0)
		close(fd);
	free(conn->events);
	conn->events = NULL;
	conn->in_len = 0;
	conn->eof = true;
	reply_error(conn, r, why);
	return false;
}

/* Append text[0..len) to conn's answers; false: out of memory. */
static bool append_text(struct ctl_conn *conn, const char *text, size_t len)
{
	char *n = realloc(conn->out, conn->out_len + len);

	if (!n)
		return false;
	memcpy(n + conn->out_len, text, len);
	conn->out = n;
	conn->out_len += len;
	return true;
}

/* A work's answer is in conn->out: go on with the lines after it, then as ever. */
static void resume(struct devwld *d, struct ctl_conn *conn)
{
	conn->busy = false;
	conn->need_seq = state_seq(d);
	if (!conn->broken)
		run_lines(d, conn);
	ctl_conn_ready(d, &conn->src, 0);
}

/* The end of an attach or detach that conn waits for. */
static void attach_answer(struct devwld *d, void *ctx, int r, const struct devwl_error *err,
			  const char *said)
{
	struct ctl_conn *conn = ctx;
	char *b = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&b, &size);

	if (f) {
		if (r < 0)
			batch_reply_error(f, r, "%s", err->msg[0] ? err->msg : strerror(-r));
		else if (said[0])
			fprintf(f, "%s\n.\n", said); /* what was done, as a one-line listing */
		else
			fputs("ok\n", f);
	}
	if (!f || fclose(f) != 0 || !append_text(conn, b, size))
		conn->broken = true;
	free(b);
	resume(d, conn);
}

/* The holders of a devices listing, found on a work thread. */
struct lister {
	struct work w;
	struct ctl_conn *conn;
	struct attach_listing *listing;
	char *buf;
	size_t size;
	bool written;
};

static void lister_run(struct work *w)
{
	struct lister *ls = container_of(w, struct lister, w);
	FILE *f = open_memstream(&ls->buf, &ls->size);

	if (!f)
		return;
	attach_list_write(ls->listing, f);
	ls->written = fclose(f) == 0;
}

static void lister_done(struct devwld *d, struct work *w, int r)
{
	struct lister *ls = container_of(w, struct lister, w);
	struct ctl_conn *conn = ls->conn;
	char why[256];

	if (r == 0 && ls->written) {
		if (!append_text(conn, ls->buf, ls->size))
			conn->broken = true;
	} else if (r == 0) {
		reply_error(conn, -ENOMEM, "out of memory");
	} else {
		snprintf(why, sizeof(why),
			 "devices: the containers' open files did not answer within %d s (a FUSE"
			 " server that does not answer?) (devwld(8), HOT-PLUG)",
			 LISTING_DEADLINE_MS / 1000);
		log_msg("control: %s", why);
		reply_error(conn, -ETIMEDOUT, why);
	}
	resume(d, conn);
}

static void lister_free(struct work *w)
{
	struct lister *ls = container_of(w, struct lister, w);

	attach_listing_free(ls->listing);
	free(ls->buf);
	free(ls);
	atomic_fetch_sub(&listings, 1);
}

/*
 * "devices": what the listing needs is copied here, on the loop, and a work thread finds
 * the holders (stat()s of the containers' open files, which a workload's FUSE server can
 * hold for as long as it likes); the answer goes out when it ends, or ETIMEDOUT at
 * LISTING_DEADLINE_MS. At most LISTINGS_MAX listings at once: past that the answer is
 * an error, at once.
 */
static void list_devices(struct devwld *d, struct ctl_conn *conn)
{
	struct lister *ls = NULL;
	int r = 0;

	conn->devices = false;
	conn->in_len = 0;
	conn->eof = true;
	if (conn->out_len) {
		reply_error(conn, -EINVAL,
			    "devices must be the first and only line of its connection");
		return;
	}
	if (atomic_fetch_add(&listings, 1) >= LISTINGS_MAX) {
		char busy[256];

		atomic_fetch_sub(&listings, 1);
		log_msg("control: %d device listings under way already; refusing one more",
			LISTINGS_MAX);
		snprintf(busy, sizeof(busy),
			 "devices: %d listings under way already, each waiting on a file a"
			 " container holds open (a FUSE server that does not answer?); try"
			 " again once they end (devwld(8), HOT-PLUG)",
			 LISTINGS_MAX);
		reply_error(conn, -EBUSY, busy);
		return;
	}
	ls = calloc(1, sizeof(*ls));
	if (ls) {
		ls->w = (struct work){
			.run = lister_run, .done = lister_done, .free_fn = lister_free};
		ls->conn = conn;
		ls->listing = attach_list_copy(d);
	}
	r = ls && ls->listing ? work_submit(&d->loop, &ls->w, LISTING_DEADLINE_MS) : -ENOMEM;
	if (r >= 0) {
		conn->busy = true;
		return;
	}
	if (ls)
		lister_free(&ls->w);
	else
		atomic_fetch_sub(&listings, 1);
	log_msg("control: devices: no work thread for the listing: %s", strerror(-r));
	reply_error(conn, r,
		    r == -EBUSY ? "devices: devwld's work threads are all busy (each waiting on a"
				  " container's filesystem?): try again later"
				: strerror(-r));
}

static void ctl_conn_ready(struct devwld *d, struct source *src, int revents)
{
	struct ctl_conn *conn = container_of(src, struct ctl_conn, src);
	uint64_t seq = state_seq(d);

	if (revents & POLLIN) {
		for (int round = 0;
		     round < 4 && !conn->eof && !conn->events && !conn->devices && !conn->busy;
		     round++) {
			size_t limit = MAX_HOOK_LINE;

			ssize_t n;

			if (conn->in_cap - conn->in_len < 4096) {
				char *b = realloc(conn->in, conn->in_cap + 16384);
				if (!b) {
					ctl_close(d, conn);
					return;
				}
				conn->in = b;
				conn->in_cap += 16384;
			}
			n = recv(src->fd, conn->in + conn->in_len, conn->in_cap - conn->in_len,
				 MSG_DONTWAIT);
			if (n < 0) {
				if (errno == EAGAIN || errno == EINTR)
					break;
				ctl_close(d, conn);
				return;
			}
			if (n == 0)
				conn->eof = true;
			conn->in_len += (size_t)n;
			run_lines(d, conn);
			if (conn->in_len < 5 || memcmp(conn->in, "hook-", 5))
				limit = MAX_LINE;
			if (conn->in_len > limit) {
				static const char e2big[] =
					"error E2BIG: a line longer than devwld reads\n";
				char *b = realloc(conn->out, conn->out_len + sizeof(e2big));

				log_msg("control: a line longer than %zu bytes; closing", limit);
				if (b) {
					conn->out = b;
					memcpy(b + conn->out_len, e2big, sizeof(e2big) - 1);
					conn->out_len += sizeof(e2big) - 1;
				}
				conn->in_len = 0;
				conn->eof = true;
			}
			if (conn->out_len)
				break;
		}
	} else if (revents & (POLLERR | POLLHUP)) {
		conn->broken = true;
	}
	if (conn->events && !conn->broken && subscribe(d, conn))
		return;
	if (conn->devices && !conn->broken)
		list_devices(d, conn);
	/* Unwatched, and never closed, while a work thread's answer is due: it resumes it
	 * (resume()). */
	if (conn->busy)
		return;
	/* What devwlctl is told is done is on disk first: the answers wait for the write
	 * (off the loop; control_state_written() sends them). */
	if (state_seq(d) != seq)
		conn->need_seq = state_seq(d);
	if (conn->out_len && !conn->broken && !state_written(d, conn->need_seq)) {
		conn->waiting = true;
		state_urgent(d);
		return;
	}
	if (flush_out(conn) < 0 || conn->broken) {
		ctl_close(d, conn);
		return;
	}
	if (conn->out_len) {
		/* Stop reading until the client takes its answers. */
		if (loop_arm(&d->loop, src, POLLOUT) < 0)
			goto unwatched;
		return;
	}
	if (conn->eof) {
		ctl_close(d, conn);
		return;
	}
	if (loop_arm(&d->loop, src, POLLIN) >= 0)
		return;
unwatched:
	log_msg("control: cannot watch a connection; closing it");
	ctl_close(d, conn);
}

void control_state_written(struct devwld *d)
{
	struct list_head *l = d->ctl_conns.next;

	while (l != &d->ctl_conns) {
		struct ctl_conn *conn = container_of(l, struct ctl_conn, link);

		/* ctl_conn_ready() may close it: step on first. */
		l = l->next;
		if (conn->waiting && state_written(d, conn->need_seq)) {
			conn->waiting = false;
			ctl_conn_ready(d, &conn->src, 0);
		}
	}
}

void control_close_all(struct devwld *d)
{
	events_fini();
	while (!list_empty(&d->ctl_conns))
		ctl_close(d, container_of(d->ctl_conns.next, struct ctl_conn, link));
}
