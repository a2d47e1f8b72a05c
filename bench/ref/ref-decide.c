/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Not a row's reference but a yardstick for it: the least a supervisor must do to
 * *decide* an open rather than wave it through. It reads the path from the caller,
 * resolves it under the caller's root (fd cached per pid) with
 * openat2(O_PATH, RESOLVE_IN_ROOT), looks at what it found, checks the notification is
 * still pending, and answers CONTINUE for a non-device, EPERM for a device. Relative
 * paths and calls other than openat continue unexamined (the workload uses neither).
 *   ref-decide [--poll] [--] WORKLOAD...   --poll: wait in poll() before each RECV
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "ref-supervise.h"

static void answer(struct ref_notif *n)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT};
	char path[PATH_MAX];
	struct stat st;
	int root = -1, fd = -1;
	bool device = false;

	if (n->req->data.nr != __NR_openat ||
	    ref_read_path((pid_t)n->req->pid, n->req->data.args[1], path, sizeof(path)) < 0 ||
	    path[0] != '/' || (root = ref_root_fd(n)) < 0) {
		ref_send(n, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
		return;
	}
	fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
	if (fd >= 0) {
		device = fstat(fd, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode));
		close(fd);
	}
	/* The path came from memory the caller may share: only a pending call vouches. */
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &n->req->id) < 0)
		return;
	ref_send(n, device ? -EPERM : 0, 0, device ? 0 : SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--poll") == 0) {
		ref_poll_first = 1;
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	return ref_supervise(argc, argv, answer);
}
