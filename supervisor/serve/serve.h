/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Serving notifications on handler threads (serve/): the one part of devwld that knows
 * about threads. The event loop hands it ready notify fds and its eventfd's completions;
 * everything else the handlers do stays inside serve/, and what the rest of the daemon
 * must learn (audit events, errors, a process to drop) comes back to the loop thread.
 */
#ifndef DEVWLD_SERVE_H
#define DEVWLD_SERVE_H

#include <stdint.h>
#include <stdio.h>

struct devwld;
struct source;
struct container;

/* Bounds of the pool: threads serving at once, and stuck ones replaced on top. */
#define SERVE_THREADS_MAX	 64
#define SERVE_STUCK_MAX		 64
#define SERVE_TIMEOUT_DEFAULT_MS 3000
/* Fds one thread serves at once; a call this slow moves its thread's others away. */
#define SERVE_HOLD_MAX	 8
#define SERVE_MIGRATE_MS 20
/* A call this slow, with no thread idle, has a spare thread started in its thread's place
 * (SERVE_STUCK_MAX bounds slow and stuck threads together). */
#define SERVE_SPARE_MS 50

/* Start the handler threads and the watchdog; arms the eventfd on the ring. */
int serve_init(struct devwld *d);
/* Stop them (waiting at most the handler timeout for a thread in the middle of a call). */
void serve_fini(struct devwld *d);

/* The ready hook of a process's notify fd (struct cproc's src; the store sets it, from
 * its hooks): hand the fd to a handler thread. */
void serve_notify_ready(struct devwld *d, struct source *src, int revents);

/* The hierarchy may have changed (devwlctl, reload): handlers get fresh copies. */
void serve_policy_changed(struct devwld *d);
/* The container is freed: let go of the handlers' copy of its node. */
void serve_container_gone(struct container *c);

/* A one-node hierarchy whose "/" decides exactly as node does (devwl_node_check,
 * devwl_node_mknod_needs_cap): the handlers' private copy. NULL when out of memory. */
struct devwl_node;
struct devwl_policy *serve_node_copy(const struct devwl_node *node);

/* The pool's counters, for devwlctl stats and the metrics. */
struct serve_counts {
	unsigned int threads, stuck, slow;
	uint64_t watchdog_answered, abandoned, denied_while_stuck;
};
void serve_counts(struct devwld *d, struct serve_counts *ret);
/* "name value" lines for devwlctl stats. */
void serve_stats(struct devwld *d, FILE *out);

#endif
