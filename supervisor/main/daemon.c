/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwld: command line and the daemon's life (keeper, worker); see devwld(8). */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "daemon.h"
#include "devwld.h"
#include "follow.h"
#include "events.h"
#include "fileio.h"
#include "keeper.h"
#include "keeper_table.h"
#include "listener.h"
#include "log.h"
#include "metrics.h"
#include "options.h"
#include "policy.h"
#include "serve.h"
#include "service.h"
#include "sink.h"
#include "store.h"
#include "trust.h"
#include "uevents.h"
#include "util.h"
#include "watch.h"
#include "work.h"

static void lib_log(enum devwl_log_level level, const char *msg, void *userdata)
{
	(void)userdata;
	if (level <= DEVWL_LOG_WARNING)
		log_msg("libdevwl: %s", msg);
}

/* If the policy file changed while no devwld ran, the state's hierarchy is stale. */
static void reapply_if_changed(struct devwld *d)
{
	char *text = NULL;
	size_t len = 0;

	if (!d->cfg.policy_file || policy_read(d, &text, &len) < 0)
		return;
	if (d->policy_text && len == d->policy_len && !memcmp(text, d->policy_text, len)) {
		free(text);
		return;
	}
	log_msg("%s differs from what the state was loaded from: applying it", d->cfg.policy_file);
	policy_apply_text(d, text, len);
}

static int tick_state(struct devwld *d, uint64_t now)
{
	(void)now;
	return state_flush(d);
}

static void after_audit(struct devwld *d, uint64_t now)
{
	audit_report_drops(&d->audit, now);
}

static void reload_with_specs(struct devwld *d, void *ctx, int r)
{
	(void)ctx;
	(void)r;
	(void)policy_reload(d, NULL);
}

/* SIGHUP, or the policy file changed: its cdi: bindings resolve against specs a work
 * thread reads, as devwlctl reload's do (front/control.c, reads_specs()); with no work
 * thread free, against what is read here, rather than not at all. */
static void reload(struct devwld *d)
{
	if (d->cdi_now || follow_with_specs(d, reload_with_specs, NULL, NULL) < 0)
		(void)policy_reload(d, NULL);
}

/*
 * The worker's wiring, in one place: what the lower layers (the loop, the store, the
 * state) tell the upper ones goes through these hooks, so that every call between the
 * files points down (supervisor/README.md, scripts/callgraph). The order of each list is
 * the order things ran in when the loop called them by name.
 */
static void worker_hooks(struct devwld *d)
{
	d->loop.hooks = (struct loop_hooks){
		/* A reload the watch makes is in the state write started right after. */
		.tick = {watch_tick, uevents_tick, tick_state, kernelmode_tick},
		.after = {oci_conn_expire, metrics_expire, after_audit, handover_after},
		.reload = reload,
		.restart = handover_begin,
	};
	d->store_hooks = (struct store_hooks){
		.changed = state_changed,
		.policy_changed = serve_policy_changed,
		.container_gone = serve_container_gone,
		.notify_ready = serve_notify_ready,
	};
	d->state_written_hook = control_state_written;
}

/* Which socket file we bound at path: only that one is ever unlinked (unlink_own). */
static void note_socket(struct devwld *d, int i, const char *path)
{
	int r = trust_lock_note(d->keeper.lock_fd[i], path);

	if (r < 0)
		log_msg("%s: cannot note it in its lock (%s): it will be left in place at exit",
			path, strerror(-r));
}

/* Unlink a socket we bound, never one another devwld has put there since (a runtime
 * directory emptied and a new devwld started, say). */
static void unlink_own(struct devwld *d, int i, const char *path)
{
	if (!trust_unlink_own(d->keeper.lock_fd[i], path))
		log_msg("%s is not the socket this devwld bound (or it is unknown which): left "
			"in place",
			path);
}

/*
 * What the command line asked for besides serving containers (--metrics, --audit, the
 * uevents a selector binding needs) is set up by the first worker before READY=1, or
 * devwld does not start: a daemon that quietly runs without its audit or metrics is
 * found out only when someone looks. A later worker (after a crash) serves the
 * containers all the same, and says so as an ERROR, counted (metrics.h).
 */
static int feature_broken(struct devwld *d, enum feature f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int feature_broken(struct devwld *d, enum feature f, const char *fmt, ...)
{
	bool first = d->keeper.gen <= 1;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (first) {
		log_msg("%s; not starting", msg);
		return -1;
	}
	log_msg("ERROR: %s; serving containers without it", msg);
	feature_failed(f);
	return 0;
}

static int worker_start(struct devwld *d, bool no_audit)
{
	struct devwl_error err = {0};
	sigset_t mask;
	int r;

	/* Ours stay blocked (the loop's signalfd reads them, pending ones too); the
	 * keeper's SIGCHLD is not ours. */
	devwld_signals(&mask);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	worker_hooks(d);
	r = keeper_link_open(&d->keeper);
	if (r < 0) {
		log_msg("cannot use the keeper's fds: %s", strerror(-r));
		return r;
	}
	devwl_set_log(lib_log, NULL);
	if (!(devwl_features() & DEVWL_FEATURE_USER_NOTIF)) {
		log_msg("this kernel has no seccomp user notification");
		return -EOPNOTSUPP;
	}
	r = log_start();
	if (r < 0) {
		log_msg("cannot start the log writer: %s", strerror(-r));
		return r;
	}
#ifdef DEVWL_TEST_HOOKS
	d->test_stop_file = secure_getenv("DEVWLD_TEST_STOP_FILE");
#endif
	d->audit.depth = d->cfg.metrics_depth;
	r = no_audit ? 0 : audit_open(&d->audit, d->cfg.audit_file, d->cfg.audit_all, log_sink());
	if (r < 0) {
		if (feature_broken(
			    d, FEATURE_AUDIT, "--audit %s: %s%s", d->cfg.audit_file, strerror(-r),
			    d->keeper.gen > 1 ? " (its records go to standard error)" : "") < 0)
			return r;
		/* Its records go to stderr meanwhile, as without --audit. */
		r = audit_open(&d->audit, NULL, d->cfg.audit_all, log_sink());
		if (r < 0)
			return r;
	}
	r = loop_init(&d->loop, d, d->cfg.policy_file);
	if (r < 0) {
		log_msg("event loop: %s", strerror(-r));
		return r;
	}
	r = serve_init(d);
	if (r < 0) {
		log_msg("handler threads: %s", strerror(-r));
		return r;
	}
	r = work_start(&d->loop);
	if (r < 0) {
		log_msg("work threads: %s", strerror(-r));
		return r;
	}
	/* The state (restart, crash, reboot-surviving --state) wins over the policy file
	 * for the hierarchy; the file is applied if it changed meanwhile. */
	r = state_restore(d);
	if (r > 0) {
		reapply_if_changed(d);
	} else {
		keeper_link_release_unclaimed(&d->keeper);
		r = policy_load(d);
		if (r < 0)
			return r;
		state_changed(d);
	}
	/* Before any socket or the state is in place: a start that fails here leaves
	 * none behind. */
	r = metrics_open(d, &err);
	if (r < 0) {
		metrics_close(d);
		if (feature_broken(d, FEATURE_METRICS, "metrics not served: %s",
				   err.msg[0] ? err.msg : strerror(-r)) < 0)
			return r;
	}
	r = uevents_start(d);
	if (r < 0 && feature_broken(d, FEATURE_UEVENTS,
				    "selectors: cannot receive uevents (%s), which the selector "
				    "bindings need to follow their devices",
				    strerror(-r)) < 0)
		return r;
	/* On disk before the sockets say we are ready. */
	state_sync(d);
	r = listener_open(d, d->keeper.listen_fd);
	if (r < 0) {
		log_msg("listener %s: %s", d->cfg.listen_path, strerror(-r));
		return r;
	}
	if (d->keeper.listen_fd < 0)
		note_socket(d, 0, d->cfg.listen_path);
	r = watch_open(d);
	if (r < 0) {
		/* Out of inotify watches, say: still a working daemon, reloaded by hand. */
		log_msg("cannot watch %s (%s): it is reloaded on SIGHUP only", d->cfg.policy_file,
			strerror(-r));
		watch_close(d);
	}
	r = control_open(d, d->keeper.control_fd);
	/* Sockets made here: the keeper keeps them for our successors. */
	if (r >= 0 && d->keeper.control_fd < 0) {
		note_socket(d, 1, d->cfg.control_path);
		r = keeper_link_sockets(&d->keeper, d->listen_src.fd, d->control_src.fd);
	}
	if (r < 0) {
		log_msg("control socket %s: %s", d->cfg.control_path, strerror(-r));
		unlink_own(d, 0, d->cfg.listen_path);
		return r;
	}
	return 0;
}

static int worker_main(struct devwld *d, bool no_audit)
{
	bool started;
	int r;

	/* Started through /proc/self/exe, it would show as "exe" in ps and top. */
	(void)prctl(PR_SET_NAME, "devwld-worker");
	list_init(&d->containers);
	list_init(&d->oci_conns);
	list_init(&d->ctl_conns);
	r = worker_start(d, no_audit);
	started = r >= 0;
	if (r >= 0) {
		if (d->keeper.gen > 1) {
			log_msg("worker %u ready: %u containers, %u processes served again",
				d->keeper.gen, d->ncontainers, d->nprocs);
		} else {
			log_msg("ready: listening on %s, control on %s, policy %s, state %s",
				d->cfg.listen_path, d->cfg.control_path,
				d->cfg.policy_file
					? d->cfg.policy_file
					: "(none: containers get the default device set)",
				d->cfg.state_file);
			service_notify("READY=1\nSTATUS=listening on %s", d->cfg.listen_path);
		}
		keeper_link_ready(&d->keeper);
		r = loop_run(&d->loop);
	}
	/* Whatever happens from here is not a change anyone should persist; nor is what a
	 * start that failed had read (the writer may not even have its loop yet). */
	if (started)
		state_sync(d);
	state_freeze(d);
	d->exiting = true;
	/* From here a source's memory is freed at once: no poll will complete. */
	loop_stop(&d->loop);
	if (!d->handover) {
		/* Stopping for good: closing the notify fds (the keeper closes its own when
		 * we are gone) makes every trapped call fail ENOSYS: fail closed. */
		service_notify("STOPPING=1");
		if (d->listen_src.fd >= 0)
			unlink_own(d, 0, d->cfg.listen_path);
		if (d->control_src.fd >= 0)
			unlink_own(d, 1, d->cfg.control_path);
	}
	while (!list_empty(&d->oci_conns))
		oci_conn_expire(d, UINT64_MAX);
	/* Before the connections and containers their answers would go to. */
	work_stop(&d->loop);
	control_close_all(d);
	serve_fini(d);
	store_fini(d);
	policy_fini(d);
	if (d->listen_src.fd >= 0)
		close(d->listen_src.fd);
	if (d->control_src.fd >= 0)
		close(d->control_src.fd);
	watch_close(d);
	uevents_close(d);
	metrics_close(d);
	loop_fini(&d->loop);
	audit_close(&d->audit);
	state_fini(d);
	/* The first worker failed to start, and the keeper exits with us: nothing of this
	 * start stays behind, its locks included (their sockets are gone already). */
	if (r < 0 && !started && d->keeper.gen <= 1) {
		trust_lock_remove(d->keeper.lock_fd[0], d->cfg.listen_path);
		trust_lock_remove(d->keeper.lock_fd[1], d->cfg.control_path);
	}
	keeper_link_close(&d->keeper);
	log_stop(SINK_DRAIN_MS);
	if (r < 0)
		return 1;
	return d->handover ? DEVWLD_EXIT_HANDOVER : 0;
}

/*
 * The directories of the sockets and the state: devwld's alone, or it does not start
 * (devwld(8) SECURITY). A planted state or a socket someone else can replace would hand
 * that someone the containers' devices; no later step could tell.
 */
static int check_dirs(const struct devwld_config *cfg)
{
	const char *files[] = {cfg->listen_path, cfg->control_path, cfg->state_file};

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		struct devwl_error err = {0};

		if (trust_dir_of(files[i], geteuid(), &err) < 0) {
			fprintf(stderr, "devwld: %s: %s; not starting\n", files[i], err.msg);
			return -EPERM;
		}
	}
	return 0;
}

/*
 * One devwld per socket: the lock beside each is held by the keeper for its whole life
 * (devwld(8) SECURITY). A second daemon would put its sockets over the first's, which
 * then serves nobody, and unlink them when it exits.
 */
static int lock_sockets(const struct devwld_config *cfg, int ret_fds[2])
{
	const char *paths[2] = {cfg->listen_path, cfg->control_path};

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		pid_t holder = 0;
		int r = trust_lock(paths[i], &holder);

		if (r == -EBUSY && holder > 0)
			fprintf(stderr,
				"devwld: %s is served by another devwld (pid %d, holding %s.lock); "
				"not starting\n",
				paths[i], (int)holder, paths[i]);
		else if (r == -EBUSY)
			fprintf(stderr,
				"devwld: %s is served by another devwld (pid unknown, holding "
				"%s.lock); not starting\n",
				paths[i], paths[i]);
		else if (r == -EADDRINUSE)
			fprintf(stderr,
				"devwld: %s: something listens there without holding %s.lock (a "
				"devwld of an earlier version?); not starting\n",
				paths[i], paths[i]);
		else if (r < 0)
			fprintf(stderr, "devwld: %s.lock: %s; not starting\n", paths[i],
				strerror(-r));
		if (r < 0)
			return r;
		ret_fds[i] = r;
	}
	return 0;
}

int devwld_main(int argc, char **argv)
{
	static struct devwld d = {
		.loop = {.signal_src = {.fd = -1}},
		.listen_src = {.fd = -1},
		.control_src = {.fd = -1},
		.audit = {.lock = PTHREAD_MUTEX_INITIALIZER},
	};
	_cleanup_(options_free) struct options o;
	int locks[2] = {-1, -1};
	struct rlimit rl;
	sigset_t mask;
	int r;

	/* Before anything else: a SIGHUP now must wait for the loop, not kill us. */
	devwld_signals(&mask);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = options_parse(argc, argv, &o);
	if (r >= 0)
		return r;
	d.cfg = o.cfg;

	/* One fd per container process: thousands of containers need more than 1024. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* A keeper re-executed for a restart, or its worker, runs where the first keeper
	 * checked, holding its locks. */
	if (!secure_getenv(DEVWLD_ENV_WORKER) && !secure_getenv(DEVWLD_ENV_KEEPER) &&
	    (check_dirs(&d.cfg) < 0 || lock_sockets(&d.cfg, locks) < 0)) {
		const char *paths[2] = {d.cfg.listen_path, d.cfg.control_path};

		/* A lock we took before another refused us was ours alone: gone too. */
		for (size_t i = 0; i < ARRAY_SIZE(locks); i++) {
			trust_lock_remove(locks[i], paths[i]);
			if (locks[i] >= 0)
				close(locks[i]);
		}
		return 1;
	}
	/* The process started from the command line keeps the fds; a worker it starts
	 * (the same binary, the same arguments) does the work. */
	if (!secure_getenv(DEVWLD_ENV_WORKER))
		return keeper_main(argv, locks);
	return worker_main(&d, o.no_audit);
}
