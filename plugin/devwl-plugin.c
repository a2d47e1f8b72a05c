/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwl's seccomp-notify plugin for crun and conmon (devwl-plugin(7)): the runtime's own
 * loop receives each notification and hands it here; a thread of the plugin decides it
 * with libdevwl's public API against the container's node and answers it on the notify
 * fd (the ABI's delayed response), so that a slow call never stalls the runtime's loop.
 *
 * The container's node comes from the policy file its annotation org.devwl.policy names
 * in the policy directory, by devwld's own rules (the "containers" object: the node
 * annotation org.devwl.node admitted as devwld admits it); without the annotation the
 * container gets the OCI default devices, as devwld gives a container without a policy.
 * Anything that keeps the plugin from knowing the node makes start fail, and the runtime
 * then refuses to run the container: it fails closed.
 *
 * Kernel mode, as devwld's (supervisor/core/kernelmode.c): where the runtime is root, the
 * plugin takes the container's device cgroup over and programs it with the node, so that
 * the kernel opens a granted device itself, in the caller's own context. Where it cannot,
 * a cgroup of the container's own that a root runtime programmed is a deny baseline, and
 * the plugin opens granted devices on the caller's behalf; where there is none (a rootless
 * runtime, a container in the runtime's own cgroup), nothing but the plugin confines the
 * container, and a granted node is made only on a nodev mount (libdevwl(3)).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit-line.h"
#include "baseline.h"
#include "defaults.h"
#include "devwl.h"
#include "fileio.h"
#include "jsonutil.h"
#include "mapping.h"
#include "nodepath.h"
#include "ocistate.h"
#include "util.h"

#define PLUGIN_EXPORT __attribute__((visibility("default")))

/* The ABI of crun's src/libcrun/seccomp_notify_plugin.h, version 1, as conmon also speaks it
 * (written from its documentation; the struct is the runtime's). */
struct run_oci_conf {
	const char *runtime_root_path;
	const char *name;
	const char *bundle_path;
	const char *oci_config_path;
};
enum {
	HANDLE_NOT_HANDLED = 0,
	HANDLE_SEND_RESPONSE = 1,
	HANDLE_DELAYED_RESPONSE = 2,
};

#define ANNOTATION_POLICY "org.devwl.policy"
#define ANNOTATION_MODE	  "org.devwl.mode"
#define ENV_POLICY_DIR	  "DEVWL_PLUGIN_POLICY_DIR"
#define ENV_AUDIT	  "DEVWL_PLUGIN_AUDIT"
#define ENV_MODE	  "DEVWL_PLUGIN_MODE"
#define TEXT_MAX	  (16u << 20) /* devwld reads no longer policy either */
#ifndef DEVWL_PLUGIN_POLICY_DIR
#define DEVWL_PLUGIN_POLICY_DIR "/etc/devwl/plugin"
#endif

/* A notification the runtime received, waiting for the worker. */
struct request {
	struct request *next;
	size_t size;
	unsigned char req[]; /* struct seccomp_notif, as long as the kernel's */
};

struct plugin {
	char *id;
	struct devwl_policy *policy;
	struct devwl_node *node;
	struct devwl_notify *notify;
	int notify_fd; /* our own duplicate of the runtime's */
	int audit_fd;
	pthread_t worker;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct request *head, **tail;
	bool stopping;
	unsigned int warned; /* the worker's: a flood of one failure only drowns the log */
	/* The container's cgroup: set at start, then the worker's alone. */
	bool cgroup_pending;	 /* to be looked up, at the latest on the first call */
	bool kernel_wanted;	 /* and taken over, programmed with node */
	bool baseline;		 /* a cgroup of its own, a root runtime's: a deny baseline */
	char *baseline_why;	 /* why not kernel mode, where it was not wanted */
	struct devwl_cgroup *cg; /* the container's, programmed with node; or NULL */
	/* With an audit, in kernel mode: what cg's program decides, read into the audit. */
	pthread_t reader;
	bool reading;		/* the reader runs (set by whoever started it) */
	bool unreportable_said; /* that nothing can report was said */
	int reader_stop;	/* eventfd: the reader drains and ends */
	unsigned int reader_warned;
};

/* Messages for the runtime's log: it says only "error loading" when start fails. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("devwl-plugin: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A file an operator or the runtime wrote: a policy, a config.json. */
static int read_text(const char *file, char **ret)
{
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return negerrno();
	n = devwl_read_all(fd, TEXT_MAX, ret);
	return n < 0 ? (int)n : 0;
}

static void reports_stop(struct plugin *p);

static void plugin_free(struct plugin *p)
{
	if (!p)
		return;
	reports_stop(p);
	while (p->head) {
		struct request *r = p->head;

		p->head = r->next;
		free(r);
	}
	devwl_notify_free(p->notify);
	devwl_cgroup_free(p->cg);
	devwl_policy_free(p->policy);
	closep(&p->notify_fd);
	closep(&p->audit_fd);
	closep(&p->reader_stop);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	free(p->baseline_why);
	free(p->id);
	free(p);
}

/* What the container's config says that decides its node: id, annotations, metadata. */
static int read_config(const char *file, const char *id, struct oci_state *st)
{
	_cleanup_free_ char *text = NULL;
	struct json_object *top = NULL, *annos = NULL, *lnx = NULL, *sc = NULL, *meta = NULL;
	int r;

	r = read_text(file, &text);
	if (r < 0) {
		say("reading %s: %s", file, strerror(-r));
		return r;
	}
	top = json_tokener_parse(text);
	if (!top || !json_object_is_type(top, json_type_object)) {
		say("%s: not a JSON object", file);
		json_object_put(top);
		return -EINVAL;
	}
	r = -ENOMEM;
	st->id = strdup(id);
	if (!st->id)
		goto out;
	if (json_object_object_get_ex(top, "annotations", &annos) &&
	    json_object_is_type(annos, json_type_object)) {
		st->annos =
			calloc((size_t)json_object_object_length(annos) + 1, sizeof(*st->annos));
		if (!st->annos)
			goto out;
		json_object_object_foreach (annos, key, val) {
			struct annotation *a = &st->annos[st->nannos];

			if (!json_object_is_type(val, json_type_string) || json_string_has_nul(val))
				continue;
			a->key = strdup(key);
			a->value = strdup(json_object_get_string(val));
			if (!a->key || !a->value) {
				free(a->key);
				free(a->value);
				goto out;
			}
			st->nannos++;
		}
	}
	if (json_object_object_get_ex(top, "linux", &lnx) &&
	    json_object_object_get_ex(lnx, "seccomp", &sc) &&
	    json_object_object_get_ex(sc, "listenerMetadata", &meta) &&
	    json_object_is_type(meta, json_type_string) && !json_string_has_nul(meta)) {
		st->metadata = strdup(json_object_get_string(meta));
		if (!st->metadata)
			goto out;
	}
	r = 0;
out:
	json_object_put(top);
	return r;
}

/* The policy file an annotation names: a plain file name in the policy directory, so that
 * whoever writes annotations picks among the operator's policies and nothing else. */
static int policy_file(const char *name, char **ret)
{
	const char *dir = secure_getenv(ENV_POLICY_DIR) ?: DEVWL_PLUGIN_POLICY_DIR;

	if (!name[0] || name[0] == '.' || strchr(name, '/')) {
		say("annotation " ANNOTATION_POLICY " \"%s\": not a file name in %s", name, dir);
		return -EINVAL;
	}
	return asprintf(ret, "%s/%s", dir, name) < 0 ? -ENOMEM : 0;
}

/* Make path and its missing ancestors; 1 when path itself was made. */
static int mkdir_p(struct devwl_policy *policy, const char *path)
{
	char buf[4096];
	int r;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (char *s = buf + 1; (s = strchr(s, '/')); *s++ = '/') {
		*s = '\0';
		r = devwl_policy_mkdir(policy, buf);
		if (r < 0 && r != -EEXIST)
			return r;
	}
	r = devwl_policy_mkdir(policy, buf);
	return r == -EEXIST ? 0 : r < 0 ? r : 1;
}

/*
 * The policy and the container's node, as devwld would choose it (devwld(8), devwl-policy(5)):
 * the file's node rules, then the node its "containers" object gives the container, made
 * as devwld makes it (with "container_rules") when the file does not define it.
 */
static int load_policy(struct plugin *p, const struct oci_state *st)
{
	const char *name = oci_annotation(st, ANNOTATION_POLICY);
	_cleanup_free_ char *file = NULL, *text = NULL, *path = NULL;
	struct json_object *top = NULL, *containers = NULL;
	struct devwl_error err = {0};
	struct mapping m = {0};
	const char *source = NULL;
	int r;

	if (!name) {
		/* What devwld gives a container without a policy: the OCI default set. */
		p->policy = devwl_policy_new();
		if (!p->policy || devwl_node_set_defaults(devwl_policy_find(p->policy, "/")) < 0)
			return -ENOMEM;
		p->node = devwl_policy_find(p->policy, "/");
		return 0;
	}
	r = policy_file(name, &file);
	if (r < 0)
		return r;
	r = devwl_policy_load_file(file, &p->policy, &err);
	if (r < 0) {
		say("policy %s: %s", file, err.msg[0] ? err.msg : strerror(-r));
		return r;
	}
	/* The loader has checked the JSON; the "containers" object is devwld's mapping. */
	r = read_text(file, &text);
	if (r < 0) {
		say("reading %s: %s", file, strerror(-r));
		return r;
	}
	top = json_tokener_parse(text);
	json_object_object_get_ex(top, "containers", &containers);
	r = mapping_from_json(containers, file, &m, &err);
	if (r >= 0)
		r = mapping_node_path(&m, NULL, NULL, st, 0, &path, &source, &err);
	json_object_put(top);
	if (r < 0) {
		say("container %s: %s", st->id, err.msg[0] ? err.msg : strerror(-r));
		goto out;
	}
	r = mkdir_p(p->policy, path);
	if (r == 1)
		r = mapping_start_node(&m, devwl_policy_find(p->policy, path), &err);
	if (r < 0) {
		say("container %s: node %s (%s): %s", st->id, path, source,
		    err.msg[0] ? err.msg : strerror(-r));
		goto out;
	}
	p->node = devwl_policy_find(p->policy, path);
	r = p->node ? 0 : -ENOENT;
out:
	mapping_clear(&m);
	return r;
}

static void audit(struct plugin *p, const struct devwl_event *ev)
{
	if (p->audit_fd < 0)
		return;
	if (audit_write(p->audit_fd, ev, p->id, devwl_node_path(p->node),
			devwl_notify_reason(p->notify), p->node) < 0 &&
	    p->warned++ < 10)
		say("writing the audit: %m");
}

/* {"event":"mode",...} and a line on stderr: which mode the container got, and why. */
static void say_mode(struct plugin *p, const char *dir, int size, const char *reason)
{
	const int version = devwl_cgroup_version(p->cg);
	const struct audit_mode m = {
		.container = p->id,
		.node = devwl_node_path(p->node),
		.mode = !p->cg	       ? "baseline"
			: version == 2 ? "kernel-v2"
				       : "kernel-v1",
		.reason = reason,
		.cgroup = p->cg ? dir : NULL,
		.version = version,
		.size = size,
	};
	char line[AUDIT_LINE_MAX];
	int n;

	if (p->cg)
		say("container %s: kernel mode: cgroup v%d %s enforces node %s (%d %s)", p->id,
		    version, dir, m.node, size, version == 2 ? "instructions" : "writes");
	else if (p->baseline)
		say("container %s: baseline mode (%s): the plugin opens the devices node %s "
		    "grants on the caller's behalf",
		    p->id, reason, m.node);
	else
		say("container %s: baseline mode (%s): no device cgroup confines the container, "
		    "so node %s's grants are made only on nodev mounts, and opened for the caller",
		    p->id, reason, m.node);
	if (p->audit_fd < 0)
		return;
	n = audit_mode_format(&m, line, sizeof(line));
	if (n > 0 && devwl_write_all(p->audit_fd, line, (size_t)n) < 0)
		say("writing the audit: %m");
}

/* Kernel mode is not to be: the container stays in baseline mode, said once. */
static void kernel_refuse(struct plugin *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void kernel_refuse(struct plugin *p, int err, const char *fmt, ...)
{
	char why[320];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	n = strlen(why);
	if (err && n < sizeof(why))
		snprintf(why + n, sizeof(why) - n, ": %s", strerror(-err));
	p->cgroup_pending = false;
	say_mode(p, NULL, 0, why);
}

/*
 * Kernel mode with an audit: the device program reports what it decides (denials, and
 * allowed accesses deduplicated with their counts), read by a thread of ours into the
 * audit as devwld's and devwl-run's are, marked as the kernel's: with nothing trapped but
 * mknod, they are the only record of the devices the container used.
 */
static void *read_reports(void *userdata)
{
	struct plugin *p = userdata;
	struct pollfd pfd[2] = {
		{.fd = devwl_cgroup_denials_fd(p->cg), .events = POLLIN},
		{.fd = p->reader_stop, .events = POLLIN},
	};
	bool last = false;

	while (!last) {
		struct devwl_denial d[32];
		int n;

		if (poll(pfd, ARRAY_SIZE(pfd), -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* Asked to end: what the program reported until now first. */
		last = pfd[1].revents != 0 || (pfd[0].revents & (POLLERR | POLLNVAL));
		do {
			n = devwl_cgroup_read_denials(p->cg, d, ARRAY_SIZE(d));
			for (int i = 0; i < n; i++)
				if (audit_write_report(p->audit_fd, &d[i], p->id,
						       devwl_node_path(p->node), p->node) < 0 &&
				    p->reader_warned++ < 10)
					say("writing the audit: %m");
		} while (n == (int)ARRAY_SIZE(d));
		if (n < 0 && p->reader_warned++ < 10)
			say("container %s: reading the kernel's reports: %s", p->id, strerror(-n));
	}
	return NULL;
}

static void reports_start(struct plugin *p)
{
	sigset_t all, saved;
	int r;

	if (p->audit_fd < 0 || devwl_cgroup_denials_fd(p->cg) < 0)
		return;
	p->reader_stop = eventfd(0, EFD_CLOEXEC);
	if (p->reader_stop < 0) {
		say("container %s: the kernel's reports are not read: eventfd: %m", p->id);
		return;
	}
	/* Its signals are the runtime's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	r = pthread_create(&p->reader, NULL, read_reports, p);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (r)
		say("container %s: the kernel's reports are not read: %s", p->id, strerror(r));
	p->reading = r == 0;
}

static void reports_stop(struct plugin *p)
{
	uint64_t one = 1;

	if (!p->reading)
		return;
	if (write(p->reader_stop, &one, sizeof(one)) != sizeof(one))
		pthread_cancel(p->reader); /* cannot be: an eventfd takes 1 */
	pthread_join(p->reader, NULL);
	p->reading = false;
}

/* Nothing reports the container's accesses: said once, as devwld says it. */
static void reports_unavailable(struct plugin *p, const char *dir, const char *why)
{
	char line[AUDIT_LINE_MAX];
	int n;

	if (p->unreportable_said)
		return;
	p->unreportable_said = true;
	say("container %s: kernel mode: its accesses and denials cannot be reported: %s; its v1 "
	    "device cgroup %s enforces node %s unseen",
	    p->id, why, dir, devwl_node_path(p->node));
	n = audit_unreportable_format(p->id, devwl_node_path(p->node), dir, why, line,
				      sizeof(line));
	if (n > 0 && devwl_write_all(p->audit_fd, line, (size_t)n) < 0)
		say("writing the audit: %m");
}

/*
 * A v1 cgroup tells nobody what it decides; on a hybrid host a reporter on the
 * container's own cgroup2 cgroup sees it first (devwl_cgroup_set_reporter()), as devwld's.
 */
static void set_reporter(struct plugin *p, pid_t pid, const char *v1dir)
{
	_cleanup_free_ char *dir = NULL;
	char why[320] = "";
	int r = baseline_container_reporter(pid, &dir, why, sizeof(why));

	if (r == -ENODEV)
		return; /* a v1-only host: nothing to report through */
	if (r >= 0)
		r = devwl_cgroup_set_reporter(p->cg, dir);
	if (r >= 0)
		return;
	if (!why[0])
		snprintf(why, sizeof(why), "its reporter on cgroup2 %s: %s", dir ? dir : "",
			 strerror(-r));
	reports_unavailable(p, v1dir, why);
}

/* Has the caller of notification id (0: none) stopped waiting for its answer? */
static bool caller_gone(const struct plugin *p, uint64_t id)
{
	return id && ioctl(p->notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0;
}

/*
 * Look up the container's device cgroup: one of its own, which the root runtime programmed
 * from its config, is a deny baseline; without one nothing confines the container but the
 * plugin (the handler then makes nodes only on nodev mounts). Where kernel mode is wanted,
 * take the cgroup over and program it with the node (devwld(8), KERNEL MODE): from then on
 * the kernel opens what the node grants, and the handler answers CONTINUE once it has
 * refused what the node denies. pid is one of the container's processes: crun's child, or
 * the caller of notification id (nonzero), which must still be waiting once the cgroup is
 * looked up, or the pid may name another process by then.
 */
static void cgroup_take(struct plugin *p, pid_t pid, uint64_t id)
{
	_cleanup_free_ char *dir = NULL;
	char why[200] = "";
	int r;

	r = baseline_container_cgroup(pid, &dir, why, sizeof(why));
	if (r < 0 && caller_gone(p, id))
		return; /* its pid said nothing: the next caller's is looked up */
	if (r < 0) {
		kernel_refuse(p, r == -ENOENT || r == -EPERM ? 0 : r, "%s",
			      why[0] ? why : "its cgroup");
		return;
	}
	p->baseline = true;
	devwl_notify_set_baseline(p->notify, true);
	if (!p->kernel_wanted) {
		kernel_refuse(p, 0, "%s", p->baseline_why);
		return;
	}
	r = devwl_cgroup_open(dir,
			      DEVWL_CGROUP_TAKE_OVER |
				      (p->audit_fd >= 0 ? DEVWL_CGROUP_RECORD_DENIALS |
								  DEVWL_CGROUP_RECORD_ACCESSES
							: 0),
			      &p->cg);
	if (r < 0) {
		kernel_refuse(p, r, "%s", dir);
		return;
	}
	if (p->audit_fd >= 0 && devwl_cgroup_version(p->cg) == 1)
		set_reporter(p, pid, dir);
	if (caller_gone(p, id)) {
		/* Its pid may name another process by now: the next caller's is looked up. */
		devwl_cgroup_free(TAKE_PTR(p->cg));
		return;
	}
	p->cgroup_pending = false;
	r = devwl_cgroup_apply(p->cg, p->node);
	if (r < 0) {
		devwl_cgroup_free(TAKE_PTR(p->cg));
		kernel_refuse(p, r,
			      "applying node %s to %s failed, and the cgroup now denies every "
			      "device (opens the plugin does not trap fail)",
			      devwl_node_path(p->node), dir);
		return;
	}
	devwl_notify_set_enforced(p->notify, true);
	say_mode(p, dir, r, NULL);
	reports_start(p);
}

/* The worker: every notification of the container, decided and answered in turn. */
static void *serve(void *userdata)
{
	struct plugin *p = userdata;

	for (;;) {
		struct devwl_event ev = {0};
		struct request *req = NULL;
		int r;

		pthread_mutex_lock(&p->lock);
		while (!p->head && !p->stopping)
			pthread_cond_wait(&p->wake, &p->lock);
		req = p->head;
		if (req) {
			p->head = req->next;
			if (!p->head)
				p->tail = &p->head;
		}
		pthread_mutex_unlock(&p->lock);
		if (!req)
			return NULL;
		if (p->cgroup_pending) {
			const struct seccomp_notif *n = (const struct seccomp_notif *)req->req;

			cgroup_take(p, (pid_t)n->pid, n->id);
		}
		r = devwl_notify_handle_request(p->notify, p->notify_fd,
						(const struct seccomp_notif *)req->req, req->size,
						p->node, &ev);
		free(req);
		/* ENOENT: the caller went away meanwhile, nothing was answered. */
		if (r >= 0)
			audit(p, &ev);
		else if (r != -ENOENT && p->warned++ < 10)
			say("container %s: answering a notification: %s", p->id, strerror(-r));
	}
}

/* The container's process, as crun's state directory records it before it loads plugins
 * (its status file); 0 where there is none (conmon passes no state directory). */
static pid_t state_pid(const struct run_oci_conf *conf)
{
	_cleanup_free_ char *file = NULL, *text = NULL;
	struct json_object *top = NULL, *pid = NULL;
	int64_t p = 0;

	if (!conf->runtime_root_path || asprintf(&file, "%s/status", conf->runtime_root_path) < 0) {
		file = NULL;
		return 0;
	}
	if (read_text(file, &text) < 0)
		return 0;
	top = json_tokener_parse(text);
	if (json_object_object_get_ex(top, "pid", &pid) && json_object_is_type(pid, json_type_int))
		p = json_object_get_int64(pid);
	json_object_put(top);
	return p > 1 && p <= INT32_MAX ? (pid_t)p : 0;
}

#ifdef DEVWL_TEST_HOOKS
/* Tests only (tests/oci/194, built with -DDEVWL_TEST_HOOKS=ON): DEVWL_PLUGIN_TEST_NO_STATE
 * makes kernel mode wait for the first call, as under conmon, which passes no state. */
static bool state_hidden(void)
{
	return secure_getenv("DEVWL_PLUGIN_TEST_NO_STATE") != NULL;
}
#else
static bool state_hidden(void)
{
	return false;
}
#endif

/*
 * The runtime has started the container's process when it loads plugins (crun does so in
 * its wait loop), and one that fails to start only makes it close the notify fd: a trapped
 * call then returns ENOSYS and the workload runs on until the runtime gets to killing
 * it. Kill it first, from the pid crun's state directory records, so that a container
 * the plugin cannot serve goes no further than its first trapped call.
 */
static void stop_container(const struct run_oci_conf *conf)
{
	pid_t pid = state_pid(conf);

	if (pid > 0 && kill(pid, SIGKILL) == 0)
		say("container %s: killed its process %d: it cannot be served", conf->name,
		    (int)pid);
}

/* What the container's cgroup is to be to the plugin (mode_wanted()). */
enum want {
	WANT_NO_CGROUP, /* the runtime programs none: nothing is looked up */
	WANT_KERNEL,	/* looked up, taken over and programmed with the node */
	WANT_BASELINE,	/* looked up: one of its own is the runtime's deny baseline */
};

/*
 * What the container is to have: kernel mode where the runtime is root of the initial user
 * namespace (only such a runtime programs a device cgroup, and only such a plugin can take
 * one over), unless the operator (DEVWL_PLUGIN_MODE) or the container (org.devwl.mode)
 * says "baseline". why says why not kernel mode; -EINVAL a word that is neither (start
 * fails: fail closed).
 */
static int mode_wanted(const struct oci_state *st, char *why, size_t size)
{
	const char *env = secure_getenv(ENV_MODE), *anno = oci_annotation(st, ANNOTATION_MODE);
	_cleanup_free_ char *map = NULL;
	unsigned long inside = 0, outside = 0, count = 0;
	int want = WANT_KERNEL;

	for (int i = 0; i < 2; i++) {
		const char *word = i ? anno : env;
		const char *what = i ? "annotation " ANNOTATION_MODE : ENV_MODE;

		if (!word || !strcmp(word, "kernel"))
			continue;
		if (strcmp(word, "baseline") != 0) {
			say("%s \"%s\": neither \"kernel\" nor \"baseline\"", what, word);
			return -EINVAL;
		}
		if (want == WANT_KERNEL)
			snprintf(why, size, "%s says baseline", what);
		want = WANT_BASELINE;
	}
	if (geteuid() != 0) {
		snprintf(why, size, "the runtime runs as uid %u, not root",
			 (unsigned int)geteuid());
		return WANT_NO_CGROUP;
	}
	/* Root of a user namespace (rootless podman's crun) programs no device cgroup. */
	if (read_text("/proc/self/uid_map", &map) < 0 ||
	    sscanf(map, "%lu %lu %lu", &inside, &outside, &count) != 3 || inside != 0 ||
	    outside != 0 || count != 4294967295ul) {
		snprintf(why, size, "the runtime runs in a user namespace");
		return WANT_NO_CGROUP;
	}
	return want;
}

PLUGIN_EXPORT int run_oci_seccomp_notify_version(void);
PLUGIN_EXPORT int run_oci_seccomp_notify_version(void)
{
	return 1;
}

PLUGIN_EXPORT int run_oci_seccomp_notify_start(void **opaque, struct run_oci_conf *conf,
					       size_t size);
PLUGIN_EXPORT int run_oci_seccomp_notify_start(void **opaque, struct run_oci_conf *conf,
					       size_t size)
{
	struct plugin *p = NULL;
	struct oci_state st = {0};
	const char *audit_file = secure_getenv(ENV_AUDIT);
	char why[200] = "";
	sigset_t all, saved;
	pid_t pid = 0;
	int r, want = WANT_NO_CGROUP;

	if (size < sizeof(*conf) || !conf->name || !conf->oci_config_path) {
		say("the runtime passed no container configuration");
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		r = -ENOMEM;
		goto fail;
	}
	p->notify_fd = p->audit_fd = p->reader_stop = -1;
	p->tail = &p->head;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	p->id = strdup(conf->name);
	r = p->id ? read_config(conf->oci_config_path, conf->name, &st) : -ENOMEM;
	if (r >= 0)
		r = load_policy(p, &st);
	if (r >= 0)
		r = want = mode_wanted(&st, why, sizeof(why));
	oci_state_clear(&st);
	if (r < 0)
		goto fail;
	if (audit_file && audit_file[0]) {
		p->audit_fd = open(audit_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
		if (p->audit_fd < 0) {
			r = negerrno();
			say(ENV_AUDIT " %s: %m", audit_file);
			goto fail;
		}
	}
	p->notify = devwl_notify_new();
	if (!p->notify) {
		say("cannot set up notification handling (out of memory, or no seccomp user "
		    "notification in this kernel)");
		r = -ENOMEM;
		goto fail;
	}
	/*
	 * A root runtime has programmed the container's device cgroup from its config, which
	 * denies every device it does not list: a deny baseline, once the cgroup is found to
	 * be the container's own. Granted devices beyond it are opened here for the caller,
	 * as devwld does for runtimes, until kernel mode takes the cgroup over. The cgroup is
	 * looked up at once where crun's state names the container's process, else on the
	 * first call, whose caller is one. Until then no baseline is assumed.
	 */
	p->kernel_wanted = want == WANT_KERNEL;
	p->cgroup_pending = want != WANT_NO_CGROUP;
	if (want == WANT_BASELINE && !(p->baseline_why = strdup(why))) {
		r = -ENOMEM;
		goto fail;
	}
	if (want == WANT_NO_CGROUP)
		kernel_refuse(p, 0, "%s", why);
	else if (!state_hidden() && (pid = state_pid(conf)) > 0)
		cgroup_take(p, pid, 0);
	/* The worker takes no signal: they are the runtime's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	r = -pthread_create(&p->worker, NULL, serve, p);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (r < 0) {
		say("starting the worker: %s", strerror(-r));
		goto fail;
	}
	p->started = true;
	*opaque = p;
	return 0;
fail:
	plugin_free(p);
	stop_container(conf);
	return r;
}

PLUGIN_EXPORT int run_oci_seccomp_notify_handle_request(void *opaque,
							struct seccomp_notif_sizes *sizes,
							struct seccomp_notif *sreq,
							struct seccomp_notif_resp *sresp,
							int seccomp_fd, int *handled);
PLUGIN_EXPORT int run_oci_seccomp_notify_handle_request(void *opaque,
							struct seccomp_notif_sizes *sizes,
							struct seccomp_notif *sreq,
							struct seccomp_notif_resp *sresp,
							int seccomp_fd, int *handled)
{
	struct plugin *p = opaque;
	size_t size = sizes->seccomp_notif > sizeof(*sreq) ? sizes->seccomp_notif : sizeof(*sreq);
	struct request *req = NULL;

	/* The runtime closes its fd when it is done: the worker answers on a copy. */
	if (p->notify_fd < 0) {
		p->notify_fd = fcntl(seccomp_fd, F_DUPFD_CLOEXEC, 3);
		if (p->notify_fd >= 0)
			devwl_notify_fd_prepare(p->notify_fd);
	}
	req = p->notify_fd >= 0 ? malloc(sizeof(*req) + size) : NULL;
	if (!req) {
		/* Nothing can decide it: fail closed, at once. */
		sresp->id = sreq->id;
		sresp->error = -EPERM;
		sresp->val = 0;
		sresp->flags = 0;
		*handled = HANDLE_SEND_RESPONSE;
		return 0;
	}
	req->next = NULL;
	req->size = size;
	memset(req->req, 0, size);
	memcpy(req->req, sreq, sizes->seccomp_notif < size ? sizes->seccomp_notif : size);
	pthread_mutex_lock(&p->lock);
	*p->tail = req;
	p->tail = &req->next;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	*handled = HANDLE_DELAYED_RESPONSE;
	return 0;
}

PLUGIN_EXPORT int run_oci_seccomp_notify_stop(void *opaque);
PLUGIN_EXPORT int run_oci_seccomp_notify_stop(void *opaque)
{
	struct plugin *p = opaque;

	if (!p)
		return 0;
	if (p->started) {
		pthread_mutex_lock(&p->lock);
		p->stopping = true;
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->lock);
		/* Answers what is queued first: a caller still there gets its answer. */
		pthread_join(p->worker, NULL);
	}
	/* Then what the device program reported until now, into the audit (plugin_free). */
	plugin_free(p);
	return 0;
}
