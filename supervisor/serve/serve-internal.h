/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the parts of serve/ share (serve.c: the loop thread's side; views.c: the handlers'
 * node copies; pool.c: the handler threads; watchdog.c): the pool's structs. Never
 * included outside serve/.
 */
#ifndef DEVWLD_SERVE_INTERNAL_H
#define DEVWLD_SERVE_INTERNAL_H

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/seccomp.h>

#include "audit.h"
#include "clock.h"
#include "devwld.h"
#include "kernelmode.h"
#include "learn.h"
#include "learning.h"
#include "log.h"
#include "serve.h"
#include "store.h"
#include "thread.h"
#include "util.h"

/* A notification that keeps failing for a reason other than a vanished target would
 * re-fire forever: drop that process after this many failures in a row. */
#define MAX_CONSECUTIVE_ERRORS 64
/* A busy fd's records reach the loop thread at most this often: each wake of the loop
 * also parts the caller from the handler on their shared CPU (SYNC_WAKE_UP's pairing),
 * which cost one container's calls 40 % of their throughput when it came every 16 calls
 * (bench/RESULTS.md). Whatever wakes the loop takes every record waiting. */
#define SERVE_ACCOUNT_MS 10

/* A private copy of one node, read by handler threads (devwl_node_check needs only the
 * node's own behavior and exceptions). */
struct serve_view {
	atomic_uint refs;
	uint64_t gen;		     /* s->gen it was made at */
	const struct devwl_node *of; /* the node it copies (compared, never read by handlers) */
	struct devwl_policy *policy; /* holding only "/", the copy */
	struct devwl_node *node;
};

/* Per container: what outlives it while a handler thread still works for it. */
struct serve_box {
	atomic_uint refs;
	atomic_uint stuck; /* threads abandoned while serving it, not yet back */
	char *id, *node_path;
	uid_t owner_uid;	       /* with id, who the container is (for the audit) */
	struct serve_view *view;       /* the current copy; the loop thread's reference */
	struct devwl_nodeset *nodeset; /* the container's (a reference) */
};

/* One call handled, for the loop thread to audit. */
struct result {
	int r;
	struct devwl_event ev;
	char *path; /* copied when the event will be recorded */
	/* Static text: why it was answered so (the audit's "reason"). */
	const char *reason;
	/* Learning: who made the call, read while it waits for nothing more; else NULL. */
	struct learn_program *prog;
};

/* One fd's turn on a thread, and what came of it. */
struct job {
	struct list_head link; /* in s->queue, then s->done */
	struct cproc *p;       /* the loop thread's; handlers never dereference it */
	int fd;		       /* p's, kept open meanwhile (p->src.held) */
	bool owns_fd;	       /* a stuck thread's: fd is its own to close */
	struct serve_box *box;
	struct serve_view *view;
	bool has_slot;
	uint32_t slot;
	bool deny_only; /* the container has a stuck call: answer EPERM without looking */
	bool enforced;	/* its device cgroup holds its node: the kernel opens what is granted */
	bool baseline;	/* a root runtime's: its device rules deny what devwl does not grant */
	bool learning;	/* its node learns: the view is the ceiling's, who called is read */
	/* Whether p is in its container's programmed cgroup (cg_dev, cg_ino) is the first
	 * call's to find (check_held), for its caller; found (held_found), it is held. */
	bool check_held, held_found, held;
	dev_t cg_dev;
	ino_t cg_ino;
	bool released;		    /* the watchdog took it from a stuck thread: p needs a new fd */
	bool partial;		    /* more of the same job follows: account, do not re-arm */
	uint64_t taken_ns, last_ns; /* when a thread took it, and its last call */
	unsigned int n;
	struct result res[]; /* cfg.burst + 1 (the watchdog's answer) */
};

struct worker {
	struct serve *s;
	struct list_head link; /* in s->workers */
	struct devwl_notify *notify;
	struct job *job;		  /* under s->lock: the one in a call now, or NULL */
	struct job *held[SERVE_HOLD_MAX]; /* under s->lock: the fds this thread serves */
	unsigned int nheld;
	bool abandoned;	     /* under s->lock: the watchdog answered for it */
	bool spared;	     /* under s->lock: in a slow call, a spare started in its place */
	bool surplus;	     /* under s->lock: back from a slow call to a full pool: retire */
	atomic_bool in_call; /* between RECV and the answer */
	atomic_uint_fast64_t call_id, call_start_ns;
	atomic_uint_fast64_t seen_gen; /* the hierarchy's generation before its next RECV */
	atomic_bool waiting;	       /* in next_pending: looks at the generation next */
	uint64_t gone_id;	       /* the watchdog found this call's target gone once already */
	struct seccomp_notif *req;     /* deny-only service */
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
};

struct serve {
	struct devwld *d;
	pthread_mutex_t lock;
	pthread_cond_t work, quit_cond;
	struct list_head queue, done, workers;
	atomic_uint queued;
	unsigned int target, live, stuck; /* threads wanted, serving, abandoned */
	unsigned int slow;		  /* threads in a call a spare stands in for */
	unsigned int burst;		  /* calls per job: cfg.burst, bounded */
	bool quit;
	pthread_t watchdog;
	bool watchdog_running;
	struct source src;	  /* the eventfd */
	atomic_uint_fast64_t gen; /* of the hierarchy, bumped on every change */
	int kick;	   /* eventfd: a job waits and no thread is free (see next_pending) */
	unsigned int idle; /* threads waiting for a job */
	uint64_t account_wake_ns; /* the last wake for a busy fd's records */
	uint64_t answered, abandoned_total, deny_only, spawn_failed;
	struct seccomp_notif_sizes sizes;
};

/* views.c */
void view_put(struct serve_view *v);
struct serve_view *view_new(const struct devwl_node *node, uint64_t gen);
void box_put(struct serve_box *b);
struct serve_box *box_current(struct serve *s, struct container *c);

/* pool.c */
void job_free(struct job *j);
void job_done(struct serve *s, struct job *j);
void wake_loop(struct serve *s);
int spawn(struct serve *s);
void *worker_main(void *arg);

/* watchdog.c */
void *watchdog_main(void *arg);

#endif
