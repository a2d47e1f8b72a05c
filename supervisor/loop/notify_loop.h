/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The event loop (notify_loop.c): the layer below every part it watches and drives. */
#ifndef DEVWLD_NOTIFY_LOOP_H
#define DEVWLD_NOTIFY_LOOP_H

#include <stdbool.h>
#include <liburing.h>
#include <stdint.h>

#include "list.h"

struct devwld;

/* An fd watched by the ring; the ring's user_data points at it. */
struct source {
	int fd;
	bool armed;	    /* a POLL_ADD is in flight: memory must outlive its completion */
	bool dead;	    /* destroyed while armed: freed when the cancelled poll completes */
	bool cancel_queued; /* dead, its cancel not yet made: loop_run retries it */
	bool held;	    /* a handler thread uses fd (serve.c): loop_destroy leaves it open */
	short events;
	struct list_head dying; /* while dead: on loop.dying */
	void (*free_fn)(struct source *src);
	/* Its poll completed with revents (POLLERR if the poll failed): set by whoever
	 * makes the source, so the loop calls nothing above it. */
	void (*ready)(struct devwld *d, struct source *src, int revents);
	/* Whose it is, for the test hooks' fault injection: a notify fd's container id. */
	const char *label;
};

/*
 * What the loop runs besides its sources, set by the worker's start-up (daemon.c): the
 * loop is below the parts it drives and knows none of them by name. NULL ends a list.
 */
#define LOOP_HOOKS_MAX 6
struct loop_hooks {
	/* Before each wait, in order: ms until it is due again, or -1. */
	int (*tick[LOOP_HOOKS_MAX])(struct devwld *d, uint64_t now);
	/* After each round's completions, in order. */
	void (*after[LOOP_HOOKS_MAX])(struct devwld *d, uint64_t now);
	/* SIGHUP: reload the policy file. */
	void (*reload)(struct devwld *d);
	/* SIGUSR2: a planned restart; < 0: there is no keeper to restart us. */
	int (*restart)(struct devwld *d);
};

/* The loop's state, in the daemon's context; owner is what every hook is called with. */
struct loop {
	struct io_uring ring;
	struct devwld *owner;
	struct loop_hooks hooks;
	struct source signal_src;
	/* Dead sources not yet freed: what the ring or a handler thread may still name.
	 * loop_fini frees those whose completion never came. */
	struct list_head dying;
	const char *policy_file; /* for SIGHUP's log line */
	struct workers *workers; /* work the loop must not wait for (work.c), or NULL */
	bool quit;
	int failed; /* quit because the loop cannot go on: a negative errno */
};

/* owner: what the hooks get; policy_file: named in SIGHUP's log line (may be NULL). */
int loop_init(struct loop *l, struct devwld *owner, const char *policy_file);
void loop_fini(struct loop *l);
/* Watch src for events, once. Fails (-EBUSY) only when the ring takes no entry: the
 * caller must then drop the source (loudly) or stop, never leave it unwatched. */
int loop_arm(struct loop *l, struct source *src, short events) __attribute__((warn_unused_result));
/* The loop cannot go on (a socket it cannot watch): log, and exit with an error so the
 * keeper starts a new worker. */
void loop_fatal(struct loop *l, const char *what, int err);
/* Close the fd now; free the memory now or once its cancelled poll completes. */
void loop_destroy(struct loop *l, struct source *src);
/* A dead source its handler thread has given back (serve.c): free it now. */
void loop_release(struct source *src);
/* Run until loop_stop() or loop_fatal(): 0 or the fatal error. */
int loop_run(struct loop *l);
/* Leave loop_run() after this round. */
void loop_stop(struct loop *l);

#endif
