/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Audit records and counters. One JSON line per decision (tools/audit-line.c: the shape
 * devwl-run writes, plus the container and its node); CONTINUE answers for non-devices are only
 * counted unless --audit-all, since formatting a record costs more than answering one. Handling
 * times go into a log-linear histogram (8 steps per power of two, so the percentiles are within 1/8
 * of the truth) that costs no allocation per event.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "audit-line.h"
#include "devwld.h"
#include "util.h"

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

int audit_open(struct audit *a, const char *file, bool all)
{
	a->all = all;
	if (!file) {
		a->out = stderr;
		return 0;
	}
	a->out = fopen(file, "ae");
	if (!a->out)
		return negerrno();
	/* Line buffered: a record is whole in the file as soon as it is written. */
	setvbuf(a->out, NULL, _IOLBF, 0);
	return 0;
}

void audit_close(struct audit *a)
{
	if (a->out && a->out != stderr)
		fclose(a->out);
	a->out = NULL;
}

void audit_event(struct audit *a, const struct devwl_event *ev, const struct container *c)
{
	unsigned int b = bucket_of(ev->handling_ns);

	events_publish(ev, c ? c->id : "", c ? c->node_path : "");
	a->notifications++;
	a->hist[b < AUDIT_BUCKETS ? b : AUDIT_BUCKETS - 1]++;
	switch (ev->verdict) {
	case DEVWL_VERDICT_CONTINUE:
		a->continued++;
		if (!a->all)
			return;
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
	if (!a->out)
		return;
	/* Line buffered and written by nothing else: the line goes out whole, at once. */
	fflush(a->out);
	audit_write(fileno(a->out), ev, c ? c->id : "", c ? c->node_path : "");
}

void audit_error(struct audit *a)
{
	a->errors++;
}

uint64_t audit_percentile(const struct audit *a, double q)
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
