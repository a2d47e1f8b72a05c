/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwld's context (struct devwld): one per worker, made by main/daemon.c and passed down
 * to every layer. It holds what more than one layer reads; a layer whose state only it
 * reads keeps it in a struct of its own header (state) or, above this layer, behind an
 * opaque pointer (serve, watch, metrics).
 */
#ifndef DEVWLD_H
#define DEVWLD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit.h"
#include "bindings.h"
#include "devwl.h"
#include "edits.h"
#include "keeper_link.h"
#include "kernelmode.h"
#include "list.h"
#include "notify_loop.h"
#include "mapping.h"
#include "state.h"
#include "strset.h"

struct devwld;
struct container;
struct attachment;
struct serve_box;
struct kernel_cg;
struct serve;
struct watch;
struct metrics;
struct follow;
struct cdi_registry;
struct learn;

/*
 * What the stores (policy.c, store.c) tell the parts above them, set by the worker's start-up
 * (daemon.c); NULL: nobody listens (tests, fuzzers). The state and the handler threads
 * call the stores, so the stores must not call them back by name.
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
	pid_t pid;	       /* as the runtime said; from crun exec (which sends 0), the
				* one its calls show (cproc_pid_known), once one does */
	uid_t peer_uid;
	pid_t peer_pid;
	unsigned int errors; /* failures in a row */
	bool has_slot;	     /* the keeper holds the fd too, under slot and tag */
	bool held;	     /* in its container's programmed cgroup (kernelmode_holds_id), */
	bool held_known;     /* as its first caller was when a handler asked (serve.c) */
	uint32_t slot;
	uint64_t tag;
};

struct container {
	char *id;
	char *k8s_name; /* "NAMESPACE/POD/CONTAINER" (mapping_k8s_name()), or NULL */
	char *rt_name;	/* its runtime's name for it (rtname_of(): podman, nerdctl), or NULL */
	char *node_path;
	struct devwl_node *node; /* referenced (devwl_node_ref) while we hold it */
	bool created_node;	 /* made on demand by us: removed when the container goes */
	uid_t owner_uid;	 /* its runtime's: a container is (owner_uid, id), and only
				  * runtimes of that uid join it */
	struct list_head procs;
	unsigned int nprocs;
	uint64_t notifications;
	/* Opens its profile trapped while its own cgroup decided them (the full profile in
	 * kernel mode): devwld only saw them, at the cost of a trap each (serve.c). */
	uint64_t seen_only_opens;
	struct list_head link;	     /* in devwld.containers */
	struct serve_box *serve;     /* the handler threads' view of it (serve.c), or NULL */
	struct kernel_cg *kernel;    /* its device cgroup, in kernel mode (kernelmode.c), or NULL */
	struct attachment *attached; /* devices attached while it runs (attach.c) */
	size_t nattached;
	uint64_t hotplug; /* an attach or detach of it under way (attach.c), 0: none */
	/* Its notify fds are not watched, so its calls wait, until this work ends (the CDI
	 * specs its annotations need: cdigrant.c; container_serve()); 0: served. */
	uint64_t waits;
	/* Nodes devwld made for it on nodev mounts, which only devwld opens for it: shared
	 * by every handler thread (its serve box holds a reference) and saved (state.c). */
	struct devwl_nodeset *nodeset;
	/* What it touched while it learnt (learning.c), under node learn_path; NULL: never. */
	struct learn *learn;
	char *learn_path;
};

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
	const char *metrics;		 /* unix:PATH or HOST:PORT, or NULL: not served */
	unsigned int metrics_depth;	 /* node components of the "subtree" label */
	bool metrics_containers;	 /* also a series per container */
	const char *const *cdi_dirs;	 /* --cdi-dir, in order; none: the host's */
	size_t n_cdi_dirs;
};

/* Listener connections refused (listener.c): logged once per interval, then counted. */
struct refusals {
	uint64_t quiet_until; /* refusals before then are counted, not logged */
	unsigned int count;   /* counted since the last line */
	uid_t uid;	      /* the last one counted */
	pid_t pid;
	const char *why;
};

struct devwld {
	struct devwld_config cfg;
	struct loop loop;
	struct store_hooks store_hooks;
	/* A state write finished (state.c tells control.c, which asked for it). */
	void (*state_written_hook)(struct devwld *d);
	struct serve *serve;	 /* the handler threads (serve/) */
	struct state state;	 /* the state file (state.c) */
	struct watch *watch;	 /* the policy file's watch (front/watch.c), or NULL */
	struct metrics *metrics; /* --metrics (front/metrics.c), or NULL */
	struct follow *follow;	 /* uevents and CDI specs watched (front/uevents.c), or NULL */
	/* The store (store.c): the hierarchy, where it came from, the containers. */
	struct devwl_policy *policy;
	struct mapping mapping;
	char *policy_text; /* what policy and mapping were loaded from */
	size_t policy_len;
	struct strset ondemand;	  /* the nodes we made for containers, not the policy's */
	struct strset ruled;	  /* of those, the ones made as containers' nodes, with the
				   * "container_rules": a reload makes them so again */
	struct edits edits;	  /* devwlctl changes since the file was loaded */
	struct bindings bindings; /* selectors followed (follow.c): the file's, then devwlctl's */
	/* The CDI specs as read once for the refresh under way (follow_cdi_read()), or NULL:
	 * every cdi: selector of one refresh sees the same specs, read once. */
	struct cdi_registry *cdi_now;
	/* A device attached by selector was not followed while its container's attach,
	 * detach or re-push was under way (attach-follow.c): uevents_tick() follows again. */
	bool refollow;
	struct list_head containers;
	unsigned int ncontainers, nprocs;
	/* The learning nodes' records (learning.c): every container each served. */
	struct learning_rec {
		char *path;
		struct learn *rec;
	} * learnt;
	size_t n_learnt, cap_learnt;
	struct audit audit;
	/* The front (front/): the two sockets and their connections. */
	struct source listen_src, control_src;
	struct list_head oci_conns; /* incomplete runtime connections, oldest first */
	struct list_head ctl_conns;
	unsigned int noci_conns, nctl_conns;
	struct refusals refused;
	/* A planned restart (SIGUSR2, devwlctl restart): no new connections; quit once the
	 * open ones are done or at handover_deadline, then exit DEVWLD_EXIT_HANDOVER. */
	bool handover;
	uint64_t handover_deadline;
	bool exiting; /* tearing down: nothing is persisted or given back to the keeper */
	struct keeper_link keeper;
	const char *test_stop_file; /* DEVWL_TEST_HOOKS builds only; else NULL */
};

#endif
