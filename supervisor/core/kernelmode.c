/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel mode: the container's own device cgroup enforces its node.
 *
 * A runtime puts each container in a device cgroup of its own and programs it with the
 * OCI rules (runc and crun: a v1 devices directory they write, or a v2 BPF program they
 * attach). devwld takes that cgroup over (DEVWL_CGROUP_TAKE_OVER): v1 writes go from the
 * runtime's list to the node's, narrowing first; v2 attaches the node's program beside
 * the runtime's, then detaches the runtime's. At no moment does the cgroup allow more than
 * the runtime's rules or the node, and afterwards it allows exactly the node — grants
 * beyond the runtime's defaults included, as authoritative mode would give them. Every
 * change of the hierarchy is applied again before devwlctl's answer goes out.
 *
 * Which cgroup: the one /proc/PID/cgroup names for the container's pid, in the v1 devices
 * hierarchy if the container has its own there, else in cgroup2. Never the root of a
 * hierarchy, never one holding devwld (its own or an ancestor of it): the rule of
 * baseline_container_cgroup(), which devwl-plugin(7) follows too. Never one another
 * container was programmed through, never for a runtime other than root (the pid is its
 * word alone). A v1 cgroup on a hybrid host gets a reporter on the container's own cgroup2
 * cgroup (reporter()), so its accesses are reported as a v2 program's are.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit-line.h"
#include "audit.h"
#include "baseline.h"
#include "clock.h"
#include "devwld.h"
#include "kernelmode.h"
#include "learn.h"
#include "learning.h"
#include "log.h"
#include "sink.h"
#include "util.h"

struct kernel_cg {
	bool wanted;		 /* to be programmed: a root runtime's, or asked for */
	bool asked;		 /* mode=kernel, or --kernel-mode=always: a failure is loud */
	struct devwl_cgroup *cg; /* NULL: not (yet) programmed */
	int version;
	char *dir;
	dev_t dev;
	ino_t ino;
	char *applied; /* devwl_node_show() of what was applied last */
	int size;      /* the last apply: instructions (v2) or writes (v1) */
	char reason[256];
	bool await_pid; /* wanted, but no process of it came with a pid yet (crun exec) */
	struct denials_src *denials; /* its program's ring of denials on the loop, or NULL */
	/* Drift: another writer's changes to its cgroup (drift_check()); times in now_ms(). */
	uint64_t next_check;   /* when its cgroup is read next; 0: not yet scheduled */
	uint64_t backoff;      /* how long a repair holds off the next check; 0: none lately */
	uint64_t last_repair;  /* when it was last repaired */
	uint64_t last_log;     /* when a repair of it was last logged */
	uint64_t repairs;      /* repairs since the worker started */
	unsigned int unlogged; /* repairs since the last one logged */
	bool check_failed;     /* the last check failed (logged once) */
	char *foreign;	       /* the foreign programs last reported, or NULL */
	/* v1 on a hybrid host: the cgroup2 directory its reporter is on (reporter()), or
	 * NULL; unreportable: it has none of its own there (said once). */
	char *report_dir;
	bool unreportable;
};

/*
 * Drift (devwld(8), KERNEL MODE): every programmed cgroup is read every DRIFT_PERIOD_MS,
 * on the loop (a devices.list read and a BPF_PROG_QUERY are cheap syscalls on kernfs and
 * bpf, which no workload can stall: bench/drift measures them), at most DRIFT_PER_TICK
 * per round so a host of many containers spreads them over rounds. A repair holds off the
 * next check of that cgroup, doubling up to DRIFT_BACKOFF_MAX while the changes go on,
 * back to none after a quiet DRIFT_BACKOFF_MAX: an agent that keeps rewriting meets one
 * repair per backoff, never a tight fight. Log lines of repairs: one per DRIFT_LOG_MS
 * per container, with the count of those left out; events: every one.
 */
#define DRIFT_PERIOD_MS		  5000
#define DRIFT_BACKOFF_MAX(period) (64 * (period))
#define DRIFT_PER_TICK		  256
#define DRIFT_LOG_MS		  60000

/*
 * What a v2 program refused, read from the loop. One ring per container, not one shared
 * map: the ring is the cgroup handle's (libdevwl's, the same across every program swapped
 * in), so a container refused without end fills its own and drops its own records,
 * never another container's, and a record needs no key to find its container. Its cost
 * is 16 KiB of locked memory and one poll per programmed container. The source's fd is a
 * dup of the ring's: the loop closes its own.
 */
struct denials_src {
	struct source src;
	struct container *c;
};

/* Records taken per wake-up before the loop serves the others (a ring holds about 290). */
#define DENIALS_PER_ROUND 512

int kernelmode_parse(const char *s, enum kernel_when *ret)
{
	static const char *const names[] = {
		[KERNEL_AUTO] = "auto", [KERNEL_ALWAYS] = "always", [KERNEL_NEVER] = "never"};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (s && !strcmp(s, names[i])) {
			*ret = (enum kernel_when)i;
			return 0;
		}
	return -EINVAL;
}

/* The mode= word of listenerMetadata ("node=/a mode=kernel"): "kernel", "authoritative",
 * or NULL. */
static bool meta_says_kernel(const char *meta)
{
	for (const char *p = meta; p && *p;) {
		const char *end = strchrnul(p, ' ');

		if (end - p == 11 && !memcmp(p, "mode=kernel", 11))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

bool kernelmode_wanted(const struct container *c)
{
	return c->kernel && c->kernel->wanted;
}

bool kernelmode_enforced(const struct container *c)
{
	return c->kernel && c->kernel->cg && c->kernel->applied;
}

bool container_has_baseline(const struct container *c)
{
	return c->owner_uid == 0;
}

bool kernelmode_holds_id(dev_t dev, ino_t ino, pid_t pid)
{
	_cleanup_free_ char *dir = NULL;
	char why[200];
	struct stat st;

	if (pid <= 0 || baseline_container_cgroup(pid, &dir, why, sizeof(why)) < 0 ||
	    stat(dir, &st) < 0)
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

bool kernelmode_cgroup_id(const struct container *c, dev_t *ret_dev, ino_t *ret_ino)
{
	if (!kernelmode_enforced(c))
		return false;
	*ret_dev = c->kernel->dev;
	*ret_ino = c->kernel->ino;
	return true;
}

const char *kernelmode_name(const struct container *c)
{
	if (!c->kernel || !c->kernel->wanted || (!c->kernel->cg && !c->kernel->asked))
		return "authoritative";
	if (!c->kernel->cg)
		return "unprogrammed";
	return c->kernel->version == 2 ? "kernel-v2" : "kernel-v1";
}

/* {"event":"mode",...}: the audit says which mode each container is in. */
static void audit_mode(struct devwld *d, const struct container *c)
{
	const struct kernel_cg *k = c->kernel;
	const struct audit_mode m = {
		.container = c->id,
		.node = c->node_path,
		.mode = kernelmode_name(c),
		.cgroup = k->cg ? k->dir : NULL,
		.version = k->version,
		.size = k->size,
		.reason = k->cg ? NULL : k->reason,
	};
	_cleanup_free_ char *line = NULL;
	int n;

	if (!d->audit.out || !(line = malloc(AUDIT_LINE_MAX)))
		return;
	n = audit_mode_format(&m, line, AUDIT_LINE_MAX);
	if (n > 0)
		(void)sink_write(d->audit.out, line, (size_t)n);
}

/* Not programmed, with the reason: loudly, since nothing traps this container's opens. */
static void refuse(struct devwld *d, struct container *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void refuse(struct devwld *d, struct container *c, int err, const char *fmt, ...)
{
	struct kernel_cg *k = c->kernel;
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(k->reason, sizeof(k->reason), fmt, ap);
	va_end(ap);
	n = strlen(k->reason);
	if (err && n < sizeof(k->reason))
		snprintf(k->reason + n, sizeof(k->reason) - n, ": %s", strerror(-err));
	if (!k->asked) {
		/* Programmed because devwld could; its trapped opens are answered as before. */
		log_msg("container %s: device cgroup not programmed (%s): devwld opens the "
			"devices node %s grants on its behalf",
			c->id, k->reason, c->node_path);
		audit_mode(d, c);
		return;
	}
	log_msg("container %s: WARNING: kernel mode asked for, but its device cgroup is not "
		"programmed (%s); devwld does not see its opens, so only its runtime's device "
		"rules decide them, not node %s",
		c->id, k->reason, c->node_path);
	audit_mode(d, c);
}

static bool cgroup_taken(struct devwld *d, const struct container *self, const struct stat *st)
{
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		const struct container *o = container_of(l, struct container, link);

		if (o != self && o->kernel && o->kernel->cg && o->kernel->dev == st->st_dev &&
		    o->kernel->ino == st->st_ino)
			return true;
	}
	return false;
}

static void denials_free(struct source *src)
{
	free(container_of(src, struct denials_src, src));
}

static void denials_stop(struct devwld *d, struct container *c)
{
	if (!c->kernel || !c->kernel->denials)
		return;
	c->kernel->denials->c = NULL;
	loop_destroy(&d->loop, &c->kernel->denials->src);
	c->kernel->denials = NULL;
}

/*
 * While c learns, what its device program reports is what it touched: its opens are not
 * trapped in kernel mode (the mknod-only profile), so the reports are the record's only
 * source of them. The program that made the access is read from its pid, where the kernel
 * tells device programs one.
 */
static void learn_report(struct devwld *d, struct container *c, const struct devwl_denial *rep)
{
	struct devwl_event ev = {
		.pid = rep->pid,
		.tid = rep->tid,
		.syscall = "device program",
		.type = rep->type,
		.major = rep->major,
		.minor = rep->minor,
		.access = rep->access,
		.verdict = rep->allowed ? DEVWL_VERDICT_ALLOW : DEVWL_VERDICT_DENY,
	};
	struct learn_program prog;

	if (!learning_node(d, c->node))
		return;
	learn_program_of(rep->pid, rep->tid, &prog); /* "?" where the kernel told no pid */
	learning_record(d, c, &ev, &prog);
}

static void denials_ready(struct devwld *d, struct source *src, int revents)
{
	struct denials_src *ds = container_of(src, struct denials_src, src);
	struct container *c = ds->c;
	struct devwl_denial buf[32];
	int n = 0, r;

	if (revents & (POLLERR | POLLNVAL)) {
		log_msg("container %s: WARNING: kernel mode: its ring of denials failed: its"
			" device cgroup still refuses, unrecorded",
			c->id);
		denials_stop(d, c);
		return;
	}
	for (int taken = 0; taken < DENIALS_PER_ROUND; taken += n) {
		n = devwl_cgroup_read_denials(c->kernel->cg, buf, ARRAY_SIZE(buf));
		if (n < 0) {
			log_msg("container %s: WARNING: kernel mode: reading its denials: %s; its"
				" device cgroup still refuses, unrecorded",
				c->id, strerror(-n));
			denials_stop(d, c);
			return;
		}
		for (int i = 0; i < n; i++) {
			audit_kernel_denial(&d->audit, &buf[i], c);
			learn_report(d, c, &buf[i]);
		}
		if ((size_t)n < ARRAY_SIZE(buf))
			break;
	}
	/* Level-triggered: records left for the next round wake it at once. */
	r = loop_arm(&d->loop, src, POLLIN);
	if (r < 0) {
		log_msg("container %s: WARNING: kernel mode: cannot watch its denials (%s): its"
			" device cgroup still refuses, unrecorded",
			c->id, strerror(-r));
		denials_stop(d, c);
	}
}

/* Once c's program records its denials, read them from the loop (devwld(8), KERNEL MODE). */
static void denials_watch(struct devwld *d, struct container *c)
{
	struct kernel_cg *k = c->kernel;
	struct denials_src *ds;
	int fd = devwl_cgroup_denials_fd(k->cg), r;

	if (k->denials || fd < 0)
		return;
	ds = calloc(1, sizeof(*ds));
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (!ds || fd < 0) {
		log_msg("container %s: WARNING: kernel mode: cannot watch its denials (%s)", c->id,
			strerror(fd < 0 ? errno : ENOMEM));
		if (fd >= 0)
			close(fd);
		free(ds);
		return;
	}
	ds->c = c;
	ds->src.fd = fd;
	ds->src.ready = denials_ready;
	ds->src.free_fn = denials_free;
	k->denials = ds;
	r = loop_arm(&d->loop, &ds->src, POLLIN);
	if (r < 0) {
		log_msg("container %s: WARNING: kernel mode: cannot watch its denials (%s)", c->id,
			strerror(-r));
		denials_stop(d, c);
	}
}

/* Programs applied since the worker started (the loop thread's). */
static uint64_t applies;
/* Repairs of drift since the worker started; the earliest next_check (0: unknown). */
static uint64_t drift_repairs, drift_due;

/* Apply c's node (its ceiling while it learns: learning_served()) if it changed since the
 * last apply (or was never applied). */
static int apply(const struct devwld *d, struct container *c)
{
	const struct devwl_node *node = learning_served(d, c);
	struct kernel_cg *k = c->kernel;
	char *show = NULL;
	int r;

	r = devwl_node_show(node, &show);
	if (r < 0)
		show = NULL; /* out of memory: apply anyway, compare next time */
	if (show && k->applied && !strcmp(show, k->applied)) {
		free(show);
		return 0;
	}
	r = devwl_cgroup_apply(k->cg, node);
	free(k->applied);
	k->applied = r >= 0 ? show : NULL;
	if (r < 0)
		free(show);
	else
		k->size = r, applies++;
	return r;
}

/* An audit event about c's programmed cgroup: its time, name, container, node, cgroup. */
static struct json_object *cgroup_event(const struct container *c, const char *event)
{
	struct json_object *o = json_object_new_object();
	char now[AUDIT_TIME_MAX];

	if (!o)
		return NULL;
	audit_time(now);
	json_object_object_add(o, "time", json_object_new_string(now));
	json_object_object_add(o, "event", json_object_new_string(event));
	json_object_object_add(o, "container", json_object_new_string(c->id));
	json_object_object_add(o, "node", json_object_new_string(c->node_path));
	json_object_object_add(o, "cgroup", json_object_new_string(c->kernel->dir));
	json_object_object_add(o, "version", json_object_new_int(c->kernel->version));
	return o;
}

/* {"event":"reports",...}: c's kernel-mode accesses cannot be reported, and why. */
static void reports_event(struct devwld *d, const struct container *c, const char *why)
{
	struct json_object *o = cgroup_event(c, "reports");

	if (!o)
		return;
	json_object_object_add(o, "result", json_object_new_string("unavailable"));
	json_object_object_add(o, "reason", json_object_new_string(why));
	audit_record(&d->audit, o, c->owner_uid, c->id);
	json_object_put(o);
}

/*
 * c's cgroup is a v1 one, whose controller tells nobody. On a hybrid host the kernel asks
 * the cgroup2 device programs of the same task first, so a reporter on c's own cgroup2
 * cgroup sees what the v1 rules decide (devwl_cgroup_set_reporter()). Only on one that is
 * c's alone (baseline_container_unified()): on a shared one it would report others'
 * accesses as c's. Where there is none, that is said once, in the log and the audit.
 */
static void reporter(struct devwld *d, struct container *c, pid_t pid)
{
	struct kernel_cg *k = c->kernel;
	_cleanup_free_ char *dir = NULL;
	char why[320] = "";
	int r;

	r = baseline_container_reporter(pid, &dir, why, sizeof(why));
	if (r == -ENODEV)
		return; /* no cgroup2 hierarchy: a v1-only host, nothing to report through */
	if (r >= 0)
		r = devwl_cgroup_set_reporter(k->cg, dir);
	if (r >= 0) {
		free(k->report_dir);
		k->report_dir = TAKE_PTR(dir);
		return;
	}
	if (!why[0])
		snprintf(why, sizeof(why), "its reporter on cgroup2 %s: %s", dir ? dir : "",
			 strerror(-r));
	if (k->unreportable)
		return;
	k->unreportable = true;
	log_msg("container %s: kernel mode: its accesses and denials cannot be reported: %s; its"
		" v1 device cgroup %s enforces node %s unseen",
		c->id, why, k->dir, c->node_path);
	reports_event(d, c, why);
}

static void program(struct devwld *d, struct container *c, pid_t pid)
{
	struct kernel_cg *k = c->kernel;
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int pidfd = -1;
	struct devwl_cgroup *cg = NULL;
	char why[200] = "";
	struct stat st;
	int r;

	k->await_pid = pid <= 0;
	if (pid <= 0)
		return; /* crun exec: no pid; a call of it names it (kernelmode_pid_known) */
	/* Pinned first: a pid that dies and is reused while we look is caught below. */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		refuse(d, c, negerrno(), "process %d", (int)pid);
		return;
	}
	r = baseline_container_cgroup(pid, &dir, why, sizeof(why));
	if (r < 0) {
		refuse(d, c, r == -ENOENT || r == -EPERM ? 0 : r, "%s", why);
		return;
	}
	if (stat(dir, &st) < 0) {
		refuse(d, c, negerrno(), "%s", dir);
		return;
	}
	if (cgroup_taken(d, c, &st)) {
		refuse(d, c, 0, "%s is another container's too", dir);
		return;
	}
	r = devwl_cgroup_open(dir,
			      DEVWL_CGROUP_TAKE_OVER | DEVWL_CGROUP_RECORD_DENIALS |
				      DEVWL_CGROUP_RECORD_ACCESSES,
			      &cg);
	if (r < 0) {
		refuse(d, c, r, "%s", dir);
		return;
	}
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
		devwl_cgroup_free(cg);
		{
			refuse(d, c, negerrno(), "process %d gone while its cgroup was looked up",
			       (int)pid);
			return;
		}
	}
	k->cg = cg;
	k->next_check = 0;
	drift_due = 0; /* the next tick schedules its first check */
	k->version = devwl_cgroup_version(cg);
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	free(k->dir);
	k->dir = TAKE_PTR(dir);
	if (k->version == 1)
		reporter(d, c, pid);
	r = apply(d, c);
	if (r < 0) {
		/* The cgroup denies every device now (fail closed): say so, keep trying on
		 * the next change. */
		log_msg("container %s: WARNING: kernel mode: applying node %s to %s failed (%s);"
			" the cgroup denies every device until a change applies",
			c->id, c->node_path, k->dir, strerror(-r));
		k->size = r;
	} else {
		denials_watch(d, c);
		bool reported = devwl_cgroup_recording(k->cg) & DEVWL_CGROUP_RECORD_ACCESSES;

		log_msg("container %s: kernel mode: cgroup v%d %s enforces node %s (%d %s; its"
			" denials %s; its allowed accesses %s)",
			c->id, k->version, k->dir, c->node_path, k->size,
			k->version == 2 ? "instructions" : "writes",
			k->denials && k->report_dir ? "recorded by its reporter on cgroup2"
			: k->denials		    ? "recorded"
			: k->version == 1 && !k->report_dir
				? "not seen: the v1 controller tells nobody"
				: "not seen: the kernel cannot record them",
			k->denials && reported ? "reported"
			: k->version == 1 && !k->report_dir
				? "not seen"
				: "not seen: the kernel cannot report them");
	}
	audit_mode(d, c);
}

static int ensure(struct container *c)
{
	if (!c->kernel)
		c->kernel = calloc(1, sizeof(*c->kernel));
	return c->kernel ? 0 : -ENOMEM;
}

/* Did the container, or devwld's command line, ask for kernel mode in so many words? */
static bool said_kernel(const struct devwld *d, const struct oci_state *st)
{
	return meta_says_kernel(st->metadata) || d->cfg.kernel_mode == KERNEL_ALWAYS;
}

/*
 * Every container of a root runtime has its device cgroup programmed (but with
 * --kernel-mode=never): the kernel then opens a granted device itself, in the container's
 * own context, even where its profile traps opens (DESIGN.md, "Grants").
 */
bool kernelmode_asked(const struct devwld *d, const struct container *c, const struct oci_state *st,
		      uid_t peer_uid)
{
	return said_kernel(d, st) || kernelmode_wanted(c) ||
	       (peer_uid == 0 && d->cfg.kernel_mode != KERNEL_NEVER);
}

/* c is to be in kernel mode: program its cgroup unless devwld or the runtime rule it out.
 * Attach and restore both come here, so a restart grants nothing an attach refused. */
static void take(struct devwld *d, struct container *c, pid_t pid, uid_t peer_uid, bool asked)
{
	if (ensure(c) < 0) {
		log_msg("container %s: WARNING: kernel mode: out of memory; its device cgroup is"
			" not programmed",
			c->id);
		return;
	}
	c->kernel->wanted = true;
	c->kernel->asked |= asked;
	if (d->cfg.kernel_mode == KERNEL_NEVER) {
		refuse(d, c, 0, "devwld runs with --kernel-mode=never");
		return;
	}
	if (peer_uid != 0) {
		refuse(d, c, 0, "its runtime runs as uid %u, not root", (unsigned int)peer_uid);
		return;
	}
	program(d, c, pid);
}

void kernelmode_attach(struct devwld *d, struct container *c, const struct oci_state *st,
		       uid_t peer_uid)
{
	if ((c->kernel && c->kernel->cg) || !kernelmode_asked(d, c, st, peer_uid))
		return;
	take(d, c, st->pid, peer_uid, said_kernel(d, st));
}

void kernelmode_restore(struct devwld *d, struct container *c, pid_t pid, uid_t peer_uid)
{
	if (!c || (c->kernel && c->kernel->cg))
		return;
	/* Whether it asked is not recorded: a failure is loud, to be sure. */
	take(d, c, pid, peer_uid, true);
}

void kernelmode_pid_known(struct devwld *d, struct container *c, pid_t pid)
{
	/* take() has ruled on it already: only the pid was missing. */
	if (c->kernel && c->kernel->await_pid && !c->kernel->cg)
		program(d, c, pid);
}

void kernelmode_policy_changed(struct devwld *d)
{
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		struct container *c = container_of(l, struct container, link);
		int r;

		if (!c->kernel || !c->kernel->cg)
			continue;
		r = apply(d, c);
		if (r < 0)
			log_msg("container %s: WARNING: kernel mode: applying node %s to %s failed"
				" (%s); the cgroup denies every device until a change applies",
				c->id, c->node_path, c->kernel->dir, strerror(-r));
		else
			denials_watch(d, c);
	}
}

void kernelmode_gone(struct devwld *d, struct container *c)
{
	if (!c->kernel)
		return;
	denials_stop(d, c);
	devwl_cgroup_free(c->kernel->cg);
	free(c->kernel->dir);
	free(c->kernel->applied);
	free(c->kernel->foreign);
	free(c->kernel->report_dir);
	free(c->kernel);
	c->kernel = NULL;
}

void kernelmode_counts(struct devwld *d, struct kernel_counts *ret)
{
	struct audit_counts a;

	audit_counts(&d->audit, &a);
	*ret = (struct kernel_counts){.applies = applies,
				      .denied = a.kernel_denied,
				      .allowed = a.kernel_allowed,
				      .reports = a.kernel_reports,
				      .drift_repairs = drift_repairs};
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		const struct container *c = container_of(l, struct container, link);

		ret->seen_only_opens += c->seen_only_opens;
		if (kernelmode_wanted(c) && c->kernel->cg) {
			ret->programmed++;
			ret->foreign += c->kernel->foreign != NULL;
			ret->size += (uint64_t)(c->kernel->size > 0 ? c->kernel->size : 0);
			if (!(devwl_cgroup_recording(c->kernel->cg) & DEVWL_CGROUP_RECORD_ACCESSES))
				ret->unreported++;
			ret->unreportable += c->kernel->unreportable;
		} else if (kernelmode_wanted(c) && c->kernel->asked) {
			ret->unprogrammed++;
		}
	}
}

void kernelmode_stats(struct devwld *d, FILE *out)
{
	struct kernel_counts k;

	kernelmode_counts(d, &k);
	fprintf(out,
		"kernel_mode %s\nkernel_containers %u\nkernel_unprogrammed %u\n"
		"kernel_denied %llu\nkernel_allowed %llu\nkernel_allowed_reports %llu\n"
		"kernel_unreported %u\nkernel_unreportable %u\nkernel_drift_repairs %llu\n"
		"kernel_foreign_programs %u\nkernel_seen_only_opens %llu\n",
		d->cfg.kernel_mode == KERNEL_ALWAYS  ? "always"
		: d->cfg.kernel_mode == KERNEL_NEVER ? "never"
						     : "auto",
		k.programmed, k.unprogrammed, (unsigned long long)k.denied,
		(unsigned long long)k.allowed, (unsigned long long)k.reports, k.unreported,
		k.unreportable, (unsigned long long)k.drift_repairs, k.foreign,
		(unsigned long long)k.seen_only_opens);
	/* Per container, only those repaired: the list stays short on a quiet host. */
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		const struct container *c = container_of(l, struct container, link);

		if (c->kernel && c->kernel->repairs)
			fprintf(out, "kernel_drift_repairs:%s %llu\n", c->id,
				(unsigned long long)c->kernel->repairs);
	}
}

uint64_t kernelmode_drift_repairs(const struct container *c)
{
	return c->kernel ? c->kernel->repairs : 0;
}

static uint64_t drift_period_ms(void)
{
#ifdef DEVWL_TEST_HOOKS
	/* tests/oci/200 and tests/live/85 see a repair in a fraction of a second. */
	const char *ms = secure_getenv("DEVWLD_TEST_DRIFT_MS");

	if (ms && *ms && strtoul(ms, NULL, 10) > 0)
		return strtoul(ms, NULL, 10);
#endif
	return DRIFT_PERIOD_MS;
}

/* {"event":"drift",...}: what another writer changed in c's cgroup and what devwld did. */
static void drift_event(struct devwld *d, const struct container *c, int changed, const char *what,
			const char *result)
{
	static const char *const bits[] = {"rules", "detached", "foreign", "reapplied"};
	struct json_object *o = cgroup_event(c, "drift"), *a = json_object_new_array();

	if (!o || !a) {
		json_object_put(o);
		json_object_put(a);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(bits); i++)
		if (changed & (1 << i))
			json_object_array_add(a, json_object_new_string(bits[i]));
	json_object_object_add(o, "changed", a);
	json_object_object_add(o, "what", json_object_new_string(what));
	json_object_object_add(o, "result", json_object_new_string(result));
	json_object_object_add(o, "repairs", json_object_new_uint64(c->kernel->repairs));
	audit_record(&d->audit, o, c->owner_uid, c->id);
	json_object_put(o);
}

/* What a check found that an apply undoes: rules or a program of devwld's changed, or the
 * runtime's rules attached again by its cgroup manager (which the apply detaches, as the
 * take-over did; libdevwl decides which program that is). */
#define REPAIRED                                                                                   \
	(DEVWL_CGROUP_DRIFT_RULES | DEVWL_CGROUP_DRIFT_DETACHED | DEVWL_CGROUP_DRIFT_REAPPLIED)

/* A program another attached beside ours: said once for each set of them. */
static void drift_foreign(struct devwld *d, struct container *c, int r, const char *what)
{
	struct kernel_cg *k = c->kernel;
	const char *f = (r & DEVWL_CGROUP_DRIFT_FOREIGN) ? strstr(what, "foreign program") : NULL;

	if (!f) {
		if (k->foreign)
			log_msg("container %s: kernel mode: no program of another is attached to %s"
				" any more",
				c->id, k->dir);
		free(k->foreign);
		k->foreign = NULL;
		return;
	}
	if (k->foreign && !strcmp(k->foreign, f))
		return;
	free(k->foreign);
	k->foreign = strdup(f);
	log_msg("container %s: WARNING: kernel mode: a program devwld did not attach is attached"
		" to its device cgroup %s (%s); devwld does not detach another's program, and"
		" every attached program must allow an access, so node %s's grants may be refused",
		c->id, k->dir, f, c->node_path);
	if (!(r & REPAIRED))
		drift_event(d, c, r, what, "reported");
}

/*
 * Read c's cgroup; where another writer changed what devwld applied, apply c's node again
 * through apply() (the one writer), count and report it, and hold off its next check.
 */
static void drift_check(struct devwld *d, struct container *c, uint64_t now)
{
	struct kernel_cg *k = c->kernel;
	uint64_t period = drift_period_ms(), max = DRIFT_BACKOFF_MAX(period);
	char what[768];
	int r = devwl_cgroup_check(k->cg, what, sizeof(what)), ar;
	bool retaken;

	k->next_check = now + period;
	if (r < 0) {
		if (!k->check_failed)
			log_msg("container %s: kernel mode: cannot read its device cgroup %s (%s): "
				"a"
				" change another writer makes there is not seen",
				c->id, k->dir, strerror(-r));
		k->check_failed = true;
		return;
	}
	k->check_failed = false;
	drift_foreign(d, c, r, what);
	if (!(r & REPAIRED)) {
		if (k->backoff && now - k->last_repair >= max)
			k->backoff = 0; /* quiet long enough: the next repair waits no longer */
		return;
	}
	/* The handle holds the kernel's state now: the whole node goes in again. */
	free(k->applied);
	k->applied = NULL;
	ar = apply(d, c);
	k->repairs++;
	drift_repairs++;
	/* The cgroup manager's re-application alone is no other writer: its program is the
	 * runtime's, taken over again. It holds off nothing: systemd attaches it only when it
	 * re-applies the unit, never in answer to the detach, and an upgrade runs
	 * daemon-reload many times in a row, each of which would double the wait (up to
	 * 5 min 20 s without the grants beyond the runtime's config). */
	retaken = (r & REPAIRED) == DEVWL_CGROUP_DRIFT_REAPPLIED;
	if (!retaken) {
		k->backoff = k->backoff ? (2 * k->backoff < max ? 2 * k->backoff : max) : period;
		k->last_repair = now;
		k->next_check = now + k->backoff;
	} else if (k->backoff && k->last_repair + k->backoff > k->next_check) {
		k->next_check = k->last_repair + k->backoff; /* another's hold-off stands */
	}
	drift_event(d, c, r, what, ar < 0 ? "failed" : retaken ? "taken over again" : "repaired");
	if (ar >= 0)
		denials_watch(d, c);
	if (ar >= 0 && k->last_log && now - k->last_log < DRIFT_LOG_MS) {
		k->unlogged++;
		return;
	}
	k->last_log = now;
	if (ar < 0)
		log_msg("container %s: WARNING: kernel mode: another writer changed its device "
			"cgroup"
			" %s (%s), and applying node %s again failed (%s); the cgroup denies every"
			" device until a change applies",
			c->id, k->dir, what, c->node_path, strerror(-ar));
	else if (retaken)
		log_msg("container %s: kernel mode: in its device cgroup %s, %s: taken over again,"
			" node %s applied (repair %llu, %u not logged since the last line; next"
			" check in %llu ms)",
			c->id, k->dir, what, c->node_path, (unsigned long long)k->repairs,
			k->unlogged, (unsigned long long)(k->next_check - now));
	else
		log_msg("container %s: kernel mode: another writer changed its device cgroup %s"
			" (%s); node %s applied again (repair %llu, %u not logged since the last"
			" line; next check in %llu ms)",
			c->id, k->dir, what, c->node_path, (unsigned long long)k->repairs,
			k->unlogged, (unsigned long long)k->backoff);
	k->unlogged = 0;
}

int kernelmode_tick(struct devwld *d, uint64_t now)
{
	uint64_t period = drift_period_ms(), next = now + period;
	unsigned int checked = 0;

	if (drift_due && now < drift_due)
		return (int)(drift_due - now < INT_MAX ? drift_due - now : INT_MAX);
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		struct container *c = container_of(l, struct container, link);
		struct kernel_cg *k = c->kernel;

		if (!k || !k->cg)
			continue;
		if (!k->next_check)
			k->next_check = now + period;
		if (k->next_check <= now && checked < DRIFT_PER_TICK) {
			drift_check(d, c, now);
			checked++;
		}
		if (k->next_check < next)
			next = k->next_check;
	}
	drift_due = next > now ? next : now + 1;
	return (int)(drift_due - now);
}
