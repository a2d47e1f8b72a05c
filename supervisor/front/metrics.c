/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Metrics in the Prometheus text exposition format (version 0.0.4): what devwld counts,
 * printed by `devwlctl metrics` and served over HTTP by --metrics (devwld(8), METRICS).
 *
 * The HTTP side is as small as a scrape needs and no more, since whoever can reach it
 * is not trusted: one request per connection (GET /metrics, nothing else), at most
 * METRICS_REQUEST_MAX bytes of it, the whole exchange within METRICS_DEADLINE_MS, at
 * most METRICS_CONNS_MAX connections at once (a new one past that is closed at once).
 * Everything is non-blocking on the loop, so a client that reads or writes slowly, or
 * not at all, costs a connection slot for a few seconds and never holds up a decision.
 *
 * Labels are few by design: decisions by node subtree (--metrics-depth components),
 * syscall and decision; containers by mode. Container ids, which are unbounded, appear
 * only with --metrics-containers.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit-line.h"
#include "clock.h"
#include "devwld.h"
#include "events.h"
#include "kernelmode.h"
#include "log.h"
#include "metrics.h"
#include "serve.h"
#include "sockets.h"
#include "state.h"
#include "util.h"

#define METRICS_REQUEST_MAX 4096
#define METRICS_DEADLINE_MS 5000
#define METRICS_CONNS_MAX   16

struct metrics_conn {
	struct source src;
	struct list_head link; /* in metrics.conns, oldest first */
	struct metrics *m;
	uint64_t deadline;
	char req[METRICS_REQUEST_MAX];
	size_t req_len;
	char *out; /* the response, once the request is complete */
	size_t out_len, out_off;
};

struct metrics {
	struct source listen;
	struct stat unix_st; /* the unix socket we made: unlinked at exit only while it is */
	struct list_head conns;
	unsigned int nconns;
};

/* ---- the exposition ---------------------------------------------------------------- */

/* A label value: backslash, double quote and newline escaped, as the format says. */
static void put_label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	head(f, name, type, help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

static void put_decisions(FILE *f, const struct audit_tally *t)
{
	uint64_t cum = 0;

	head(f, "devwl_decisions_total", "counter",
	     "Trapped calls answered, by node subtree, syscall and decision.");
	for (size_t i = 0; i < t->nseries; i++) {
		fputs("devwl_decisions_total{subtree=\"", f);
		put_label(f, t->series[i].subtree);
		fprintf(f, "\",syscall=\"%s\",decision=\"%s\"} %llu\n", t->series[i].syscall,
			audit_decision_name(t->series[i].verdict),
			(unsigned long long)t->series[i].n);
	}
	head(f, "devwl_handling_seconds", "histogram",
	     "Time from a notification's receipt to its answer.");
	for (unsigned int i = 0; i < AUDIT_LE_N; i++) {
		cum += t->le[i];
		fprintf(f, "devwl_handling_seconds_bucket{le=\"%g\"} %llu\n", audit_le_seconds[i],
			(unsigned long long)cum);
	}
	fprintf(f, "devwl_handling_seconds_bucket{le=\"+Inf\"} %llu\n",
		(unsigned long long)t->counts.notifications);
	fprintf(f, "devwl_handling_seconds_sum %.9f\n", (double)t->sum_ns / 1e9);
	fprintf(f, "devwl_handling_seconds_count %llu\n",
		(unsigned long long)t->counts.notifications);
}

static void put_containers(struct devwld *d, FILE *f)
{
	static const char *const modes[] = {"kernel-v1", "kernel-v2", "unprogrammed",
					    "authoritative"};
	unsigned int n[ARRAY_SIZE(modes)] = {0};
	uint64_t attached = 0;

	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		const char *mode = kernelmode_name(container_of(l, struct container, link));

		attached += container_of(l, struct container, link)->nattached;

		for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
			if (!strcmp(mode, modes[i]))
				n[i]++;
	}
	head(f, "devwl_containers", "gauge", "Containers served, by how their opens are decided.");
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
		fprintf(f, "devwl_containers{mode=\"%s\"} %u\n", modes[i], n[i]);
	one(f, "devwl_attached_devices", "gauge",
	    "Devices attached to running containers (devwlctl attach).", attached);
	if (!d->cfg.metrics_containers)
		return;
	head(f, "devwl_container_notifications_total", "counter",
	     "Trapped calls of each container (--metrics-containers).");
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		const struct container *c = container_of(l, struct container, link);

		fputs("devwl_container_notifications_total{container=\"", f);
		put_label(f, c->id);
		fputs("\",node=\"", f);
		put_label(f, c->node_path);
		fprintf(f, "\"} %llu\n", (unsigned long long)c->notifications);
	}
}

int metrics_write(struct devwld *d, FILE *f)
{
	struct audit_tally t = {0};
	struct serve_counts s;
	struct kernel_counts k;
	unsigned int subscribers = 0;
	uint64_t events_dropped = 0;
	int r = audit_tally(&d->audit, &t);

	if (r < 0)
		return r;
	serve_counts(d, &s);
	kernelmode_counts(d, &k);
	events_stats(&subscribers, &events_dropped);
	head(f, "devwl_build_info", "gauge", "devwld's version.");
	fprintf(f, "devwl_build_info{version=\"%s\"} 1\n", devwl_version());
	one(f, "devwl_notifications_total", "counter", "Trapped calls answered.",
	    t.counts.notifications);
	put_decisions(f, &t);
	one(f, "devwl_targets_gone_total", "counter",
	    "Notifications whose caller was gone before the answer.", t.counts.gone);
	put_containers(d, f);
	one(f, "devwl_processes", "gauge", "Container processes whose notify fd is served.",
	    d->nprocs);
	one(f, "devwl_nodes", "gauge", "Nodes of the policy hierarchy.",
	    devwl_policy_count(d->policy));
	one(f, "devwl_kernel_programs_applied_total", "counter",
	    "Device cgroups programmed with a node's allow list (kernel mode).", k.applies);
	one(f, "devwl_kernel_program_entries", "gauge",
	    "What the programmed device cgroups hold: BPF instructions (v2) or writes (v1).",
	    k.size);
	one(f, "devwl_kernel_denials_total", "counter",
	    "Device accesses the kernel-mode device programs refused and recorded (cgroup v2).",
	    k.denied);
	one(f, "devwl_kernel_unprogrammed_containers", "gauge",
	    "Containers that asked for kernel mode and could not have it.", k.unprogrammed);
	one(f, "devwl_audit_records_dropped_total", "counter",
	    "Audit records the sink had no room for.", t.counts.dropped);
	one(f, "devwl_log_lines_dropped_total", "counter", "Log lines stderr did not take in time.",
	    log_dropped());
	one(f, "devwl_events_dropped_total", "counter",
	    "Decisions a slow `devwlctl events` subscriber missed.", events_dropped);
	one(f, "devwl_events_subscribers", "gauge", "`devwlctl events` streams open.", subscribers);
	one(f, "devwl_handler_threads", "gauge", "Threads handling notifications.", s.threads);
	one(f, "devwl_handler_threads_stuck", "gauge",
	    "Handler threads set aside in a call the watchdog answered.", s.stuck);
	one(f, "devwl_watchdog_answers_total", "counter",
	    "Calls stuck beyond --handler-timeout that the watchdog answered EPERM.",
	    s.watchdog_answered);
	one(f, "devwl_worker_restarts_total", "counter",
	    "Workers the keeper started after the first (counters restart with each).",
	    d->keeper.gen > 1 ? d->keeper.gen - 1 : 0);
	one(f, "devwl_state_writes_total", "counter", "State file writes finished.",
	    state_writes(d));
	free(t.series);
	return ferror(f) ? -EIO : 0;
}

/* ---- HTTP -------------------------------------------------------------------------- */

static void conn_free(struct source *src)
{
	struct metrics_conn *c = container_of(src, struct metrics_conn, src);

	free(c->out);
	free(c);
}

static void conn_close(struct devwld *d, struct metrics_conn *c)
{
	list_del(&c->link);
	c->m->nconns--;
	loop_destroy(&d->loop, &c->src);
}

static void conn_ready(struct devwld *d, struct source *src, int revents);

/* The answer to a whole request (or to one that does not fit): status and body. */
static int respond(struct devwld *d, struct metrics_conn *c, bool complete)
{
	const char *status = "200 OK", *type = "text/plain; version=0.0.4; charset=utf-8";
	_cleanup_free_ char *body = NULL;
	size_t body_len = 0;
	char method[8] = "", path[64] = "";
	FILE *f = open_memstream(&body, &body_len);
	int r = 0;

	if (!f)
		return -ENOMEM;
	c->req[c->req_len < sizeof(c->req) ? c->req_len : sizeof(c->req) - 1] = '\0';
	if (!complete) {
		status = "431 Request Header Fields Too Large";
	} else if (sscanf(c->req, "%7s %63s HTTP/1.%*c", method, path) != 2) {
		status = "400 Bad Request";
	} else if (strcmp(method, "GET")) {
		status = "405 Method Not Allowed";
	} else if (strcmp(path, "/metrics") && strncmp(path, "/metrics?", 9)) {
		status = "404 Not Found";
	}
	if (!strcmp(status, "200 OK"))
		r = metrics_write(d, f);
	else
		fprintf(f, "%s\n", status);
	if (fclose(f) != 0 || r < 0)
		return r < 0 ? r : -ENOMEM;
	if (strcmp(status, "200 OK"))
		type = "text/plain; charset=utf-8";
	if (asprintf(&c->out,
		     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		     "Connection: close\r\n\r\n%s",
		     status, type, body_len, body) < 0) {
		c->out = NULL;
		return -ENOMEM;
	}
	c->out_len = strlen(c->out);
	return 0;
}

/* Reading the request; then writing the answer, as far as the socket takes it. */
static void conn_ready(struct devwld *d, struct source *src, int revents)
{
	struct metrics_conn *c = container_of(src, struct metrics_conn, src);
	ssize_t n;

	(void)revents;
	while (!c->out) {
		n = read(src->fd, c->req + c->req_len, sizeof(c->req) - 1 - c->req_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			goto rearm;
		if (n <= 0) /* gone, or closed before its request was whole */
			return conn_close(d, c);
		c->req_len += (size_t)n;
		c->req[c->req_len] = '\0';
		/* memmem: a NUL in what a client sends ends nothing. */
		if (memmem(c->req, c->req_len, "\r\n\r\n", 4) ||
		    memmem(c->req, c->req_len, "\n\n", 2)) {
			if (respond(d, c, true) < 0)
				return conn_close(d, c);
		} else if (c->req_len == sizeof(c->req) - 1) {
			if (respond(d, c, false) < 0)
				return conn_close(d, c);
		}
	}
	while (c->out_off < c->out_len) {
		n = send(src->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			goto rearm;
		if (n < 0)
			return conn_close(d, c);
		c->out_off += (size_t)n;
	}
	/* Answered: nothing more is read, whatever else the client sent. */
	return conn_close(d, c);
rearm:
	if (loop_arm(&d->loop, src, c->out ? POLLOUT : POLLIN) < 0)
		conn_close(d, c);
}

static void metrics_accept(struct devwld *d)
{
	struct metrics *m = d->metrics;

	for (int i = 0; i < METRICS_CONNS_MAX; i++) {
		struct metrics_conn *c;
		uid_t uid;
		pid_t pid;
		int fd = socket_accept(m->listen.fd, "metrics", &uid, &pid);

		if (fd < 0)
			return;
		c = m->nconns < METRICS_CONNS_MAX ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			close(fd);
			continue;
		}
		c->src.fd = fd;
		c->src.ready = conn_ready;
		c->src.free_fn = conn_free;
		c->m = m;
		c->deadline = now_ms() + METRICS_DEADLINE_MS;
		list_add_tail(&c->link, &m->conns);
		m->nconns++;
		if (loop_arm(&d->loop, &c->src, POLLIN) < 0)
			conn_close(d, c);
	}
}

static void listen_ready(struct devwld *d, struct source *src, int revents)
{
	(void)revents;
	socket_ready(d, src, metrics_accept, "cannot watch the metrics socket");
}

void metrics_expire(struct devwld *d, uint64_t now)
{
	struct metrics *m = d->metrics;

	while (m && !list_empty(&m->conns)) {
		struct metrics_conn *c = container_of(m->conns.next, struct metrics_conn, link);

		if (c->deadline > now)
			return;
		conn_close(d, c);
	}
}

/* HOST:PORT with a numeric host (an IPv6 one in brackets) into *ret (caller frees). */
static int resolve(const char *where, struct addrinfo **ret, struct devwl_error *err)
{
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
				 .ai_socktype = SOCK_STREAM};
	const char *colon = strrchr(where, ':');
	_cleanup_free_ char *host = NULL;
	char *end = NULL;
	size_t hlen;
	long port;
	int r;

	if (!colon || colon == where || !colon[1])
		return devwl_error_set(err, -EINVAL, 0,
				       "--metrics %s: expected unix:PATH or HOST:PORT", where);
	/* getaddrinfo() takes a port past 65535 and wraps it. */
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return devwl_error_set(err, -EINVAL, 0, "--metrics %s: port must be 1 to 65535",
				       where);
	hlen = (size_t)(colon - where);
	if (where[0] == '[' && hlen > 2 && where[hlen - 1] == ']')
		host = strndup(where + 1, hlen - 2);
	else
		host = strndup(where, hlen);
	if (!host)
		return -ENOMEM;
	r = getaddrinfo(host, colon + 1, &hints, ret);
	if (r != 0)
		return devwl_error_set(err, -EINVAL, 0,
				       "--metrics %s: not a numeric address and port: %s", where,
				       gai_strerror(r));
	return 0;
}

static int listen_tcp(const char *where, struct devwl_error *err)
{
	struct addrinfo *ai = NULL;
	_cleanup_close_ int fd = -1;
	int r = resolve(where, &ai, err), one = 1;

	if (r < 0)
		return r;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	r = fd < 0 ? negerrno() : 0;
	if (r >= 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (r >= 0 && (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 16) < 0))
		r = negerrno();
	freeaddrinfo(ai);
	if (r < 0)
		return devwl_error_set(err, r, 0, "--metrics %s: %s", where, strerror(-r));
	return TAKE_FD(fd);
}

int metrics_check(const char *where, struct devwl_error *err)
{
	struct addrinfo *ai = NULL;
	int r;

	if (!strncmp(where, "unix:", 5))
		return where[5] == '/'
			       ? 0
			       : devwl_error_set(err, -EINVAL, 0,
						 "--metrics %s: unix: needs an absolute path",
						 where);
	r = resolve(where, &ai, err);
	if (r >= 0)
		freeaddrinfo(ai);
	return r;
}

int metrics_open(struct devwld *d, struct devwl_error *err)
{
	const char *where = d->cfg.metrics;
	struct stat st = {0};
	struct metrics *m;
	int fd;

	if (!where)
		return 0;
	if (!strncmp(where, "unix:", 5)) {
		/* Root's alone, as the control socket: a scraper in another uid goes
		 * through TCP on a loopback address, or a proxy of root's. */
		fd = socket_listen(where + 5, 0600);
		if (fd < 0)
			return devwl_error_set(err, fd, 0, "--metrics %s: %s", where,
					       strerror(-fd));
		if (stat(where + 5, &st) < 0)
			st = (struct stat){0};
	} else {
		fd = listen_tcp(where, err);
		if (fd < 0)
			return fd;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	list_init(&m->conns);
	m->unix_st = st;
	m->listen.fd = fd;
	m->listen.ready = listen_ready;
	d->metrics = m;
	return loop_arm(&d->loop, &m->listen, POLLIN);
}

void metrics_close(struct devwld *d)
{
	struct metrics *m = d->metrics;

	if (!m)
		return;
	while (!list_empty(&m->conns))
		conn_close(d, container_of(m->conns.next, struct metrics_conn, link));
	if (m->listen.fd >= 0)
		close(m->listen.fd);
	/* Stopping for good, and the socket at the path is still the one we made. */
	if (m->unix_st.st_ino && !d->handover) {
		struct stat now;

		if (stat(d->cfg.metrics + 5, &now) == 0 && now.st_dev == m->unix_st.st_dev &&
		    now.st_ino == m->unix_st.st_ino)
			unlink(d->cfg.metrics + 5);
	}
	free(m);
	d->metrics = NULL;
}
