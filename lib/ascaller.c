/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A path looked at by a process that is the caller, as far as the kernel's checks go, where
 * devwl itself may not look (caller.h, caller_stat_as; KERNEL-NOTES "Acting in the caller's
 * context"). A FUSE mount made in a user namespace without allow_other refuses every
 * process whose real, effective and saved ids are not its owner's, whatever its
 * capabilities: root outside, and a handler that only took the caller's fsuid
 * (caller_become), get EACCES for the mount's root and everything below it. A child that
 * takes the caller's ids for all of them passes that check. It holds no capability but,
 * for the one chroot into the caller's root, CAP_SYS_CHROOT, dropped before it reads the
 * path: it reaches no more than the caller does, and reports only what the path names.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/sched.h>

#include "caller.h"
#include "util.h"

/* What the child reports: a negative errno, or what the path names. */
struct asked {
	int err;
	mode_t mode;
	dev_t rdev, dev;
	ino_t ino;
};

static int set_caps(uint64_t caps)
{
	const struct __user_cap_data_struct data[2] = {
		{.effective = (uint32_t)caps, .permitted = (uint32_t)caps},
		{.effective = (uint32_t)(caps >> 32), .permitted = (uint32_t)(caps >> 32)},
	};

	return thread_capset(data);
}

/* The child: system calls only (it is a copy of a threaded process). root_link and
 * start_link: /proc entries (relative to proc) of the caller's root and where the path
 * starts, or NULL where it starts at the root. */
static int look_as(const struct devwl_creds *cr, int proc, const char *root_link,
		   const char *start_link, bool start_is_fd, const char *path, int oflags,
		   uint64_t resolve, struct asked *out)
{
	int root, start = -1, fd;
	struct open_how how = {.flags = O_PATH | O_CLOEXEC | (oflags & O_NOFOLLOW),
			       .resolve = resolve | RESOLVE_NO_MAGICLINKS};
	struct stat st;

	/* Not to be read by the caller's uid once we hold it: our memory is the supervisor's. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_KEEPCAPS, 1) < 0)
		return -errno;
	/* O_PATH opens of the magic links ask nothing of the filesystem: as ourselves. */
	root = openat(proc, root_link, O_PATH | O_CLOEXEC);
	if (root < 0)
		return -errno;
	if (start_link) {
		start = openat(proc, start_link, O_PATH | O_CLOEXEC);
		if (start < 0)
			return errno == ENOENT && start_is_fd ? -EBADF : -errno;
	}
	/* Not the caller, or not in its root: nothing was looked at. */
	if (syscall(SYS_setgroups, cr->ngroups, cr->groups) < 0 ||
	    syscall(SYS_setresgid, cr->fsgid, cr->fsgid, cr->fsgid) < 0 ||
	    syscall(SYS_setresuid, cr->fsuid, cr->fsuid, cr->fsuid) < 0 ||
	    set_caps(UINT64_C(1) << CAP_SYS_CHROOT) < 0)
		return -EOPNOTSUPP;
	if (fchdir(root) < 0 || chroot(".") < 0)
		return errno == EACCES ? -EACCES : -EOPNOTSUPP;
	if (set_caps(0) < 0)
		return -EOPNOTSUPP;
	if (start >= 0 && fchdir(start) < 0)
		return -errno;
	/* Absolute: from the root just taken; else from where the caller's call starts. */
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	*out = (struct asked){
		.mode = st.st_mode, .rdev = st.st_rdev, .dev = st.st_dev, .ino = st.st_ino};
	return 0;
}

int caller_stat_as(struct devwl_caller *c, const struct devwl_target *t, int dirfd,
		   const char *path, int oflags, uint64_t resolve, unsigned int timeout_ms,
		   struct stat *ret)
{
	int pipefd[2], pidfd = -1;
	struct asked a = {.err = -EIO};
	/* No SIGCHLD (exit_signal 0): a wait(-1) of the program embedding us never reaps it. */
	struct clone_args args = {.flags = CLONE_PIDFD, .pidfd = (uintptr_t)&pidfd};
	char root_link[PROC_LINK_MAX], start_link[PROC_LINK_MAX];
	struct pollfd p;
	bool need_start;
	ssize_t n = 0;
	long pid;
	int r;

	if (!t->have_creds)
		return -EINVAL;
	proc_link(root_link, t->tid, dirfd, false);
	if (!proc_link(start_link, t->tid, dirfd, true))
		return -EBADF;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	need_start = path[0] != '/' || (resolve & (RESOLVE_IN_ROOT | RESOLVE_BENEATH));
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) {
		close(pipefd[0]);
		a.err = look_as(&t->creds, c->host_proc, root_link, need_start ? start_link : NULL,
				dirfd != AT_FDCWD, path, oflags, resolve, &a);
		(void)!write(pipefd[1], &a, sizeof(a));
		_exit(0);
	}
	close(pipefd[1]);
	if (pid < 0) {
		a.err = -errno;
		close(pipefd[0]);
		return a.err;
	}
	/* A FUSE server that stops answering holds the child, never us past the deadline. */
	p = (struct pollfd){.fd = pipefd[0], .events = POLLIN};
	do
		r = poll(&p, 1, (int)timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r == 1)
		n = read(pipefd[0], &a, sizeof(a));
	if (n != (ssize_t)sizeof(a)) {
		a.err = -ETIMEDOUT;
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	}
	close(pipefd[0]);
	(void)waitid(P_PIDFD, (id_t)pidfd, NULL, WEXITED | __WALL);
	close(pidfd);
	if (a.err < 0)
		return a.err;
	memset(ret, 0, sizeof(*ret));
	ret->st_mode = a.mode;
	ret->st_rdev = a.rdev;
	ret->st_dev = a.dev;
	ret->st_ino = a.ino;
	return 0;
}
