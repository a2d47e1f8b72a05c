/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The event loop (notify_loop.c): the layer below every part it watches and drives. */
#ifndef DEVWLD_LOOP_H
#define DEVWLD_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct devwld;

/* What an fd watched by the ring is; the ring's user_data points at the struct source. */
enum source_kind {
	SOURCE_SIGNAL,
	SOURCE_LISTENER, /* the OCI listenerPath socket */
	SOURCE_CONTROL,	 /* the devwlctl socket */
	SOURCE_OCI_CONN, /* one runtime connection, until its message is complete */
	SOURCE_CTL_CONN, /* one devwlctl connection */
	SOURCE_NOTIFY,	 /* one container process's seccomp notify fd */
	SOURCE_WATCH,	 /* inotify on the policy file's directory */
	SOURCE_STATE,	 /* the state writer's eventfd: a write finished */
	SOURCE_SERVE,	 /* eventfd: handler threads finished work (serve.c) */
};

struct source {
	enum source_kind kind;
	int fd;
	bool armed;	    /* a POLL_ADD is in flight: memory must outlive its completion */
	bool dead;	    /* destroyed while armed: freed when the cancelled poll completes */
	bool cancel_queued; /* dead, its cancel not yet made: on devwld.cancel_later */
	bool held;	    /* a handler thread uses fd (serve.c): loop_destroy leaves it open */
	short events;
	struct source *cancel_next;
	void (*free_fn)(struct source *src);
	/* Its poll completed with revents (POLLERR if the poll failed): set by whoever
	 * makes the source, so the loop calls nothing above it. */
	void (*ready)(struct devwld *d, struct source *src, int revents);
};

/*
 * What the loop runs besides its sources, set by the worker's start-up (daemon.c): the
 * loop is below the parts it drives and knows none of them by name. NULL ends a list.
 */
#define LOOP_HOOKS_MAX 4
struct loop_hooks {
	/* Before each wait, in order: ms until it is due again, or -1. */
	int (*tick[LOOP_HOOKS_MAX])(struct devwld *d, uint64_t now);
	/* After each round's completions, in order. */
	void (*after[LOOP_HOOKS_MAX])(struct devwld *d, uint64_t now);
	/* SIGHUP: reload the policy file. */
	void (*reload)(struct devwld *d);
};

int loop_init(struct devwld *d);
void loop_fini(struct devwld *d);
/* Watch src for events, once. Fails (-EBUSY) only when the ring takes no entry: the
 * caller must then drop the source (loudly) or stop, never leave it unwatched. */
int loop_arm(struct devwld *d, struct source *src, short events)
	__attribute__((warn_unused_result));
/* The loop cannot go on (a socket it cannot watch): log, and exit with an error so the
 * keeper starts a new worker. */
void loop_fatal(struct devwld *d, const char *what, int err);
/* Close the fd now; free the memory now or once its cancelled poll completes. */
void loop_destroy(struct devwld *d, struct source *src);
int loop_run(struct devwld *d);
/* Tests only (DEVWLD_TEST_STOP_FILE): stop holding a call of container id, before or
 * after the keeper recorded it. Called by the handler threads. */
void loop_test_stop(struct devwld *d, const char *id, bool recorded);

/* Begin a planned restart (devwld(8) RESTART). -EOPNOTSUPP without a keeper. */
int handover_begin(struct devwld *d);

#endif
