/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The directories of devwld's sockets and state (devwld(8) SECURITY). Whoever can write
 * there can plant a state file that grants every device, or put a socket of their own in
 * place of the listener and be handed the runtimes' notify fds: so devwld uses only
 * directories that root (or its own uid) alone can change.
 *
 * And one devwld per socket: a second one would rename its own sockets over the first's
 * (which then serves nobody) and unlink them when it exits. The keeper holds a lock on a
 * file beside each socket for its whole life, across worker restarts and its own
 * re-executions, and a socket path is only ever unlinked by the daemon that bound the
 * file there.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "trust.h"
#include "util.h"

/* The lock file's text: the holder's pid, then the socket file it bound (0 0: none yet). */
#define LOCK_FMT "%d %llu %llu\n"

/* One directory on the way: last is the one devwld uses, the others are above it. */
static int check_dir(const char *path, bool last, uid_t uid, struct devwl_error *err)
{
	struct stat st;
	mode_t mode;

	if (lstat(path, &st) < 0)
		return devwl_error_set(err, negerrno(), 0, "%s: %s", path, strerror(errno));
	mode = st.st_mode & 07777;
	if (!S_ISDIR(st.st_mode))
		return devwl_error_set(err, -ENOTDIR, 0, "%s: not a directory", path);
	if (st.st_uid != 0 && st.st_uid != uid)
		return devwl_error_set(
			err, -EPERM, 0,
			"%s is owned by uid %u (mode %04o): devwld keeps its sockets "
			"and state only in and below directories of root%s",
			path, (unsigned int)st.st_uid, (unsigned int)mode,
			uid ? " or of its own uid" : "");
	/* A sticky directory lets others add names, not rename or remove ours: fine above
	 * ours, as /tmp is, but not as ours, where they could plant the names we use. */
	if ((mode & 022) && (last || !(mode & S_ISVTX)))
		return devwl_error_set(
			err, -EPERM, 0,
			"%s is writable by %s (mode %04o, owner uid %u): devwld keeps "
			"its sockets and state only in a directory no one else can "
			"write%s",
			path, (mode & 002) ? "everyone" : "its group", (unsigned int)mode,
			(unsigned int)st.st_uid,
			last ? "" : ", below ones that are sticky if others can");
	return 0;
}

static int check_path(const char *real, uid_t uid, struct devwl_error *err)
{
	const char *end = real;
	int r = 0;

	/* "/" first, unless it is all there is (the loop's only round then). */
	if (strcmp(real, "/"))
		r = check_dir("/", false, uid, err);
	while (r >= 0 && end) {
		_cleanup_free_ char *prefix = NULL;
		size_t n;

		end = strchr(end + 1, '/');
		n = end ? (size_t)(end - real) : strlen(real);
		prefix = strndup(real, n ? n : 1);
		if (!prefix)
			return -ENOMEM;
		r = check_dir(prefix, !end, uid, err);
	}
	return r;
}

int trust_dir_of(const char *file, uid_t uid, struct devwl_error *err)
{
	_cleanup_free_ char *dir = NULL, *real = NULL;
	const char *slash = strrchr(file, '/');
	int r;

	dir = slash ? strndup(file, slash == file ? 1 : (size_t)(slash - file)) : strdup(".");
	if (!dir)
		return -ENOMEM;
	r = devwl_mkdir_parents(file);
	if (r < 0)
		return devwl_error_set(err, r, 0, "cannot make %s: %s", dir, strerror(-r));
	/* Symlinks resolved: the walk below checks the directories actually used. */
	real = realpath(dir, NULL);
	if (!real)
		return devwl_error_set(err, negerrno(), 0, "%s: %s", dir, strerror(errno));
	return check_path(real, uid, err);
}

struct lock_text {
	int pid;
	unsigned long long dev, ino;
};

static int lock_read(int fd, struct lock_text *ret)
{
	char buf[96];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return negerrno();
	buf[n] = '\0';
	*ret = (struct lock_text){0};
	return sscanf(buf, LOCK_FMT, &ret->pid, &ret->dev, &ret->ino) == 3 ? 0 : -EBADMSG;
}

static int lock_write(int fd, const struct lock_text *t)
{
	char buf[96];
	int n = snprintf(buf, sizeof(buf), LOCK_FMT, t->pid, t->dev, t->ino);

	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		return negerrno();
	return 0;
}

/* A socket file nobody holds the lock of may still be served by a devwld that takes no
 * lock (an older version): one that accepts a connection is live. */
static bool someone_listens(const char *sock_path)
{
	int fd = devwl_unix_connect(sock_path);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Is fd the file at path now (not one unlinked since it was opened)? */
static bool is_file_at(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int trust_lock(const char *sock_path, pid_t *ret_holder)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	struct lock_text t = {0};
	int r;

	*ret_holder = 0;
	if (asprintf(&path, "%s.lock", sock_path) < 0)
		return -ENOMEM;
	/* A devwld that failed to start removes its lock (trust_lock_remove()): one taken
	 * on the file it removed is no lock, and the file at the path is locked instead. */
	for (int tries = 0;; tries++) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
		if (fd < 0)
			return negerrno();
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			r = negerrno();
			if (r == -EWOULDBLOCK && lock_read(fd, &t) >= 0)
				*ret_holder = t.pid;
			return r == -EWOULDBLOCK ? -EBUSY : r;
		}
		if (is_file_at(fd, path))
			break;
		if (tries == 8)
			return -EBUSY;
		close(TAKE_FD(fd));
	}
	if (someone_listens(sock_path))
		return -EADDRINUSE;
	t.pid = (int)getpid();
	r = lock_write(fd, &t);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

int trust_lock_note(int lock_fd, const char *sock_path)
{
	struct lock_text t = {0};
	struct stat st;

	if (lock_fd < 0)
		return 0;
	if (lstat(sock_path, &st) < 0)
		return negerrno();
	/* Our pid as the keeper wrote it; a worker notes the file it bound. */
	(void)lock_read(lock_fd, &t);
	t.dev = (unsigned long long)st.st_dev;
	t.ino = (unsigned long long)st.st_ino;
	return lock_write(lock_fd, &t);
}

bool trust_unlink_own(int lock_fd, const char *sock_path)
{
	struct lock_text t = {0};
	struct stat st;

	if (lock_fd < 0 || lock_read(lock_fd, &t) < 0 || t.ino == 0)
		return false;
	/* The directory is ours (trust_dir_of): nobody else can swap the file between the
	 * look and the unlink. */
	if (lstat(sock_path, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    (unsigned long long)st.st_dev != t.dev || (unsigned long long)st.st_ino != t.ino)
		return false;
	return unlink(sock_path) == 0;
}

void trust_lock_remove(int lock_fd, const char *sock_path)
{
	_cleanup_free_ char *path = NULL;

	if (lock_fd < 0 || asprintf(&path, "%s.lock", sock_path) < 0)
		return;
	/* The directory is ours (trust_dir_of): the file cannot change between the two. */
	if (is_file_at(lock_fd, path))
		(void)unlink(path);
}
