/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Audit records and counters. One JSON line per decision (common/audit-line.c: the shape
 * devwl-run writes, plus the container and its node); CONTINUE answers for non-devices are only
 * counted unless --audit-all, since formatting a record costs more than answering one. Handling
 * times go into a log-linear histogram (8 steps per power of two, so the percentiles are within 1/8
 * of the truth) that costs no allocation per event.
 *
 * Records go to a sink (sink.h) and never block the caller: a sink that does not keep up
 * loses records, counted in "dropped" (devwlctl stats: audit_dropped) and logged every
 * 10 s while it grows. audit_event() may be called from several threads at once: one
 * mutex guards the counters and the histogram, the sink has its own; the line is
 * formatted outside both, once per decision for the file and every subscriber. The rule of a policy
 * denial is read from the node that decided it, by the thread that owns the hierarchy
 * (serve_completions(): the loop's).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "audit-line.h"
#include "audit.h"
#include "devwld.h"
#include "events.h"
#include "log.h"
#include "sink.h"
#include "util.h"

/* Drops are logged at most this often. */
#define AUDIT_REPORT_MS 10000

#define SUB_BITS 3
#define SUB	 (1u << SUB_BITS)

static unsigned int bucket_of(uint64_t v)
{
	unsigned int e;

	if (v < 2 * SUB)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v); /* >= SUB_BITS + 1 */
	return 2 * SUB + (e - SUB_BITS - 1) * SUB +
	       (unsigned int)((v >> (e - SUB_BITS)) & (SUB - 1));
}

/* The smallest value of a bucket (the inverse of bucket_of). */
static uint64_t bucket_floor(unsigned int b)
{
	unsigned int e;

	if (b < 2 * SUB)
		return b;
	e = (b - 2 * SUB) / SUB + SUB_BITS + 1;
	return ((uint64_t)1 << e) | ((uint64_t)((b - 2 * SUB) % SUB) << (e - SUB_BITS));
}

int audit_open(struct audit *a, const char *file, bool all, struct sink *stderr_sink)
{
	int fd;

	a->all = all;
	if (!file) {
		a->out = stderr_sink;
		return stderr_sink ? 0 : -ENOMEM;
	}
	fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return negerrno();
	a->out = sink_new(fd, true, SINK_CAPACITY);
	if (!a->out) {
		int r = negerrno();

		close(fd);
		return r;
	}
	a->own_out = true;
	a->file = file;
	return 0;
}

void audit_close(struct audit *a)
{
	if (a->own_out)
		sink_free(a->out, SINK_DRAIN_MS);
	a->out = NULL;
	a->own_out = false;
	a->file = NULL;
	tally_clear(a);
}

/*
 * The record of one decision, built once and formatted once, to every subscriber that
 * takes it and to the file when to_file: both get the same line, and what the line
 * reads of the caller (/proc/TID/status) is read once.
 */
static void record(struct audit *a, const struct devwl_event *ev, uid_t owner,
		   const char *container, const char *node, const char *reason,
		   const struct devwl_node *decider, bool to_file, uint64_t count)
{
	char small[AUDIT_LINE_SMALL];
	_cleanup_free_ char *big = NULL;
	const char *line = NULL;
	struct audit_decision d;
	bool cont = ev->verdict == DEVWL_VERDICT_CONTINUE;
	int n;

	to_file = to_file && a->out;
	if (!to_file && !events_listening())
		return;
	audit_decision_of(ev, container, node, reason, decider, &d);
	d.count = count;
	n = audit_line(&d, small, &big, &line);
	if (n > 0)
		events_publish_line(line, (size_t)n, owner, container, cont);
	if (to_file && (n < 0 || !sink_write(a->out, line, (size_t)n))) {
		pthread_mutex_lock(&a->lock);
		a->dropped++;
		pthread_mutex_unlock(&a->lock);
	}
}

void audit_event(struct audit *a, const struct devwl_event *ev, const struct container *c,
		 const char *reason, const struct devwl_node *decider)
{
	unsigned int b = bucket_of(ev->handling_ns);
	bool to_file = true;

	pthread_mutex_lock(&a->lock);
	a->notifications++;
	a->hist[b < AUDIT_BUCKETS ? b : AUDIT_BUCKETS - 1]++;
	tally_event(a, c ? c->node_path : NULL, c ? c->id : NULL, ev);
	switch (ev->verdict) {
	case DEVWL_VERDICT_CONTINUE:
		a->continued++;
		to_file = a->all;
		break;
	case DEVWL_VERDICT_ALLOW:
		a->allowed++;
		break;
	case DEVWL_VERDICT_DENY:
		a->denied++;
		break;
	default:
		a->errors++;
		break;
	}
	pthread_mutex_unlock(&a->lock);
	record(a, ev, c ? c->owner_uid : EVENTS_ANY_OWNER, c ? c->id : "", c ? c->node_path : "",
	       reason, decider, to_file, 0);
}

void audit_record(struct audit *a, struct json_object *o, uid_t owner, const char *container)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = s ? strlen(s) : 0;
	_cleanup_free_ char *line = s ? malloc(n + 1) : NULL;

	if (!line)
		return;
	memcpy(line, s, n);
	line[n] = '\n';
	events_publish_line(line, n + 1, owner, container, false);
	if (a->out && !sink_write(a->out, line, n + 1)) {
		pthread_mutex_lock(&a->lock);
		a->dropped++;
		pthread_mutex_unlock(&a->lock);
	}
}

void audit_kernel_denial(struct audit *a, const struct devwl_denial *denial,
			 const struct container *c)
{
	uint64_t count = denial->count ? denial->count : 1;
	struct devwl_event ev;

	audit_event_of_denial(denial, &ev);
	pthread_mutex_lock(&a->lock);
	if (denial->allowed) {
		a->kernel_allowed += count;
		a->kernel_reports++;
	} else {
		a->kernel_denied++;
	}
	pthread_mutex_unlock(&a->lock);
	record(a, &ev, c->owner_uid, c->id, c->node_path, AUDIT_KERNEL_REASON, c->node, true,
	       count);
}

uint64_t audit_error(struct audit *a)
{
	uint64_t n;

	pthread_mutex_lock(&a->lock);
	n = ++a->errors;
	pthread_mutex_unlock(&a->lock);
	return n;
}

void audit_gone(struct audit *a)
{
	pthread_mutex_lock(&a->lock);
	a->gone++;
	pthread_mutex_unlock(&a->lock);
}

static uint64_t percentile(const struct audit *a, double q)
{
	uint64_t total = 0, want, seen = 0;

	for (unsigned int i = 0; i < AUDIT_BUCKETS; i++)
		total += a->hist[i];
	if (!total)
		return 0;
	want = (uint64_t)((double)total * q);
	if (want >= total)
		want = total - 1;
	for (unsigned int i = 0; i < AUDIT_BUCKETS; i++) {
		seen += a->hist[i];
		if (seen > want)
			return bucket_floor(i);
	}
	return 0;
}

/* Under a->lock. */
static void counts_locked(const struct audit *a, struct audit_counts *ret)
{
	*ret = (struct audit_counts){
		.notifications = a->notifications,
		.continued = a->continued,
		.allowed = a->allowed,
		.denied = a->denied,
		.errors = a->errors,
		.gone = a->gone,
		.dropped = a->dropped,
		.kernel_denied = a->kernel_denied,
		.kernel_allowed = a->kernel_allowed,
		.kernel_reports = a->kernel_reports,
		.p50_ns = percentile(a, 0.50),
		.p99_ns = percentile(a, 0.99),
	};
}

void audit_counts(struct audit *a, struct audit_counts *ret)
{
	pthread_mutex_lock(&a->lock);
	counts_locked(a, ret);
	pthread_mutex_unlock(&a->lock);
}

int audit_tally(struct audit *a, struct audit_tally *ret)
{
	/* One snapshot: the histogram's +Inf bucket (the notifications) must never be
	 * below the buckets' own sum, as it could be with an event between two locks. */
	pthread_mutex_lock(&a->lock);
	counts_locked(a, &ret->counts);
	memcpy(ret->le, a->le, sizeof(ret->le));
	ret->sum_ns = a->sum_ns;
	ret->nseries = a->nseries;
	ret->series = malloc((a->nseries ? a->nseries : 1) * sizeof(*ret->series));
	if (ret->series && a->nseries)
		memcpy(ret->series, a->series, a->nseries * sizeof(*ret->series));
	pthread_mutex_unlock(&a->lock);
	return ret->series ? 0 : -ENOMEM;
}

uint64_t audit_write_errors(struct audit *a)
{
	return a->own_out ? sink_errors(a->out, NULL) : 0;
}

void audit_report_drops(struct audit *a, uint64_t now)
{
	uint64_t records, lines, errors;
	int err = 0;

	if (now < a->report_due_ms)
		return;
	a->report_due_ms = now + AUDIT_REPORT_MS;
	/* The file broke after the start (a full disk, an I/O error): its records are lost
	 * until it takes writes again, which nothing else would tell. */
	errors = a->own_out ? sink_errors(a->out, &err) : 0;
	if (errors != a->reported_errors) {
		log_msg("ERROR: audit file %s: %llu writes failed (%llu since the last report; "
			"the last: %s): their records are lost",
			a->file, (unsigned long long)errors,
			(unsigned long long)(errors - a->reported_errors), strerror(err));
		a->reported_errors = errors;
	}
	pthread_mutex_lock(&a->lock);
	records = a->dropped;
	pthread_mutex_unlock(&a->lock);
	lines = log_dropped();
	if (records == a->reported_records && lines == a->reported_lines)
		return;
	log_msg("the audit sink or stderr does not keep up: %llu audit records and %llu log"
		" lines dropped so far (%llu and %llu since the last report)",
		(unsigned long long)records, (unsigned long long)lines,
		(unsigned long long)(records - a->reported_records),
		(unsigned long long)(lines - a->reported_lines));
	a->reported_records = records;
	a->reported_lines = lines;
}
