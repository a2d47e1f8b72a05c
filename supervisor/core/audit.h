/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The audit (audit.c): records of decisions, counters, the handling-time histogram. */
#ifndef DEVWLD_AUDIT_H
#define DEVWLD_AUDIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "devwl.h"

struct container;

/* Counters and the handling-time histogram; see audit.c. */
#define AUDIT_BUCKETS 512
/* Decisions are also counted by node subtree, syscall and verdict (tally.c), for the
 * metrics: at most this many series; past it, the subtree is "other". */
#define AUDIT_SERIES_MAX 256
/* The handling-time histogram in fixed buckets, as Prometheus wants them (tally.c). */
#define AUDIT_LE_N 14
extern const double audit_le_seconds[AUDIT_LE_N];

struct audit_series {
	char *subtree;	     /* the node's first depth components ("/k8s/prod") */
	const char *syscall; /* static text */
	enum devwl_verdict verdict;
	uint64_t n;
};

struct sink;
struct audit {
	pthread_mutex_t lock; /* the counters and hist: audit_event() runs in any thread */
	struct sink *out;     /* NULL: no records */
	bool own_out;	      /* not the shared stderr sink */
	const char *file;     /* own_out: the --audit file it writes */
	bool all;	      /* also record CONTINUE answers */
	uint64_t notifications, continued, allowed, denied, errors, gone;
	uint64_t dropped;	/* records the sink had no room for */
	uint64_t kernel_denied; /* refusals a kernel-mode device program recorded */
	uint64_t kernel_allowed, kernel_reports; /* accesses it allowed and reported, and in
						    how many records (one a second a key) */
	uint64_t hist[AUDIT_BUCKETS];
	unsigned int depth; /* subtree depth of the series (--metrics-depth) */
	struct audit_series *series;
	size_t nseries, series_cap;
	uint64_t le[AUDIT_LE_N]; /* events handled in at most audit_le_seconds[i], not cumulative */
	uint64_t sum_ns;	 /* every event's handling time */
	/* the loop's own (audit_report_drops) */
	uint64_t report_due_ms, reported_records, reported_lines, reported_errors;
};

/* What devwlctl stats shows of the audit. */
struct audit_counts {
	uint64_t notifications, continued, allowed, denied, errors, gone, dropped, kernel_denied;
	uint64_t kernel_allowed, kernel_reports;
	uint64_t p50_ns, p99_ns;
};

/* A->lock must be initialised (PTHREAD_MUTEX_INITIALIZER) before any of these.
 * Records go to file, or without one to stderr_sink (log_sink()). */
int audit_open(struct audit *a, const char *file, bool all, struct sink *stderr_sink);
void audit_close(struct audit *a);
/* Count ev and queue its record; never blocks on the sink. Any thread. */
/* reason: devwl_notify_reason() of the call, or NULL; decider: the node that decided it,
 * to name the rule of a policy denial (read here: only on the thread that owns the
 * hierarchy), or NULL. */
void audit_event(struct audit *a, const struct devwl_event *ev, const struct container *c,
		 const char *reason, const struct devwl_node *decider);
/* What c's kernel-mode device program refused (no notification: the kernel decided),
 * counted apart from the notifications, recorded and published with AUDIT_KERNEL_REASON,
 * "source":"kernel", the count, and the rule of c's node that refuses it; or an access it
 * allowed and reported (denial->allowed), recorded alike with decision allow and the
 * accesses it stands for. Loop thread (it reads the hierarchy). */
void audit_kernel_denial(struct audit *a, const struct devwl_denial *denial,
			 const struct container *c);
/* A record that is no decision (o: a JSON object, "time" and "event" first), one line
 * to the audit and to `devwlctl events` subscribers of owner's container ("": every
 * one's; owner EVENTS_ANY_OWNER: a container known by its id alone). */
struct json_object;
void audit_record(struct audit *a, struct json_object *o, uid_t owner, const char *container);
/* Count a failed notification; returns the count so far. Any thread. */
uint64_t audit_error(struct audit *a);
void audit_gone(struct audit *a);
void audit_counts(struct audit *a, struct audit_counts *ret);
/* Count ev by the subtree of node_path, its syscall and verdict, and its handling time
 * in the fixed buckets. The subtree stops short of a component naming container (its
 * id; NULL: none), so that no label carries a container id (tally_subtree_len()). Under
 * a->lock (audit_event() calls it). */
void tally_event(struct audit *a, const char *node_path, const char *container,
		 const struct devwl_event *ev);
/* The length of the subtree label of node_path: its first depth components, short of the
 * first that names container (equal to its id, or holding an id of 12 characters or
 * more); "/" (1) when none is left. */
size_t tally_subtree_len(const char *node_path, unsigned int depth, const char *container);
/* A container's own node went with it: its series go too (subtree exactly path), so that
 * the series bound is never filled by containers that are gone. Loop thread only. */
void tally_forget(struct audit *a, const char *path);
/* What the metrics show of the audit, copied under its lock: *ret_series (caller frees;
 * the strings stay the audit's until tally_forget() or audit_close(), both on the loop,
 * as the metrics are) with *ret_n elements. 0 or -ENOMEM. */
struct audit_tally {
	struct audit_counts counts;
	uint64_t le[AUDIT_LE_N], sum_ns;
	struct audit_series *series;
	size_t nseries;
};
int audit_tally(struct audit *a, struct audit_tally *ret);
/* Free the series (audit_close() does). */
void tally_clear(struct audit *a);
/* Writes the audit file refused so far (0 when records go to stderr). Any thread. */
uint64_t audit_write_errors(struct audit *a);
/* Log the drops of records and log lines, and failed writes of the audit file (as an
 * ERROR), at most every 10 s (the loop calls it). */
void audit_report_drops(struct audit *a, uint64_t now);

#endif
