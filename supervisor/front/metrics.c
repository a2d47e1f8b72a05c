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
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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
/* Refusals come as fast as a peer reconnects: one line, then a count per interval. */
#define REFUSED_LOG_MS 10000

/* Who holds a connection: its slots are shared out per peer (admit()). */
struct metrics_peer {
	bool by_uid;
	uid_t uid;	  /* by_uid: SO_PEERCRED's, or /proc/net/tcp's (-1: unknown) */
	uint8_t addr[16]; /* else the remote address (IPv4 as ::ffff:a.b.c.d) */
};

struct metrics_conn {
	struct source src;
	struct list_head link; /* in metrics.conns, oldest first */
	struct metrics *m;
	struct metrics_peer peer;
	uint64_t deadline;
	char req[METRICS_REQUEST_MAX];
	size_t req_len;
	char *out; /* the response, once the request is complete */
	size_t out_len, out_off;
};

struct metrics {
	struct source listen;
	struct stat unix_st; /* the unix socket we made: unlinked at exit only while it is */
	bool unix_socket;
	struct list_head conns;
	unsigned int nconns;
	uint64_t refused, evicted;
	uint64_t refused_logged, quiet_until;
};

/* Features of the command line that broke after the start (feature_failed()). */
static uint64_t failures[FEATURE_N];
static const char *const feature_names[FEATURE_N] = {
	[FEATURE_METRICS] = "metrics",
	[FEATURE_AUDIT] = "audit",
	[FEATURE_UEVENTS] = "uevents",
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
	head(f, "devwl_container_drift_repairs_total", "counter",
	     "Repairs of each container's device cgroup after another writer changed it.");
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		const struct container *c = container_of(l, struct container, link);

		fputs("devwl_container_drift_repairs_total{container=\"", f);
		put_label(f, c->id);
		fprintf(f, "\"} %llu\n", (unsigned long long)kernelmode_drift_repairs(c));
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
	    "Device accesses the kernel-mode device programs refused and recorded.", k.denied);
	one(f, "devwl_kernel_allowed_total", "counter",
	    "Device accesses the kernel-mode device programs allowed and reported.", k.allowed);
	one(f, "devwl_kernel_allowed_reports_total", "counter",
	    "Records of allowed accesses, at most one a second per device and access.", k.reports);
	one(f, "devwl_kernel_seen_only_opens", "gauge",
	    "Opens of running containers trapped although their device cgroup decided them.",
	    k.seen_only_opens);
	one(f, "devwl_kernel_unprogrammed_containers", "gauge",
	    "Containers that asked for kernel mode and could not have it.", k.unprogrammed);
	one(f, "devwl_kernel_unreported_containers", "gauge",
	    "Programmed containers whose allowed device accesses are not reported.", k.unreported);
	one(f, "devwl_kernel_unreportable_containers", "gauge",
	    "Containers on cgroup v1 beside cgroup2 with no cgroup2 cgroup of their own: "
	    "nothing reports their device accesses.",
	    k.unreportable);
	one(f, "devwl_drift_repairs_total", "counter",
	    "Programmed device cgroups another writer changed, applied again (kernel mode).",
	    k.drift_repairs);
	one(f, "devwl_kernel_foreign_programs", "gauge",
	    "Programmed device cgroups with another's device program attached beside devwld's.",
	    k.foreign);
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
	head(f, "devwl_feature_failures_total", "counter",
	     "Failures, after the start, of what the command line asked for (logged as ERROR).");
	for (int i = 0; i < FEATURE_N; i++)
		fprintf(f, "devwl_feature_failures_total{feature=\"%s\"} %llu\n", feature_names[i],
			(unsigned long long)feature_failures(d, (enum feature)i));
	if (d->metrics) {
		one(f, "devwl_metrics_connections_refused_total", "counter",
		    "Metrics connections closed at once: their peer held its share of the slots.",
		    d->metrics->refused);
		one(f, "devwl_metrics_connections_evicted_total", "counter",
		    "Metrics connections closed to give their slot to a peer holding fewer.",
		    d->metrics->evicted);
	}
	free(t.series);
	return ferror(f) ? -EIO : 0;
}

void feature_failed(enum feature f)
{
	failures[f]++;
}

uint64_t feature_failures(struct devwld *d, enum feature f)
{
	return failures[f] + (f == FEATURE_AUDIT ? audit_write_errors(&d->audit) : 0);
}

const char *feature_name(enum feature f)
{
	return feature_names[f];
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

/* ---- who holds the connections ----------------------------------------------------- */

/*
 * A TCP peer's uid, where the kernel can tell it: a client on this host has a socket of
 * its own whose local end is our remote end and whose remote end is our local end, made
 * by its uid. The kernel's socket diagnostics find that socket by its four addresses in
 * one lookup (NETLINK_SOCK_DIAG, as ss(8) asks); without them, /proc/net/tcp{,6} lists
 * it, at the cost of a walk of the whole table. Only an established socket counts: one
 * closed may linger in time-wait, which shows uid 0. A remote host, or a client already
 * gone, has none here: it is known by its address only.
 */
struct tcp_end {
	uint8_t addr[16]; /* IPv4 as ::ffff:a.b.c.d */
	uint16_t port;
};

static void tcp_end_of(const struct sockaddr_storage *ss, struct tcp_end *ret)
{
	*ret = (struct tcp_end){0};
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)ss;

		ret->addr[10] = ret->addr[11] = 0xff;
		memcpy(ret->addr + 12, &in->sin_addr, 4);
		ret->port = ntohs(in->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)ss;

		memcpy(ret->addr, &in6->sin6_addr, 16);
		ret->port = ntohs(in6->sin6_port);
	}
}

/* "0100007F:1F90" (4 or 16 bytes, each 32-bit word printed in the host's order). */
static bool parse_end(const char *s, bool v6, struct tcp_end *ret)
{
	size_t words = v6 ? 4 : 1;

	*ret = (struct tcp_end){0};
	if (strlen(s) != words * 8 + 5 || s[words * 8] != ':')
		return false;
	for (size_t i = 0; i < words; i++) {
		char hex[9];
		uint32_t w;

		memcpy(hex, s + i * 8, 8);
		hex[8] = '\0';
		w = (uint32_t)strtoul(hex, NULL, 16);
		memcpy(ret->addr + (v6 ? i * 4 : 12), &w, 4);
	}
	if (!v6)
		ret->addr[10] = ret->addr[11] = 0xff;
	ret->port = (uint16_t)strtoul(s + words * 8 + 1, NULL, 16);
	return true;
}

static bool tcp_uid_in(const char *table, bool v6, const struct tcp_end *peer,
		       const struct tcp_end *us, uid_t *ret_uid)
{
	_cleanup_free_ char *line = NULL;
	FILE *f = fopen(table, "re");
	bool found = false;
	size_t cap = 0;

	while (f && !found && getline(&line, &cap, f) > 0) {
		char local[48], remote[48];
		struct tcp_end l, r;
		unsigned int st, uid;

		if (sscanf(line, " %*u: %47s %47s %x %*s %*s %*s %u", local, remote, &st, &uid) !=
			    4 ||
		    st != TCP_ESTABLISHED || !parse_end(local, v6, &l) ||
		    !parse_end(remote, v6, &r))
			continue;
		if (l.port == peer->port && r.port == us->port && !memcmp(l.addr, peer->addr, 16) &&
		    !memcmp(r.addr, us->addr, 16)) {
			*ret_uid = (uid_t)uid;
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static bool is_v4(const uint8_t addr[16])
{
	static const uint8_t prefix[12] = {[10] = 0xff, [11] = 0xff};

	return !memcmp(addr, prefix, sizeof(prefix));
}

/* 1 with *ret_uid: the socket at peer connected to us is established here; 0: none is;
 * a negative errno: the kernel would not say. */
static int diag_uid(const struct tcp_end *peer, const struct tcp_end *us, uid_t *ret_uid)
{
	bool v4 = is_v4(peer->addr) && is_v4(us->addr);
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = {.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST},
		.req = {.sdiag_family = v4 ? AF_INET : AF_INET6,
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_states = 1u << TCP_ESTABLISHED,
			.id = {.idiag_sport = htons(peer->port),
			       .idiag_dport = htons(us->port),
			       .idiag_cookie = {INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE}}},
	};
	union {
		char buf[1024];
		struct nlmsghdr align;
	} u;
	const struct nlmsghdr *h = &u.align;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	memcpy(msg.req.id.idiag_src, v4 ? peer->addr + 12 : peer->addr, v4 ? 4 : 16);
	memcpy(msg.req.id.idiag_dst, v4 ? us->addr + 12 : us->addr, v4 ? 4 : 16);
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return negerrno();
	if (send(fd, &msg, sizeof(msg), 0) < 0)
		return negerrno();
	/* The answer is queued by the send itself: nothing to wait for. */
	n = recv(fd, u.buf, sizeof(u.buf), MSG_DONTWAIT);
	if (n < 0)
		return negerrno();
	if (!NLMSG_OK(h, (size_t)n))
		return -EPROTO;
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);

		if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
			return -EPROTO;
		return e->error == -ENOENT ? 0 : (e->error < 0 ? e->error : -EPROTO);
	}
	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
		return -EPROTO;
	{
		const struct inet_diag_msg *m = NLMSG_DATA(h);

		if (m->idiag_state != TCP_ESTABLISHED)
			return 0;
		*ret_uid = (uid_t)m->idiag_uid;
	}
	return 1;
}

/* Who is at the other end of fd: by uid where it is known, else by address. */
static void peer_of(int fd, bool unix_socket, uid_t cred_uid, struct metrics_peer *ret)
{
	struct sockaddr_storage peer = {0}, us = {0};
	socklen_t plen = sizeof(peer), ulen = sizeof(us);
	struct tcp_end p, u;
	int r;

	*ret = (struct metrics_peer){.by_uid = true, .uid = cred_uid};
	if (unix_socket)
		return; /* SO_PEERCRED: the uid, or -1 for all whose is unknown */
	ret->uid = (uid_t)-1;
	if (getpeername(fd, (struct sockaddr *)&peer, &plen) < 0 ||
	    getsockname(fd, (struct sockaddr *)&us, &ulen) < 0)
		return;
	tcp_end_of(&peer, &p);
	tcp_end_of(&us, &u);
	r = diag_uid(&p, &u, &ret->uid);
	if (r > 0)
		return;
	/* The client's socket is in the table of its own family; either can reach us. */
	if (r < 0 && (tcp_uid_in("/proc/net/tcp", false, &p, &u, &ret->uid) ||
		      tcp_uid_in("/proc/net/tcp6", true, &p, &u, &ret->uid)))
		return;
	ret->by_uid = false;
	memcpy(ret->addr, p.addr, sizeof(ret->addr));
}

static bool same_peer(const struct metrics_peer *a, const struct metrics_peer *b)
{
	if (a->by_uid != b->by_uid)
		return false;
	return a->by_uid ? a->uid == b->uid : !memcmp(a->addr, b->addr, sizeof(a->addr));
}

static unsigned int held_by(const struct metrics *m, const struct metrics_peer *p)
{
	unsigned int n = 0;

	for (const struct list_head *l = m->conns.next; l != &m->conns; l = l->next)
		n += same_peer(&container_of(l, struct metrics_conn, link)->peer, p);
	return n;
}

/*
 * The admission rule (devwld(8) SECURITY): while a slot is free, anyone takes it; when
 * none is, a peer takes the slot of the oldest connection of the peer that holds the
 * most, if that one holds more than it does. So a peer never keeps more than an even
 * share from another that wants a slot: a scraper holding none always gets one, however
 * many connections one uid (or one remote address) keeps opening. True: p may have one
 * more connection (a slot is free now).
 */
static bool admit(struct devwld *d, struct metrics *m, const struct metrics_peer *p)
{
	struct metrics_conn *victim = NULL;
	unsigned int mine, most = 0;

	if (m->nconns < METRICS_CONNS_MAX)
		return true;
	mine = held_by(m, p);
	for (struct list_head *l = m->conns.next; l != &m->conns; l = l->next) {
		struct metrics_conn *c = container_of(l, struct metrics_conn, link);
		unsigned int n = same_peer(&c->peer, p) ? 0 : held_by(m, &c->peer);

		if (n > most) { /* oldest first: the first of the biggest holder is its oldest */
			most = n;
			victim = c;
		}
	}
	if (!victim || most <= mine)
		return false;
	m->evicted++;
	conn_close(d, victim);
	return true;
}

/* Log the refusals counted since the last line, once their interval is over. */
static void refused_report(struct metrics *m, uint64_t now)
{
	if (m->refused == m->refused_logged || now < m->quiet_until)
		return;
	log_msg("metrics: refused %llu connections, their peer holding its share of the slots "
		"(%llu in all; a line per %u s at most)",
		(unsigned long long)(m->refused - m->refused_logged),
		(unsigned long long)m->refused, REFUSED_LOG_MS / 1000);
	m->refused_logged = m->refused;
	m->quiet_until = now + REFUSED_LOG_MS;
}

static void metrics_accept(struct devwld *d)
{
	struct metrics *m = d->metrics;

	for (int i = 0; i < METRICS_CONNS_MAX; i++) {
		struct metrics_peer peer;
		struct metrics_conn *c;
		uid_t uid;
		pid_t pid;
		int fd = socket_accept(m->listen.fd, "metrics", &uid, &pid);

		if (fd < 0) {
			if (fd != -EAGAIN && fd != -EINTR && fd != -ECONNABORTED)
				feature_failed(FEATURE_METRICS);
			return;
		}
		peer_of(fd, m->unix_socket, uid, &peer);
		if (!admit(d, m, &peer)) {
			m->refused++;
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->src.fd = fd;
		c->src.ready = conn_ready;
		c->src.free_fn = conn_free;
		c->m = m;
		c->peer = peer;
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

	if (m)
		refused_report(m, now);
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
	int fd, r;

	if (!where)
		return 0;
	if (!strncmp(where, "unix:", 5)) {
		/* Root's alone, as the control socket: a scraper in another uid goes
		 * through TCP on a loopback address, or a proxy of root's. No other local
		 * user can so much as take a slot here (devwld(8) SECURITY). */
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
	m->unix_socket = !strncmp(where, "unix:", 5);
	m->unix_st = st;
	m->listen.fd = fd;
	m->listen.ready = listen_ready;
	d->metrics = m;
	r = loop_arm(&d->loop, &m->listen, POLLIN);
	if (r < 0)
		return devwl_error_set(err, r, 0, "--metrics %s: cannot watch it: %s", where,
				       strerror(-r));
	log_msg("metrics: serving GET /metrics at %s", where);
	return 0;
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
