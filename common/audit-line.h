/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Audit records of devwl-run --audit and devwld --audit: one JSON line per decision
 * (format in devwl-run(1), AUDIT; devwld adds the container and its node).
 */
#ifndef DEVWL_AUDIT_LINE_H
#define DEVWL_AUDIT_LINE_H

#include <stddef.h>
#include <sys/types.h>

#include "devwl.h"
#include "explain.h"

/*
 * Why a decision came out as it did: the record's optional "reason" (which check refused
 * it: libdevwl's devwl_notify_reason(), "policy", "no CAP_MKNOD", "cannot decide", ...)
 * and, for a policy denial, "rule" (the rule or default that refused, and the topmost
 * ancestor refusing too: explain.h). Either may be NULL.
 */
struct audit_why {
	const char *reason;
	const char *rule;
};

/* The "time" of a record: now, UTC, to the nanosecond ("2026-12-05T09:41:02.123456789Z"). */
#define AUDIT_TIME_MAX 40
void audit_time(char buf[static AUDIT_TIME_MAX]);

/*
 * One decision as every record of it shows it (the audit file, devwlctl events
 * subscribers, devwl-run's and the plugin's audit): built once by audit_decision_of(),
 * which reads all that the record needs beyond the event (the time, the rule, the
 * caller's process from /proc/TID/status: at most one read), then formatted once by
 * audit_line(), which reads nothing. Not to be copied: why.rule may point into rule.
 */
struct audit_decision {
	const struct devwl_event *ev;
	const char *container, *node; /* NULL container: no "container" and "node" */
	struct audit_why why;
	pid_t pid;	/* the record's "pid" (0: null) */
	uint64_t count; /* > 0: a kernel device program's report ("source":"kernel"), standing
			   for this many accesses */
	char time[AUDIT_TIME_MAX];
	char rule[EXPLAIN_MAX];
};

/*
 * Build the record of ev in *ret: container and node (NULL: devwl-run's record, without
 * them), reason as libdevwl gave it (may be NULL), decider the node that decided it, to
 * name the rule of a policy denial (NULL: no "rule"). ev must outlive *ret.
 */
void audit_decision_of(const struct devwl_event *ev, const char *container, const char *node,
		       const char *reason, const struct devwl_node *decider,
		       struct audit_decision *ret);

/*
 * The reason of a record of what a kernel-mode device program refused: no notification,
 * the kernel decided (devwl_cgroup_read_denials()). Its "rule" is named as for "policy".
 */
#define AUDIT_KERNEL_REASON "kernel device program (kernel mode)"

/*
 * The event such a denial is recorded as: verdict deny, EPERM (the kernel's answer),
 * syscall and path null (the kernel does not say which call asked), the pid and thread
 * where the program could learn them. An allowed access it reported
 * (DEVWL_CGROUP_RECORD_ACCESSES) likewise, with verdict allow and no errno.
 */
void audit_event_of_denial(const struct devwl_denial *denial, struct devwl_event *ret);

/*
 * Format d as one JSON object and a newline into buf (NUL-terminated). Returns the
 * length, or -ENOSPC if size is too small (AUDIT_LINE_MAX always suffices for ids and
 * nodes of sane length).
 */
int audit_format(const struct audit_decision *d, char *buf, size_t size);

/* Escaped path (6 bytes per input byte at worst) + hex copy + the other fields, the
 * reason and rule included. */
#define AUDIT_LINE_MAX (4096 * 8 + 8192 + 6 * EXPLAIN_MAX)

/*
 * Format d into small, or into a heap buffer (*ret_big, caller frees) when the line is
 * longer than a typical one; *ret_line is where it is. Returns the length or -ENOMEM.
 */
#define AUDIT_LINE_SMALL 4096
int audit_line(const struct audit_decision *d, char small[static AUDIT_LINE_SMALL], char **ret_big,
	       const char **ret_line);

/*
 * The record that says who enforces a container's devices (devwl-run(1), devwld(8)):
 * {"event":"mode", then each field that is set, in this order, and a newline.
 */
/* "continue", "allow", "deny" or "error": the "decision" of a record, and the metrics'. */
const char *audit_decision_name(enum devwl_verdict v);

struct audit_mode {
	const char *container, *node; /* devwld's: the container and its node */
	const char *mode;	      /* "kernel", "authoritative", ... */
	const char *reason;	      /* why this mode */
	const char *cgroup;	      /* the cgroup programmed (devwl-run: "v1" or "v2") */
	int version;		      /* with cgroup: 1 counts "writes", 2 "instructions" */
	int size;		      /* with cgroup: how many */
	const char *warning;
	pid_t pid; /* > 0: the process the warning is about */
};

/*
 * Format m into buf (NUL-terminated). Returns the length, or -ENOSPC if size is too small
 * (AUDIT_LINE_MAX always suffices for ids and nodes of sane length).
 */
int audit_mode_format(const struct audit_mode *m, char *buf, size_t size);

/*
 * {"event":"reports","result":"unavailable",...}: nothing can report what the v1 device
 * cgroup of a container in kernel mode decides, and why (devwld's event of that name).
 * Into buf as audit_mode_format().
 */
int audit_unreportable_format(const char *container, const char *node, const char *cgroup,
			      const char *reason, char *buf, size_t size);

/*
 * Write ev to fd as one line, in one write(2) so lines of concurrent writers do not mix;
 * container, node, reason and decider as for audit_decision_of().
 */
int audit_write(int fd, const struct devwl_event *ev, const char *container, const char *node,
		const char *reason, const struct devwl_node *decider);
/* A device program's report (devwl_cgroup_read_denials()) to fd as audit_write() does,
 * marked as the kernel's, with the accesses it stands for ("source", "count"). */
int audit_write_report(int fd, const struct devwl_denial *report, const char *container,
		       const char *node, const struct devwl_node *decider);

#endif
