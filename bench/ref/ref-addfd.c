/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reference: open on the caller's behalf and inject the fd. The path is read from the
 * caller, opened with openat2(RESOLVE_IN_ROOT) under its root (an absolute path needs
 * nothing else) with its flags, and installed with ADDFD + FLAG_SEND, which also answers.
 * Only openat is handled; anything else continues.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "ref-supervise.h"

static void answer(struct ref_notif *n)
{
	struct seccomp_notif_addfd addfd = {.id = n->req->id, .flags = SECCOMP_ADDFD_FLAG_SEND};
	int flags = (int)(unsigned int)n->req->data.args[2];
	struct open_how how = {0};
	char path[PATH_MAX];
	int root = -1, fd = -1;

	if (n->req->data.nr != __NR_openat) {
		ref_send(n, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
		return;
	}
	root = ref_root_fd(n);
	if (root < 0 ||
	    ref_read_path((pid_t)n->req->pid, n->req->data.args[1], path, sizeof(path)) < 0) {
		ref_send(n, -EFAULT, 0, 0);
		return;
	}
	how.flags = (unsigned long long)(flags & ~O_CLOEXEC) | O_CLOEXEC | O_NOCTTY;
	how.resolve = RESOLVE_IN_ROOT;
	fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
	if (fd < 0) {
		ref_send(n, -errno, 0, 0);
		return;
	}
	addfd.srcfd = (unsigned int)fd;
	addfd.newfd_flags = flags & O_CLOEXEC ? O_CLOEXEC : 0;
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd) < 0 && errno != ENOENT)
		ref_send(n, -errno, 0, 0);
	close(fd);
}

int main(int argc, char **argv)
{
	return ref_supervise(argc, argv, answer);
}
