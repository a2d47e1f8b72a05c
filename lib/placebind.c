/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * DEVWL_PLACE_TWIN: a twin of a node devwl_node_place() made, bound over it, so that it
 * opens although the file system holding it is nodev (one a user namespace mounted: a
 * runtime's /dev of a user-namespace container). The twin sits on the twins' tmpfs of the
 * target's mount namespace, which no path reaches, shared with the twins lib/caller.c
 * binds for trapped mknods there (caller_twin_tree; doc/DESIGN.md, nodev mounts).
 *
 * Binding into, and unmounting from, another mount namespace needs the calling thread in
 * it. A throwaway thread does it (unshare(CLONE_FS), then setns), so the caller's thread
 * never leaves its namespace and no child process is made that an embedder's waitpid(-1)
 * could reap.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caller.h"
#include "place.h"
#include "thread.h"
#include "util.h"

/* umount2's MNT_DETACH: <sys/mount.h> and <linux/mount.h> clash in glibc 2.36. */
#define PLACE_MNT_DETACH 2

struct job {
	int ns;	  /* the target's mount namespace */
	int tree; /* the twin's detached mount: bind it; -1: unmount node */
	int node; /* O_PATH fd of the node, in the target's namespace */
	int r;
};

static void *in_ns(void *arg)
{
	/*
	 * Our own procfs, opened before setns: after it "/" is the target's, whose /proc
	 * (of its pid namespace) has no thread-self for us (ENOENT).
	 */
	_cleanup_close_ int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct job *j = arg;
	char self[48];

	if (proc < 0 || unshare(CLONE_FS) < 0 || setns(j->ns, CLONE_NEWNS) < 0) {
		j->r = negerrno();
		return NULL;
	}
	if (j->tree >= 0) {
		if (syscall(SYS_move_mount, j->tree, "", j->node, "",
			    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
			j->r = negerrno();
	} else {
		/* The magic link names the mount the fd is on: the twin's, nothing else. */
		snprintf(self, sizeof(self), "thread-self/fd/%d", j->node);
		if (fchdir(proc) < 0 || syscall(SYS_umount2, self, PLACE_MNT_DETACH) < 0)
			j->r = negerrno();
	}
	return NULL;
}

static int run(struct job *j)
{
	pthread_t th;
	int r = devwl_thread_start(&th, in_ns, j);

	if (r < 0)
		return r;
	pthread_join(th, NULL);
	return j->r;
}

int place_bind_twin(int proc, int node, const char *name)
{
	_cleanup_close_ int ns = -1, tree = -1;
	struct stat st;
	struct job j;

	if (fstat(node, &st) < 0)
		return negerrno();
	ns = openat(proc, "ns/mnt", O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		return negerrno();
	tree = caller_twin_tree(ns, &st, name);
	if (tree < 0)
		return tree;
	j = (struct job){.ns = ns, .tree = tree, .node = node};
	return run(&j);
}

int place_unbind(int proc, int node)
{
	_cleanup_close_ int ns = openat(proc, "ns/mnt", O_RDONLY | O_CLOEXEC);
	struct job j = {.ns = ns, .tree = -1, .node = node};

	if (ns < 0)
		return negerrno();
	return run(&j);
}

void place_twin_forget(int proc, const struct stat *st)
{
	_cleanup_close_ int ns = openat(proc, "ns/mnt", O_RDONLY | O_CLOEXEC);

	if (ns >= 0)
		caller_twin_forget(ns, st);
}
