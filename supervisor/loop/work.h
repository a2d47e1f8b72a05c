/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Work the loop must not wait for (work.c): whatever reaches a filesystem a workload
 * controls (a container's root, its open files) or parses a file others write. Each piece
 * runs on a thread of its own, with a deadline; its answer comes back to the loop when it
 * ends or when the deadline passes, whichever is first. A thread that never ends costs its
 * own request and its slot, never the loop.
 */
#ifndef DEVWLD_WORK_H
#define DEVWLD_WORK_H

#include <stdint.h>

#include "list.h"

struct devwld;
struct loop;

/* Threads under way at once, stuck ones included: one more is refused (-EBUSY). */
#define WORK_MAX 8

/*
 * One piece of work. The submitter fills in the four functions and embeds it in what
 * run() needs (a copy: run() touches nothing the loop owns).
 */
struct work {
	/* On the work's thread. */
	void (*run)(struct work *w);
	/* On the loop, once: r 0 when run() returned, -ETIMEDOUT when the deadline passed
	 * first (run() may still be going: done() then reads only what run() does not
	 * write). Not called for work dropped by work_stop(). */
	void (*done)(struct devwld *d, struct work *w, int r);
	/* On the work's thread, when run() returned after its done(-ETIMEDOUT) (or after
	 * work_stop()): undo what run() did too late for anyone to be told. May be NULL. */
	void (*late)(struct work *w);
	/* Once, by whichever of the loop and the thread lets go of it last. */
	void (*free_fn)(struct work *w);
	/* The pool's. */
	struct list_head link;
	uint64_t deadline_ms;
	int state, refs;
};

/* Start the pool on l (its eventfd and its timer armed): 0 or a negative errno. */
int work_start(struct loop *l);
/* Drop every piece under way (no done() is called; their threads finish on their own,
 * then late() and free_fn()); free the pool. Before the loop's ring goes. */
void work_stop(struct loop *l);
/*
 * Run w on a thread of its own; its done() is called on the loop within timeout_ms.
 * 0; -EBUSY: WORK_MAX under way already; -ENOSYS: no pool (work_start() not called);
 * another negative errno: no thread. On an error nothing of w is called and w is the
 * caller's still.
 */
int work_submit(struct loop *l, struct work *w, unsigned int timeout_ms);
/* Threads under way, stuck ones included (stats' work_threads). */
unsigned int work_threads(const struct loop *l);

#endif
