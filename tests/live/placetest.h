/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A container-like target for the devwl_node_place() tests 73 and 74: a child in a mount
 * namespace of its own, chrooted into a tmpfs that only it sees (the host's directory
 * under it stays empty), optionally in a user namespace of its own as well, which answers
 * requests about its own view of its files over a socket.
 */
#ifndef DEVWL_PLACETEST_H
#define DEVWL_PLACETEST_H

#include <limits.h>
#include <sys/syscall.h>
#include <linux/openat2.h>

#include "livetest.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* The target's ids map onto the host's from here (its uid N is the host's BASE + N). */
#define PT_BASE	 100000
#define PT_COUNT 65536

struct pt_target {
	pid_t pid;
	int pidfd;
	int sock;
	char dir[64]; /* the host's directory its tmpfs is mounted on, in its namespace */
};

static inline void pt_need_kernel(void)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH};
	int fd = -1;

	if (geteuid() != 0)
		LT_SKIP("needs root (mount namespaces, tmpfs, mknod)");
	fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (fd < 0 && errno == ENOSYS)
		LT_SKIP("kernel without pidfd_open (5.3)");
	if (fd >= 0)
		close(fd);
	fd = (int)syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		LT_SKIP("kernel without openat2 (5.6)");
	if (fd >= 0)
		close(fd);
}

static inline void pt_send(int sock, const char *msg)
{
	if (send(sock, msg, strlen(msg), 0) < 0)
		LT_DIE("send: %s", strerror(errno));
}

static inline void pt_recv(int sock, char *buf, size_t size)
{
	ssize_t n = recv(sock, buf, size - 1, 0);

	if (n <= 0)
		LT_DIE("recv from the target: %s", n < 0 ? strerror(errno) : "closed");
	buf[n] = '\0';
}

static inline void pt_reply_errno(int sock, const char *what)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "err %s %s", what, strerrorname_np(errno));
	pt_send(sock, buf);
}

/* The child's side: answer "stat P", "rw P", "hold P", "held", "exit" in its own view. */
static inline void pt_serve(int sock)
{
	int held = -1;

	for (;;) {
		char req[4200], out[256];
		const char *arg = NULL;
		struct stat st;
		int fd = -1;

		pt_recv(sock, req, sizeof(req));
		arg = strchr(req, ' ') ? strchr(req, ' ') + 1 : "";
		if (strncmp(req, "stat ", 5) == 0) {
			if (lstat(arg, &st) < 0) {
				pt_reply_errno(sock, "stat");
				continue;
			}
			snprintf(out, sizeof(out), "%c %04o %u:%u %u:%u",
				 S_ISCHR(st.st_mode)   ? 'c'
				 : S_ISBLK(st.st_mode) ? 'b'
				 : S_ISDIR(st.st_mode) ? 'd'
				 : S_ISLNK(st.st_mode) ? 'l'
						       : 'f',
				 (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid,
				 (unsigned int)st.st_gid, major(st.st_rdev), minor(st.st_rdev));
			pt_send(sock, out);
		} else if (strncmp(req, "rw ", 3) == 0) {
			char c = 0;

			fd = open(arg, O_RDWR | O_CLOEXEC);
			if (fd < 0) {
				pt_reply_errno(sock, "open");
				continue;
			}
			if (write(fd, "x", 1) != 1)
				pt_reply_errno(sock, "write");
			else if (read(fd, &c, 1) != 0)
				pt_reply_errno(sock, "read");
			else
				pt_send(sock, "ok");
			close(fd);
		} else if (strncmp(req, "hold ", 5) == 0) {
			held = open(arg, O_RDWR | O_CLOEXEC);
			if (held < 0)
				pt_reply_errno(sock, "open");
			else
				pt_send(sock, "ok");
		} else if (strcmp(req, "held") == 0) {
			if (write(held, "x", 1) != 1)
				pt_reply_errno(sock, "write");
			else
				pt_send(sock, "ok");
		} else {
			_exit(0);
		}
	}
}

static inline void pt_child_die(int sock, const char *what)
{
	pt_reply_errno(sock, what);
	_exit(1);
}

/* A file of the target's tree, made before it chroots. */
static inline void pt_child_file(int sock, const char *dir, const char *rel, const char *link)
{
	char p[256];
	int fd = -1;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if (link) {
		if (symlink(link, p) < 0)
			pt_child_die(sock, "symlink");
	} else if (rel[strlen(rel) - 1] == '/') {
		if (mkdir(p, 0755) < 0)
			pt_child_die(sock, "mkdir");
	} else {
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			pt_child_die(sock, "creat");
		close(fd);
	}
}

static inline void pt_write_file(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		LT_DIE("%s: %s", file, strerror(errno));
	close(fd);
}

/*
 * Start the target. Its tree: /dev/ (with a regular file "file", a symlink "tmplink" to
 * /tmp, "lnk" to /dev/null and "nllink" to a target with a line break), /tmp/,
 * /hostroot -> "/". userns: its ids are the host's PT_BASE.. (its root dir owned by
 * PT_BASE, as a user-namespace container's rootfs is).
 * Returns false, with errno, when the kernel refused a namespace.
 */
static inline bool pt_start(struct pt_target *t, bool userns)
{
	char buf[256];
	int sv[2] = {-1, -1};

	snprintf(t->dir, sizeof(t->dir), "/tmp/devwl-place-%d", (int)getpid());
	if (mkdir(t->dir, 0755) < 0 && errno != EEXIST)
		LT_DIE("mkdir %s: %s", t->dir, strerror(errno));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		LT_DIE("socketpair: %s", strerror(errno));
	t->pid = fork();
	if (t->pid < 0)
		LT_DIE("fork: %s", strerror(errno));
	if (t->pid == 0) {
		int s = sv[1];

		close(sv[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (unshare(CLONE_NEWNS) < 0)
			pt_child_die(s, "unshare-ns");
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			pt_child_die(s, "make-private");
		/* Mounted from the initial user namespace, so devices on it open. */
		if (mount("devwl-place", t->dir, "tmpfs", 0, "mode=0755") < 0)
			pt_child_die(s, "mount");
		pt_child_file(s, t->dir, "dev/", NULL);
		pt_child_file(s, t->dir, "tmp/", NULL);
		pt_child_file(s, t->dir, "dev/file", NULL);
		pt_child_file(s, t->dir, "dev/tmplink", "/tmp");
		pt_child_file(s, t->dir, "dev/lnk", "/dev/null");
		pt_child_file(s, t->dir, "hostroot", "/");
		pt_child_file(s, t->dir, "dev/nllink", "/tmp\nerror EPERM: injected");
		/* A mount the kernel opens no device on: where an unconfined node may go. */
		pt_child_file(s, t->dir, "nd/", NULL);
		if (chdir(t->dir) < 0 ||
		    mount("devwl-place-nd", "nd", "tmpfs", MS_NODEV, "mode=0755") < 0)
			pt_child_die(s, "mount nd");
		if (chdir(t->dir) < 0)
			pt_child_die(s, "chdir");
		if (userns) {
			if (chown(".", PT_BASE, PT_BASE) < 0 ||
			    chown("dev", PT_BASE, PT_BASE) < 0 ||
			    chown("tmp", PT_BASE, PT_BASE) < 0)
				pt_child_die(s, "chown");
			/* The parent writes the maps, as a runtime does. */
			if (unshare(CLONE_NEWUSER) < 0)
				pt_child_die(s, "unshare-user");
			pt_send(s, "mapme");
			pt_recv(s, buf, sizeof(buf));
			if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
				pt_child_die(s, "setresuid");
		}
		if (chroot(".") < 0 || chdir("/") < 0)
			pt_child_die(s, "chroot");
		pt_send(s, "ready");
		pt_serve(s);
		_exit(0);
	}
	close(sv[1]);
	t->sock = sv[0];
	pt_recv(t->sock, buf, sizeof(buf));
	if (strcmp(buf, "mapme") == 0) {
		char file[64], map[64];

		snprintf(map, sizeof(map), "0 %d %d\n", PT_BASE, PT_COUNT);
		snprintf(file, sizeof(file), "/proc/%d/uid_map", (int)t->pid);
		pt_write_file(file, map);
		snprintf(file, sizeof(file), "/proc/%d/setgroups", (int)t->pid);
		pt_write_file(file, "deny");
		snprintf(file, sizeof(file), "/proc/%d/gid_map", (int)t->pid);
		pt_write_file(file, map);
		pt_send(t->sock, "go");
		pt_recv(t->sock, buf, sizeof(buf));
	}
	if (strcmp(buf, "ready") != 0) {
		waitpid(t->pid, NULL, 0);
		close(t->sock);
		rmdir(t->dir);
		/* "err unshare-user ENOSPC": the host refuses that namespace; anything else
		 * is a failure. */
		if (strncmp(buf, "err unshare-user ", 17) != 0)
			LT_DIE("the target could not start: %s", buf);
		errno = strstr(buf, "EPERM")	? EPERM
			: strstr(buf, "ENOSPC") ? ENOSPC
			: strstr(buf, "EINVAL") ? EINVAL
						: EIO;
		return false;
	}
	t->pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0);
	if (t->pidfd < 0)
		LT_DIE("pidfd_open: %s", strerror(errno));
	return true;
}

/* Ask the target; its answer in buf. */
static inline const char *pt_ask(struct pt_target *t, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline const char *pt_ask(struct pt_target *t, char *buf, size_t size, const char *fmt, ...)
{
	char req[4200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(req, sizeof(req), fmt, ap);
	va_end(ap);
	pt_send(t->sock, req);
	pt_recv(t->sock, buf, size);
	return buf;
}

static inline void pt_stop(struct pt_target *t)
{
	pt_send(t->sock, "exit");
	waitpid(t->pid, NULL, 0);
	close(t->sock);
	close(t->pidfd);
	if (rmdir(t->dir) < 0)
		LT_CHECK(0, "the host's %s is not empty: %s", t->dir, strerror(errno));
}

/* A place request as the tests make them. */
static inline struct devwl_place pt_place(const char *path, int type, uint32_t maj, uint32_t min,
					  mode_t mode, uid_t uid, gid_t gid, unsigned int flags)
{
	struct devwl_place p = {.path = path,
				.type = type,
				.major = maj,
				.minor = min,
				.mode = mode,
				.uid = uid,
				.gid = gid,
				.flags = flags};
	return p;
}

/* Does the host see path (lstat)? */
static inline bool pt_host_has(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* A dead target: its pidfd, after it exited and was reaped, or left a zombie. */
static inline int pt_dead_pidfd(bool reap, pid_t *ret_pid)
{
	pid_t pid = fork();
	int fd = -1;

	if (pid < 0)
		LT_DIE("fork: %s", strerror(errno));
	if (pid == 0) {
		pause();
		_exit(0);
	}
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		LT_DIE("pidfd_open: %s", strerror(errno));
	kill(pid, SIGKILL);
	if (reap) {
		waitpid(pid, NULL, 0);
	} else {
		siginfo_t si;

		/* Exited, still a zombie: WNOWAIT leaves it unreaped. */
		waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT);
	}
	*ret_pid = pid;
	return fd;
}

#endif
