/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reference: emulate mknod/mknodat of an absolute path. The parent directory is resolved
 * with openat2(RESOLVE_IN_ROOT) under the caller's root, the node made there, and the
 * result answered; anything else continues.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "ref-supervise.h"

static void answer(struct ref_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT};
	unsigned long long addr = 0;
	unsigned int mode = 0, dev = 0;
	char path[PATH_MAX];
	char *slash = NULL;
	int root = -1, dir = -1, err = 0;

	if (d->nr == __NR_mknod) {
		addr = d->args[0];
		mode = (unsigned int)d->args[1];
		dev = (unsigned int)d->args[2];
	} else if (d->nr == __NR_mknodat && (int)d->args[0] == AT_FDCWD) {
		addr = d->args[1];
		mode = (unsigned int)d->args[2];
		dev = (unsigned int)d->args[3];
	} else {
		ref_send(n, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
		return;
	}
	root = ref_root_fd(n);
	if (root < 0 || ref_read_path((pid_t)n->req->pid, addr, path, sizeof(path)) < 0) {
		ref_send(n, -EFAULT, 0, 0);
		return;
	}
	slash = strrchr(path, '/');
	if (path[0] != '/' || !slash || slash[1] == '\0') {
		ref_send(n, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
		return;
	}
	*slash = '\0';
	dir = (int)syscall(SYS_openat2, root, slash == path ? "/" : path, &how, sizeof(how));
	if (dir < 0) {
		ref_send(n, -errno, 0, 0);
		return;
	}
	/* mknod's dev is the kernel's 32-bit encoding: 12-bit major, 20-bit minor. */
	if (mknodat(dir, slash + 1, mode,
		    makedev((dev & 0xfff00) >> 8, (dev & 0xff) | ((dev >> 12) & 0xfff00))) < 0)
		err = -errno;
	close(dir);
	ref_send(n, err, 0, 0);
}

int main(int argc, char **argv)
{
	return ref_supervise(argc, argv, answer);
}
