/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel baseline: a scratch cgroup that denies every device.
 *
 * devwl answers a call that does not target a device with CONTINUE, and the kernel then
 * runs the call itself, re-reading the path from the caller's memory. A racing thread can
 * swap that path for a device node in between; only a kernel that denies devices to the
 * caller makes that swap useless. Grants devwl makes are not affected: it opens devices in
 * its own context and injects the fd, and the device cgroup judges only the opener.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"
#include "devwl.h"
#include "util.h"

int baseline_kind_parse(const char *s, enum baseline_kind *ret_kind)
{
	static const char *const names[] = {
		[BASELINE_AUTO] = "auto",
		[BASELINE_NONE] = "none",
		[BASELINE_V1] = "v1",
		[BASELINE_V2] = "v2",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (s && strcmp(s, names[i]) == 0) {
			*ret_kind = (enum baseline_kind)i;
			return 0;
		}
	return -EINVAL;
}

const char *baseline_kind_name(enum baseline_kind kind)
{
	switch (kind) {
	case BASELINE_V1:
		return "cgroup-v1 devices controller";
	case BASELINE_V2:
		return "cgroup-v2 BPF device program";
	case BASELINE_NONE:
		return "none";
	case BASELINE_AUTO:
		break;
	}
	return "auto";
}

/* Undo the \ooo escapes mountinfo uses for space, tab, newline and backslash. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *r = s; *r;) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

static bool list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; p && *p;) {
		const char *end = strchrnul(p, ',');
		if ((size_t)(end - p) == n && strncmp(p, item, n) == 0)
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

int baseline_each_mount(baseline_mount_fn fn, void *data)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	int r = 0;

	if (!f)
		return negerrno();
	while (r == 0 && getline(&line, &cap, f) > 0) {
		char *fields[10] = {0}, *save = NULL, *tok;
		int n = 0;
		const char *fstype, *super;

		line[strcspn(line, "\n")] = '\0';
		/* id parent dev root mountpoint opts [optional...] - fstype source super */
		for (tok = strtok_r(line, " ", &save); tok && n < 5;
		     tok = strtok_r(NULL, " ", &save))
			fields[n++] = tok;
		while (tok && strcmp(tok, "-") != 0)
			tok = strtok_r(NULL, " ", &save);
		if (n < 5 || !tok)
			continue;
		fstype = strtok_r(NULL, " ", &save);
		strtok_r(NULL, " ", &save);
		super = strtok_r(NULL, " ", &save);
		if (!fstype || (strcmp(fstype, "cgroup") != 0 && strcmp(fstype, "cgroup2") != 0))
			continue;
		unescape_octal(fields[3]);
		unescape_octal(fields[4]);
		r = fn(strcmp(fstype, "cgroup") == 0 ? BASELINE_V1 : BASELINE_V2, fields[4],
		       fields[3], super ? super : "", data);
	}
	fclose(f);
	return r;
}

struct found_mount {
	enum baseline_kind kind;
	char *mnt, *root;
};

static int match_mount(enum baseline_kind kind, const char *mnt, const char *root,
		       const char *super, void *data)
{
	struct found_mount *m = data;

	if (kind != m->kind || (kind == BASELINE_V1 && !list_has(super, "devices")))
		return 0;
	m->mnt = strdup(mnt);
	m->root = strdup(root);
	return m->mnt && m->root ? 1 : -ENOMEM;
}

/*
 * Where the hierarchy is mounted: for v1 the cgroup mount whose super options name the
 * devices controller, for v2 the cgroup2 mount. ret_root is the mount's root inside the
 * hierarchy (not "/" inside a cgroup namespace or for a bind mount).
 */
static int find_mount(enum baseline_kind kind, char **ret_mnt, char **ret_root)
{
	struct found_mount m = {.kind = kind};
	int r = baseline_each_mount(match_mount, &m);

	if (r <= 0) {
		free(m.mnt);
		free(m.root);
		return r < 0 ? r : -ENOENT;
	}
	*ret_mnt = m.mnt;
	*ret_root = m.root;
	return 0;
}

/* A process's cgroup in the hierarchy ("/" at the top), from /proc/PID/cgroup (0: ours). */
static int proc_cgroup(enum baseline_kind kind, pid_t pid, char **ret_path)
{
	char file[32] = "";
	FILE *f;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	int r = -ENOENT;

	if (pid)
		snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	f = fopen(pid ? file : "/proc/self/cgroup", "re");
	if (!f)
		return negerrno();
	while (getline(&line, &cap, f) > 0) {
		char *ctrl, *path;

		line[strcspn(line, "\n")] = '\0';
		/* hierarchy-id:controller-list:path; the v2 line is "0::path" */
		ctrl = strchr(line, ':');
		if (!ctrl)
			continue;
		*ctrl++ = '\0';
		path = strchr(ctrl, ':');
		if (!path)
			continue;
		*path++ = '\0';
		if (kind == BASELINE_V1 ? !list_has(ctrl, "devices")
					: strcmp(line, "0") != 0 || *ctrl != '\0')
			continue;
		*ret_path = strdup(path);
		r = *ret_path ? 0 : -ENOMEM;
		break;
	}
	fclose(f);
	return r;
}

/* The directory the scratch cgroup goes into: our own cgroup, seen through the mount. */
static int parent_dir(enum baseline_kind kind, char **ret_dir)
{
	_cleanup_free_ char *mnt = NULL, *root = NULL, *own = NULL;
	const char *rel;
	int r;

	r = find_mount(kind, &mnt, &root);
	if (r < 0)
		return r;
	r = proc_cgroup(kind, 0, &own);
	if (r < 0)
		return r;
	rel = own;
	/* A mount of a subtree shows paths below its root; anything else we cannot see
	 * through this mount, so fall back to the mount's top. */
	if (strcmp(root, "/") != 0) {
		size_t n = strlen(root);
		rel = strncmp(own, root, n) == 0 && (own[n] == '/' || own[n] == '\0') ? own + n
										      : "/";
	}
	if (strstr(rel, "/..") || strcmp(rel, "/") == 0)
		rel = "";
	if (asprintf(ret_dir, "%s%s", mnt, rel) < 0)
		return -ENOMEM;
	return 0;
}

int baseline_cgroup_of(enum baseline_kind kind, pid_t pid, char **ret_path, char **ret_dir)
{
	_cleanup_free_ char *mnt = NULL, *root = NULL, *path = NULL;
	size_t n;
	int r;

	r = find_mount(kind, &mnt, &root);
	if (r >= 0)
		r = proc_cgroup(kind, pid, &path);
	if (r < 0)
		return r;
	n = strcmp(root, "/") ? strlen(root) : 0;
	/* Only what this mount shows: the cgroup at or below the mount's root. */
	if (path[0] != '/' || strstr(path, "/..") || strncmp(path, root, n) ||
	    (path[n] != '/' && path[n] != '\0'))
		return -ENOENT;
	if (asprintf(ret_dir, "%s%s", mnt, strcmp(path + n, "/") ? path + n : "") < 0)
		return -ENOMEM;
	*ret_path = TAKE_PTR(path);
	return 0;
}

/* Is path (in a hierarchy) its top, or at or above the caller's own cgroup there? */
static bool holds_caller(enum baseline_kind kind, const char *path)
{
	_cleanup_free_ char *own = NULL, *dir = NULL;
	size_t n = strlen(path);

	if (!strcmp(path, "/"))
		return true;
	if (baseline_cgroup_of(kind, 0, &own, &dir) < 0)
		return true; /* cannot tell: do not risk our own */
	return !strncmp(own, path, n) && (own[n] == '/' || own[n] == '\0');
}

int baseline_container_cgroup(pid_t pid, char **ret_dir, char *why, size_t size)
{
	static const enum baseline_kind kinds[] = {BASELINE_V1, BASELINE_V2};
	int r = -ENOENT;
	bool refused = false;

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		_cleanup_free_ char *path = NULL, *dir = NULL;

		r = baseline_cgroup_of(kinds[i], pid, &path, &dir);
		if (r < 0)
			continue;
		if (holds_caller(kinds[i], path)) {
			/* v1 "/" is how a container of a v2 runtime looks on a hybrid host. */
			snprintf(why, size, "its %s cgroup %s is not its own",
				 kinds[i] == BASELINE_V1 ? "v1 devices" : "cgroup2", path);
			refused = true;
			continue;
		}
		*ret_dir = TAKE_PTR(dir);
		return 0;
	}
	/* A cgroup seen but not its own says more than a hierarchy not mounted. */
	if (refused)
		return -EPERM;
	if (r == -ENOENT)
		snprintf(why, size, "process %d is in no device cgroup this process can see",
			 (int)pid);
	return r;
}

/* Is process pid in the v1 devices cgroup v1 or below it? A process gone meanwhile is. */
static bool in_v1(pid_t pid, const char *v1)
{
	_cleanup_free_ char *path = NULL;
	size_t n = strcmp(v1, "/") ? strlen(v1) : 0;
	int r = proc_cgroup(BASELINE_V1, pid, &path);

	if (r == -ENOENT && kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	return r >= 0 && !strncmp(path, v1, n) && (path[n] == '/' || path[n] == '\0');
}

/* Every process of the cgroup2 directory dir and those below it (at most depth levels
 * down) is in v1 or below it. Returns 1 yes, 0 no (pid of the first that is not in
 * *ret_pid), or <0. */
static int only_in_v1(const char *dir, const char *v1, int depth, pid_t *ret_pid)
{
	_cleanup_free_ char *procs = NULL, *line = NULL;
	size_t cap = 0;
	DIR *d;
	FILE *f;
	int r = 1;

	if (asprintf(&procs, "%s/cgroup.procs", dir) < 0)
		return -ENOMEM;
	f = fopen(procs, "re");
	if (!f)
		return negerrno();
	while (r == 1 && getline(&line, &cap, f) > 0) {
		pid_t pid = (pid_t)strtol(line, NULL, 10);

		if (pid > 0 && !in_v1(pid, v1)) {
			*ret_pid = pid;
			r = 0;
		}
	}
	fclose(f);
	if (r != 1)
		return r;
	if (depth == 0)
		return -E2BIG; /* deeper than a container's cgroups go: not vouched for */
	d = opendir(dir);
	if (!d)
		return negerrno();
	for (struct dirent *e; r == 1 && (e = readdir(d));) {
		_cleanup_free_ char *sub = NULL;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (asprintf(&sub, "%s/%s", dir, e->d_name) < 0)
			r = -ENOMEM;
		else
			r = only_in_v1(sub, v1, depth - 1, ret_pid);
		if (r == -ENOENT)
			r = 1; /* removed meanwhile */
	}
	closedir(d);
	return r;
}

int baseline_container_unified(pid_t pid, const char *v1, char **ret_dir, char *why, size_t size)
{
	_cleanup_free_ char *path = NULL, *dir = NULL, *mnt = NULL, *root = NULL;
	pid_t other = 0;
	int r;

	if (find_mount(BASELINE_V2, &mnt, &root) < 0) {
		snprintf(why, size, "no cgroup2 hierarchy is mounted");
		return -ENODEV;
	}
	r = baseline_cgroup_of(BASELINE_V2, pid, &path, &dir);
	if (r == -ENOENT) {
		snprintf(why, size, "process %d is in no cgroup2 cgroup this process can see",
			 (int)pid);
		return r;
	}
	if (r < 0)
		return r;
	if (holds_caller(BASELINE_V2, path)) {
		snprintf(why, size, "its cgroup2 cgroup %s is not its own", path);
		return -EPERM;
	}
	r = only_in_v1(dir, v1, 8, &other);
	if (r == 0) {
		snprintf(why, size,
			 "its cgroup2 cgroup %s is not its own: process %d there is not in its v1"
			 " devices cgroup %s",
			 path, (int)other, v1);
		return -EPERM;
	}
	if (r == -E2BIG) {
		snprintf(why, size, "its cgroup2 cgroup %s nests too deep to be vouched for", path);
		return -EPERM;
	}
	if (r < 0)
		return r;
	*ret_dir = TAKE_PTR(dir);
	return 0;
}

int baseline_container_reporter(pid_t pid, char **ret_dir, char *why, size_t size)
{
	_cleanup_free_ char *v1 = NULL, *v1dir = NULL;
	int r = baseline_cgroup_of(BASELINE_V1, pid, &v1, &v1dir);

	return r < 0 ? r : baseline_container_unified(pid, v1, ret_dir, why, size);
}

static int write_file(const char *dir, const char *file, const char *text)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = strlen(text);
	ssize_t n;

	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	n = write(fd, text, len);
	if (n < 0)
		return negerrno();
	return (size_t)n == len ? 0 : -EIO;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	long r = syscall(SYS_bpf, cmd, attr, sizeof(*attr));

	return r < 0 ? negerrno() : (int)r;
}

/* Load {r0 = 0; exit} as a device program and attach it to the cgroup: every device
 * access of a task in it is refused with EPERM. ALLOW_MULTI so that programs further up
 * (a runtime's) still run too: access needs every one of them to agree. */
static int attach_deny_all(const char *dir)
{
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	static const char license[] = "GPL";
	_cleanup_close_ int prog = -1, cg = -1;
	union bpf_attr attr;
	int r;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = ARRAY_SIZE(insns);
	attr.license = (uint64_t)(uintptr_t)license;
	r = sys_bpf(BPF_PROG_LOAD, &attr); /* the kernel opens it O_CLOEXEC */
	if (r < 0)
		return r;
	prog = r;

	cg = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0)
		return negerrno();
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)cg;
	attr.attach_bpf_fd = (uint32_t)prog;
	attr.attach_type = BPF_CGROUP_DEVICE;
	attr.attach_flags = BPF_F_ALLOW_MULTI;
	/* The attachment holds its own reference: the program lives as long as the cgroup. */
	r = sys_bpf(BPF_PROG_ATTACH, &attr);
	return r < 0 ? r : 0;
}

/*
 * v1 on a hybrid host: the same run's cgroup on the cgroup2 hierarchy, below the caller's
 * own there as the v1 one is, holding the run alone, for the reporter of what the v1
 * rules decide (devwl-run(1), AUDIT). Without it (no cgroup2 mount, no ring buffers) the
 * run is enforced all the same, unreported.
 */
static void report_create(const char *name, struct baseline *b)
{
	_cleanup_free_ char *parent = NULL, *dir = NULL;

	if (parent_dir(BASELINE_V2, &parent) < 0 || asprintf(&dir, "%s/%s", parent, name) < 0)
		return;
	if (mkdir(dir, 0755) < 0 && (errno != EEXIST || rmdir(dir) < 0 || mkdir(dir, 0755) < 0))
		return;
	if (devwl_cgroup_set_reporter(b->cgroup, dir) < 0) {
		rmdir(dir);
		return;
	}
	b->report_dir = TAKE_PTR(dir);
}

/*
 * The cgroup the workload goes in, handed to devwl_cgroup_open(), which makes it deny every
 * device until a policy is applied. devwl-run programs it before any task is in it, and
 * its policy does not change, so the parent needs to be no cgroup of ours.
 */
static int create_kind(enum baseline_kind kind, const char *name, unsigned int flags,
		       struct baseline *ret)
{
	_cleanup_free_ char *parent = NULL, *dir = NULL;
	struct devwl_cgroup *cg = NULL;
	int r;

	r = parent_dir(kind, &parent);
	if (r < 0)
		return r;
	if (asprintf(&dir, "%s/%s", parent, name) < 0)
		return -ENOMEM;
	if (mkdir(dir, 0755) < 0) {
		if (errno != EEXIST)
			return negerrno();
		/* Left over by an earlier run whose pid we now have: reuse it only if empty. */
		if (rmdir(dir) < 0 || mkdir(dir, 0755) < 0)
			return negerrno();
	}
	/* v2: the program records what it refuses, for the audit (devwl-run(1), AUDIT). */
	r = devwl_cgroup_open(dir, DEVWL_CGROUP_RECORD_DENIALS | flags, &cg);
	if (r < 0) {
		rmdir(dir);
		return r;
	}
	ret->kind = kind;
	ret->dir = TAKE_PTR(dir);
	ret->cgroup = cg;
	ret->report_dir = NULL;
	if (kind == BASELINE_V1)
		report_create(name, ret);
	return 0;
}

int baseline_program(struct baseline *b, const struct devwl_node *node)
{
	if (!b || !b->cgroup)
		return -EOPNOTSUPP;
	return devwl_cgroup_apply(b->cgroup, node);
}

static int read_small(const char *dir, const char *file, char *buf, size_t size)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	n = read(fd, buf, size - 1);
	if (n < 0)
		return negerrno();
	buf[n] = '\0';
	return (int)n;
}

/* Does the existing cgroup already deny every device? */
static int denies_all(enum baseline_kind kind, const char *dir)
{
	char buf[64];
	_cleanup_close_ int cg = -1;
	union bpf_attr attr;
	int r;

	if (kind == BASELINE_V1) {
		/* An empty devices.list is a DENY node without exceptions. */
		r = read_small(dir, "devices.list", buf, sizeof(buf));
		return r < 0 ? r : r == 0;
	}
	cg = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0)
		return negerrno();
	memset(&attr, 0, sizeof(attr));
	attr.query.target_fd = (uint32_t)cg;
	attr.query.attach_type = BPF_CGROUP_DEVICE;
	r = sys_bpf(BPF_PROG_QUERY, &attr);
	/* Only root attaches programs to a cgroup only root could create: one is ours. */
	return r < 0 ? r : attr.query.prog_cnt > 0;
}

/* Remove the runs below top whose processes are all gone (rmdir refuses the others). */
static void collect_runs(const char *top)
{
	DIR *d = opendir(top);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && strncmp(e->d_name, "run-", 4) == 0)
			(void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	closedir(d);
}

/*
 * The process pid into run-PID below top (made, with the runs whose processes are all gone
 * removed first), which denies every device first as deny says (BASELINE_V1, _V2; _NONE:
 * no rules of its own). 0 and *ret_dir, or -errno with nothing left behind.
 */
static int enter_run(const char *top, const char *pid, enum baseline_kind deny, char **ret_dir)
{
	_cleanup_free_ char *dir = NULL;
	int r = 0;

	if (mkdir(top, 0755) < 0 && errno != EEXIST)
		return negerrno();
	collect_runs(top);
	if (asprintf(&dir, "%s/run-%s", top, pid) < 0)
		return -ENOMEM;
	/* Another run's collect_runs() may remove ours while it is still empty: again. */
	for (int tries = 0; tries < 8; tries++) {
		if (mkdir(dir, 0755) < 0 &&
		    (errno != EEXIST || rmdir(dir) < 0 || mkdir(dir, 0755) < 0)) {
			r = negerrno();
			if (r == -ENOENT || r == -EBUSY)
				continue;
			return r;
		}
		r = deny == BASELINE_V1	  ? write_file(dir, "devices.deny", "a")
		    : deny == BASELINE_V2 ? attach_deny_all(dir)
					  : 0;
		if (r >= 0)
			r = write_file(dir, "cgroup.procs", pid);
		/* Removed under us: gone (ENOENT) or going (ENODEV, its files dead). */
		if (r != -ENOENT && r != -ENODEV)
			break;
	}
	if (r < 0) {
		rmdir(dir);
		return r;
	}
	*ret_dir = TAKE_PTR(dir);
	return 0;
}

/*
 * v1 on a hybrid host: the calling process also into run-PID below name on the cgroup2
 * hierarchy, holding nothing but this run, so that whoever programs the run's v1 cgroup
 * can put a reporter there (devwld: baseline_container_reporter()). Best effort: without
 * it the run is enforced all the same, unreported.
 */
static void join_run_unified(const char *name, const char *pid)
{
	_cleanup_free_ char *parent = NULL, *top = NULL, *dir = NULL;

	if (parent_dir(BASELINE_V2, &parent) < 0 || asprintf(&top, "%s/%s", parent, name) < 0)
		return;
	(void)enter_run(top, pid, BASELINE_NONE, &dir);
}

int baseline_join_run(enum baseline_kind want, const char *name, struct baseline *ret)
{
	_cleanup_free_ char *parent = NULL, *top = NULL, *dir = NULL, *mnt = NULL, *root = NULL;
	enum baseline_kind kind = want;
	struct baseline b = BASELINE_INIT;
	char pid[32];
	int r;

	if (!name || !ret || strchr(name, '/'))
		return -EINVAL;
	if (kind == BASELINE_AUTO)
		kind = find_mount(BASELINE_V1, &mnt, &root) == 0 ? BASELINE_V1 : BASELINE_V2;
	if (kind != BASELINE_V1 && kind != BASELINE_V2)
		return -EINVAL;
	r = parent_dir(kind, &parent);
	if (r < 0)
		return r;
	/* Already in a run's (a --connect run started from another): stay, if it denies. */
	{
		const char *last = strrchr(parent, '/');
		size_t n = strlen(name);

		if (last && strncmp(last + 1, "run-", 4) == 0 && last - parent > (ptrdiff_t)n &&
		    strncmp(last - n, name, n) == 0 && last[-n - 1] == '/' &&
		    denies_all(kind, parent) == 1) {
			ret->kind = kind;
			ret->dir = TAKE_PTR(parent);
			return 0;
		}
	}
	/*
	 * The top holds no rules of its own, so that whoever programs a run's cgroup (devwld,
	 * for the container that run became) may grant there what its node grants; each run
	 * denies every device until then, and no run ever sees another's grants.
	 */
	if (asprintf(&top, "%s/%s", parent, name) < 0)
		return -ENOMEM;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	r = enter_run(top, pid, kind, &dir);
	if (r < 0)
		return r;
	if (kind == BASELINE_V1)
		join_run_unified(name, pid);
	b.kind = kind;
	b.dir = TAKE_PTR(dir);
	*ret = b;
	return 0;
}

int baseline_create(enum baseline_kind want, const char *name, unsigned int flags,
		    struct baseline *ret)
{
	_cleanup_free_ char *mnt = NULL, *root = NULL;

	if (!name || !ret || strchr(name, '/') || (flags & ~DEVWL_CGROUP_RECORD_ACCESSES))
		return -EINVAL;
	if (want == BASELINE_V1 || want == BASELINE_V2)
		return create_kind(want, name, flags, ret);
	if (want != BASELINE_AUTO)
		return -EINVAL;
	/* The v1 controller where it is mounted: a hybrid host's cgroup2 mount may be
	 * unable to hold the process (its controllers are bound to v1). */
	if (find_mount(BASELINE_V1, &mnt, &root) == 0)
		return create_kind(BASELINE_V1, name, flags, ret);
	return create_kind(BASELINE_V2, name, flags, ret);
}

int baseline_add(const struct baseline *b, pid_t pid)
{
	char buf[32];
	int r;

	if (!b || !b->dir)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	r = write_file(b->dir, "cgroup.procs", buf);
	if (r >= 0 && b->report_dir)
		(void)write_file(b->report_dir, "cgroup.procs", buf);
	return r;
}

int baseline_kill(const struct baseline *b)
{
	_cleanup_free_ char *path = NULL, *line = NULL;
	size_t cap = 0;
	int n = 0;
	FILE *f;

	if (!b || !b->dir)
		return 0;
	/* cgroup.kill (v2, 5.14+) also catches tasks forking while we read the list. */
	if (b->kind == BASELINE_V2)
		(void)write_file(b->dir, "cgroup.kill", "1");
	if (asprintf(&path, "%s/cgroup.procs", b->dir) < 0)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f)
		return negerrno();
	while (getline(&line, &cap, f) > 0) {
		pid_t pid = (pid_t)strtol(line, NULL, 10);
		if (pid > 0) {
			(void)kill(pid, SIGKILL);
			n++;
		}
	}
	fclose(f);
	return n;
}

int baseline_destroy(struct baseline *b)
{
	int r = 0;

	if (!b || !b->dir)
		return 0;
	devwl_cgroup_free(b->cgroup);
	b->cgroup = NULL;
	/* A task that has been reaped can still hold the cgroup for a moment. */
	for (int i = 0; i < 200; i++) {
		r = rmdir(b->dir) < 0 ? negerrno() : 0;
		if (r != -EBUSY)
			break;
		nanosleep(&(struct timespec){.tv_nsec = 5 * 1000 * 1000}, NULL);
	}
	if (r == -ENOENT)
		r = 0;
	for (int i = 0; b->report_dir && i < 200; i++) {
		if (rmdir(b->report_dir) == 0 || errno != EBUSY)
			break;
		nanosleep(&(struct timespec){.tv_nsec = 5 * 1000 * 1000}, NULL);
	}
	free(b->report_dir);
	b->report_dir = NULL;
	free(b->dir);
	b->dir = NULL;
	b->kind = BASELINE_NONE;
	return r;
}
