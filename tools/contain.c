/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Containment of a root command inside its kernel baseline.
 *
 * The baseline cgroup is what makes devwl's CONTINUE safe, and a root process can leave a
 * cgroup with nothing but the file permissions of cgroup.procs (uid 0 owns it; no
 * capability is checked for moves in v1, and v2 checks only write access to the common
 * ancestor's cgroup.procs, which clone3(CLONE_INTO_CGROUP) needs as a mere directory fd).
 * So the cgroup hierarchy the command sees is read-only, and under a v2 baseline it is a
 * mount of a cgroup namespace rooted at the baseline, so no directory above it can be
 * named at all. What remains is dropped: the capabilities that would undo those mounts,
 * rewrite the device rules, replace the device program, load kernel code, reach devices
 * without a node, act through a process outside the baseline, or open cgroup directories
 * by handle past the view.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "array.h"
#include "contain.h"
#include "util.h"

const cap_value_t contain_caps[] = {
	CAP_SYS_ADMIN,	     /* devices.allow, mount/umount, setns, BPF ids, and more */
	CAP_BPF,	     /* load device programs (with CAP_SYS_ADMIN: find ours) */
	CAP_SYS_MODULE,	     /* kernel code */
	CAP_SYS_BOOT,	     /* kexec_load: another kernel */
	CAP_SYS_RAWIO,	     /* ioperm/iopl and other device access without a node */
	CAP_SYS_PTRACE,	     /* ptrace, pidfd_getfd, /proc/PID/root of processes outside */
	CAP_DAC_READ_SEARCH, /* open_by_handle_at: any cgroup directory, past the view */
};
const size_t contain_n_caps = ARRAY_SIZE(contain_caps);

struct cgroup_mount {
	enum baseline_kind kind;
	char *mnt;
};

struct mount_list {
	struct cgroup_mount *items;
	size_t n, cap;
};

static int collect(enum baseline_kind kind, const char *mnt, const char *root, const char *super,
		   void *data)
{
	struct mount_list *l = data;

	(void)root;
	(void)super;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i].mnt, mnt) == 0)
			return 0; /* stacked at one place: the path reaches the top one only */
	if (ARRAY_RESERVE(l->items, l->cap, l->n + 1) < 0)
		return -ENOMEM;
	l->items[l->n].kind = kind;
	l->items[l->n].mnt = strdup(mnt);
	if (!l->items[l->n].mnt)
		return -ENOMEM;
	l->n++;
	return 0;
}

static void mount_list_free(struct mount_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i].mnt);
	free(l->items);
}

static bool on_cgroupfs(const struct statfs *st)
{
	return st->f_type == CGROUP_SUPER_MAGIC || st->f_type == CGROUP2_SUPER_MAGIC;
}

/* Make the mount at mnt read-only, if what the path reaches is still a cgroup mount. */
static int make_readonly(const char *mnt)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
	_cleanup_close_ int fd = open(mnt, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct statfs st;

	if (fd < 0)
		return errno == ENOENT ? 0 : negerrno(); /* under another mount: unreachable */
	if (fstatfs(fd, &st) < 0)
		return negerrno();
	if (!on_cgroupfs(&st))
		return 0; /* covered by another file system: not reachable by path */
	return mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0 ? negerrno() : 0;
}

/* Put a read-only cgroup2 mount of our cgroup namespace where the host's was. The kernel
 * refuses the same superblock stacked on itself, so the old one goes first. A new cgroup2
 * mount resets the hierarchy's global options (nsdelegate, memory_recursiveprot, ...) to
 * its own, but only when made from the initial cgroup namespace: never from ours. */
static int remount_v2(const char *mnt)
{
	struct statfs st;

	if (statfs(mnt, &st) < 0)
		return errno == ENOENT ? 0 : negerrno();
	if (st.f_type != CGROUP2_SUPER_MAGIC)
		return 0; /* covered by another file system: not reachable by path */
	if (umount2(mnt, MNT_DETACH) < 0)
		return negerrno();
	if (mount("cgroup2", mnt, "cgroup2", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) <
	    0)
		return negerrno();
	return 0;
}

int contain_enter(enum baseline_kind kind, const char **ret_step)
{
	struct mount_list l = {0};
	int r;

	if (unshare(CLONE_NEWNS | (kind == BASELINE_V2 ? CLONE_NEWCGROUP : 0)) < 0) {
		*ret_step = kind == BASELINE_V2 ? "unshare(CLONE_NEWNS|CLONE_NEWCGROUP)"
						: "unshare(CLONE_NEWNS)";
		return negerrno();
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		*ret_step = "making the mount namespace a slave of the host's";
		return negerrno();
	}
	r = baseline_each_mount(collect, &l);
	if (r < 0) {
		*ret_step = "listing the cgroup mounts";
		goto out;
	}
	for (size_t i = 0; i < l.n; i++) {
		if (kind == BASELINE_V2 && l.items[i].kind == BASELINE_V2) {
			r = remount_v2(l.items[i].mnt);
			*ret_step = "mounting the cgroup2 hierarchy of the baseline";
		} else {
			r = make_readonly(l.items[i].mnt);
			*ret_step = "making the cgroup hierarchy read-only";
		}
		if (r < 0)
			goto out;
	}
	*ret_step = NULL;
out:
	mount_list_free(&l);
	return r;
}

int contain_check_fds(int *ret_fd)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int r = 0;

	if (!d)
		return negerrno();
	while (r == 0 && (de = readdir(d))) {
		struct statfs sfs;
		struct stat st;
		char *end = NULL;
		long fd = strtol(de->d_name, &end, 10);
		int flags;

		if (de->d_name[0] == '.' || *end || fd == dirfd(d))
			continue;
		flags = fcntl((int)fd, F_GETFD);
		if (flags < 0 || (flags & FD_CLOEXEC))
			continue; /* gone at exec */
		if (fstat((int)fd, &st) < 0 || fstatfs((int)fd, &sfs) < 0) {
			r = negerrno();
			break;
		}
		if (S_ISDIR(st.st_mode) || on_cgroupfs(&sfs)) {
			*ret_fd = (int)fd;
			r = -EBADF;
		}
	}
	closedir(d);
	return r;
}
