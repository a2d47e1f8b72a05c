/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Device nodes placed in a running process's root (devwl.h, devwl_node_place). The
 * target owns everything below its root and may change it while we work, so its paths
 * are never resolved as a whole: /proc/PID/root gives a directory fd in the target's own
 * mounts, each component is opened alone from the last with symlinks refused (an
 * absolute one would resolve against our root, the host's), and once the parent is open
 * every call works on that fd or on an O_PATH fd of the node itself, never on the name
 * again.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/openat2.h>

#include "devwl.h"
#include "fileio.h"
#include "gate.h"
#include "place.h"
#include "util.h"

#define PLACE_FLAGS (DEVWL_PLACE_MKDIR | DEVWL_PLACE_TWIN | DEVWL_PLACE_CONFINED)

/* The kernel's dev_t for mknod is 32 bits: a 12-bit major and a 20-bit minor. */
#define PLACE_MAJOR_MAX 0xfffu
#define PLACE_MINOR_MAX 0xfffffu
/* uid_map holds at most 340 lines of three 10-digit numbers. */
#define PLACE_IDMAP_MAX 65536

/* The process the pidfd names, held by fds so that its pid is not used again. */
struct target {
	pid_t pid;
	int proc; /* /proc/PID */
	int root; /* its "/", in its mount namespace */
};

static void target_close(struct target *t)
{
	closep(&t->proc);
	closep(&t->root);
}

static int parse_u32(const char **p, uint32_t *ret)
{
	char *end = NULL;
	unsigned long long v = 0;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(*p, &end, 10);
	if (errno || v > UINT32_MAX)
		return -EINVAL;
	*p = end;
	*ret = (uint32_t)v;
	return 0;
}

int place_idmap_lookup(const char *map, uint32_t id, uint32_t *ret_id)
{
	const char *p = map;
	uint32_t found = 0;
	bool mapped = false;

	/* Read to the end: a text with a line that is no map line is not the kernel's map. */
	while (*p) {
		uint32_t first = 0, lower = 0, count = 0;

		if (*p == '\n') {
			p++;
			continue;
		}
		if (parse_u32(&p, &first) < 0 || parse_u32(&p, &lower) < 0 ||
		    parse_u32(&p, &count) < 0)
			return -EINVAL;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p && *p != '\n')
			return -EINVAL;
		if ((uint64_t)first + count > (uint64_t)UINT32_MAX + 1 ||
		    (uint64_t)lower + count > (uint64_t)UINT32_MAX + 1)
			return -EINVAL;
		if (!mapped && id >= first && (uint64_t)id < (uint64_t)first + count) {
			found = lower + (id - first);
			mapped = true;
		}
	}
	if (!mapped)
		return -ENOENT;
	*ret_id = found;
	return 0;
}

/* "a regular file", "character device 1:5": what a refusal names. */
static const char *describe(const struct stat *st, char *buf, size_t size)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFCHR:
	case S_IFBLK:
		snprintf(buf, size, "%s device %u:%u", S_ISCHR(st->st_mode) ? "character" : "block",
			 major(st->st_rdev), minor(st->st_rdev));
		return buf;
	case S_IFDIR:
		return "a directory";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFREG:
		return "a regular file";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	default:
		return "a file of unknown type";
	}
}

static int check_device(const char *path, int type, uint32_t major, uint32_t minor,
			struct devwl_error *err)
{
	if (type != DEVWL_DEV_CHAR && type != DEVWL_DEV_BLOCK)
		return devwl_error_set(
			err, -EINVAL, 0,
			"%s: device type %d is not DEVWL_DEV_CHAR or DEVWL_DEV_BLOCK", path, type);
	if (major > PLACE_MAJOR_MAX || minor > PLACE_MINOR_MAX)
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: device %" PRIu32 ":%" PRIu32
				       " is beyond the kernel's 12-bit major or 20-bit minor",
				       path, major, minor);
	return 0;
}

/*
 * An absolute path of components a device node can be made at: no "." or ".." (the walk
 * goes down only), no trailing '/' (a node is not a directory); runs of '/' are one.
 */
static int check_path(const char *path, struct devwl_error *err)
{
	size_t len = 0, i = 0;

	if (!path)
		return devwl_error_set(err, -EINVAL, 0, "no path");
	len = strnlen(path, PATH_MAX);
	if (len >= PATH_MAX)
		return devwl_error_set(err, -ENAMETOOLONG, 0,
				       "path \"%.64s...\" is %d bytes or longer (PATH_MAX)", path,
				       PATH_MAX);
	if (path[0] != '/')
		return devwl_error_set(err, -EINVAL, 0,
				       "path \"%s\" is not absolute: it names a file as the target "
				       "sees it, from its \"/\"",
				       path);
	if (path[len - 1] == '/')
		return devwl_error_set(err, -EINVAL, len - 1,
				       "path \"%s\" ends in '/': a device node is not a directory",
				       path);
	while (i < len) {
		size_t n = 0;

		while (path[i] == '/')
			i++;
		n = strcspn(path + i, "/");
		if ((n == 1 && path[i] == '.') || (n == 2 && path[i] == '.' && path[i + 1] == '.'))
			return devwl_error_set(
				err, -EINVAL, i,
				"path \"%s\": component \"%.*s\" at byte %zu refused: "
				"the walk does not go up or stay",
				path, (int)n, path + i, i);
		if (n > NAME_MAX)
			return devwl_error_set(err, -ENAMETOOLONG, i,
					       "path \"%.64s...\": component at byte %zu is %zu "
					       "bytes, more than NAME_MAX (%d)",
					       path, i, n, NAME_MAX);
		i += n;
	}
	return 0;
}

/* The pid in this pid namespace of the process pidfd names (0: not in it, -1: reaped). */
static int pidfd_pid(int pidfd, long *ret_pid)
{
	char name[64];
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	const char *line = NULL;
	ssize_t n = 0;

	snprintf(name, sizeof(name), "/proc/thread-self/fdinfo/%d", pidfd);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	n = devwl_read_all(fd, 16384, &text);
	if (n < 0)
		return (int)n;
	line = strstr(text, "\nPid:");
	if (!line && strncmp(text, "Pid:", 4) == 0)
		line = text;
	else if (line)
		line++;
	if (!line)
		return -EBADF;
	*ret_pid = strtol(line + 4, NULL, 10);
	return 0;
}

static int pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 ? negerrno() : 0;
}

/*
 * Open the target's /proc/PID and root, then check that the pidfd's process is still
 * alive: the pid it had cannot have named another process in between.
 */
static int target_open(int pidfd, struct target *t, struct devwl_error *err)
{
	char name[32];
	long pid = 0;
	int r = 0;

	t->pid = 0;
	t->proc = t->root = -1;
	if (pidfd < 0)
		return devwl_error_set(err, -EBADF, 0, "pidfd %d is not a file descriptor", pidfd);
	r = pidfd_alive(pidfd);
	/* EPERM: alive, only not ours to signal; /proc says whether it is ours to enter. */
	if (r == -ESRCH)
		return devwl_error_set(err, -ESRCH, 0, "pidfd %d: the process has exited", pidfd);
	if (r == -EBADF || r == -EINVAL)
		return devwl_error_set(err, -EBADF, 0, "fd %d is not a pidfd (pidfd_open(2))",
				       pidfd);
	if (r < 0 && r != -EPERM)
		return devwl_error_set(err, r, 0, "pidfd %d: pidfd_send_signal: %s", pidfd,
				       strerror(-r));
	r = pidfd_pid(pidfd, &pid);
	if (r == -EBADF)
		return devwl_error_set(err, -EBADF, 0, "fd %d is not a pidfd: no Pid in its fdinfo",
				       pidfd);
	if (r < 0)
		return devwl_error_set(err, r, 0, "pidfd %d: reading its fdinfo: %s", pidfd,
				       strerror(-r));
	if (pid < 0)
		return devwl_error_set(err, -ESRCH, 0, "pidfd %d: the process has exited", pidfd);
	if (pid == 0 || pid > INT_MAX)
		return devwl_error_set(err, -ESRCH, 0,
				       "pidfd %d: the process is not in this pid namespace", pidfd);
	t->pid = (pid_t)pid;
	snprintf(name, sizeof(name), "/proc/%ld", pid);
	t->proc = open(name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->proc < 0)
		return devwl_error_set(err, errno == ENOENT ? -ESRCH : negerrno(), 0,
				       "process %ld: %s: %m", pid, name);
	/* Following the magic link is the point: it is the target's root, mounts and all. */
	t->root = openat(t->proc, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->root < 0) {
		/* ENOENT: it has exited and is a zombie, its fs context gone. */
		r = errno == ENOENT ? -ESRCH : negerrno();
		if (r == -ESRCH)
			return devwl_error_set(err, r, 0, "process %ld has exited: %s/root is gone",
					       pid, name);
		return devwl_error_set(
			err, r, 0, "process %ld: opening %s/root: %s%s", pid, name, strerror(-r),
			r == -EACCES || r == -EPERM ? " (needs CAP_SYS_PTRACE, or the same uid)"
						    : "");
	}
	r = pidfd_alive(pidfd);
	if (r == -ESRCH)
		return devwl_error_set(err, -ESRCH, 0,
				       "process %ld has exited while its root was opened", pid);
	return 0;
}

/* The target's id of its user namespace as this process's, through /proc/PID/{u,g}id_map. */
static int target_map_id(const struct target *t, const char *what, uint32_t id, uint32_t *ret,
			 struct devwl_error *err)
{
	const char *file = strcmp(what, "uid") == 0 ? "uid_map" : "gid_map";
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	ssize_t n = 0;
	int r = 0;

	fd = openat(t->proc, file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return devwl_error_set(err, errno == ENOENT ? -ESRCH : negerrno(), 0,
				       "process %d: /proc/%d/%s: %m", (int)t->pid, (int)t->pid,
				       file);
	n = devwl_read_all(fd, PLACE_IDMAP_MAX, &text);
	if (n < 0)
		return devwl_error_set(err, (int)n, 0, "process %d: reading /proc/%d/%s: %s",
				       (int)t->pid, (int)t->pid, file, strerror((int)-n));
	r = place_idmap_lookup(text, id, ret);
	if (r == -ENOENT)
		return devwl_error_set(err, -EINVAL, 0,
				       "process %d: %s %" PRIu32
				       " is not mapped in its user namespace (/proc/%d/%s)",
				       (int)t->pid, what, id, (int)t->pid, file);
	if (r < 0)
		return devwl_error_set(err, -EIO, 0, "process %d: /proc/%d/%s is not an id map",
				       (int)t->pid, (int)t->pid, file);
	return 0;
}

static int open_path_nofollow(int dir, const char *name)
{
	return openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * Owner, then the exact mode (chown drops set-id bits; mknod and mkdir apply the umask),
 * through an O_PATH fd: a name could meanwhile be a symlink out of the target's root.
 * chmod goes through /proc/thread-self/fd (this thread's table, even a private one):
 * fchmod refuses O_PATH fds, and fchmodat follows the name.
 */
static int set_owner_mode(int fd, uid_t uid, gid_t gid, mode_t mode)
{
	char name[40];

	if (fchownat(fd, "", uid, gid, AT_EMPTY_PATH) < 0)
		return negerrno();
	snprintf(name, sizeof(name), "/proc/thread-self/fd/%d", fd);
	if (chmod(name, mode) < 0)
		return negerrno();
	return 0;
}

/*
 * Is fd what we just made under dir with permission bits 0: of that type, on dir's mount
 * (a mount point is not a fresh inode), still 0000? Else the target swapped it for one of
 * its own, which must not be given away.
 */
static bool is_fresh(int dir, int fd, mode_t type, dev_t rdev)
{
	uint64_t dmnt = 0, mnt = 0;
	struct stat st;

	if (fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) != type || (st.st_mode & 07777) != 0)
		return false;
	if (type != S_IFDIR && st.st_rdev != rdev)
		return false;
	return devwl_fd_mount_id(dir, &dmnt) == 0 && devwl_fd_mount_id(fd, &mnt) == 0 &&
	       dmnt == mnt;
}

/* Why the component path[off..off+len) could not be entered, for the error. */
static int walk_refusal(const struct target *t, const char *path, size_t off, size_t len, int cur,
			const char *name, int r, struct devwl_error *err)
{
	char link[PATH_MAX], what[64];
	struct stat st;
	ssize_t n = 0;

	if (r == -ELOOP || r == -ENOTDIR) {
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
			n = readlinkat(cur, name, link, sizeof(link) - 1);
			link[n > 0 ? n : 0] = '\0';
			/* The target wrote it: no line break of its reaches a one-line protocol. */
			for (char *c = link; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					*c = '?';
			return devwl_error_set(err, -ELOOP, off,
					       "process %d: %s: \"%.*s\" is a symbolic link (to "
					       "\"%s\"): refused, a path is not followed through "
					       "links",
					       (int)t->pid, path, (int)(off + len), path, link);
		}
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return devwl_error_set(err, -ENOTDIR, off,
					       "process %d: %s: \"%.*s\" is %s, not a directory",
					       (int)t->pid, path, (int)(off + len), path,
					       describe(&st, what, sizeof(what)));
	}
	if (r == -ENOENT)
		return devwl_error_set(err, -ENOENT, off,
				       "process %d: %s: directory \"%.*s\" does not exist "
				       "(DEVWL_PLACE_MKDIR makes it)",
				       (int)t->pid, path, (int)(off + len), path);
	return devwl_error_set(err, r, off, "process %d: %s: opening \"%.*s\": %s", (int)t->pid,
			       path, (int)(off + len), path, strerror(-r));
}

/*
 * Files are made with the fsuid and fsgid of their owner-to-be. A file system the
 * target's user namespace mounted (a runtime's /dev tmpfs in a user-namespace container)
 * refuses an inode whose owner it cannot map, EOVERFLOW, and host root is unmapped there.
 * The change of fsuid drops the file system capabilities from the effective set, so they
 * are set again from the permitted set; all of it is per thread, and undone by as_self().
 */
struct self {
	bool changed;
	uid_t fsuid;
	gid_t fsgid;
	struct __user_cap_data_struct caps[2];
};

static int as_owner(uid_t uid, gid_t gid, struct self *self)
{
	int r;

	self->changed = false;
	self->fsuid = (uid_t)syscall(SYS_setfsuid, -1);
	self->fsgid = (gid_t)syscall(SYS_setfsgid, -1);
	if (self->fsuid == uid && self->fsgid == gid)
		return 0;
	r = thread_capget(self->caps);
	if (r < 0)
		return r;
	self->changed = true;
	syscall(SYS_setfsgid, gid);
	syscall(SYS_setfsuid, uid);
	if ((uid_t)syscall(SYS_setfsuid, -1) != uid || (gid_t)syscall(SYS_setfsgid, -1) != gid)
		return -EPERM;
	return thread_capset(self->caps);
}

static void as_self(const struct self *self)
{
	if (!self->changed)
		return;
	syscall(SYS_setfsuid, self->fsuid);
	syscall(SYS_setfsgid, self->fsgid);
	(void)thread_capset(self->caps);
}

/* Make the missing directory name under cur: 0755, owned as the target's "/". */
static int make_dir(const struct target *t, const char *path, size_t off, size_t len, int cur,
		    const char *name, struct devwl_error *err)
{
	_cleanup_close_ int fd = -1;
	struct self self;
	struct stat root;
	int r = 0;

	if (fstat(t->root, &root) < 0)
		return devwl_error_set(err, negerrno(), 0, "process %d: its root: %m", (int)t->pid);
	r = as_owner(root.st_uid, root.st_gid, &self);
	if (r >= 0 && mkdirat(cur, name, 0) < 0)
		r = negerrno();
	as_self(&self);
	if (r < 0) {
		if (r == -EEXIST)
			return 0; /* made meanwhile: the walk opens it like any other */
		return devwl_error_set(err, r, off, "process %d: %s: making \"%.*s\": %s",
				       (int)t->pid, path, (int)(off + len), path, strerror(-r));
	}
	fd = open_path_nofollow(cur, name);
	if (fd < 0 || !is_fresh(cur, fd, S_IFDIR, 0))
		return devwl_error_set(err, -EEXIST, off,
				       "process %d: %s: the directory \"%.*s\" devwl made was "
				       "replaced at once: left as it is",
				       (int)t->pid, path, (int)(off + len), path);
	r = set_owner_mode(fd, root.st_uid, root.st_gid, 0755);
	if (r < 0) {
		(void)unlinkat(cur, name, AT_REMOVEDIR);
		return devwl_error_set(err, r, off,
				       "process %d: %s: owning the new directory \"%.*s\" as its "
				       "\"/\" (%u:%u): %s",
				       (int)t->pid, path, (int)(off + len), path,
				       (unsigned int)root.st_uid, (unsigned int)root.st_gid,
				       strerror(-r));
	}
	return 0;
}

/*
 * Walk path's directories down from the target's root, one component each, symlinks
 * refused. On success *ret_dir is the last directory and *ret_off where the final
 * component starts in path. mkdir: make what is missing (make_dir).
 */
static int walk_parents(const struct target *t, const char *path, bool mkdir, int *ret_dir,
			size_t *ret_off, struct devwl_error *err)
{
	_cleanup_close_ int cur = -1;
	size_t i = 0;
	int r = 0;

	cur = fcntl(t->root, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return devwl_error_set(err, negerrno(), 0, "dup: %m");
	for (;;) {
		struct open_how how = {
			.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH,
		};
		char name[NAME_MAX + 1];
		size_t n = 0;
		int next = -1;

		while (path[i] == '/')
			i++;
		n = strcspn(path + i, "/");
		if (!path[i + n])
			break; /* the final component: the caller's */
		memcpy(name, path + i, n);
		name[n] = '\0';
		next = (int)syscall(SYS_openat2, cur, name, &how, sizeof(how));
		if (next < 0 && errno == ENOENT && mkdir) {
			r = make_dir(t, path, i, n, cur, name, err);
			if (r < 0)
				return r;
			next = (int)syscall(SYS_openat2, cur, name, &how, sizeof(how));
		}
		if (next < 0)
			return walk_refusal(t, path, i, n, cur, name, negerrno(), err);
		closep(&cur);
		cur = next;
		i += n;
	}
	*ret_dir = TAKE_FD(cur);
	*ret_off = i;
	return 0;
}

/* What is at the final component already: 1 that device, -EEXIST something else. */
static int judge_existing(const struct target *t, const char *path, size_t off,
			  const struct stat *st, mode_t type, dev_t rdev, struct devwl_error *err)
{
	char what[64];

	if ((st->st_mode & S_IFMT) == type && st->st_rdev == rdev)
		return 1;
	return devwl_error_set(err, -EEXIST, off, "process %d: %s: %s is there already",
			       (int)t->pid, path, describe(st, what, sizeof(what)));
}

/* Is the target in a user namespace other than ours? */
static bool other_userns(const struct target *t)
{
	struct stat a, b;

	return fstatat(t->proc, "ns/user", &a, 0) == 0 && stat("/proc/self/ns/user", &b) == 0 &&
	       (a.st_ino != b.st_ino || a.st_dev != b.st_dev);
}

static int place_in(const struct target *t, const struct devwl_place *p, uid_t uid, gid_t gid,
		    struct devwl_error *err)
{
	mode_t type = p->type == DEVWL_DEV_CHAR ? S_IFCHR : S_IFBLK;
	dev_t rdev = makedev(p->major, p->minor);
	_cleanup_close_ int dir = -1, fd = -1, proc = -1;
	const char *name = NULL, *why = NULL;
	int gate = 0;
	struct self self;
	struct stat st;
	size_t off = 0;
	int r = 0;

	r = walk_parents(t, p->path, p->flags & DEVWL_PLACE_MKDIR, &dir, &off, err);
	if (r < 0)
		return r;
	/* Only the gate's nodev probe needs it: a confined target's node goes anywhere. */
	if (!(p->flags & DEVWL_PLACE_CONFINED)) {
		proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (proc < 0)
			return devwl_error_set(err, negerrno(), 0, "/proc: %m");
	}
	name = p->path + off;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return judge_existing(t, p->path, off, &st, type, rdev, err);
	if (errno != ENOENT)
		return devwl_error_set(err, negerrno(), off, "process %d: %s: %m", (int)t->pid,
				       p->path);
	/* Permission bits 0 until the owner is set: nobody opens it as ours meanwhile. */
	r = as_owner(uid, gid, &self);
	/* The node gate (gate.h), as the owner, in the directory the node is then made in. */
	if (r >= 0)
		gate = gate_node_dir(
			proc, dir,
			p->flags & DEVWL_PLACE_CONFINED ? GATE_CONFINED : GATE_UNCONFINED, &why);
	if (r >= 0 && gate >= 0 && mknodat(dir, name, type, rdev) < 0)
		r = negerrno();
	as_self(&self);
	if (gate < 0)
		return devwl_error_set(err, gate == -EPERM ? -EPERM : gate, off,
				       "process %d: %s: %s", (int)t->pid, p->path,
				       why ? why : strerror(-gate));
	if (r < 0) {
		if (r == -EEXIST && fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return judge_existing(t, p->path, off, &st, type, rdev, err);
		return devwl_error_set(
			err, r, off, "process %d: %s: mknod %c %u:%u: %s%s", (int)t->pid, p->path,
			p->type == DEVWL_DEV_CHAR ? 'c' : 'b', p->major, p->minor, strerror(-r),
			r == -EPERM ? " (needs CAP_MKNOD in the initial user namespace)" : "");
	}
	fd = open_path_nofollow(dir, name);
	if (fd < 0 || !is_fresh(dir, fd, type, rdev))
		return devwl_error_set(err, -EEXIST, off,
				       "process %d: %s: the node devwl made was replaced at once: "
				       "left as it is",
				       (int)t->pid, p->path);
	r = set_owner_mode(fd, uid, gid, p->mode);
	if (r < 0) {
		(void)unlinkat(dir, name, 0);
		return devwl_error_set(err, r, off,
				       "process %d: %s: setting owner %u:%u and mode %04o: %s",
				       (int)t->pid, p->path, (unsigned int)uid, (unsigned int)gid,
				       (unsigned int)p->mode, strerror(-r));
	}
	if (gate_twin(p->flags & DEVWL_PLACE_TWIN, other_userns(t))) {
		r = place_bind_twin(t->proc, fd, name);
		if (r < 0) {
			(void)unlinkat(dir, name, 0);
			return devwl_error_set(err, r, off,
					       "process %d: %s: binding a twin over the node (its "
					       "user namespace's mounts are nodev): %s",
					       (int)t->pid, p->path, strerror(-r));
		}
	}
	if (gate != GATE_NODEV)
		return 0;
	if (p->nodeset &&
	    (fstat(fd, &st) < 0 || devwl_nodeset_add(p->nodeset, st.st_dev, st.st_ino) < 0)) {
		(void)unlinkat(dir, name, 0);
		return devwl_error_set(err, -ENOMEM, off,
				       "process %d: %s: recording the node made on a nodev mount",
				       (int)t->pid, p->path);
	}
	return DEVWL_PLACE_MADE_NODEV;
}

DEVWL_EXPORT int devwl_node_place(int pidfd, const struct devwl_place *place,
				  struct devwl_error *ret_err)
{
	struct target t = {.proc = -1, .root = -1};
	uint32_t uid = 0, gid = 0;
	int r = 0;

	if (!place)
		return devwl_error_set(ret_err, -EINVAL, 0, "no place");
	r = check_path(place->path, ret_err);
	if (r < 0)
		return r;
	if (place->mode & ~(mode_t)07777)
		return devwl_error_set(ret_err, -EINVAL, 0,
				       "%s: mode %#o has more than permission bits (07777)",
				       place->path, (unsigned int)place->mode);
	if (place->flags & ~PLACE_FLAGS)
		return devwl_error_set(ret_err, -EINVAL, 0, "%s: unknown flags %#x", place->path,
				       place->flags & ~PLACE_FLAGS);
	/* DEVWL_PLACE_TWIN says the target's cgroup enforces its grant (gate_twin()), which
	 * confines it: flags that say it is not confined contradict each other. */
	if ((place->flags & DEVWL_PLACE_TWIN) && !(place->flags & DEVWL_PLACE_CONFINED))
		return devwl_error_set(ret_err, -EINVAL, 0,
				       "%s: DEVWL_PLACE_TWIN without DEVWL_PLACE_CONFINED",
				       place->path);
	for (size_t i = 0; i < ARRAY_SIZE(place->reserved); i++)
		if (place->reserved[i])
			return devwl_error_set(ret_err, -EINVAL, 0,
					       "%s: reserved[%zu] is not zero (a newer caller's "
					       "request this library does not know)",
					       place->path, i);
	r = check_device(place->path, place->type, place->major, place->minor, ret_err);
	if (r < 0)
		return r;
	r = target_open(pidfd, &t, ret_err);
	if (r >= 0)
		r = target_map_id(&t, "uid", place->uid == (uid_t)-1 ? 0 : (uint32_t)place->uid,
				  &uid, ret_err);
	if (r >= 0)
		r = target_map_id(&t, "gid", place->gid == (gid_t)-1 ? 0 : (uint32_t)place->gid,
				  &gid, ret_err);
	if (r >= 0)
		r = place_in(&t, place, (uid_t)uid, (gid_t)gid, ret_err);
	target_close(&t);
	return r;
}

/* Remove path if it is that device; 1 nothing there. err is written whatever the result. */
static int unplace_in(const struct target *t, const char *path, int type, uint32_t major,
		      uint32_t minor, struct devwl_error *err)
{
	_cleanup_close_ int dir = -1;
	struct stat st;
	size_t off = 0;
	int r = 0;

	r = walk_parents(t, path, false, &dir, &off, err);
	if (r == -ENOENT)
		return 1;
	if (r < 0)
		return r;
	if (fstatat(dir, path + off, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 1
				       : devwl_error_set(err, negerrno(), off, "process %d: %s: %m",
							 (int)t->pid, path);
	r = judge_existing(t, path, off, &st, type == DEVWL_DEV_CHAR ? S_IFCHR : S_IFBLK,
			   makedev(major, minor), err);
	if (r < 0)
		return r;
	/*
	 * The name may be swapped between the stat and the unlink; whoever can do that may
	 * unlink the name themselves, and the target's root is all the walk reached.
	 */
	r = unlinkat(dir, path + off, 0) < 0 ? negerrno() : 0;
	if (r == -EBUSY) {
		/* A mount point: the twin DEVWL_PLACE_TWIN bound over it goes first. */
		_cleanup_close_ int fd = open_path_nofollow(dir, path + off);

		r = fd < 0 ? negerrno() : place_unbind(t->proc, fd);
		if (r < 0)
			return devwl_error_set(err, r, off,
					       "process %d: %s: unmounting its twin: %s",
					       (int)t->pid, path, strerror(-r));
		r = unlinkat(dir, path + off, 0) < 0 ? negerrno() : 0;
	}
	if (r == -ENOENT)
		return 1;
	if (r < 0)
		return devwl_error_set(err, r, off, "process %d: %s: unlink: %s", (int)t->pid, path,
				       strerror(-r));
	/* st is its twin's where one was bound (the walk crossed the mount): its slot is
	 * free again, whether the unlink detached the twin or place_unbind() did. */
	place_twin_forget(t->proc, &st);
	return 0;
}

DEVWL_EXPORT int devwl_node_unplace(int pidfd, const char *path, int type, uint32_t major,
				    uint32_t minor, struct devwl_error *ret_err)
{
	struct target t = {.proc = -1, .root = -1};
	struct devwl_error err;
	int r = 0;

	r = check_path(path, ret_err);
	if (r < 0)
		return r;
	r = check_device(path, type, major, minor, ret_err);
	if (r < 0)
		return r;
	r = target_open(pidfd, &t, ret_err);
	if (r >= 0) {
		/* A missing parent is an answer (1), not a failure: ret_err stays untouched. */
		r = unplace_in(&t, path, type, major, minor, &err);
		if (r < 0 && ret_err)
			*ret_err = err;
	}
	target_close(&t);
	return r;
}
