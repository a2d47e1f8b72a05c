/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OCI runtime-spec seccomp listener (listenerPath): one connection per container
 * process, carrying the "container process state" JSON and the fds it names, sent with
 * SCM_RIGHTS, possibly over several sendmsg calls.
 *
 * Runtimes keep the connection open until they exit, so the end of the message is the
 * end of the JSON object, found by feeding json_tokener what arrives, never EOF. runc
 * sends compact JSON, crun pretty-printed JSON with a trailing newline. Nothing a
 * client sends may stall the loop: every read is non-blocking, a message has a size
 * and an fd limit and a deadline, and a bad one is logged and dropped on its own.
 */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cdigrant.h"
#include "clock.h"
#include "devwld.h"
#include "fds.h"
#include "listener.h"
#include "log.h"
#include "sockets.h"
#include "store.h"
#include "util.h"

#define MAX_FDS 16
/* Incomplete connections at once: more are refused, so a connect flood stays bounded. */
#define MAX_PENDING 256
/* A uid other than root (--allow-uid) may have this many of them ... */
#define PENDING_PER_USER 32
/* ... and all such uids together leave this many to root's runtimes: one user holding
 * silent connections must not keep the host's containers from starting. */
#define PENDING_ROOT_ONLY 64
/* Refusals come as fast as a peer reconnects: one line, then a count per interval. */
#define REFUSED_LOG_MS 10000

struct oci_conn {
	struct source src;
	struct list_head link;
	json_tokener *tok;
	size_t bytes;
	char *text; /* what arrived from the opening brace on, for the final parse */
	size_t text_len;
	int fds[MAX_FDS];
	size_t nfds;
	uid_t uid;
	pid_t pid;
	uint64_t deadline;
	bool started; /* a non-blank byte arrived */
};

static void oci_conn_free(struct source *src)
{
	struct oci_conn *conn = container_of(src, struct oci_conn, src);

	for (size_t i = 0; i < conn->nfds; i++)
		close(conn->fds[i]);
	if (conn->tok)
		json_tokener_free(conn->tok);
	free(conn->text);
	free(conn);
}

static void oci_conn_close(struct devwld *d, struct oci_conn *conn)
{
	list_del(&conn->link);
	d->noci_conns--;
	loop_destroy(&d->loop, &conn->src);
}

static void __attribute__((format(printf, 3, 4)))
drop(struct devwld *d, struct oci_conn *conn, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg("listener: connection from pid %d uid %u: %s; dropped", (int)conn->pid,
		(unsigned)conn->uid, msg);
	oci_conn_close(d, conn);
}

static void listener_ready(struct devwld *d, struct source *src, int revents);

/* Log the refusals counted since the last line, once their interval is over. */
static void refused_report(struct devwld *d, uint64_t now)
{
	struct refusals *r = &d->refused;

	if (!r->count || now < r->quiet_until)
		return;
	log_msg("listener: refused %u more connections in the last %u s (the last: pid %d uid %u, "
		"%s)",
		r->count, REFUSED_LOG_MS / 1000, (int)r->pid, (unsigned int)r->uid, r->why);
	r->count = 0;
	r->quiet_until = now + REFUSED_LOG_MS;
}

static void refuse(struct devwld *d, int fd, uid_t uid, pid_t pid, const char *why)
{
	struct refusals *r = &d->refused;
	uint64_t now = now_ms();

	close(fd);
	refused_report(d, now);
	if (now < r->quiet_until) {
		r->count++;
		r->uid = uid;
		r->pid = pid;
		r->why = why;
		return;
	}
	log_msg("listener: refusing peer pid %d uid %u (%s); more refusals within %u s are "
		"counted",
		(int)pid, (unsigned int)uid, why, REFUSED_LOG_MS / 1000);
	r->quiet_until = now + REFUSED_LOG_MS;
}

int listener_open(struct devwld *d, int fd)
{
	/* With --allow-uid anyone may connect: SO_PEERCRED (peer_allowed) is the check, and
	 * what an allowed user may then do is confined by the mapping (PEER_SUBTREE/UID). */
	if (fd < 0)
		fd = socket_listen(d->cfg.listen_path, d->cfg.n_listen_uids ? 0666 : 0600);
	if (fd < 0)
		return fd;
	d->listen_src.ready = listener_ready;
	d->listen_src.fd = fd;
	return loop_arm(&d->loop, &d->listen_src, POLLIN);
}

static bool peer_allowed(const struct devwld *d, uid_t uid)
{
	if (uid == 0)
		return true;
	for (size_t i = 0; i < d->cfg.n_listen_uids; i++)
		if (d->cfg.listen_uids[i] == uid)
			return true;
	return false;
}

static void oci_conn_ready(struct devwld *d, struct source *src, int revents);

static unsigned int pending_of(const struct devwld *d, uid_t uid)
{
	unsigned int n = 0;

	for (const struct list_head *l = d->oci_conns.next; l != &d->oci_conns; l = l->next)
		n += container_of(l, struct oci_conn, link)->uid == uid;
	return n;
}

/* Why a peer allowed to connect cannot have one more pending connection, or NULL. */
static const char *admission(const struct devwld *d, uid_t uid)
{
	if (d->noci_conns >= MAX_PENDING)
		return "as many connections as devwld takes are waiting for their message";
	if (uid == 0)
		return NULL;
	if (d->noci_conns >= MAX_PENDING - PENDING_ROOT_ONLY)
		return "the connections left are kept for root's runtimes";
	if (pending_of(d, uid) >= PENDING_PER_USER)
		return "this uid has as many connections waiting for their message as one "
		       "uid may";
	return NULL;
}

static void listener_accept(struct devwld *d)
{
	/* Bounded work per round: the rest waits for the next completion. */
	for (int i = 0; i < 64; i++) {
		struct oci_conn *conn;
		const char *why;
		uid_t uid;
		pid_t pid;
		int fd = socket_accept(d->listen_src.fd, "listener", &uid, &pid);

		if (fd < 0)
			return;
		if (uid == (uid_t)-1 || !peer_allowed(d, uid)) {
			refuse(d, fd, uid, pid,
			       "only root and --allow-uid users may hand over notify fds");
			continue;
		}
		why = admission(d, uid);
		if (why) {
			refuse(d, fd, uid, pid, why);
			continue;
		}
		conn = calloc(1, sizeof(*conn));
		if (conn)
			conn->tok = json_tokener_new_ex(32);
		if (!conn || !conn->tok) {
			log_msg("listener: out of memory");
			free(conn);
			close(fd);
			return;
		}
		conn->src.ready = oci_conn_ready;
		conn->src.fd = fd;
		conn->src.free_fn = oci_conn_free;
		conn->uid = uid;
		conn->pid = pid;
		conn->deadline = now_ms() + d->cfg.conn_timeout_ms;
		list_add_tail(&conn->link, &d->oci_conns);
		d->noci_conns++;
		if (loop_arm(&d->loop, &conn->src, POLLIN) < 0)
			drop(d, conn, "cannot watch the connection");
	}
}

static void listener_ready(struct devwld *d, struct source *src, int revents)
{
	(void)revents;
	socket_ready(d, src, listener_accept, "cannot watch the listener socket");
}

void oci_conn_expire(struct devwld *d, uint64_t now)
{
	refused_report(d, now);
	while (!list_empty(&d->oci_conns)) {
		struct oci_conn *conn = container_of(d->oci_conns.next, struct oci_conn, link);

		if (conn->deadline > now)
			return;
		drop(d, conn, "no complete message within %u ms (%zu bytes, %zu fds received)",
		     d->cfg.conn_timeout_ms, conn->bytes, conn->nfds);
	}
}

/* A seccomp notify fd is an anonymous inode of that name; anything else is refused. */
static bool is_seccomp_notify(int fd)
{
	char link[64], buf[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return !strcmp(buf, "anon_inode:seccomp notify");
}

static void message_complete(struct devwld *d, struct oci_conn *conn, struct json_object *obj)
{
	struct json_object *fds = NULL;
	struct devwl_error err = {0};
	struct oci_state st = {0};
	size_t nnames, seccomp_idx = SIZE_MAX;
	int r, fd;

	if (!json_object_is_type(obj, json_type_object)) {
		drop(d, conn, "message is not a JSON object");
		return;
	}
	if (!json_object_object_get_ex(obj, "fds", &fds) ||
	    !json_object_is_type(fds, json_type_array)) {
		drop(d, conn, "no \"fds\" array");
		return;
	}
	nnames = json_object_array_length(fds);
	for (size_t i = 0; i < nnames; i++) {
		struct json_object *name = json_object_array_get_idx(fds, i);

		if (!json_object_is_type(name, json_type_string)) {
			drop(d, conn, "\"fds\"[%zu] is not a string", i);
			return;
		}
		if (!strcmp(json_object_get_string(name), "seccompFd")) {
			if (seccomp_idx != SIZE_MAX) {
				drop(d, conn, "\"seccompFd\" named twice");
				return;
			}
			seccomp_idx = i;
		}
	}
	if (seccomp_idx == SIZE_MAX) {
		drop(d, conn, "\"fds\" names no \"seccompFd\"");
		return;
	}
	if (nnames != conn->nfds) {
		drop(d, conn, "\"fds\" names %zu fds but %zu arrived", nnames, conn->nfds);
		return;
	}
	if (!is_seccomp_notify(conn->fds[seccomp_idx])) {
		drop(d, conn, "\"seccompFd\" is not a seccomp notify fd");
		return;
	}
	r = oci_state_from_json(obj, true, &st, &err);
	if (r < 0) {
		drop(d, conn, "%s", err.msg[0] ? err.msg : strerror(-r));
		return;
	}
	fd = conn->fds[seccomp_idx];
	conn->fds[seccomp_idx] = conn->fds[--conn->nfds];
	/* The CDI devices its annotations name: once, with its first process, in force
	 * before any call of it is answered. */
	r = container_attach(d, &st, fd, conn->uid, conn->pid, cdigrant_container);
	if (r < 0)
		drop(d, conn, "container %s: %s", st.id, strerror(-r));
	else
		oci_conn_close(d, conn);
	oci_state_clear(&st);
}

/* A message that fills the table may have carried more than it holds: refused. */
static int take_fds(struct oci_conn *conn, struct msghdr *msg)
{
	if (scm_rights_take(msg, conn->fds, MAX_FDS, &conn->nfds) && conn->nfds >= MAX_FDS)
		return -E2BIG;
	return 0;
}

/* Keep the bytes (bounded by max_message, checked by the caller) for parse_whole(). */
static int keep_text(struct oci_conn *conn, const char *data, size_t n)
{
	char *t = realloc(conn->text, conn->text_len + n + 1);

	if (!t)
		return -ENOMEM;
	memcpy(t + conn->text_len, data, n);
	conn->text = t;
	conn->text_len += n;
	t[conn->text_len] = '\0';
	return 0;
}

/*
 * The incremental tokener only tells where the message ends: json-c 0.16 judges a
 * malformed number differently depending on where a read split it ({"pid":6-01} split
 * after the 6 passes), so whether a message is accepted would depend on how recvmsg
 * cut it. Parse the whole message once more, strictly, and use that.
 */
static struct json_object *parse_whole(struct oci_conn *conn)
{
	json_tokener *tok = json_tokener_new_ex(32);
	struct json_object *obj = NULL;

	if (!tok)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, conn->text, (int)conn->text_len);
	json_tokener_free(tok);
	return obj;
}

static void oci_conn_ready(struct devwld *d, struct source *src, int revents)
{
	struct oci_conn *conn = container_of(src, struct oci_conn, src);
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
		struct cmsghdr align;
	} cmsg;
	char data[16384];

	(void)revents;
	/* A few reads per round: a fast sender cannot monopolise the loop. */
	for (int round = 0; round < 4; round++) {
		struct iovec iov = {.iov_base = data, .iov_len = sizeof(data)};
		struct msghdr msg = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = cmsg.buf,
			.msg_controllen = sizeof(cmsg.buf),
		};
		struct json_object *obj;
		enum json_tokener_error jerr;
		ssize_t n;
		size_t off = 0;

		n = recvmsg(src->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			drop(d, conn, "recvmsg: %s", strerror(errno));
			return;
		}
		if (take_fds(conn, &msg) < 0 || (msg.msg_flags & MSG_CTRUNC)) {
			drop(d, conn, "more than %d fds", MAX_FDS);
			return;
		}
		if (n == 0) {
			drop(d, conn, "closed after %zu bytes without a complete JSON message",
			     conn->bytes);
			return;
		}
		conn->bytes += (size_t)n;
		if (conn->bytes > d->cfg.max_message) {
			drop(d, conn, "message larger than %zu bytes", d->cfg.max_message);
			return;
		}
		if (!conn->started) {
			while (off < (size_t)n && strchr(" \t\r\n", data[off]))
				off++;
			if (off == (size_t)n)
				continue;
			if (data[off] != '{') {
				drop(d, conn, "message does not start with a JSON object");
				return;
			}
			conn->started = true;
		}
		if (keep_text(conn, data + off, (size_t)n - off) < 0) {
			drop(d, conn, "out of memory");
			return;
		}
		obj = json_tokener_parse_ex(conn->tok, data + off, (int)((size_t)n - off));
		jerr = json_tokener_get_error(conn->tok);
		if (obj) {
			json_object_put(obj);
			obj = parse_whole(conn);
			if (!obj) {
				drop(d, conn, "malformed JSON (strict parse of the whole message)");
				return;
			}
			message_complete(d, conn, obj);
			json_object_put(obj);
			return;
		}
		if (jerr != json_tokener_continue) {
			drop(d, conn, "malformed JSON at byte %zu: %s",
			     conn->bytes - (size_t)n + off + json_tokener_get_parse_end(conn->tok),
			     json_tokener_error_desc(jerr));
			return;
		}
	}
	if (loop_arm(&d->loop, src, POLLIN) < 0)
		drop(d, conn, "cannot watch the connection");
}
