/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiny supervisor built from the public API for the live tests 01–39: fork; the child
 * sets no_new_privs, runs a hook (cgroup, chdir, ...), installs the devwl filter, hands
 * the notify fd over by SCM_RIGHTS and execs the program; a thread of the parent answers
 * notifications against a policy node until the last filter user is gone.
 */
#ifndef DEVWL_LIVETEST_H
#define DEVWL_LIVETEST_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fdpass.h"
#include "../hostprobe.h"
#include "devwl.h"

static int lt_failures;

#define LT_SKIP(...)                                                                               \
	do {                                                                                       \
		fprintf(stderr, "SKIP: " __VA_ARGS__);                                             \
		fputc('\n', stderr);                                                               \
		exit(77);                                                                          \
	} while (0)

#define LT_DIE(...)                                                                                \
	do {                                                                                       \
		fprintf(stderr, "FATAL %s:%d: ", __FILE__, __LINE__);                              \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		exit(1);                                                                           \
	} while (0)

#define LT_CHECK(cond, ...)                                                                        \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			lt_failures++;                                                             \
		}                                                                                  \
	} while (0)

static inline void lt_need_root(void)
{
	if (geteuid() != 0)
		LT_SKIP("needs root (mknod of test nodes, device cgroup, chroot)");
	/* The kernel is asked, not devwl: a devwl that misses the feature fails. */
	if (!hp_user_notif())
		LT_SKIP("kernel without seccomp user notification");
	if (!(devwl_features() & DEVWL_FEATURE_USER_NOTIF))
		LT_DIE("devwl_features() misses seccomp user notification, which the kernel has");
}

/* Every directory above path lets others through, and others may execute it. */
static inline bool lt_reachable_by_others(const char *path)
{
	char buf[4096];
	struct stat st;

	snprintf(buf, sizeof(buf), "%s", path);
	if (stat(buf, &st) < 0 || !(st.st_mode & S_IXOTH))
		return false;
	for (char *slash = strrchr(buf, '/'); slash && slash > buf; slash = strrchr(buf, '/')) {
		*slash = '\0';
		if (stat(buf, &st) < 0 || !(st.st_mode & S_IXOTH))
			return false;
	}
	return true;
}

static char lt_probe_copy_dir[64];
static pid_t lt_probe_copy_owner;
static inline void lt_probe_copy_remove(void)
{
	char path[128];

	if (getpid() != lt_probe_copy_owner)
		return; /* a forked child leaving: the copy is its parent's */
	snprintf(path, sizeof(path), "%s/probe", lt_probe_copy_dir);
	unlink(path);
	rmdir(lt_probe_copy_dir);
}

static char lt_probe_path[4096];
static inline void lt_probe_find(void)
{
	char *path = lt_probe_path;
	const size_t size = sizeof(lt_probe_path);
	const char *dir = getenv("DEVWL_LIVE_BIN");
	char buf[65536];
	int in = -1, out = -1;
	ssize_t n = 0;

	snprintf(path, size, "%s/probe", dir ? dir : ".");
	if (access(path, X_OK) < 0)
		LT_DIE("no probe at %s (set DEVWL_LIVE_BIN): the build should have made it", path);
	if (lt_reachable_by_others(path))
		return;
	snprintf(lt_probe_copy_dir, sizeof(lt_probe_copy_dir), "/tmp/devwl-probe.XXXXXX");
	if (!mkdtemp(lt_probe_copy_dir) || chmod(lt_probe_copy_dir, 0755) < 0)
		LT_DIE("cannot make a directory for a copy of the probe: %m");
	lt_probe_copy_owner = getpid();
	atexit(lt_probe_copy_remove);
	in = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, size, "%s/probe", lt_probe_copy_dir);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			n = -1;
	if (in < 0 || out < 0 || n < 0 || fchmod(out, 0755) < 0)
		LT_DIE("cannot copy the probe to %s: %m", path);
	close(in);
	close(out);
}

/*
 * The probe, where other users can run it too (setpriv --reuid 65534 ... probe): a build
 * tree under a 0700 directory, a private checkout, is out of their reach, so the probe
 * is then copied once to a 0755 directory in /tmp, removed at exit.
 */
static inline const char *lt_probe(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, lt_probe_find);
	return lt_probe_path;
}

/*
 * A scratch directory of device nodes: null zero full random (char), loop0 (block), and
 * nd/, a tmpfs mounted nodev: where devwl makes a node for a caller with no baseline
 * behind it (a node anywhere else would open beyond the policy: doc/DESIGN.md, "mknod").
 */
struct lt_nodes {
	char dir[64];
};

static inline void lt_mknod(const char *dir, const char *name, mode_t type, int maj, int min)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (mknod(p, type | 0666, makedev(maj, min)) < 0)
		LT_DIE("mknod %s: %m", p);
}

static inline void lt_nodes_make(struct lt_nodes *n)
{
	char p[256];

	strcpy(n->dir, "/tmp/devwl-live-XXXXXX");
	if (!mkdtemp(n->dir))
		LT_DIE("mkdtemp: %m");
	chmod(n->dir, 0755);
	lt_mknod(n->dir, "null", S_IFCHR, 1, 3);
	lt_mknod(n->dir, "zero", S_IFCHR, 1, 5);
	lt_mknod(n->dir, "full", S_IFCHR, 1, 7);
	lt_mknod(n->dir, "random", S_IFCHR, 1, 8);
	lt_mknod(n->dir, "loop0", S_IFBLK, 7, 0);
	snprintf(p, sizeof(p), "%s/sub", n->dir);
	mkdir(p, 0755);
	lt_mknod(n->dir, "sub/zero2", S_IFCHR, 1, 5);
	snprintf(p, sizeof(p), "%s/lnk-zero", n->dir);
	if (symlink("zero", p) < 0)
		LT_DIE("symlink: %m");
	snprintf(p, sizeof(p), "%s/sub/lnk-up", n->dir);
	if (symlink("../full", p) < 0)
		LT_DIE("symlink: %m");
	snprintf(p, sizeof(p), "%s/file", n->dir);
	close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	snprintf(p, sizeof(p), "%s/nd", n->dir);
	if (mkdir(p, 0755) < 0 || mount("none", p, "tmpfs", MS_NODEV, "mode=0755") < 0)
		LT_DIE("a nodev tmpfs at %s: %m", p);
}

static inline void lt_nodes_remove(struct lt_nodes *n)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "%s/nd", n->dir);
	umount2(cmd, MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", n->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", n->dir);
}

/* A scratch v1 devices cgroup denying everything: the kernel baseline. */
struct lt_cgroup {
	char dir[200];
	bool ok;
};

static inline bool lt_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok = false;

	if (fd < 0)
		return false;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok;
}

static inline void lt_cgroup_make(struct lt_cgroup *cg)
{
	char p[256], mnt[160];

	cg->ok = false;
	/* Wherever mountinfo says the v1 devices controller is. */
	if (hp_cgroup_mount("devices", mnt, sizeof(mnt)) < 0)
		return;
	snprintf(cg->dir, sizeof(cg->dir), "%s/devwl-live-%d", mnt, (int)getpid());
	if (mkdir(cg->dir, 0755) < 0 && errno != EEXIST)
		return;
	snprintf(p, sizeof(p), "%s/devices.deny", cg->dir);
	cg->ok = lt_write(p, "a");
}

static inline void lt_cgroup_join(const struct lt_cgroup *cg)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/cgroup.procs", cg->dir);
	if (!lt_write(p, "0"))
		_exit(126);
}

static inline void lt_cgroup_remove(struct lt_cgroup *cg)
{
	for (int i = 0; i < 100 && rmdir(cg->dir) < 0 && errno == EBUSY; i++)
		usleep(10000);
}

struct lt_sup;
typedef void (*lt_hook_fn)(struct lt_sup *s, int count);

struct lt_sup {
	struct devwl_policy *policy;
	struct devwl_node *node;
	struct devwl_notify *notify;
	const struct lt_cgroup *cgroup; /* join before installing, may be NULL */
	const char *chdir_to;		/* may be NULL */
	unsigned int filter_flags;
	lt_hook_fn before_handle; /* runs on the supervisor thread, may be NULL */
	void *userdata;
	int nfd;
	pid_t child_pid;
	int count;
	int allowed, denied, continued, errors, gone;
	int mknods; /* notifications of mknod/mknodat */
	struct devwl_event last;
	pthread_t thread;
	volatile int stop;
};

static inline void lt_sup_init(struct lt_sup *s, const char *rules)
{
	char *copy = NULL, *save = NULL;

	memset(s, 0, sizeof(*s));
	s->nfd = -1;
	s->policy = devwl_policy_new();
	if (!s->policy || devwl_policy_mkdir(s->policy, "/t") < 0)
		LT_DIE("policy");
	s->node = devwl_policy_find(s->policy, "/t");
	s->notify = devwl_notify_new();
	if (!s->notify)
		LT_DIE("devwl_notify_new");
	/* "deny a;allow c 1:5 r" style: ';'-separated "allow RULE" / "deny RULE". */
	copy = strdup(rules);
	for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		enum devwl_file f =
			strncmp(tok, "allow ", 6) == 0 ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY;
		const char *rule = tok + (f == DEVWL_FILE_ALLOW ? 6 : 5);
		int r = devwl_node_write(s->node, f, rule, strlen(rule), NULL);

		if (r < 0)
			LT_DIE("rule '%s': %s", tok, strerror(-r));
	}
	free(copy);
}

static inline void lt_sup_rule(struct lt_sup *s, const char *rule)
{
	enum devwl_file f = strncmp(rule, "allow ", 6) == 0 ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY;
	const char *r = rule + (f == DEVWL_FILE_ALLOW ? 6 : 5);

	if (devwl_node_write(s->node, f, r, strlen(r), NULL) < 0)
		LT_DIE("rule %s", rule);
}

static inline void lt_sup_free(struct lt_sup *s)
{
	devwl_notify_free(s->notify);
	devwl_policy_free(s->policy);
}

static inline void *lt_sup_loop(void *arg)
{
	struct lt_sup *s = arg;

	for (;;) {
		struct pollfd p = {.fd = s->nfd, .events = POLLIN};
		struct devwl_event e;
		int r = poll(&p, 1, 100);

		if (r < 0 && errno == EINTR)
			continue;
		if (s->stop)
			break;
		if (r == 0)
			continue;
		if (p.revents & POLLIN) {
			if (s->before_handle)
				s->before_handle(s, s->count);
			/* Dirty, so that a reserved word the library does not zero shows. */
			memset(&e, 0xa5, sizeof(e));
			r = devwl_notify_handle(s->notify, s->nfd, s->node, &e);
			s->count++;
			if (r == -ENOENT) {
				s->gone++;
				continue;
			}
			if (r < 0) {
				fprintf(stderr, "devwl_notify_handle: %s\n", strerror(-r));
				s->errors++;
				continue;
			}
			for (size_t i = 0; i < sizeof(e.reserved) / sizeof(e.reserved[0]); i++)
				if (e.reserved[i]) {
					fprintf(stderr, "event reserved[%zu] not zeroed\n", i);
					s->errors++;
				}
			s->last = e;
			if (strncmp(e.syscall, "mknod", 5) == 0)
				s->mknods++;
			if (e.verdict == DEVWL_VERDICT_ALLOW)
				s->allowed++;
			else if (e.verdict == DEVWL_VERDICT_DENY)
				s->denied++;
			else if (e.verdict == DEVWL_VERDICT_CONTINUE)
				s->continued++;
			continue;
		}
		if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
			break;
	}
	return NULL;
}

/* Everything until EOF from fd, which is closed; NUL-terminated, heap (caller frees). */
static inline char *lt_read_all(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	if (!buf)
		LT_DIE("oom");
	for (;;) {
		ssize_t n = 0;

		if (len + 1024 > cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				LT_DIE("oom");
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	return buf;
}

/*
 * Run argv (a NULL-terminated vector; argv[0] the program) under the supervisor. Its
 * stdout is returned (heap, caller frees); *ret_status gets the wait status.
 * child_fn, when set, runs in the child instead of exec (after the filter is on).
 */
static inline char *lt_run(struct lt_sup *s, char *const argv[], int (*child_fn)(void *),
			   void *child_arg, int *ret_status)
{
	int sv[2], out[2], status = 0;
	char *buf = NULL;
	pid_t pid = -1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(out, O_CLOEXEC) < 0)
		LT_DIE("setup: %m");
	pid = fork();
	if (pid < 0)
		LT_DIE("fork: %m");
	if (pid == 0) {
		int fd = -1, r = 0;

		dup2(out[1], 1);
		if (s->cgroup)
			lt_cgroup_join(s->cgroup);
		if (s->chdir_to && chdir(s->chdir_to) < 0)
			_exit(124);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(123);
		r = devwl_filter_install(s->filter_flags, &fd);
		if (r < 0) {
			fprintf(stderr, "devwl_filter_install: %s\n", strerror(-r));
			_exit(122);
		}
		if (fdpass_send(sv[1], fd) < 0)
			_exit(125);
		close(fd);
		if (child_fn) {
			r = child_fn(child_arg);
			fflush(stdout);
			_exit(r);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	s->child_pid = pid;
	/* The cgroup denies every device: what devwl lets through, the kernel refuses. */
	devwl_notify_set_baseline(s->notify, s->cgroup != NULL);
	close(sv[1]);
	close(out[1]);
	s->nfd = fdpass_recv(sv[0]);
	close(sv[0]);
	if (s->nfd < 0)
		LT_DIE("no notify fd from the child");
	s->stop = 0;
	if (pthread_create(&s->thread, NULL, lt_sup_loop, s) != 0)
		LT_DIE("pthread_create");
	buf = lt_read_all(out[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	s->stop = 1;
	pthread_join(s->thread, NULL);
	close(s->nfd);
	s->nfd = -1;
	if (ret_status)
		*ret_status = status;
	return buf;
}

/* Run "probe ARGS..." (words separated by spaces; ";" separates operations). */
static inline char *lt_probe_run(struct lt_sup *s, const char *args)
{
	char *argv[64];
	char *copy = strdup(args), *save = NULL;
	int argc = 0, status = 0;
	char *out = NULL;

	argv[argc++] = (char *)lt_probe();
	for (char *tok = strtok_r(copy, " ", &save); tok && argc < 63;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	out = lt_run(s, argv, NULL, NULL, &status);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "probe %s: exit status %#x\n", args, status);
	free(copy);
	return out;
}

static inline bool lt_glob(const char *line, char *pat)
{
	char *star = strchr(pat, '*');
	const char *at = line;

	if (!star)
		return strncmp(line, pat, strlen(pat)) == 0;
	*star = '\0';
	if (strncmp(line, pat, strlen(pat)) != 0)
		return false;
	at = line + strlen(pat);
	pat = star + 1;
	while (*pat) {
		size_t len = 0;

		star = strchr(pat, '*');
		if (star)
			*star = '\0';
		len = strlen(pat);
		at = strstr(at, pat);
		if (!at)
			return false;
		at += len;
		if (!star)
			break;
		pat = star + 1;
	}
	return true;
}

/* Copy in to out (size bytes), each '@' replaced by dir: a test case's paths. */
static inline void lt_subst(char *out, size_t size, const char *in, const char *dir)
{
	size_t len = 0;

	for (; *in && len + strlen(dir) + 2 < size; in++) {
		if (*in == '@') {
			strcpy(out + len, dir);
			len += strlen(dir);
		} else {
			out[len++] = *in;
		}
	}
	out[len] = '\0';
}

/* Does every line of got start with the corresponding "|"-separated prefix in want? */
static inline bool lt_match(const char *got, const char *want)
{
	char *g = strdup(got), *w = strdup(want), *gs = NULL, *ws = NULL;
	char *gl = strtok_r(g, "\n", &gs), *wl = strtok_r(w, "|", &ws);
	bool ok = true;

	while (wl) {
		if (!gl) {
			ok = false;
			break;
		}
		/* "*" inside a pattern matches anything; the first piece is a prefix. */
		ok = lt_glob(gl, wl);
		if (!ok)
			break;
		gl = strtok_r(NULL, "\n", &gs);
		wl = strtok_r(NULL, "|", &ws);
	}
	free(g);
	free(w);
	return ok;
}

/* ---- Helpers for the hostile-input tests (07–29). ---- */

#define ARRAY_SIZE_LT(a) (sizeof(a) / sizeof((a)[0]))

/* A watchdog: a test that stalls dies by SIGALRM instead of hanging ctest. */
static inline void lt_watchdog(unsigned int seconds)
{
	signal(SIGALRM, SIG_DFL);
	alarm(seconds);
}

/* How many fds this process holds (the supervisor side of a leak check). */
static inline int lt_count_fds(void)
{
	char p[64];
	int n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		if (access(p, F_OK) == 0)
			n++;
	}
	return n;
}

/* One line for a call returning an fd: "ok type=c rdev=1:5", "ok type=f" or the errno name. */
static inline void lt_describe(char *out, size_t size, long ret, int err)
{
	struct stat st;

	if (ret < 0) {
		snprintf(out, size, "%s", strerrorname_np(err) ?: "E?");
		return;
	}
	if (fstat((int)ret, &st) < 0)
		snprintf(out, size, "ok fstat=%s", strerrorname_np(errno));
	else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		snprintf(out, size, "ok type=%c rdev=%u:%u", S_ISCHR(st.st_mode) ? 'c' : 'b',
			 major(st.st_rdev), minor(st.st_rdev));
	else
		snprintf(out, size, "ok type=%c", S_ISREG(st.st_mode) ? 'f' : 'o');
}

/* Run child_fn(arg) in a plain child (no filter): what the kernel answers by itself. */
static inline char *lt_native(int (*child_fn)(void *), void *arg, int *ret_status)
{
	char *buf = NULL;
	int out[2], status = 0;
	pid_t pid = -1;

	if (pipe2(out, O_CLOEXEC) < 0)
		LT_DIE("setup: %m");
	pid = fork();
	if (pid < 0)
		LT_DIE("fork: %m");
	if (pid == 0) {
		int r = 0;

		dup2(out[1], 1);
		r = child_fn(arg);
		fflush(stdout);
		_exit(r);
	}
	close(out[1]);
	buf = lt_read_all(out[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (ret_status)
		*ret_status = status;
	return buf;
}

/* The rest of the line "LABEL: result" in out (static buffer), or "(missing)". */
static inline const char *lt_result_of(const char *out, const char *label)
{
	static char res[256];
	size_t ll = strlen(label);

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, label, ll) == 0 && p[ll] == ':' && p[ll + 1] == ' ') {
			const char *e = strchrnul(p + ll + 2, '\n');
			size_t n = (size_t)(e - (p + ll + 2));

			if (n >= sizeof(res))
				n = sizeof(res) - 1;
			memcpy(res, p + ll + 2, n);
			res[n] = '\0';
			return res;
		}
	}
	return "(missing)";
}

/*
 * Start child_fn(arg) under its own devwl filter, like lt_run, but return at once with its
 * pid, notify fd and stdout pipe: for tests that supervise several children themselves.
 */
static inline pid_t lt_spawn(int (*child_fn)(void *), void *arg, int *ret_nfd, int *ret_out)
{
	int sv[2], out[2];
	pid_t pid = -1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(out, O_CLOEXEC) < 0)
		LT_DIE("setup: %m");
	pid = fork();
	if (pid < 0)
		LT_DIE("fork: %m");
	if (pid == 0) {
		int fd = -1, r = 0;

		dup2(out[1], 1);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(123);
		r = devwl_filter_install(0, &fd);
		if (r < 0)
			_exit(122);
		if (fdpass_send(sv[1], fd) < 0)
			_exit(125);
		close(fd);
		r = child_fn(arg);
		fflush(stdout);
		_exit(r);
	}
	close(sv[1]);
	close(out[1]);
	*ret_nfd = fdpass_recv(sv[0]);
	close(sv[0]);
	if (*ret_nfd < 0)
		LT_DIE("no notify fd from the child");
	*ret_out = out[0];
	return pid;
}

#endif
