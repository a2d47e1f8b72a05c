/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The node gate (DESIGN.md, "The node gate"). A device node devwl makes is a grant that
 * outlives the call: whoever reaches it later opens it as far as the kernel lets them. So
 * a node is made only where the kernel will confine its use — a device cgroup holding
 * the workload's allow list, or a deny baseline in front of it — or, for a workload no
 * cgroup confines, on a mount where the kernel opens no device node at all (nodev), which
 * devwl then opens for the caller as the policy says.
 *
 * Whether a mount is nodev cannot be read: a mount of a user namespace is nodev through
 * its superblock, which neither mountinfo nor statfs shows. So it is probed: a null
 * device node (c 1:3, whose open has no side effect) is made in the very directory fd
 * the real node will be made in, and opened. The kernel answers EACCES for nodev before
 * any permission check (may_open_dev), but the permission check answers EACCES too; so
 * the probe's bits are set to 0666 whatever the umask made them, and faccessat2(), which
 * asks the permission check alone, must say yes before an EACCES counts as nodev.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"
#include "gate.h"
#include "util.h"

#define NO_CGROUP_REASON                                                                           \
	"no device cgroup stands behind the caller: a node is made only on a nodev mount"

/* 1 the probe in dir proves dir's mount nodev; 0 it opened there; -EPERM cannot tell. */
static int probe_open(int proc, int dir, const char *probe)
{
	_cleanup_close_ int node = -1, fd = -1;
	uint64_t dir_mnt = 0, node_mnt = 0;
	char self[48];
	struct stat st;

	node = openat(dir, probe, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (node < 0)
		return -EPERM;
	/*
	 * The probe must be ours and on dir's own mount: the workload may rename another
	 * file to the name, or mount one over it, to answer for a mount that is not nodev.
	 */
	if (fstat(node, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3) ||
	    devwl_fd_mount_id(dir, &dir_mnt) < 0 || devwl_fd_mount_id(node, &node_mnt) < 0 ||
	    dir_mnt != node_mnt)
		return -EPERM;
	/* Through the fd, never the name again: the same inode on the same mount. */
	snprintf(self, sizeof(self), "thread-self/fd/%d", node);
	if (fchmodat(proc, self, 0666, 0) < 0)
		return -EPERM;
	fd = openat(proc, self, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0)
		return 0;
	if (errno != EACCES)
		return -EPERM;
	if (syscall(SYS_faccessat2, node, "", R_OK, AT_EACCESS | AT_EMPTY_PATH) < 0)
		return -EPERM;
	return 1;
}

int gate_node_dir(int proc, int dir, enum gate_confinement conf, const char **ret_reason)
{
	char probe[48];
	int r = 0;

	*ret_reason = NULL;
	if (conf == GATE_CONFINED)
		return 0;
	snprintf(probe, sizeof(probe), ".devwl-nodev-%d", (int)gettid());
	(void)unlinkat(dir, probe, 0); /* one a killed handler left */
	if (mknodat(dir, probe, S_IFCHR | 0600, makedev(1, 3)) < 0)
		return negerrno();
	r = probe_open(proc, dir, probe);
	(void)unlinkat(dir, probe, 0);
	if (r == 1)
		return GATE_NODEV;
	*ret_reason = r == 0 ? NO_CGROUP_REASON
			     : NO_CGROUP_REASON ", and this one could not be proven nodev";
	return -EPERM;
}

bool gate_twin(bool enforced, bool other_userns)
{
	return enforced && other_userns;
}
