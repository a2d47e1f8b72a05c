/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Audit lines of devwl-run and devwld. The path comes from the container and may hold any bytes:
 * JSON strings must be valid UTF-8, so bytes that are not become U+FFFD and the exact
 * bytes are added as "path_hex", leaving nothing ambiguous for a log reader.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "audit-line.h"
#include "event.h"
#include "fileio.h"
#include "procstatus.h"
#include "util.h"

struct out {
	char *buf;
	size_t size, len;
	bool overflow;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->overflow || o->size - o->len <= n) {
		o->overflow = true;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void printf_(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void printf_(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->size - o->len) {
		o->overflow = true;
		o->buf[o->len] = '\0';
		return;
	}
	o->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if s[0] does not start one. */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (left < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* Write s as a JSON string; returns false if some bytes had to be replaced. */
static bool put_json_string(struct out *o, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t left = strlen(str);
	bool exact = true;

	puts_(o, "\"");
	while (left > 0) {
		size_t n = utf8_seq(s, left);
		if (n == 0) {
			puts_(o, "\\ufffd");
			exact = false;
			n = 1;
		} else if (*s == '"' || *s == '\\') {
			put(o, "\\", 1);
			put(o, (const char *)s, 1);
		} else if (*s < 0x20 || *s == 0x7f) {
			printf_(o, "\\u%04x", *s);
		} else {
			put(o, (const char *)s, n);
		}
		s += n;
		left -= n;
	}
	puts_(o, "\"");
	return exact;
}

/*
 * The handler learns only the calling thread; it reads the process when it needs the
 * caller's credentials. For a device decision the record names the process anyway: the
 * answer has gone out, so this read delays nobody's call. So does a CONTINUE that
 * carries a reason (a path devwl could not resolve, or looked up as the caller): it is
 * rare and worth following. A plain CONTINUE line (--audit-all) keeps pid null rather
 * than pay it for every file opened; so does a thread that has gone. Tgid is the
 * fourth line: the first part of the file will do.
 */
static pid_t pid_of(const struct devwl_event *ev, const char *reason)
{
	char buf[512];
	const char *p = NULL;

	if (ev->pid > 0)
		return ev->pid;
	if ((ev->verdict == DEVWL_VERDICT_CONTINUE && !reason) || ev->tid <= 0)
		return 0;
	if (devwl_proc_status_read(AT_FDCWD, ev->tid, buf, sizeof(buf)) < 0)
		return 0;
	p = devwl_proc_status_field(buf, "Tgid");
	return p ? (pid_t)strtol(p, NULL, 10) : 0;
}

const char *audit_decision_name(enum devwl_verdict v)
{
	switch (v) {
	case DEVWL_VERDICT_CONTINUE:
		return "continue";
	case DEVWL_VERDICT_ALLOW:
		return "allow";
	case DEVWL_VERDICT_DENY:
		return "deny";
	case DEVWL_VERDICT_ERROR:
		break;
	}
	return "error";
}

void audit_decision_of(const struct devwl_event *ev, const char *container, const char *node,
		       const char *reason, const struct devwl_node *decider,
		       struct audit_decision *ret)
{
	ret->ev = ev;
	ret->container = container;
	ret->node = container && !node ? "" : node;
	ret->why = (struct audit_why){.reason = reason};
	ret->rule[0] = '\0';
	/* A policy denial names the rule: what an operator changes to allow it. */
	if (reason && decider &&
	    (!strcmp(reason, "policy") || !strcmp(reason, AUDIT_KERNEL_REASON)) &&
	    ev->verdict == DEVWL_VERDICT_DENY &&
	    (ev->type == DEVWL_DEV_CHAR || ev->type == DEVWL_DEV_BLOCK)) {
		explain_denial(decider, ev->type, ev->major, ev->minor, ev->access, ret->rule,
			       EXPLAIN_MAX);
		ret->why.rule = ret->rule;
	}
	ret->pid = pid_of(ev, reason);
	ret->count = 0;
	audit_time(ret->time);
}

void audit_time(char buf[static AUDIT_TIME_MAX])
{
	struct timespec ts = {0};
	struct tm tm = {0};
	char tbuf[32] = "";

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, AUDIT_TIME_MAX, "%.20s.%09ldZ", tbuf, ts.tv_nsec);
}

void audit_event_of_denial(const struct devwl_denial *denial, struct devwl_event *ret)
{
	devwl_event_init(ret, 0, denial->tid, -1, NULL);
	ret->pid = denial->pid;
	ret->type = denial->type;
	ret->major = denial->major;
	ret->minor = denial->minor;
	ret->access = denial->access;
	if (denial->allowed) {
		ret->verdict = DEVWL_VERDICT_ALLOW;
		ret->error = 0;
	}
}

int audit_format(const struct audit_decision *d, char *buf, size_t size)
{
	const struct devwl_event *ev = d->ev;
	struct out o = {.buf = buf, .size = size};
	const char *ename = NULL;
	char acc[4];

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	printf_(&o, "{\"time\":\"%s\"", d->time);
	if (d->container) {
		puts_(&o, ",\"container\":");
		put_json_string(&o, d->container);
		puts_(&o, ",\"node\":");
		put_json_string(&o, d->node);
	}
	if (d->pid > 0)
		printf_(&o, ",\"pid\":%d", (int)d->pid);
	else
		puts_(&o, ",\"pid\":null");
	printf_(&o, ",\"tid\":%d", (int)ev->tid);
	if (ev->userns_ino)
		printf_(&o, ",\"userns\":%llu", (unsigned long long)ev->userns_ino);
	puts_(&o, ",\"syscall\":");
	if (ev->syscall)
		put_json_string(&o, ev->syscall);
	else if (ev->syscall_nr < 0) /* the kernel decided: it does not say which call */
		puts_(&o, "null");
	else
		printf_(&o, "\"%d\"", ev->syscall_nr);
	puts_(&o, ",\"path\":");
	if (!ev->path) {
		puts_(&o, "null");
	} else if (!put_json_string(&o, ev->path)) {
		puts_(&o, ",\"path_hex\":\"");
		for (const unsigned char *p = (const unsigned char *)ev->path; *p; p++)
			printf_(&o, "%02x", *p);
		puts_(&o, "\"");
	}
	if (ev->type == DEVWL_DEV_CHAR || ev->type == DEVWL_DEV_BLOCK)
		printf_(&o, ",\"device\":\"%c %u:%u\"", ev->type == DEVWL_DEV_CHAR ? 'c' : 'b',
			ev->major, ev->minor);
	else
		puts_(&o, ",\"device\":null");
	printf_(&o, ",\"access\":\"%s\",\"decision\":\"%s\"",
		devwl_access_text((unsigned int)ev->access, acc), audit_decision_name(ev->verdict));
	if (ev->error != 0) {
		ename = strerrorname_np(ev->error);
		if (ename)
			printf_(&o, ",\"errno\":\"%s\"", ename);
		else
			printf_(&o, ",\"errno\":\"%d\"", ev->error);
	}
	if (d->why.reason) {
		puts_(&o, ",\"reason\":");
		put_json_string(&o, d->why.reason);
	}
	if (d->why.rule) {
		puts_(&o, ",\"rule\":");
		put_json_string(&o, d->why.rule);
	}
	if (d->count)
		printf_(&o, ",\"source\":\"kernel\",\"count\":%llu", (unsigned long long)d->count);
	printf_(&o, ",\"handling_ns\":%llu}\n", (unsigned long long)ev->handling_ns);
	return o.overflow ? -ENOSPC : (int)o.len;
}

/* ,"key":"value" when value is set. */
static void put_field(struct out *o, const char *key, const char *value)
{
	if (!value)
		return;
	printf_(o, ",\"%s\":", key);
	put_json_string(o, value);
}

int audit_mode_format(const struct audit_mode *m, char *buf, size_t size)
{
	struct out o = {.buf = buf, .size = size};

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	puts_(&o, "{\"event\":\"mode\"");
	put_field(&o, "container", m->container);
	put_field(&o, "node", m->node);
	put_field(&o, "mode", m->mode);
	put_field(&o, "reason", m->reason);
	put_field(&o, "cgroup", m->cgroup);
	if (m->cgroup)
		printf_(&o, ",\"%s\":%d", m->version == 1 ? "writes" : "instructions", m->size);
	put_field(&o, "warning", m->warning);
	if (m->pid > 0)
		printf_(&o, ",\"pid\":%d", (int)m->pid);
	puts_(&o, "}\n");
	return o.overflow ? -ENOSPC : (int)o.len;
}

int audit_unreportable_format(const char *container, const char *node, const char *cgroup,
			      const char *reason, char *buf, size_t size)
{
	struct out o = {.buf = buf, .size = size};

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	puts_(&o, "{\"event\":\"reports\"");
	put_field(&o, "container", container);
	put_field(&o, "node", node);
	put_field(&o, "cgroup", cgroup);
	puts_(&o, ",\"version\":1,\"result\":\"unavailable\"");
	put_field(&o, "reason", reason);
	puts_(&o, "}\n");
	return o.overflow ? -ENOSPC : (int)o.len;
}

int audit_line(const struct audit_decision *d, char small[static AUDIT_LINE_SMALL], char **ret_big,
	       const char **ret_line)
{
	int n = audit_format(d, small, AUDIT_LINE_SMALL);

	*ret_line = small;
	if (n != -ENOSPC)
		return n;
	*ret_big = malloc(AUDIT_LINE_MAX);
	if (!*ret_big)
		return -ENOMEM;
	*ret_line = *ret_big;
	return audit_format(d, *ret_big, AUDIT_LINE_MAX);
}

static int write_decision(int fd, const struct devwl_event *ev, const char *container,
			  const char *node, const char *reason, const struct devwl_node *decider,
			  uint64_t count)
{
	char small[AUDIT_LINE_SMALL];
	_cleanup_free_ char *big = NULL;
	const char *line = NULL;
	struct audit_decision d;
	int n;

	audit_decision_of(ev, container, node, reason, decider, &d);
	d.count = count;
	n = audit_line(&d, small, &big, &line);
	if (n < 0)
		return n;
	return devwl_write_all(fd, line, (size_t)n);
}

int audit_write(int fd, const struct devwl_event *ev, const char *container, const char *node,
		const char *reason, const struct devwl_node *decider)
{
	return write_decision(fd, ev, container, node, reason, decider, 0);
}

int audit_write_report(int fd, const struct devwl_denial *report, const char *container,
		       const char *node, const struct devwl_node *decider)
{
	struct devwl_event ev;

	audit_event_of_denial(report, &ev);
	return write_decision(fd, &ev, container, node, AUDIT_KERNEL_REASON, decider,
			      report->count ? report->count : 1);
}
