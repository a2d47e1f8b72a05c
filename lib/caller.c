/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Acting in the caller's context (see caller.h and KERNEL-NOTES "Acting in the caller's
 * context"). Resolution runs chrooted into the caller's root from its cwd or dirfd, so
 * "..", absolute symlinks and the caller's mounts behave as for the caller; an absolute
 * path's first lookup gets the same from RESOLVE_IN_ROOT on the caller's root fd
 * (caller_lookup_in_root), without the chroot. A path that
 * reaches a magic link is walked here one component at a time, so that "self" names the
 * caller and no link is followed as the handler; /dev/tty opens the caller's controlling
 * terminal, not ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/openat2.h>

#include "caller.h"
#include "procstatus.h"
#include "util.h"

/* Decimal without printf: the fast path does no formatting. Returns the end. */
static char *put_uint(char *p, unsigned long v)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

bool proc_link(char buf[PROC_LINK_MAX], pid_t tid, int dirfd, bool start)
{
	char *p = put_uint(buf, (unsigned long)tid);

	if (!start)
		p = put_str(p, "/root");
	else if (dirfd == AT_FDCWD)
		p = put_str(p, "/cwd");
	else if (dirfd < 0)
		return false;
	else
		p = put_uint(put_str(p, "/fd/"), (unsigned long)dirfd);
	*p = '\0';
	return true;
}

static int openat2_sys(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = {.flags = flags, .mode = 0, .resolve = resolve};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/*
 * Which object and which mount dirfd/path is (path "" for dirfd itself): equal triples
 * mean the same root, mounts included.
 */
static int root_identity(int dirfd, const char *path, uint64_t *mnt_id, ino_t *ino, dev_t *dev)
{
	struct statx stx;

	if (statx(dirfd, path, (*path ? 0 : AT_EMPTY_PATH) | AT_STATX_DONT_SYNC,
		  STATX_INO | STATX_MNT_ID, &stx) < 0)
		return negerrno();
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	*mnt_id = stx.stx_mnt_id;
	*ino = (ino_t)stx.stx_ino;
	*dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	return 0;
}

/*
 * Our own LSM label (AppArmor, SELinux, Smack: /proc/self/attr/current), to compare a
 * caller's with. EINVAL there means no such LSM: then no caller has a label either.
 */
static void read_own_label(struct devwl_caller *c)
{
	_cleanup_close_ int fd =
		openat(c->host_proc, "thread-self/attr/current", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, c->lsm_label, sizeof(c->lsm_label) - 1);

	c->lsm_labels = n >= 0;
	c->lsm_label[n > 0 ? n : 0] = '\0';
}

int caller_init(struct devwl_caller *c)
{
	struct stat st;

	memset(c, 0, sizeof(*c));
	c->host_root = c->host_cwd = c->host_proc = c->private_mnt = c->cached_root = -1;
	c->userns_fd = c->own_mntns = -1;
	c->host_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	c->host_cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	c->host_proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->host_root < 0 || c->host_cwd < 0 || c->host_proc < 0)
		goto fail;
	if (fstat(c->host_proc, &st) < 0)
		goto fail;
	c->proc_dev = st.st_dev;
	/*
	 * Held open: while a reference lasts the kernel keeps our user namespace's nsfs
	 * dentry, so a caller's ns/user in our namespace is found, not made and freed again
	 * at every look (1.8 µs a look unheld, 0.7 µs held, on this machine kind).
	 */
	c->userns_fd = openat(c->host_proc, "thread-self/ns/user", O_PATH | O_CLOEXEC);
	if (c->userns_fd < 0 || fstat(c->userns_fd, &st) < 0)
		goto fail;
	c->userns_dev = st.st_dev;
	c->userns_ino = st.st_ino;
	if (root_identity(c->host_root, "", &c->root_mnt_id, &c->root_ino, &c->root_dev) < 0)
		c->root_mnt_id = UINT64_MAX; /* unknown: always chroot */
	read_own_label(c);
	return 0;
fail:
	caller_done(c);
	return -errno ?: -EIO;
}

void caller_done(struct devwl_caller *c)
{
	closep(&c->host_root);
	closep(&c->host_cwd);
	closep(&c->host_proc);
	closep(&c->private_mnt);
	closep(&c->userns_fd);
	closep(&c->own_mntns);
	caller_forget(c);
	c->host_root = c->host_cwd = c->host_proc = c->private_mnt = c->userns_fd = -1;
	c->own_mntns = -1;
}

void caller_forget(struct devwl_caller *c)
{
	closep(&c->cached_root);
	c->cached_root = -1;
}

/*
 * The caller's root, opened through /proc/TID/root unless the cache holds it: statx named
 * it (mnt_id, ino, dev), and an open fd pins its mount and inode, so neither number can
 * name another object while the cache holds one. The cache takes a new root with the
 * identity of the fd itself, not of the name looked at before (the caller may chroot in
 * between). Returns a borrowed fd (*cached) or one to close.
 */
static int root_open(struct devwl_caller *c, const char *name, bool known, uint64_t mnt_id,
		     ino_t ino, dev_t dev, bool *cached)
{
	uint64_t fd_mnt_id = 0;
	ino_t fd_ino = 0;
	dev_t fd_dev = 0;
	int fd = -1;

	*cached = false;
	if (known && c->cached_root >= 0 && mnt_id == c->cached_mnt_id && ino == c->cached_ino &&
	    dev == c->cached_dev) {
		*cached = true;
		return c->cached_root;
	}
	fd = openat(c->host_proc, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !known || root_identity(fd, "", &fd_mnt_id, &fd_ino, &fd_dev) < 0)
		return fd;
	caller_forget(c);
	c->cached_root = fd;
	c->cached_mnt_id = fd_mnt_id;
	c->cached_ino = fd_ino;
	c->cached_dev = fd_dev;
	*cached = true;
	return fd;
}

/*
 * This thread's id, asked of the kernel once per thread: the calls of a granted mknod
 * check it, and gettid() is a system call each time.
 */
static pid_t this_tid(void)
{
	static __thread pid_t tid;

	if (!tid)
		tid = gettid();
	return tid;
}

/*
 * The first time a thread handles a call: give it its own root/cwd/umask (CLONE_FS) and
 * remember its credentials to return to.
 */
static int ensure_thread(struct devwl_caller *c)
{
	pid_t tid = this_tid();
	int n = 0;

	if (c->fs_tid == tid)
		return 0;
	if (unshare(CLONE_FS) < 0)
		return negerrno();
	c->saved_umask = umask(0);
	umask(c->saved_umask);
	c->saved_fsuid = (uid_t)syscall(SYS_setfsuid, -1);
	c->saved_fsgid = (gid_t)syscall(SYS_setfsgid, -1);
	n = (int)syscall(SYS_getgroups, DEVWL_CALLER_GROUPS_MAX, c->saved_groups);
	if (n < 0)
		return negerrno();
	c->saved_ngroups = n;
	n = thread_capget(c->saved_caps);
	if (n < 0)
		return n;
	c->fs_tid = tid;
	return 0;
}

int target_open(struct devwl_caller *c, struct devwl_target *t, pid_t tid, int dirfd,
		bool need_start)
{
	char buf[PROC_LINK_MAX];
	uint64_t mnt_id = 0;
	ino_t ino = 0;
	dev_t dev = 0;
	bool known = false;

	t->tid = tid;
	t->root_fd = t->start_fd = -1;
	t->have_creds = false;
	t->root_is_host = t->root_cached = false;
	proc_link(buf, tid, dirfd, false);
	/*
	 * A caller whose root is our own (same mount, same inode: devwl-run's usual case)
	 * resolves exactly as we do: one statx says so, and saves opening its root (the
	 * most expensive step of a CONTINUE) and the chroot. Another root seen last time
	 * (a container's every call) is taken from the cache.
	 */
	known = c->root_mnt_id != UINT64_MAX &&
		root_identity(c->host_proc, buf, &mnt_id, &ino, &dev) == 0;
	if (known && mnt_id == c->root_mnt_id && ino == c->root_ino && dev == c->root_dev) {
		t->root_fd = c->host_root;
		t->root_is_host = true;
	} else {
		t->root_fd = root_open(c, buf, known, mnt_id, ino, dev, &t->root_cached);
		if (t->root_fd < 0)
			return negerrno();
	}
	if (!need_start)
		return 0;
	if (!proc_link(buf, tid, dirfd, true))
		return -EBADF;
	/* The object itself, as the caller holds it (O_PATH never opens a driver). */
	t->start_fd = openat(c->host_proc, buf, O_PATH | O_CLOEXEC);
	if (t->start_fd < 0)
		return errno == ENOENT && dirfd != AT_FDCWD ? -EBADF : negerrno();
	return 0;
}

void target_close(struct devwl_target *t)
{
	if (!t->root_is_host && !t->root_cached)
		closep(&t->root_fd);
	t->root_is_host = t->root_cached = false;
	closep(&t->start_fd);
	t->root_fd = t->start_fd = -1;
}

/* The last whitespace-separated number on the line at p. */
static long last_number(const char *p)
{
	const char *end = strchrnul(p, '\n');
	const char *q = end;

	while (q > p && (q[-1] == ' ' || q[-1] == '\t'))
		q--;
	while (q > p && q[-1] >= '0' && q[-1] <= '9')
		q--;
	return strtol(q, NULL, 10);
}

int target_read_creds(struct devwl_caller *c, struct devwl_target *t)
{
	struct devwl_creds *cr = &t->creds;
	const char *p = NULL;
	char path[64];
	struct stat st;
	unsigned long v[4];
	ssize_t n = 0;

	if (t->have_creds)
		return 0;
	n = devwl_proc_status_read(c->host_proc, t->tid, c->status, sizeof(c->status));
	if (n < 0)
		return (int)n;
	if ((size_t)n == sizeof(c->status) - 1)
		return -E2BIG;

	p = devwl_proc_status_field(c->status, "Umask");
	if (!p)
		return -EIO;
	cr->umask = (mode_t)strtoul(p, NULL, 8);
	p = devwl_proc_status_field(c->status, "Tgid");
	if (!p)
		return -EIO;
	cr->tgid = (pid_t)strtol(p, NULL, 10);
	p = devwl_proc_status_field(c->status, "NStgid");
	cr->ns_tgid = p ? (pid_t)last_number(p) : cr->tgid;
	p = devwl_proc_status_field(c->status, "NSpid");
	cr->ns_tid = p ? (pid_t)last_number(p) : t->tid;
	/* Uid:/Gid: real, effective, saved, filesystem. */
	p = devwl_proc_status_field(c->status, "Uid");
	if (!p || sscanf(p, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -EIO;
	cr->fsuid = (uid_t)v[3];
	p = devwl_proc_status_field(c->status, "Gid");
	if (!p || sscanf(p, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -EIO;
	cr->fsgid = (gid_t)v[3];
	p = devwl_proc_status_field(c->status, "CapEff");
	if (!p)
		return -EIO;
	cr->cap_eff = strtoull(p, NULL, 16);
	cr->ngroups = 0;
	p = devwl_proc_status_field(c->status, "Groups");
	if (!p)
		return -EIO;
	while (*p && *p != '\n') {
		char *end = NULL;
		unsigned long g = strtoul(p, &end, 10);

		if (end == p)
			break;
		if (cr->ngroups == DEVWL_CALLER_GROUPS_MAX)
			return -E2BIG;
		cr->groups[cr->ngroups++] = (gid_t)g;
		p = end;
		while (*p == ' ')
			p++;
	}
	/* Which user namespace: its capabilities count only in ours (0.7 µs to ask). */
	*put_str(put_uint(path, (unsigned long)t->tid), "/ns/user") = '\0';
	if (fstatat(c->host_proc, path, &st, 0) < 0)
		return negerrno();
	cr->same_userns = st.st_dev == c->userns_dev && st.st_ino == c->userns_ino;
	cr->userns_ino = st.st_ino;
	t->have_creds = true;
	return 0;
}

int caller_enter(struct devwl_caller *c, struct devwl_target *t)
{
	int r = 0;

	if (c->broken)
		return -EIO;
	r = ensure_thread(c);
	if (r < 0)
		return r;
	/* Our own root (target_open): no chroot, which also needs no CAP_SYS_CHROOT. */
	if (t->root_is_host) {
		if (t->start_fd >= 0) {
			if (fchdir(t->start_fd) < 0)
				return negerrno();
			c->moved = true;
		}
		return 0;
	}
	if (fchdir(t->root_fd) < 0)
		return negerrno();
	c->inside = true;
	if (chroot(".") < 0 || (t->start_fd >= 0 && fchdir(t->start_fd) < 0)) {
		r = negerrno();
		caller_leave(c);
		return r;
	}
	return 0;
}

/*
 * Only what differs is switched, and leave() restores only what was switched: a caller
 * with our own ids, groups and capabilities (root in our user namespace, the common case
 * under devwl-run) costs no credential syscalls at all.
 *
 * The capabilities are the caller's whole effective set where it lives in our user
 * namespace (so far as we hold them), none where it does not: what its capabilities
 * there allow is over objects of its namespace, which ours cannot express, so a container
 * root is under-granted, never over-granted. Every other capability of ours (ptrace,
 * syslog, raw I/O, admin) is dropped: the kernel records the opener's set in the file
 * and drivers and procfs check it at open (DESIGN.md, "Grants").
 */
int caller_become(struct devwl_caller *c, struct devwl_target *t, uint64_t extra_caps)
{
	const struct devwl_creds *cr = &t->creds;
	struct __user_cap_data_struct caps[2];
	uint64_t eff = 0, perm = 0, saved_eff = 0;

	int r = 0;

	if (!t->have_creds)
		return -EINVAL;
	/* Our umask is switched too: only in a thread that has its own (enter() or not). */
	r = ensure_thread(c);
	if (r < 0)
		return r;
	c->as_caller = true;
	if ((cr->umask & 0777) != c->saved_umask) {
		umask(cr->umask & 0777);
		c->umask_changed = true;
	}
	/* An unprivileged supervisor cannot setgroups, but serving its own user it need not. */
	if (cr->ngroups != (size_t)c->saved_ngroups ||
	    memcmp(cr->groups, c->saved_groups, cr->ngroups * sizeof(gid_t)) != 0) {
		if (syscall(SYS_setgroups, cr->ngroups, cr->groups) < 0)
			return negerrno();
		c->groups_changed = true;
	}
	if (cr->fsuid != c->saved_fsuid || cr->fsgid != c->saved_fsgid) {
		c->ids_changed = true;
		syscall(SYS_setfsgid, cr->fsgid);
		syscall(SYS_setfsuid, cr->fsuid);
		/* setfs*id never fail: read back to see whether the kernel took the ids. */
		if ((gid_t)syscall(SYS_setfsgid, -1) != cr->fsgid ||
		    (uid_t)syscall(SYS_setfsuid, -1) != cr->fsuid)
			return -EPERM;
	}
	saved_eff = (uint64_t)c->saved_caps[0].effective | (uint64_t)c->saved_caps[1].effective
								   << 32;
	perm = (uint64_t)c->saved_caps[0].permitted | (uint64_t)c->saved_caps[1].permitted << 32;
	eff = ((cr->same_userns ? cr->cap_eff : 0) | extra_caps) & perm;
	/* A change of fsuid also changed the effective set: then set it whatever it is. */
	if (eff == saved_eff && !c->ids_changed)
		return 0;
	c->caps_changed = true;
	memcpy(caps, c->saved_caps, sizeof(caps));
	caps[0].effective = (uint32_t)eff;
	caps[1].effective = (uint32_t)(eff >> 32);
	return thread_capset(caps);
}

bool caller_switched(const struct devwl_caller *c)
{
	return c->ids_changed || c->groups_changed || c->caps_changed;
}

void caller_leave(struct devwl_caller *c)
{
	if (c->as_caller) {
		/* fsuid back to 0 first: the kernel then re-raises fs caps; capset makes it exact.
		 */
		if (c->ids_changed) {
			syscall(SYS_setfsuid, c->saved_fsuid);
			syscall(SYS_setfsgid, c->saved_fsgid);
			if ((uid_t)syscall(SYS_setfsuid, -1) != c->saved_fsuid)
				c->broken = true;
		}
		if ((c->caps_changed && thread_capset(c->saved_caps) < 0) ||
		    (c->groups_changed &&
		     syscall(SYS_setgroups, c->saved_ngroups, c->saved_groups) < 0))
			c->broken = true;
		if (c->umask_changed)
			umask(c->saved_umask);
		c->as_caller = c->ids_changed = c->caps_changed = false;
		c->groups_changed = c->umask_changed = false;
	}
	if (c->inside) {
		/* Never stay in a container's root: it would pin its mounts and fool us. */
		if (fchdir(c->host_root) < 0 || chroot(".") < 0 || fchdir(c->host_cwd) < 0)
			c->broken = true;
		c->inside = false;
		c->moved = false;
	}
	if (c->moved) {
		if (fchdir(c->host_cwd) < 0)
			c->broken = true;
		c->moved = false;
	}
}

#define PROC_ROOT_INO  1
#define WALK_LINKS_MAX 40 /* the kernel's MAXSYMLINKS */

static bool on_procfs(int fd)
{
	struct statfs sfs;

	return fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

/* Is fd (whose stat is st) the root of a procfs, where "self" and PID directories live? */
static bool is_proc_root(int fd, const struct stat *st)
{
	return st->st_ino == PROC_ROOT_INO && S_ISDIR(st->st_mode) && on_procfs(fd);
}

static bool is_number(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/*
 * Where pid 1 of a procfs instance is kept from us (a security module guarding it), its
 * pid namespace shows through the entry numbered as the caller is in its own namespace:
 * that entry's ns/pid link, but only if the instance numbers that process in one pid
 * namespace alone (NSpid: one number), i.e. the process lives in the instance's own
 * namespace. The link's length, or -1. Uses c->status as scratch: target_read_creds()
 * has taken what it needs from the caller's status already.
 */
static ssize_t own_entry_ns(struct devwl_caller *c, int proc_root, pid_t ns_tgid, char *buf,
			    size_t size)
{
	char path[48];
	const char *p = NULL;
	ssize_t n = 0;

	n = devwl_proc_status_read(proc_root, ns_tgid, c->status, sizeof(c->status));
	if (n < 0 || (size_t)n == sizeof(c->status) - 1)
		return -1; /* unread, or a line cut short */
	p = devwl_proc_status_field(c->status, "NSpid");
	if (!p || strcspn(p, " \t\n") != strcspn(p, "\n"))
		return -1;
	*put_str(put_uint(path, (unsigned long)ns_tgid), "/ns/pid") = '\0';
	return readlinkat(proc_root, path, buf, size);
}

/*
 * The caller's tgid (and tid) as the procfs instance at proc_root numbers them: the host
 * ids on our own procfs; on another instance its innermost ids, but only once that
 * instance is shown to belong to the caller's own pid namespace (its pid 1 lives there).
 * Anything else cannot be mapped: -EPERM.
 */
static int caller_ids_in(struct devwl_caller *c, struct devwl_target *t, int proc_root,
			 pid_t *ret_tgid, pid_t *ret_tid)
{
	char mine[64], theirs[64], path[48];
	struct stat st;
	ssize_t a = 0, b = 0;
	int r = target_read_creds(c, t);

	if (r < 0)
		return r;
	if (fstat(proc_root, &st) < 0)
		return negerrno();
	if (st.st_dev == c->proc_dev) {
		*ret_tgid = t->creds.tgid;
		*ret_tid = t->tid;
		return 0;
	}
	*put_str(put_uint(path, (unsigned long)t->creds.tgid), "/ns/pid") = '\0';
	a = readlinkat(c->host_proc, path, mine, sizeof(mine) - 1);
	b = readlinkat(proc_root, "1/ns/pid", theirs, sizeof(theirs) - 1);
	if (b < 0 && a > 0)
		b = own_entry_ns(c, proc_root, t->creds.ns_tgid, theirs, sizeof(theirs) - 1);
	if (a <= 0 || a != b || memcmp(mine, theirs, (size_t)a) != 0)
		return -EPERM;
	*ret_tgid = t->creds.ns_tgid;
	*ret_tid = t->creds.ns_tid;
	return 0;
}

/*
 * Put text before the unwalked rest of the path (both in c->walk), with a slash between
 * them when there is a rest or the link was named with a trailing slash.
 */
static int walk_push(struct devwl_caller *c, const char *text, size_t tlen, const char *rest,
		     bool slash)
{
	size_t rlen = strlen(rest);
	size_t sep = rlen || slash ? 1 : 0;

	if (tlen + sep + rlen + 1 > sizeof(c->walk[0]))
		return -ENAMETOOLONG;
	memcpy(c->walk[1], text, tlen);
	if (sep)
		c->walk[1][tlen] = '/';
	memcpy(c->walk[1] + tlen + sep, rest, rlen + 1);
	memcpy(c->walk[0], c->walk[1], tlen + sep + rlen + 1);
	return 0;
}

/*
 * Resolve, one component at a time, a path that reaches a magic link — /proc/self/fd/N,
 * /dev/stdin, /proc/PID/root/..., a symlink to one — as the caller's own lookup would:
 * inside its root (we are chrooted there), "self" and "thread-self" of any procfs naming
 * the caller, magic links followed only in the caller's own /proc/PID directories
 * (another process's: -EACCES, which is what an unprivileged caller gets). Symlinks are
 * read and expanded here, so that nothing is resolved as the handler. Returns an O_PATH
 * fd or -errno as the caller's open would fail.
 */
static int walk(struct devwl_caller *c, struct devwl_target *t, const char *path, int oflags,
		uint64_t resolve, int *ret_fd, bool *ret_magic)
{
	uint64_t step_resolve = (resolve & RESOLVE_NO_XDEV) | RESOLVE_NO_MAGICLINKS;
	_cleanup_close_ int cur = -1;
	bool own_pid = false, cur_proc_root = false;
	int links = 0, r = 0;
	char *p = NULL;

	if (strlen(path) + 1 > sizeof(c->walk[0]))
		return -ENAMETOOLONG;
	strcpy(c->walk[0], path);
	cur = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return negerrno();
	{
		struct stat st;

		/* "cd /proc; open self/fd/3": the start may be a procfs root itself. */
		cur_proc_root = fstat(cur, &st) == 0 && is_proc_root(cur, &st);
	}
	p = c->walk[0];
	for (;;) {
		char name[NAME_MAX + 1];
		struct stat st;
		size_t len = 0;
		bool last = false, slash = false, follow = false;
		int next = -1;
		ssize_t n = 0;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		len = strcspn(p, "/");
		if (len > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		slash = *p == '/';
		while (*p == '/')
			p++;
		last = !*p;
		if (strcmp(name, ".") == 0)
			continue;
		next = openat2_sys(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC, step_resolve);
		if (next < 0)
			return negerrno();
		if (fstat(next, &st) < 0) {
			r = negerrno();
			close(next);
			return r;
		}
		if (!S_ISLNK(st.st_mode)) {
			/*
			 * Entering /proc/PID: is it the caller's own (any of its threads)?
			 * Its task/TID directories stay its own.
			 */
			if (cur_proc_root && is_number(name, len)) {
				pid_t tgid = 0, tid = 0;
				long v = strtol(name, NULL, 10);

				own_pid = caller_ids_in(c, t, cur, &tgid, &tid) == 0 &&
					  (v == tgid || v == tid);
			}
			closep(&cur);
			cur = next;
			/* A procfs root: its "self" and its PID directories mean something. */
			cur_proc_root = is_proc_root(cur, &st);
			if ((!last || slash) && !S_ISDIR(st.st_mode))
				return -ENOTDIR;
			continue;
		}
		follow = !last || slash || !(oflags & O_NOFOLLOW);
		if (!follow) {
			closep(&cur);
			cur = next;
			break;
		}
		if ((resolve & RESOLVE_NO_SYMLINKS) || ++links > WALK_LINKS_MAX) {
			close(next);
			return -ELOOP;
		}
		if (on_procfs(next)) {
			bool thread = strcmp(name, "thread-self") == 0;

			if (cur_proc_root && (thread || strcmp(name, "self") == 0)) {
				char ids[48], *e = ids;
				pid_t tgid = 0, tid = 0;

				close(next);
				*ret_magic = true;
				r = caller_ids_in(c, t, cur, &tgid, &tid);
				if (r < 0)
					return r;
				e = put_uint(e, (unsigned long)tgid);
				if (thread) {
					e = put_str(e, "/task/");
					e = put_uint(e, (unsigned long)tid);
				}
				r = walk_push(c, ids, (size_t)(e - ids), p, slash);
				if (r < 0)
					return r;
				p = c->walk[0];
				continue;
			}
			n = readlinkat(next, "", c->pathbuf, sizeof(c->pathbuf) - 1);
			if (n > 0 && c->pathbuf[0] != '/' && !memchr(c->pathbuf, ':', (size_t)n)) {
				/* An ordinary procfs symlink ("self/mounts"): expand it. */
				close(next);
				r = walk_push(c, c->pathbuf, (size_t)n, p, slash);
				if (r < 0)
					return r;
				p = c->walk[0];
				continue;
			}
			/* A magic link: let the kernel jump, only in the caller's own /proc/PID. */
			close(next);
			*ret_magic = true;
			if (!own_pid)
				return -EACCES;
			if (resolve & RESOLVE_NO_XDEV)
				return -EXDEV;
			next = openat(cur, name, O_PATH | O_CLOEXEC);
			if (next < 0)
				return negerrno();
			own_pid = false;
			closep(&cur);
			cur = next;
			if (fstat(cur, &st) < 0)
				return negerrno();
			cur_proc_root = is_proc_root(cur, &st);
			if ((!last || slash) && !S_ISDIR(st.st_mode))
				return -ENOTDIR;
			continue;
		}
		n = readlinkat(next, "", c->pathbuf, sizeof(c->pathbuf) - 1);
		close(next);
		if (n <= 0)
			return n < 0 ? negerrno() : -ENOENT;
		if (c->pathbuf[0] == '/') {
			closep(&cur);
			cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (cur < 0)
				return negerrno();
			cur_proc_root = fstat(cur, &st) == 0 && is_proc_root(cur, &st);
		}
		r = walk_push(c, c->pathbuf, (size_t)n, p, slash);
		if (r < 0)
			return r;
		p = c->walk[0];
	}
	*ret_fd = TAKE_FD(cur);
	return 0;
}

bool caller_own_trouble(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM || err == EINTR || err == EAGAIN;
}

int caller_lookup(struct devwl_caller *c, struct devwl_target *t, const char *path, int oflags,
		  uint64_t resolve, int *ret_fd, bool *ret_walked)
{
	uint64_t flags = O_PATH | O_CLOEXEC | (uint64_t)(oflags & O_NOFOLLOW);
	int fd = -1, err = 0;

	*ret_walked = false;
	fd = openat2_sys(AT_FDCWD, path, flags, resolve | RESOLVE_NO_MAGICLINKS);
	if (fd >= 0) {
		*ret_fd = fd;
		return 0;
	}
	err = errno;
	/*
	 * Resolved as ourselves, a path through /proc/self fails where the caller's may not
	 * (ENOENT: we have no fd 99, it has) and a magic link fails ELOOP: walk the path as
	 * the caller, unless our own resources failed or the caller's flags make the kernel
	 * refuse magic links anyway (ELOOP; EXDEV in scoped lookups) — then the error stands.
	 * A walk that met no procfs "self" and no magic link agrees with the lookup above.
	 */
	if (caller_own_trouble(err) || (resolve & (RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS |
						   RESOLVE_IN_ROOT | RESOLVE_BENEATH)))
		return -err;
	/*
	 * "self" and magic links are symlinks: a failure reached without following one is
	 * the caller's failure too. One lookup says so, cheaper than a walk (most failing
	 * opens are library searches through plain directories).
	 */
	if (err != ELOOP) {
		fd = openat2_sys(AT_FDCWD, path, flags, resolve | RESOLVE_NO_SYMLINKS);
		if (fd >= 0)
			close(fd); /* appeared meanwhile: walk it */
		else if (errno != ELOOP)
			return -err;
	}
	return walk(c, t, path, oflags, resolve, ret_fd, ret_walked);
}

/* Errors of a scoped lookup that say nothing about the caller's own lookup: a magic link
 * (the walk decides), a racing rename or mount (the kernel's EAGAIN, EXDEV), our own
 * resources. */
static bool in_root_undecided(int err)
{
	return err == ELOOP || err == EXDEV || caller_own_trouble(err);
}

int caller_lookup_in_root(struct devwl_caller *c, struct devwl_target *t, const char *path,
			  int oflags, int *ret_fd)
{
	uint64_t flags = O_PATH | O_CLOEXEC | (uint64_t)(oflags & O_NOFOLLOW);
	int fd = -1, err = 0;

	if (path[0] != '/' || c->broken || c->inside || t->root_fd < 0)
		return 1;
	fd = openat2_sys(t->root_fd, path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	if (fd >= 0) {
		*ret_fd = fd;
		return 0;
	}
	err = errno;
	if (in_root_undecided(err))
		return 1;
	/* As caller_lookup: a failure reached without following a symlink is the
	 * caller's failure too ("self" and magic links are symlinks). */
	fd = openat2_sys(t->root_fd, path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);
	if (fd >= 0) {
		close(fd); /* appeared meanwhile */
		return 1;
	}
	return in_root_undecided(errno) ? 1 : -err;
}

/* The caller's open flags for opening the device node it resolved to, for it. */
static int reopen_flags(int oflags)
{
	/*
	 * O_NOCTTY: a terminal opened for the caller must not become ours. O_EXCL means
	 * something only without O_CREAT: an exclusive claim on a block device, kept.
	 */
	if (oflags & O_CREAT)
		oflags &= ~O_EXCL;
	oflags &= ~(O_CREAT | O_NOFOLLOW | O_TRUNC | O_DIRECTORY | O_PATH | O_TMPFILE | O_CLOEXEC);
	return oflags | O_CLOEXEC | O_NOCTTY;
}

/*
 * A driver's open may wait (a tty for carrier, a busy sound or tape device): never on a
 * handling thread, which serves other callers too. The device is opened O_NONBLOCK and
 * made blocking after, as asked: where the driver would have waited, the caller gets its
 * answer to a non-blocking open (EBUSY, EAGAIN) at once instead.
 */
static int open_nowait(int dirfd, const char *name, int oflags, int extra)
{
	int fd = openat(dirfd, name, reopen_flags(oflags) | extra | O_NONBLOCK);

	if (fd >= 0 && !(oflags & O_NONBLOCK) &&
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		int r = negerrno();

		close(fd);
		return r;
	}
	return fd < 0 ? negerrno() : fd;
}

int caller_reopen(struct devwl_caller *c, int opath_fd, int oflags, int *ret_fd)
{
	char buf[48];
	char *p = NULL;
	int fd = -1;

	p = put_str(buf, "thread-self/fd/");
	p = put_uint(p, (unsigned long)opath_fd);
	*p = '\0';
	fd = open_nowait(c->host_proc, buf, oflags, 0);
	if (fd < 0)
		return fd;
	*ret_fd = fd;
	return 0;
}

/* The caller's controlling terminal as /proc/TID/stat says (tty_nr), 0 for none. */
static int ctty_of(struct devwl_caller *c, struct devwl_target *t, dev_t *ret)
{
	_cleanup_close_ int fd = -1;
	char path[48];
	const char *q = NULL;
	unsigned long v = 0;
	ssize_t n = 0;

	*put_str(put_uint(path, (unsigned long)t->tid), "/stat") = '\0';
	fd = openat(c->host_proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	n = read(fd, c->status, sizeof(c->status) - 1);
	if (n <= 0)
		return n < 0 ? negerrno() : -EIO;
	c->status[n] = '\0';
	/* After "(comm)": state ppid pgrp session tty_nr. comm may hold ')' itself. */
	q = strrchr(c->status, ')');
	if (!q || sscanf(q + 1, " %*c %*d %*d %*d %lu", &v) != 1)
		return -EIO;
	*ret = makedev((v >> 8) & 0xfff, (v & 0xff) | ((v >> 12) & 0xfff00));
	return 0;
}

int caller_open_ctty(struct devwl_caller *c, struct devwl_target *t, int oflags, int *ret_fd)
{
	char path[48], name[24] = "";
	struct dirent *de = NULL;
	DIR *d = NULL;
	dev_t tty = 0, node_dev = 0;
	ino_t node_ino = 0;
	int dfd = -1, fd = -1, r = 0, seen = 0;

	r = ctty_of(c, t, &tty);
	if (r < 0)
		return r;
	if (tty == 0)
		return -ENXIO; /* what the kernel answers a caller without one */
	*put_str(put_uint(path, (unsigned long)t->tid), "/fd") = '\0';
	dfd = openat(c->host_proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return negerrno();
	d = fdopendir(dfd);
	if (!d) {
		r = negerrno();
		close(dfd);
		return r;
	}
	/*
	 * The terminal itself is reached through an fd the caller holds on it. Two nodes
	 * with that number (the same index in two devpts instances) are ambiguous: refuse.
	 */
	while ((de = readdir(d)) && seen++ < 4096) {
		struct stat st;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(name))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISCHR(st.st_mode) ||
		    st.st_rdev != tty)
			continue;
		if (name[0] && (st.st_dev != node_dev || st.st_ino != node_ino)) {
			closedir(d);
			return -EPERM;
		}
		node_dev = st.st_dev;
		node_ino = st.st_ino;
		strcpy(name, de->d_name);
	}
	if (!name[0] || seen > 4096) {
		closedir(d);
		return -EPERM;
	}
	/* As the kernel's /dev/tty: the terminal's own node permissions are not checked. */
	fd = open_nowait(dirfd(d), name, oflags, 0);
	r = fd < 0 ? fd : 0;
	closedir(d);
	if (r < 0)
		return r;
	*ret_fd = fd;
	return 0;
}

/* path's parent into c->pathbuf ("." for a bare name), its last part into *ret_name. */
static int parent_name(struct devwl_caller *c, const char *path, const char **ret_name)
{
	const char *slash = strrchr(path, '/');

	*ret_name = path;
	if (slash) {
		size_t len = (size_t)(slash - path);

		if (len >= sizeof(c->pathbuf))
			return -ENAMETOOLONG;
		if (len == 0)
			len = 1; /* "/name" */
		memcpy(c->pathbuf, path, len);
		c->pathbuf[len] = '\0';
		*ret_name = slash + 1;
	} else {
		strcpy(c->pathbuf, ".");
	}
	return 0;
}

int caller_parent(struct devwl_caller *c, const char *path, const char **ret_name)
{
	int pfd = parent_name(c, path, ret_name);

	if (pfd < 0)
		return pfd;
	pfd = openat2_sys(AT_FDCWD, c->pathbuf, O_PATH | O_DIRECTORY | O_CLOEXEC,
			  RESOLVE_NO_MAGICLINKS);
	return pfd < 0 ? negerrno() : pfd;
}

int caller_parent_in_root(struct devwl_caller *c, struct devwl_target *t, const char *path,
			  const char **ret_name, int *ret_fd)
{
	int fd = -1;

	if (path[0] != '/' || c->broken || c->inside || t->root_fd < 0)
		return 1;
	fd = parent_name(c, path, ret_name);
	if (fd < 0)
		return fd;
	fd = openat2_sys(t->root_fd, c->pathbuf, O_PATH | O_DIRECTORY | O_CLOEXEC,
			 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	if (fd >= 0) {
		*ret_fd = fd;
		return 0;
	}
	return in_root_undecided(errno) ? 1 : negerrno();
}

int caller_mknod(int dir, const char *name, mode_t mode, dev_t dev, struct stat *ret_st,
		 int *ret_node)
{
	_cleanup_close_ int node = -1;
	struct stat st = {0};
	int r = 0;

	if (mknodat(dir, name, mode, dev) < 0)
		r = negerrno();
	/*
	 * The node just made, as an fd: what a bind over it must name, whatever the path.
	 * Its fstat names it for a restarted call too (one stat, not a second by name); a
	 * node that is not the one made (swapped under us) is not taken, and then the name
	 * is looked at as for EEXIST.
	 */
	if (r == 0 && ret_node) {
		node = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (node >= 0 && (fstat(node, &st) < 0 || st.st_rdev != dev ||
				  (st.st_mode & S_IFMT) != (mode & S_IFMT)))
			closep(&node);
	}
	if (node < 0 &&
	    ((r != 0 && r != -EEXIST) || fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0))
		st = (struct stat){0};
	*ret_st = st;
	if (ret_node)
		*ret_node = TAKE_FD(node);
	return r;
}

int caller_proc(const struct devwl_caller *c)
{
	return c->host_proc;
}

int caller_may_open(int opath_fd, int oflags)
{
	int want = 0;

	switch (oflags & O_ACCMODE) {
	case O_RDONLY:
		want = R_OK;
		break;
	case O_WRONLY:
		want = W_OK;
		break;
	default:
		want = R_OK | W_OK;
		break;
	}
	/* AT_EACCESS: judge with the fsuid/fsgid/groups we took on, not the real ids. */
	if (syscall(SYS_faccessat2, opath_fd, "", want, AT_EACCESS | AT_EMPTY_PATH) < 0)
		return negerrno();
	return 0;
}

/* A tmpfs no path reaches (fsopen, fsmount: never attached), with the options given. */
static int new_tmpfs(const char *const *opts)
{
	_cleanup_close_ int fs = -1;
	int mnt = -1;

	fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return negerrno();
	for (; *opts; opts += 2)
		if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, opts[0], opts[1], 0) < 0)
			return negerrno();
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return negerrno();
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSUID);
	return mnt < 0 ? negerrno() : mnt;
}

/*
 * The private tmpfs, made once: no path reaches it, so only devwl can put nodes there. Its
 * root is searchable (0711) so that a node in it can be opened as a caller; only fds of
 * ours name it.
 */
static int private_mount(struct devwl_caller *c)
{
	static const char *const opts[] = {"mode", "0711", NULL};

	if (c->private_mnt < 0)
		c->private_mnt = new_tmpfs(opts);
	return c->private_mnt;
}

/* "c-MAJOR-MINOR" or "b-MAJOR-MINOR" into name (at least 48 bytes). */
static void private_name(char *name, mode_t type, dev_t rdev)
{
	char *p = name;

	*p++ = type == S_IFCHR ? 'c' : 'b';
	*p++ = '-';
	p = put_uint(p, major(rdev));
	*p++ = '-';
	p = put_uint(p, minor(rdev));
	*p = '\0';
}

int caller_private_node(struct devwl_caller *c, mode_t type, dev_t rdev)
{
	char name[48];
	struct stat st;
	int mnt = private_mount(c);

	if (mnt < 0)
		return mnt;
	if (type != S_IFCHR && type != S_IFBLK)
		return -EINVAL;
	private_name(name, type, rdev);
	/*
	 * World-openable: nothing but our fds reaches it, and the caller's own node has been
	 * judged (caller_may_open) before it is opened through this one as the caller.
	 */
	if (mknodat(mnt, name, type | 0666, rdev) < 0 && errno != EEXIST)
		return negerrno();
	if (fchmodat(mnt, name, 0666, 0) < 0)
		return negerrno();
	/* Ours by construction; check anyway before a driver is opened through it. */
	if (fstatat(mnt, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return negerrno();
	if ((st.st_mode & S_IFMT) != type || st.st_rdev != rdev)
		return -EIO;
	return 0;
}

int caller_open_private(struct devwl_caller *c, mode_t type, dev_t rdev, int oflags, int *ret_fd)
{
	char name[48];
	int fd = -1;

	if (c->private_mnt < 0 || (type != S_IFCHR && type != S_IFBLK))
		return -EINVAL;
	private_name(name, type, rdev);
	fd = open_nowait(c->private_mnt, name, oflags, O_NOFOLLOW);
	if (fd < 0)
		return fd;
	*ret_fd = fd;
	return 0;
}

/* The mount namespace we return to after acting in a caller's (caller_bind_node). */
static int own_mntns(struct devwl_caller *c)
{
	if (c->own_mntns < 0)
		c->own_mntns = openat(c->host_proc, "self/ns/mnt", O_RDONLY | O_CLOEXEC);
	return c->own_mntns < 0 ? negerrno() : c->own_mntns;
}

/* Back in our mount namespace, root and cwd; a thread that cannot return is broken. */
static void return_home(struct devwl_caller *c, int home)
{
	if (setns(home, CLONE_NEWNS) < 0 || fchdir(c->host_root) < 0 || chroot(".") < 0 ||
	    fchdir(c->host_cwd) < 0)
		c->broken = true;
}

/*
 * Into the caller's mount namespace ns (this thread alone: it did unshare(CLONE_FS)),
 * where node_fd's mount lives, to bind tree over it; had the thread id been reused by a
 * process of another namespace, move_mount refuses a target outside the current one.
 */
static int move_into(struct devwl_caller *c, int home, int ns, int tree, int node_fd)
{
	int r = 0;

	if (setns(ns, CLONE_NEWNS) < 0)
		return negerrno();
	if (syscall(SYS_move_mount, tree, "", node_fd, "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		r = negerrno();
	return_home(c, home);
	return c->broken ? -EIO : r;
}

/*
 * The twins' tmpfs: one per caller mount namespace, made at its first twin and kept by
 * the process (every handler thread and the hot-plug path share it), so that a twin
 * costs a mknod and a clone, not a superblock made (fsopen, fsconfig, fsmount) and torn
 * down (the close of a detached mount waits for an RCU grace period) each time.
 *
 * Keyed by the namespace's 64-bit id (NS_GET_MNTNS_ID), which the kernel never reuses,
 * so a key cannot come to name another namespace; the tmpfs holds no reference to the
 * namespace, which goes as it would. A namespace's entry goes when TWIN_NS_MAX others
 * were used since (least recently used first), or when its tmpfs is full: closing our fd
 * frees nothing that is bound, since each bind holds the superblock (and the names of
 * its twins, which the caller needs to bind its node elsewhere: a bind of an unlinked
 * file fails ENOENT). Each twin's name is the number of a slot that remembers its inode,
 * dropped when devwl unmounts the twin or removes its node (caller_unbind_twin,
 * caller_twin_forget); a caller that unmounts a twin itself
 * leaves its name until the tmpfs goes. TWIN_SLOTS bounds each tmpfs (nr_inodes too: a loop of
 * mknods the caller unmounts itself fills one, which is then replaced), and TWIN_NS_MAX the number
 * kept: memory stays bounded whatever the workload does. While our fd holds the superblock its
 * device number names it alone: that is how a twin is recognised (caller_unbind_twin).
 */
#define TWIN_NS_MAX	      64
#define TWIN_SLOTS	      511
#define TWIN_INODES	      "512"			/* the slots and the root */
#define DEVWL_NS_GET_MNTNS_ID _IOR(0xb7, 0x5, uint64_t) /* <linux/nsfs.h>, 6.10 */

/*
 * The names twins are bound at (their nodes' last components), counted by a hash of
 * each in twin_names: a trapped unlink or rename whose last component counts none names
 * no twin of ours and goes to the kernel unlooked at, for the lookup as the caller costs
 * a walk each call and can wait on a FUSE server that is the caller itself. In the
 * caller's namespace the kernel refuses to rename or unlink a mount point (EBUSY), so a
 * twin's name changes only by devwl's own rename, which counts the new one; one renamed
 * from another namespace, where it is no mount point, is missed and stays EBUSY, as
 * without DEVWL_FILTER_TWINS. Two names in one bucket cost only a lookup.
 */
#define TWIN_NAME_BUCKETS 1024

struct twin_slot {
	ino_t ino;     /* the twin named by the slot's number, or 0: free */
	int32_t named; /* its name's bucket in twin_names, or -1: not counted */
};

struct twin_fs {
	uint64_t ns_id; /* 0: a free slot */
	dev_t dev;
	int mnt;
	uint64_t used;
	struct twin_slot *slot; /* TWIN_SLOTS of them */
};

static struct twin_fs twin_fs[TWIN_NS_MAX];
static uint32_t twin_names[TWIN_NAME_BUCKETS];
static uint64_t twin_clock;
static pthread_mutex_t twin_lock = PTHREAD_MUTEX_INITIALIZER;

static void unlock_twins(pthread_mutex_t **m)
{
	if (*m)
		pthread_mutex_unlock(*m);
}

static int twin_ns_id(int ns, uint64_t *ret_id)
{
	uint64_t id = 0;

	if (ioctl(ns, DEVWL_NS_GET_MNTNS_ID, &id) < 0)
		return negerrno();
	*ret_id = id;
	return 0;
}

/* The bucket in twin_names of path's last component; -1: path has none. */
static int32_t twin_bucket(const char *path)
{
	size_t end = path ? strlen(path) : 0, start;
	uint32_t h = 2166136261u; /* FNV-1a */

	while (end > 0 && path[end - 1] == '/')
		end--;
	for (start = end; start > 0 && path[start - 1] != '/';)
		start--;
	if (start == end)
		return -1;
	for (size_t i = start; i < end; i++)
		h = (h ^ (unsigned char)path[i]) * 16777619u;
	return (int32_t)(h % TWIN_NAME_BUCKETS);
}

/* Under twin_lock: slot s of a tmpfs no longer holds a twin. */
static void twin_slot_free(struct twin_slot *s)
{
	if (s->ino && s->named >= 0)
		twin_names[s->named]--;
	*s = (struct twin_slot){.named = -1};
}

static void twin_fs_drop(struct twin_fs *f)
{
	closep(&f->mnt);
	for (size_t i = 0; f->slot && i < TWIN_SLOTS; i++)
		twin_slot_free(&f->slot[i]);
	free(f->slot);
	*f = (struct twin_fs){.mnt = -1};
}

/* Under twin_lock: ns_id's entry, or NULL. */
static struct twin_fs *twin_fs_find(uint64_t ns_id)
{
	for (size_t i = 0; i < TWIN_NS_MAX; i++)
		if (twin_fs[i].ns_id == ns_id && twin_fs[i].mnt >= 0)
			return &twin_fs[i];
	return NULL;
}

/* A fresh twins' tmpfs into f (a free entry): 0 or -errno, f free again on failure. */
static int twin_fs_get_unkept(struct twin_fs *f)
{
	static const char *const opts[] = {"mode",	"0711",	     "size", "4k",
					   "nr_inodes", TWIN_INODES, NULL};
	struct stat st;

	f->slot = calloc(TWIN_SLOTS, sizeof(*f->slot));
	if (!f->slot)
		return -ENOMEM;
	f->mnt = new_tmpfs(opts);
	if (f->mnt < 0 || fstat(f->mnt, &st) < 0) {
		int r = f->mnt < 0 ? f->mnt : negerrno();

		twin_fs_drop(f);
		return r;
	}
	f->dev = st.st_dev;
	return 0;
}

/* Under twin_lock: ns_id's entry, made (in the least recently used slot) if need be. */
static int twin_fs_get(uint64_t ns_id, struct twin_fs **ret)
{
	struct twin_fs *f = twin_fs_find(ns_id), *lru = &twin_fs[0];
	int r = 0;

	if (!f) {
		for (size_t i = 0; i < TWIN_NS_MAX; i++) {
			if (twin_fs[i].ns_id == 0) {
				lru = &twin_fs[i];
				break;
			}
			if (twin_fs[i].used < lru->used)
				lru = &twin_fs[i];
		}
		if (lru->ns_id)
			twin_fs_drop(lru);
		r = twin_fs_get_unkept(lru);
		if (r < 0)
			return r;
		lru->ns_id = ns_id;
		f = lru;
	}
	f->used = ++twin_clock;
	*ret = f;
	return 0;
}

/* The twin's name: its slot's number. */
static void twin_name(char name[24], size_t slot)
{
	*put_uint(name, (unsigned long)slot) = '\0';
}

/* Under twin_lock: the twin of the node st describes on f, cloned (open_tree), to be
 * bound at a name whose bucket is named (-1: not counted). */
static int twin_make(struct twin_fs *f, const struct stat *st, int32_t named)
{
	struct stat made;
	char name[24];
	size_t i = 0;
	int tree = -1;
	bool chowned = false;

	while (i < TWIN_SLOTS && f->slot[i].ino)
		i++;
	if (i == TWIN_SLOTS)
		return -ENOSPC;
	twin_name(name, i);
	/*
	 * The twin: the same device, owner and mode as the node it stands in for. Made with
	 * its mode at once (no path reaches this tmpfs, so no one sees it before it is
	 * right), then changed only where it differs: our umask, an owner other than us.
	 * The mode goes last: a chown clears the set-id bits.
	 */
	if (mknodat(f->mnt, name, (st->st_mode & (S_IFMT | 0777)), st->st_rdev) < 0)
		return negerrno();
	if (fstatat(f->mnt, name, &made, AT_SYMLINK_NOFOLLOW) < 0)
		goto fail;
	chowned = made.st_uid != st->st_uid || made.st_gid != st->st_gid;
	if (chowned && fchownat(f->mnt, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
		goto fail;
	if (((made.st_mode & 07777) != (st->st_mode & 07777) ||
	     (chowned && (st->st_mode & 06000))) &&
	    fchmodat(f->mnt, name, st->st_mode & 07777, 0) < 0)
		goto fail;
	tree = (int)syscall(SYS_open_tree, f->mnt, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		goto fail;
	f->slot[i] = (struct twin_slot){.ino = made.st_ino, .named = named};
	if (named >= 0)
		twin_names[named]++;
	return tree;
fail:
	tree = negerrno();
	unlinkat(f->mnt, name, 0);
	return tree;
}

/* Under twin_lock: the twin ino on f is unbound: its name goes, its slot serves again (a
 * bind the caller made of it elsewhere stays). */
static void twin_drop_name(struct twin_fs *f, ino_t ino)
{
	char name[24];

	for (size_t i = 0; i < TWIN_SLOTS; i++) {
		if (f->slot[i].ino != ino)
			continue;
		twin_name(name, i);
		if (unlinkat(f->mnt, name, 0) == 0 || errno == ENOENT)
			twin_slot_free(&f->slot[i]);
		return;
	}
}

bool caller_twin_named(const char *path)
{
	int32_t b = twin_bucket(path);
	bool named = false;

	if (b < 0)
		return false;
	pthread_mutex_lock(&twin_lock);
	named = twin_names[b] > 0;
	pthread_mutex_unlock(&twin_lock);
	return named;
}

int caller_twin_tree(int ns, const struct stat *st, const char *name)
{
	_cleanup_(unlock_twins) pthread_mutex_t *lock = NULL;
	struct twin_fs *f = NULL;
	uint64_t ns_id = 0;
	int r = twin_ns_id(ns, &ns_id);

	/*
	 * A kernel without namespace ids (before 6.10): a tmpfs for this twin alone, as
	 * before, not kept (its bind holds it); its node's unlink and rename stay EBUSY.
	 */
	if (r == -ENOTTY || r == -EINVAL) {
		struct twin_fs one = {.mnt = -1};

		r = twin_fs_get_unkept(&one);
		if (r == 0)
			r = twin_make(&one, st, -1);
		twin_fs_drop(&one);
		return r;
	}
	if (r < 0)
		return r;
	pthread_mutex_lock(&twin_lock);
	lock = &twin_lock;
	r = twin_fs_get(ns_id, &f);
	if (r < 0)
		return r;
	r = twin_make(f, st, twin_bucket(name));
	/* Full: a fresh tmpfs; what is bound keeps the old one alive. */
	if (r == -ENOSPC) {
		twin_fs_drop(f);
		r = twin_fs_get(ns_id, &f);
		if (r == 0)
			r = twin_make(f, st, twin_bucket(name));
	}
	return r;
}

/*
 * Is the object st describes, a mount root (statx says) in the namespace ns_id, a twin of
 * ours there? Under twin_lock: its entry, or NULL.
 */
static struct twin_fs *twin_of(uint64_t ns_id, const struct statx *stx)
{
	struct twin_fs *f = NULL;

	if (!(stx->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    !(stx->stx_attributes & STATX_ATTR_MOUNT_ROOT) ||
	    (!S_ISCHR(stx->stx_mode) && !S_ISBLK(stx->stx_mode)))
		return NULL;
	f = twin_fs_find(ns_id);
	return f && f->dev == makedev(stx->stx_dev_major, stx->stx_dev_minor) ? f : NULL;
}

int caller_bind_node(struct devwl_caller *c, struct devwl_target *t, int node_fd,
		     const struct stat *node_st, const char *name)
{
	_cleanup_close_ int tree = -1, ns = -1;
	char path[48];
	int home = -1;

	if (c->broken || c->inside || c->as_caller || c->fs_tid != this_tid())
		return -EINVAL;
	home = own_mntns(c);
	if (home < 0)
		return home;
	if (!S_ISCHR(node_st->st_mode) && !S_ISBLK(node_st->st_mode))
		return -EINVAL;
	*put_str(put_uint(path, (unsigned long)t->tid), "/ns/mnt") = '\0';
	ns = openat(c->host_proc, path, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		return negerrno();
	tree = caller_twin_tree(ns, node_st, name);
	if (tree < 0)
		return tree;
	return move_into(c, home, ns, tree, node_fd);
}

/*
 * In the caller's namespace ns, unmount the mount node_fd is on: named through our own
 * procfs's magic link (relative to it, since the caller's root is ours after setns),
 * which names that mount alone; umount refuses a mount of another namespace.
 */
static int umount_in(struct devwl_caller *c, int home, int ns, int node_fd)
{
	char path[48];
	int r = 0;

	*put_uint(put_str(path, "thread-self/fd/"), (unsigned long)node_fd) = '\0';
	if (setns(ns, CLONE_NEWNS) < 0)
		return negerrno();
	if (fchdir(c->host_proc) < 0 || umount2(path, MNT_DETACH) < 0)
		r = negerrno();
	return_home(c, home);
	return c->broken ? -EIO : r;
}

int caller_unbind_twin(struct devwl_caller *c, struct devwl_target *t, int node_fd)
{
	_cleanup_(unlock_twins) pthread_mutex_t *lock = NULL;
	_cleanup_close_ int ns = -1;
	struct twin_fs *f = NULL;
	struct statx stx;
	uint64_t ns_id = 0;
	char path[48];
	int home = -1, r = 0;

	if (c->broken || c->inside || c->as_caller || c->fs_tid != this_tid())
		return -EINVAL;
	if (statx(node_fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_INO, &stx) < 0)
		return negerrno();
	*put_str(put_uint(path, (unsigned long)t->tid), "/ns/mnt") = '\0';
	ns = openat(c->host_proc, path, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		return negerrno();
	r = twin_ns_id(ns, &ns_id);
	if (r < 0)
		return r;
	pthread_mutex_lock(&twin_lock);
	lock = &twin_lock;
	f = twin_of(ns_id, &stx);
	if (!f)
		return 0;
	home = own_mntns(c);
	if (home < 0)
		return home;
	r = umount_in(c, home, ns, node_fd);
	if (r < 0)
		return r;
	twin_drop_name(f, (ino_t)stx.stx_ino);
	return 1;
}

void caller_twin_forget(int ns, const struct stat *st)
{
	_cleanup_(unlock_twins) pthread_mutex_t *lock = NULL;
	struct twin_fs *f = NULL;
	uint64_t ns_id = 0;

	if (twin_ns_id(ns, &ns_id) < 0)
		return;
	pthread_mutex_lock(&twin_lock);
	lock = &twin_lock;
	f = twin_fs_find(ns_id);
	if (f && f->dev == st->st_dev)
		twin_drop_name(f, st->st_ino);
}

int caller_foreign_lsm(struct devwl_caller *c, struct devwl_target *t)
{
	char path[48], label[sizeof(c->lsm_label)];
	_cleanup_close_ int fd = -1;
	ssize_t n = 0;

	if (!c->lsm_labels)
		return 0;
	*put_str(put_uint(path, (unsigned long)t->tid), "/attr/current") = '\0';
	fd = openat(c->host_proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	n = read(fd, label, sizeof(label) - 1);
	if (n < 0)
		return negerrno();
	label[n] = '\0';
	return strcmp(label, c->lsm_label) != 0;
}
