/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Acting in a trapped caller's context: its root, its cwd or dirfd, its fsuid/fsgid,
 * groups, umask and capabilities, on the thread that handles notifications.
 *
 * The handling thread does unshare(CLONE_FS) once (on a single-threaded process that is
 * harmless) so that it can chroot into a caller's root and fchdir into its cwd, and
 * switches credentials with raw syscalls that change only this thread.
 */
#ifndef DEVWL_CALLER_H
#define DEVWL_CALLER_H

#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <linux/capability.h>

struct stat;

#define DEVWL_CALLER_GROUPS_MAX 1024

/* What /proc/TID/status says about the caller (host ids). */
struct devwl_creds {
	pid_t tgid;
	pid_t ns_tgid; /* in the innermost pid namespace of the caller */
	pid_t ns_tid;
	uid_t fsuid;
	gid_t fsgid;
	mode_t umask;
	uint64_t cap_eff;
	bool same_userns; /* caller in the handler's user namespace */
	ino_t userns_ino; /* its user namespace's inode (struct devwl_event) */
	size_t ngroups;
	gid_t groups[DEVWL_CALLER_GROUPS_MAX];
};

/* One notification's target. */
struct devwl_target {
	pid_t tid;
	int root_fd; /* O_PATH: /proc/TID/root, or the handler's own root (not ours to close) */
	bool root_is_host; /* the caller's root is the handler's: same mount, same inode */
	bool root_cached;  /* root_fd is the caller context's cached root (not ours to close) */
	int start_fd;	   /* O_PATH: where a relative path starts (cwd or dirfd), or -1 */
	bool have_creds;
	struct devwl_creds creds;
};

struct devwl_caller {
	int host_root;	 /* O_PATH "/" of the handler, to return to */
	int host_cwd;	 /* O_PATH of the handler thread's cwd at init */
	int host_proc;	 /* O_PATH the handler's /proc */
	int private_mnt; /* never-attached tmpfs holding devwl's own nodes (nodev fallback) */
	int own_mntns;	 /* our mount namespace, opened at the first bind */
	bool lsm_labels; /* an LSM with labels is active (attr/current reads) */
	char lsm_label[256];
	dev_t proc_dev;
	int userns_fd; /* O_PATH of our user namespace, held (caller_init says why) */
	dev_t userns_dev;
	ino_t userns_ino;
	pid_t fs_tid;	      /* the thread that did unshare(CLONE_FS) */
	uint64_t root_mnt_id; /* of the handler's "/" : a caller sharing it needs no chroot */
	ino_t root_ino;
	dev_t root_dev;
	/* The last caller root that was not ours, kept open for the next call from the same
	 * root (caller_forget lets go of it), with its identity as its fd says it. */
	int cached_root;
	uint64_t cached_mnt_id;
	ino_t cached_ino;
	dev_t cached_dev;
	bool inside; /* chrooted into a caller's root */
	bool moved;  /* fchdir'ed to a caller's start directory without chroot */
	bool as_caller;
	/* What become() switched, so that leave() restores exactly that. */
	bool groups_changed;
	bool ids_changed;
	bool caps_changed;
	bool umask_changed;
	bool broken; /* could not return to the host root: refuse to act */
	uid_t saved_fsuid;
	gid_t saved_fsgid;
	mode_t saved_umask;
	int saved_ngroups;
	gid_t saved_groups[DEVWL_CALLER_GROUPS_MAX];
	struct __user_cap_data_struct saved_caps[2];
	char status[16384];
	char pathbuf[4200];
	char walk[2][PATH_MAX + 256]; /* a path being walked (caller_lookup) */
};

int caller_init(struct devwl_caller *c);
/*
 * A twin of the node st describes (same device, owner, mode) on the twins' tmpfs of the
 * mount namespace ns (an fd of it; one tmpfs per namespace, kept by the process), as a
 * detached mount (open_tree) to bind over the node, which name (a path) names: its fd,
 * or -errno (-ENOTTY: a kernel without mount namespace ids, before 6.10).
 */
int caller_twin_tree(int ns, const struct stat *st, const char *name);
/*
 * May path (its last component) name a twin of ours? false: no twin is bound at that
 * name in any namespace, and its unlink or rename is the kernel's alone.
 */
bool caller_twin_named(const char *path);
/*
 * The twin st describes (stat of a node through the mount bound over it) on the twins'
 * tmpfs of mount namespace ns, unmounted or detached by its node's removal: drop its name,
 * so that its slot serves again. Not a twin of ours there: nothing.
 */
void caller_twin_forget(int ns, const struct stat *st);
void caller_done(struct devwl_caller *c);
/* Close the cached root, which pins a container's root mount while it is kept. */
void caller_forget(struct devwl_caller *c);

/*
 * Open the target's root and, for a relative path, the directory it starts from:
 * its cwd (dirfd AT_FDCWD) or its descriptor dirfd. Call SECCOMP_IOCTL_NOTIF_ID_VALID
 * afterwards, before trusting them. Errors: -ENOENT (gone), -EBADF, as openat.
 */
int target_open(struct devwl_caller *c, struct devwl_target *t, pid_t tid, int dirfd,
		bool need_start);

/* Room for any name proc_link() writes. */
#define PROC_LINK_MAX 48

/*
 * The /proc entry (relative to /proc) of tid's root (start false), or of where a call of
 * tid's with dirfd starts (start true): its cwd for AT_FDCWD, else the fd. Returns false
 * for a dirfd that names no fd.
 */
bool proc_link(char buf[PROC_LINK_MAX], pid_t tid, int dirfd, bool start);
void target_close(struct devwl_target *t);

/* Read the caller thread's credentials into t->creds once. Errors: as read, -E2BIG. */
int target_read_creds(struct devwl_caller *c, struct devwl_target *t);

/*
 * Enter the target's root (chroot) and start directory. become() then takes the caller's
 * whole credential: fsuid/fsgid/groups/umask and, as the effective set, the caller's own
 * (where it is in our user namespace; none otherwise) within ours, plus extra_caps (e.g.
 * CAP_MKNOD); it needs no enter() first (a lookup scoped by RESOLVE_IN_ROOT needs no
 * chroot), but a chroot needs our own capabilities, so enter() never follows it without a
 * leave() between. Leave always returns to the host root and the saved credentials.
 */
int caller_enter(struct devwl_caller *c, struct devwl_target *t);
int caller_become(struct devwl_caller *c, struct devwl_target *t, uint64_t extra_caps);
void caller_leave(struct devwl_caller *c);
/* After become(): did it switch what decides a lookup (fs ids, groups, capabilities)? */
bool caller_switched(const struct devwl_caller *c);

/*
 * A lookup of ours failed for want of our own resources, or was interrupted (err > 0):
 * it says nothing of what the path names for the caller.
 */
bool caller_own_trouble(int err);

/*
 * A lookup of ours was refused (err > 0): EACCES or EPERM depend on who looks (file
 * permissions, an LSM, a FUSE mount that admits only its owner), so the caller's own
 * lookup may succeed where ours did not.
 */
static inline bool caller_refused(int err)
{
	return err == EACCES || err == EPERM;
}

/*
 * Inside: resolve path as the caller would, to an O_PATH fd (O_NOFOLLOW honoured,
 * openat2 resolve flags honoured). A path that reaches a magic link (/proc/self/fd/N,
 * /dev/stdin, /proc/PID/root/..., a symlink to one) is walked component by component so
 * that it names the caller's objects, and *ret_walked is set (also on failure): the
 * kernel must not be left to walk it again. Errors: as openat2; -EACCES for a magic link
 * of another process; -EPERM where the caller's procfs cannot be mapped to it.
 */
int caller_lookup(struct devwl_caller *c, struct devwl_target *t, const char *path, int oflags,
		  uint64_t resolve, int *ret_fd, bool *ret_walked);

/*
 * Outside (no enter()): caller_lookup's first answer for an absolute path the caller
 * opens with no resolve flags, scoped to its root by RESOLVE_IN_ROOT instead of a chroot
 * (the same "/" for absolute symlinks, the same ".." at the root; a racing rename fails
 * EAGAIN or EXDEV where a chroot would let it through). Returns 0 and *ret_fd; the
 * lookup's error where caller_lookup would return it unwalked; or 1 where only
 * the full path can say (a magic link, a symlink on a failing path, a race, our own
 * resources): then enter() and caller_lookup().
 */
int caller_lookup_in_root(struct devwl_caller *c, struct devwl_target *t, const char *path,
			  int oflags, int *ret_fd);

/*
 * /dev/tty for the caller: open its controlling terminal (as the kernel's /dev/tty does,
 * without checking the terminal node's own permissions) through an fd it holds on it.
 * Errors: -ENXIO it has none (the kernel's answer), -EPERM its terminal cannot be
 * reached or is ambiguous, as openat.
 */
int caller_open_ctty(struct devwl_caller *c, struct devwl_target *t, int oflags, int *ret_fd);

/* Reopen an O_PATH fd with real open flags (under the current credentials). */
int caller_reopen(struct devwl_caller *c, int opath_fd, int oflags, int *ret_fd);

/*
 * As the caller: may it open its node opath_fd with oflags? File permissions only (the
 * inode's mode, owner and groups), not the nodev state of its mount. 0 or -errno.
 */
int caller_may_open(int opath_fd, int oflags);

/*
 * For callers whose own node sits on a nodev mount (every filesystem mounted inside a
 * user namespace), once the policy allowed the device and caller_may_open() the
 * caller's node: caller_private_node(), as ourselves, makes the device type
 * (S_IFCHR/S_IFBLK) rdev on a private, never-attached tmpfs; caller_open_private(),
 * as the caller (become), opens it with oflags. Errors: as fsopen/mknodat/openat.
 */
int caller_private_node(struct devwl_caller *c, mode_t type, dev_t rdev);
int caller_open_private(struct devwl_caller *c, mode_t type, dev_t rdev, int oflags, int *ret_fd);

/*
 * Outside (after leave()), as ourselves: make the kernel able to open the caller's node
 * node_fd in the caller's own context. A twin of it (same device, owner and mode) is made
 * on a tmpfs of devwl's, which is not nodev, and bound over node_fd in the caller's mount
 * namespace: the caller's opens then reach a node the kernel opens, judged by its device
 * cgroup, its capabilities and its LSM domain. node_st: node_fd's stat (the mknod's or
 * the rename's, taken as the caller); name: the caller's path of it (caller_twin_named()).
 * Needs CAP_SYS_ADMIN over that namespace.
 * Errors: -EINVAL not a device or not outside, as mknodat/open_tree/setns/move_mount;
 * -EIO we could not return to our own namespace (the context refuses to act after).
 */
int caller_bind_node(struct devwl_caller *c, struct devwl_target *t, int node_fd,
		     const struct stat *node_st, const char *name);

/*
 * Outside, as ourselves: if node_fd (an O_PATH fd the caller's lookup gave, not following
 * a last symlink) is the root of a twin of ours mounted in the caller's mount namespace,
 * unmount it there and drop the twin's name. Unmounting a twin only gives up the caller's
 * own access to the device (its node is on a nodev mount). 1 unmounted, 0 not a twin of
 * ours (of another namespace, or whose tmpfs devwl let go), -errno; -EIO as
 * caller_bind_node().
 */
int caller_unbind_twin(struct devwl_caller *c, struct devwl_target *t, int node_fd);

/*
 * Does the caller run under another LSM label (AppArmor, SELinux, Smack) than ours? 1 yes,
 * 0 no (or no such LSM), -errno we could not tell. A Landlock domain shows nowhere: Linux
 * offers no way to see one from outside.
 */
int caller_foreign_lsm(struct devwl_caller *c, struct devwl_target *t);

/*
 * Inside: an O_PATH fd of path's parent, resolved without magic links, as the one
 * directory a node is probed (gate.h) and then made in; *ret_name is path's last part.
 */
int caller_parent(struct devwl_caller *c, const char *path, const char **ret_name);

/*
 * Outside (no enter(); become() may have run): caller_parent's answer for an absolute path,
 * scoped to the caller's root by RESOLVE_IN_ROOT instead of a chroot, as
 * caller_lookup_in_root() scopes an open. Returns 0 and *ret_fd; the lookup's error, which
 * the chrooted lookup would give the same; or 1 where only that one can say (a magic link
 * on the way, a racing rename, our own resources, a relative path): then enter(), with
 * our own credentials, and caller_parent().
 */
int caller_parent_in_root(struct devwl_caller *c, struct devwl_target *t, const char *path,
			  const char **ret_name, int *ret_fd);

/*
 * Inside, as the caller: mknod name in dir (caller_parent()) with mode/dev. *ret_st is the
 * node created or found (zeroed where there is none); *ret_node (may be NULL) gets an
 * O_PATH fd of a node made, or -1. Errors: as mknodat; -EEXIST comes with *ret_st of the
 * existing node so a restarted call can be recognised.
 */
int caller_mknod(int dir, const char *name, mode_t mode, dev_t dev, struct stat *ret_st,
		 int *ret_node);

/* Our /proc, open since caller_init(): reachable from inside a caller's root too. */
int caller_proc(const struct devwl_caller *c);

/*
 * What path names for the target (whose creds target_read_creds() read), looked up by a
 * child process that holds the caller's ids as its real, effective and saved ones and no
 * capability (ascaller.c): for a root or cwd that refuses devwl but not the caller (a FUSE
 * mount of the caller's user namespace). Only type, rdev, dev and ino of *ret are set.
 * A magic link on the way is -ELOOP; a child that has not answered within timeout_ms is
 * killed: -ETIMEDOUT; one that could not take the caller's ids (we lack CAP_SETUID,
 * CAP_SETGID or CAP_SYS_CHROOT) -EOPNOTSUPP. Otherwise 0, or the lookup's error.
 */
int caller_stat_as(struct devwl_caller *c, const struct devwl_target *t, int dirfd,
		   const char *path, int oflags, uint64_t resolve, unsigned int timeout_ms,
		   struct stat *ret);

#endif
