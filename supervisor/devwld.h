/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwld: the shared state of the daemon's parts (loop, listener, control, policy, audit). */
#ifndef DEVWLD_H
#define DEVWLD_H

#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "clock.h"
#include "devwl.h"
#include "ocistate.h"
#include "kernelmode.h"
#include "loop.h"

struct list_head {
	struct list_head *next, *prev;
};

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

static inline void list_init(struct list_head *h)
{
	h->next = h->prev = h;
}

static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list_init(n);
}

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

/* The "containers" object of the policy file: which node a container gets (mapping.c). */
struct map_rule {
	char *annotation;
	char *value; /* NULL: any value */
	char *node;  /* a template */
};

/* Which nodes a container may name itself: "node_annotation" for the annotation
 * org.devwl.node, "node_metadata" for listenerMetadata node=PATH (devwl-policy(5)). */
enum node_choice {
	NODE_CHOICE_DEFAULT, /* key absent: annotation ignored, metadata anything but "/" */
	NODE_CHOICE_ANY,     /* true: any node, "/" included */
	NODE_CHOICE_IGNORE,  /* false: not looked at */
	NODE_CHOICE_UNDER,   /* only at or below one of under[] */
};

struct node_source {
	enum node_choice choice;
	char **under; /* templates */
	size_t nunder;
};

struct mapping {
	char *k8s_template;	/* NULL: the command line's, else the built-in one */
	char *default_template; /* likewise */
	struct node_source annotation, metadata;
	struct map_rule *rules; /* first match wins */
	size_t nrules;
};

/* Where the containers of a peer other than root live (--allow-uid): PEER_SUBTREE/UID. */
#define PEER_SUBTREE "/users"

void mapping_clear(struct mapping *m);
/* Check a template: known placeholders only ({namespace} {pod} {container} only with
 * k8s_vars), at most one per component, a valid node path once expanded. -EINVAL. */
int template_check(const char *tmpl, bool k8s_vars, struct devwl_error *err);
/* Convert the "containers" object (NULL: absent); messages name file and key. */
int mapping_from_json(struct json_object *obj, const char *file, struct mapping *ret,
		      struct devwl_error *err);
/*
 * The node path (heap) for a container whose runtime connected as peer_uid, and which
 * source decided it (static text). The overrides (command line) win over the mapping's
 * templates. A peer other than root gets PEER_SUBTREE/UID/ID, or a node it names at or
 * below PEER_SUBTREE/UID. Errors: -EINVAL bad value or path, -ENOENT a template needs a
 * value the container lacks, -EPERM a node named outside what the policy (or the peer's
 * subtree) allows, -ENOMEM; the reason is in err.
 */
int mapping_node_path(const struct mapping *m, const char *k8s_override,
		      const char *default_override, const struct oci_state *st, uid_t peer_uid,
		      char **ret_path, const char **ret_source, struct devwl_error *err);

struct container;
struct serve_box;
struct kernel_cg;

/*
 * What the store (policy.c) tells the parts above it, set by the worker's start-up
 * (daemon.c); NULL: nobody listens (tests, fuzzers). The state and the handler threads
 * call the store, so the store must not call them back by name.
 */
struct store_hooks {
	/* The hierarchy or the containers changed: persist them (state.c). */
	void (*changed)(struct devwld *d);
	/* The hierarchy may have changed: the handlers need fresh node copies (serve.c). */
	void (*policy_changed)(struct devwld *d);
	/* c is about to be freed: let go of the handlers' view of it (serve.c). */
	void (*container_gone)(struct container *c);
	/* The ready hook of every process's notify fd (serve.c hands it to a thread). */
	void (*notify_ready)(struct devwld *d, struct source *src, int revents);
};

/* One container process: its notify fd, watched by the ring. */
struct cproc {
	struct source src;
	struct container *container;
	struct list_head link; /* in container->procs */
	pid_t pid;	       /* as the runtime said; 0 from crun exec */
	uid_t peer_uid;
	pid_t peer_pid;
	unsigned int errors; /* failures in a row */
	bool has_slot;	     /* the keeper holds the fd too, under slot and tag */
	bool held;	     /* in its container's programmed cgroup (kernelmode_holds) */
	bool held_known;
	uint32_t slot;
	uint64_t tag;
};

struct container {
	char *id;
	char *node_path;
	struct devwl_node *node; /* referenced (devwl_node_ref) while we hold it */
	bool created_node;	 /* made on demand by us: removed when the container goes */
	uid_t owner_uid;	 /* its runtime's: a container is (owner_uid, id), and only
				  * runtimes of that uid join it */
	struct list_head procs;
	unsigned int nprocs;
	uint64_t notifications;
	struct list_head link;	  /* in devwld.containers */
	struct serve_box *serve;  /* the handler threads' view of it (serve.c), or NULL */
	struct kernel_cg *kernel; /* its device cgroup, in kernel mode (kernelmode.c), or NULL */
};

/* Counters and the handling-time histogram; see audit.c. */
#define AUDIT_BUCKETS 512
struct sink;
struct audit_why;
struct audit {
	pthread_mutex_t lock; /* the counters and hist: audit_event() runs in any thread */
	struct sink *out;     /* NULL: no records */
	bool own_out;	      /* not the shared stderr sink */
	bool all;	      /* also record CONTINUE answers */
	uint64_t notifications, continued, allowed, denied, errors, gone;
	uint64_t dropped; /* records the sink had no room for */
	uint64_t hist[AUDIT_BUCKETS];
	/* the loop's own (audit_report_drops) */
	uint64_t report_due_ms, reported_records, reported_lines;
};

/* What devwlctl stats shows of the audit. */
struct audit_counts {
	uint64_t notifications, continued, allowed, denied, errors, gone, dropped;
	uint64_t p50_ns, p99_ns;
};

/* The devwlctl changes since the policy file was loaded (edits.c). */
struct edit {
	char *line; /* the control line, NUL-terminated (a rule may hold a NUL too) */
	size_t len;
};
struct edits {
	struct edit *v;
	size_t n, size;
};
/* Beyond this a change is refused (ENOSPC): fold them into the policy file and reset. */
#define EDITS_MAX 10000

/* A sorted set of strings (strset.c). */
struct strset {
	char **v;
	size_t n;
};
/* Add a copy of str (nothing if it is there): 0 or -ENOMEM. */
int strset_add(struct strset *s, const char *str);
/* The index of str, or -1. */
ssize_t strset_find(const struct strset *s, const char *str);
void strset_del(struct strset *s, size_t i);
void strset_clear(struct strset *s);

struct devwld_config {
	const char *listen_path;
	const char *control_path;
	const char *policy_file;
	const char *audit_file;
	bool audit_all;
	const char *k8s_template;     /* NULL: from the policy file, else built in */
	const char *default_template; /* likewise */
	bool watch_policy;	      /* reload when the policy file changes */
	uid_t *listen_uids;	      /* peers allowed besides root */
	size_t n_listen_uids;
	unsigned int burst;   /* notifications handled per fd per round */
	unsigned int spin_us; /* wait that long on the fd for the next one (0: just look) */
	unsigned int conn_timeout_ms;
	size_t max_message;
	const char *state_file;		 /* devwld(8) STATE */
	unsigned int handler_threads;	 /* 0: one per CPU, within bounds (serve.c) */
	unsigned int handler_timeout_ms; /* a call stuck longer is answered EPERM */
	enum kernel_when kernel_mode;	 /* whose device cgroup is programmed (kernelmode.c) */
};

/* Listener connections refused (listener.c): logged once per interval, then counted. */
struct refusals {
	uint64_t quiet_until; /* refusals before then are counted, not logged */
	unsigned int count;   /* counted since the last line */
	uid_t uid;	      /* the last one counted */
	pid_t pid;
	const char *why;
};

/* The worker's link to its keeper (keeper_link.c); table NULL: no keeper. */
struct keeper_table;
struct keeper_link {
	int sock;
	struct keeper_table *table;
	int listen_fd, control_fd; /* inherited; -1: make them */
	int lock_fd[2];		   /* the keeper's locks on the two socket paths (trust.h) */
	unsigned int gen;	   /* 1 for the first worker, then one more per restart */
	uint64_t *used;		   /* slots in use (bitmap) */
	uint64_t *claimed;	   /* slots restored from the state (until that is done) */
	uint32_t hint;		   /* no free slot below */
};

struct devwld {
	struct devwld_config cfg;
	struct io_uring ring;
	struct loop_hooks loop_hooks;
	struct store_hooks store_hooks;
	/* A state write finished (state.c tells control.c, which asked for it). */
	void (*state_written_hook)(struct devwld *d);
	struct serve *serve; /* the handler threads (serve.c) */
	struct devwl_policy *policy;
	struct mapping mapping;
	char *policy_text; /* what policy and mapping were loaded from */
	size_t policy_len;
	struct strset ondemand; /* the nodes we made for containers, not the policy's */
	struct edits edits;	/* devwlctl changes since the file was loaded */
	struct audit audit;
	struct source signal_src, listen_src, control_src, watch_src;
	int watch_wd;	       /* on the policy file's directory; -1: none */
	uint64_t watch_due_ms; /* debounced reload check due then; 0: none */
	uint64_t watch_first_ms;
	char *watch_tried; /* the text of the last reload the watch tried */
	size_t watch_tried_len;
	struct list_head containers;
	struct list_head oci_conns; /* incomplete runtime connections, oldest first */
	struct list_head ctl_conns;
	unsigned int ncontainers, nprocs, noci_conns, nctl_conns;
	struct refusals refused;
	bool quit;
	int failed;		     /* quit because the loop cannot go on: a negative errno */
	struct source *cancel_later; /* dead sources whose poll cancel must be retried */
	bool exiting; /* tearing down: nothing is persisted or given back to the keeper */
	/* A planned restart (SIGUSR2, devwlctl restart): no new connections; quit once the
	 * open ones are done or at handover_deadline, then exit DEVWLD_EXIT_HANDOVER. */
	bool handover;
	uint64_t handover_deadline;
	struct keeper_link keeper;
	const char *test_stop_file; /* DEVWL_TEST_HOOKS builds only; else NULL */
	/* state.c */
	bool state_dirty, state_frozen;
	bool state_urgent;	      /* write as soon as the writer is idle */
	uint64_t state_seq;	      /* changes so far (state_changed) */
	uint64_t state_tried_seq;     /* the changes the last finished write covered */
	uint64_t state_retry_ms;      /* after a failed write: not before then */
	uint64_t state_last_start_ms; /* when the last write was handed on */
	uint64_t state_writes;	      /* finished writes (stats) */
	struct state_writer *state_writer;
	bool state_no_thread; /* the writer thread could not start: writes on the loop */
	char *state_last;     /* the text last written */
};

/* The daemon: parse the command line, run, clean up; main() calls it (daemon.c). */
int devwld_main(int argc, char **argv);
/*
 * The signals devwld reads from a signalfd (devwld(8) SIGNALS). They are blocked from
 * the start of main() on and stay blocked across every exec (keeper to worker, keeper to
 * keeper), so one that arrives before its signalfd exists waits instead of killing
 * (service.c).
 */
void devwld_signals(sigset_t *ret_set);

/* A message to $NOTIFY_SOCKET, as sd_notify(3) sends it (service.c). */
void service_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Logging to stderr (systemd captures it): through a sink once log_start() ran, so a
 * stderr that does not keep up drops lines instead of stalling us (log.c). */
void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int log_start(void);
/* Write out what is queued (at most drain_ms) and log directly again. */
void log_stop(unsigned int drain_ms);
struct sink *log_sink(void);
uint64_t log_dropped(void);

/* listener.c */
/* Watch the OCI listener socket: fd, inherited from the keeper, or -1 to make it. */
int listener_open(struct devwld *d, int fd);
/* Drop the runtime connections whose message is overdue at now (UINT64_MAX: all). */
void oci_conn_expire(struct devwld *d, uint64_t now_ms);

/* policy.c: the policy store and the container table. */
/* Read a whole regular file of at most max bytes (NUL-terminated; none inside). */
int read_text(const char *file, size_t max, char **ret_text, size_t *ret_len,
	      struct devwl_error *err);
/* The same from an open fd (file: its name in messages). */
int read_text_fd(int fd, const char *file, size_t max, char **ret_text, size_t *ret_len,
		 struct devwl_error *err);
/* Parse a policy file's text into its hierarchy (ret_policy may be NULL: only checked)
 * and its container mapping. */
int store_parse_text(const char *file, const char *text, struct devwl_policy **ret_policy,
		     struct mapping *ret_mapping, struct devwl_error *err);
int store_load(struct devwld *d);
/* Reload the policy file (SIGHUP, devwlctl reload): everything or nothing; err (may be
 * NULL) says why not, as the log does. */
int store_reload(struct devwld *d, struct devwl_error *err);
/* Read the policy file (logs why not). */
int store_read_policy(struct devwld *d, char **ret_text, size_t *ret_len);
/* Reload from text read from the policy file (taken over): everything or nothing; the
 * devwlctl changes since the last load are applied again on top. */
int store_apply_text(struct devwld *d, char *text, size_t len);
/* Reload the policy file without the devwlctl changes, which are then forgotten. */
int store_reset(struct devwld *d, struct devwl_error *err);
/* Remove a node made on demand, and its made-on-demand ancestors, once unused;
 * true when no node is left at path. */
bool store_forget_node(struct devwld *d, const char *path);
/* The node path for a container, from its annotations/metadata/templates (heap); peer_uid
 * is the uid of the runtime that sent st. */
int store_node_path(struct devwld *d, const struct oci_state *st, uid_t peer_uid, char **ret_path,
		    struct devwl_error *ret_err);
/* Find or create (with ancestors) the node at path. */
int store_ensure_node(struct devwld *d, const char *path, struct devwl_node **ret_node,
		      bool *ret_created);
/* The container id of the runtimes of uid owner: each uid has ids of its own. */
struct container *container_find(struct devwld *d, uid_t owner, const char *id);
/* Attach a notify fd (taken over) to the container of st, creating it if needed. */
int container_attach(struct devwld *d, const struct oci_state *st, int notify_fd, uid_t peer_uid,
		     pid_t peer_pid);
/* Re-attach a process a previous worker served (state.c), to the container id of
 * peer_uid; fd is taken over. */
int container_restore(struct devwld *d, const char *id, const char *node_path, bool created, int fd,
		      pid_t pid, uid_t peer_uid, pid_t peer_pid, uint32_t slot, uint64_t tag);
void cproc_gone(struct devwld *d, struct cproc *p);
/* Forget a container and every process of it (poststop). */
void container_drop(struct devwld *d, struct container *c);
void store_fini(struct devwld *d);

/* edits.c */
/* Is line a change that a reload replays (mkdir, rmdir, allow, deny, mknod_needs_cap)? */
bool edit_is_change(const char *line, size_t len);
/* The NODE word of a change line into buf. 0 or -EINVAL. */
int edit_target(const char *line, size_t len, char *buf, size_t size);
/* Append a change (copied), dropping an earlier copy that the new one makes moot.
 * -ENOSPC past EDITS_MAX, -ENOMEM. */
int edits_add(struct edits *e, const char *line, size_t len);
void edits_clear(struct edits *e);
/* Drop the changes to path and its descendants (a node made on demand is gone). */
void edits_forget(struct edits *e, const char *path);
/* Carry out a change line on policy, its answer on out: 0, -ENOENT (no such node) or
 * another negative errno. */
int edit_exec(struct devwl_policy *policy, const char *line, size_t len, FILE *out);

/* events.c: devwlctl events, a live stream of decisions; safe from any thread. */
/* A decision, to every subscriber that wants it; never blocks, never fails. */
void events_publish(const struct devwl_event *ev, const char *container, const char *node,
		    const struct audit_why *why);
/* Stream decisions (CONTINUE ones too if all; one container's only if container is not
 * NULL) to fd, taken over on success, after an "ok" line. -EBUSY (too many), -ENOMEM. */
int events_subscribe(int fd, bool all, const char *container);
void events_stats(unsigned int *ret_subscribers, uint64_t *ret_dropped);
/* Close every subscriber and stop the thread. */
void events_fini(void);

/* state.c: the state file (devwld(8) STATE). */
/* Load the state file if there is one: 1 restored (every inherited slot is served again
 * or let go), 0 none or set aside as corrupt. */
int state_restore(struct devwld *d);
void state_changed(struct devwld *d);
/* Each loop round: collect a finished write; if something changed, serialise it and hand
 * it to the writer thread once the interval is over. Returns ms until it is due, or -1. */
int state_flush(struct devwld *d);
/* Write at once what changed and wait for it (start, planned restart, stop). */
void state_sync(struct devwld *d);
/* Do not wait for the interval: someone waits for the write (a control answer). */
void state_urgent(struct devwld *d);
/* Has a write covering the changes up to seq finished (or failed, logged)? */
bool state_written(const struct devwld *d, uint64_t seq);
void state_fini(struct devwld *d);

/* keeper_link.c: the worker's side of the keeper (keeper.h). */
/* From the environment: 1 linked, 0 not started by a keeper, <0 broken. */
int keeper_link_open(struct devwld *d);
void keeper_link_close(struct devwld *d);
/* Give the keeper a duplicate of a new notify fd with the record of whose it is: its
 * slot and tag. -ENOSPC, -EIO, -ENAMETOOLONG (no record fits), or the send's error. */
struct slot_owner;
int keeper_link_add(struct devwld *d, int fd, const struct slot_owner *owner, uint32_t *ret_slot,
		    uint64_t *ret_tag);
void keeper_link_del(struct devwld *d, uint32_t slot);
/* The inherited fd of slot if its tag matches (once per slot), else -ENOENT. */
int keeper_link_claim(struct devwld *d, uint32_t slot, uint64_t tag);
/* Until the claims are done: the slots inherited are below this (0 after). */
uint32_t keeper_link_nslots(const struct devwld *d);
/* An inherited, unclaimed slot's record copied into buf (KEEPER_REC_MAX bytes), not yet
 * checked, and its tag: its length (0: it has none), -ENOENT (no fd there or claimed),
 * -EBADMSG (its length is out of bounds). */
ssize_t keeper_link_record(struct devwld *d, uint32_t slot, void *buf, uint64_t *ret_tag);
/* Close and give back every inherited slot nobody claimed. */
void keeper_link_release_unclaimed(struct devwld *d);
int keeper_link_sockets(struct devwld *d);
void keeper_link_ready(struct devwld *d);
/* Send an sd_notify message through the keeper; false when there is none. */
bool keeper_link_notify(const char *text);
void keeper_link_inflight(struct devwld *d, uint32_t slot, uint64_t id);
void keeper_link_answered(struct devwld *d, uint32_t slot);

/* watch.c: reload when the policy file changes (a ConfigMap's "..data" swap). */
int watch_open(struct devwld *d);
/* Called each loop round: runs a due check; returns ms until the next one, or -1. */
int watch_tick(struct devwld *d, uint64_t now);
void watch_close(struct devwld *d);

/* control.c */
/* Watch the control socket: fd, inherited from the keeper, or -1 to make it. */
int control_open(struct devwld *d, int fd);
/* One control line (no newline) answered on out; exported for tests and the fuzzer. */
void control_exec(struct devwld *d, const char *line, size_t len, FILE *out);
void control_close_all(struct devwld *d);
/* A state write finished: send the answers that waited for it. */
void control_state_written(struct devwld *d);

/* audit.c: a->lock must be initialised (PTHREAD_MUTEX_INITIALIZER) before any of these.
 * Records go to file, or without one to stderr_sink (log_sink()). */
int audit_open(struct audit *a, const char *file, bool all, struct sink *stderr_sink);
void audit_close(struct audit *a);
/* Count ev and queue its record; never blocks on the sink. Any thread. */
/* reason: devwl_notify_reason() of the call, or NULL; decider: the node that decided it,
 * to name the rule of a policy denial (read here: only on the thread that owns the
 * hierarchy), or NULL. */
void audit_event(struct audit *a, const struct devwl_event *ev, const struct container *c,
		 const char *reason, const struct devwl_node *decider);
/* Count a failed notification; returns the count so far. Any thread. */
uint64_t audit_error(struct audit *a);
void audit_gone(struct audit *a);
void audit_counts(struct audit *a, struct audit_counts *ret);
/* Log the drops of records and log lines, at most every 10 s (the loop calls it). */
void audit_report_drops(struct audit *a, uint64_t now);

/* Socket helpers shared by listener and control (sockets.c). */
int socket_listen(const char *path, mode_t mode);
int peer_cred(int fd, uid_t *ret_uid, pid_t *ret_pid);

#endif
