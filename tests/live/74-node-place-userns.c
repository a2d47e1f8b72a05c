/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwl_node_place() into a target in a user namespace of its own (its ids are the host's
 * PT_BASE.., its root dir owned by its root, as a user-namespace container's rootfs is):
 * the owner asked is in the target's view, so the target sees exactly that uid and gid;
 * (uid_t)-1 and (gid_t)-1 are its root; directories DEVWL_PLACE_MKDIR makes are owned by
 * its root, not by the host's (nobody, to it); an id it has no mapping for is refused and
 * nothing is made; a twin placed and unplaced from the target's own mount namespace; a
 * twin's slot freed with its node, 600 times over.
 */
#include "placetest.h"

/* Is a mount at path (as t sees its tree) in t's mount namespace? Its root within its
 * file system into root (size bytes; may be NULL). */
static bool mounted_at(const struct pt_target *t, const char *path, char *root, size_t size)
{
	char file[64], line[1024], want[300];
	bool found = false;
	FILE *f = NULL;

	snprintf(file, sizeof(file), "/proc/%d/mountinfo", (int)t->pid);
	snprintf(want, sizeof(want), " %s ", path);
	f = fopen(file, "re");
	if (!f)
		LT_DIE("%s: %s", file, strerror(errno));
	while (!found && fgets(line, sizeof(line), f)) {
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ...": p at the space before ROOT, q before
		 * MOUNTPOINT. */
		char *p = line, *q = NULL;

		for (int i = 0; i < 3 && p; i++)
			p = strchr(p + 1, ' ');
		q = p ? strchr(p + 1, ' ') : NULL;
		found = q && strncmp(q, want, strlen(want)) == 0;
		if (found && root)
			snprintf(root, size, "%.*s", (int)(q - p - 1), p + 1);
	}
	fclose(f);
	return found;
}

/*
 * A twin, placed and unplaced by a supervisor in the target's own mount namespace (an
 * embedder whose workload shares its mounts): there the twin is a mount point of the
 * unlinker's namespace, whose unlink the kernel refuses EBUSY, so unplace unmounts it
 * first. (From another mount namespace the unlink detaches it, as devwld's does.)
 */
static void twin_in_our_namespace(const struct pt_target *t)
{
	char ns[64];
	pid_t pid = 0;
	int status = 0, fd = -1;

	pid = fork();
	if (pid < 0)
		LT_DIE("fork: %s", strerror(errno));
	if (pid == 0) {
		struct devwl_error err = {0};
		struct stat st;
		const struct devwl_place twinned =
			pt_place("/dev/devwl-74-twin", DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0,
				 DEVWL_PLACE_CONFINED | DEVWL_PLACE_TWIN);
		char host[300];
		int r = 0;

		snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)t->pid);
		fd = open(ns, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNS) < 0)
			LT_DIE("setns %s: %s", ns, strerror(errno));
		umask(027);
		r = devwl_node_place(t->pidfd, &twinned, &err);
		LT_CHECK(r == 0, "place a twinned /dev/devwl-74-twin: %d %s", r, err.msg);
		LT_CHECK(mounted_at(t, "/dev/devwl-74-twin", NULL, 0),
			 "no twin over /dev/devwl-74-twin");
		/* The twin is what a path reaches: the node's owner and mode, whatever our
		 * umask (027, set above), and its device. */
		snprintf(host, sizeof(host), "/proc/%d/root/dev/devwl-74-twin", (int)t->pid);
		LT_CHECK(stat(host, &st) == 0 && (st.st_mode & 07777) == 0666 &&
				 st.st_uid == PT_BASE && st.st_gid == PT_BASE &&
				 st.st_rdev == makedev(1, 3),
			 "the twin: %04o %u:%u %u:%u", (unsigned int)(st.st_mode & 07777),
			 (unsigned int)st.st_uid, (unsigned int)st.st_gid, major(st.st_rdev),
			 minor(st.st_rdev));
		r = devwl_node_unplace(t->pidfd, "/dev/devwl-74-twin", DEVWL_DEV_CHAR, 1, 3, &err);
		LT_CHECK(r == 0, "unplace the twinned node from its namespace: %d %s", r, err.msg);
		LT_CHECK(!mounted_at(t, "/dev/devwl-74-twin", NULL, 0),
			 "its twin is still mounted");
		LT_CHECK(lstat(host, &st) < 0 && errno == ENOENT, "%s is still there", host);
		_exit(lt_failures ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		LT_CHECK(0, "the twin placed and unplaced in the target's namespace: status %#x",
			 status);
}

/*
 * A twin's name goes with its node: placed and unplaced (from our namespace: the unlink
 * detaches the twin) more times than a twins' tmpfs has slots (511), each twin is the
 * first slot's, "/0" as the mount's root. Were the names left, each would take the next
 * slot.
 */
static void twin_slots_reused(const struct pt_target *t)
{
	const struct devwl_place twinned =
		pt_place("/dev/devwl-74-again", DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0,
			 DEVWL_PLACE_CONFINED | DEVWL_PLACE_TWIN);
	struct devwl_error err = {0};
	char root[64];
	int r = 0;

	for (int i = 0; i < 600; i++) {
		r = devwl_node_place(t->pidfd, &twinned, &err);
		if (r != 0) {
			LT_CHECK(0, "placement %d: %d %s", i, r, err.msg);
			return;
		}
		if (!mounted_at(t, "/dev/devwl-74-again", root, sizeof(root)) ||
		    strcmp(root, "/0") != 0) {
			LT_CHECK(0, "placement %d: its twin is not the first slot's: '%s'", i,
				 root);
			return;
		}
		r = devwl_node_unplace(t->pidfd, "/dev/devwl-74-again", DEVWL_DEV_CHAR, 1, 3, &err);
		if (r != 0) {
			LT_CHECK(0, "unplace %d: %d %s", i, r, err.msg);
			return;
		}
	}
}

int main(void)
{
	struct devwl_error err = {0};
	struct pt_target t;
	struct stat st;
	char buf[256], host[256];
	int r = 0;

	pt_need_kernel();
	if (!pt_start(&t, true)) {
		if (errno == EPERM || errno == EINVAL || errno == ENOSPC)
			LT_SKIP("the kernel refuses a user namespace here (%s)", strerror(errno));
		LT_DIE("unshare(CLONE_NEWUSER): %s", strerror(errno));
	}

	r = devwl_node_place(t.pidfd,
			     &(struct devwl_place){.path = "/dev/devwl-74",
						   .type = DEVWL_DEV_CHAR,
						   .major = 1,
						   .minor = 3,
						   .mode = 0620,
						   .uid = 1000,
						   .gid = 5,
						   .flags = DEVWL_PLACE_CONFINED},
			     &err);
	LT_CHECK(r == 0, "place /dev/devwl-74 as 1000:5: %d %s", r, err.msg);
	pt_ask(&t, buf, sizeof(buf), "stat /dev/devwl-74");
	LT_CHECK(strcmp(buf, "c 0620 1000:5 1:3") == 0, "the target sees %s", buf);
	pt_ask(&t, buf, sizeof(buf), "rw /dev/devwl-74");
	LT_CHECK(strcmp(buf, "ok") == 0, "its root reads and writes it: %s", buf);

	/* (uid_t)-1: its root; parents made for it are its root's too. */
	r = devwl_node_place(
		t.pidfd,
		&(struct devwl_place){.path = "/dev/dri/by-path/card9",
				      .type = DEVWL_DEV_CHAR,
				      .major = 1,
				      .minor = 3,
				      .mode = 0666,
				      .uid = (uid_t)-1,
				      .gid = (gid_t)-1,
				      .flags = DEVWL_PLACE_MKDIR | DEVWL_PLACE_CONFINED},
		&err);
	LT_CHECK(r == 0, "place /dev/dri/by-path/card9 as its root: %d %s", r, err.msg);
	pt_ask(&t, buf, sizeof(buf), "stat /dev/dri/by-path/card9");
	LT_CHECK(strcmp(buf, "c 0666 0:0 1:3") == 0, "the target sees %s", buf);
	pt_ask(&t, buf, sizeof(buf), "stat /dev/dri");
	LT_CHECK(strcmp(buf, "d 0755 0:0 0:0") == 0, "/dev/dri as the target sees it: %s", buf);
	pt_ask(&t, buf, sizeof(buf), "stat /dev/dri/by-path");
	LT_CHECK(strcmp(buf, "d 0755 0:0 0:0") == 0, "/dev/dri/by-path: %s", buf);
	/* And as the host sees them, through the target's root. */
	snprintf(host, sizeof(host), "/proc/%d/root/dev/dri/by-path/card9", (int)t.pid);
	LT_CHECK(lstat(host, &st) == 0 && st.st_uid == PT_BASE && st.st_gid == PT_BASE,
		 "%s on the host: %s %u:%u", host, strerror(errno), (unsigned int)st.st_uid,
		 (unsigned int)st.st_gid);

	/* Ids it has no mapping for: refused, naming the id; nothing made. */
	r = devwl_node_place(t.pidfd,
			     &(struct devwl_place){.path = "/dev/devwl-74-x",
						   .type = DEVWL_DEV_CHAR,
						   .major = 1,
						   .minor = 3,
						   .mode = 0666,
						   .uid = PT_COUNT},
			     &err);
	LT_CHECK(r == -EINVAL && strstr(err.msg, "uid 65536 is not mapped"),
		 "an unmapped uid: %d %s", r, err.msg);
	r = devwl_node_place(t.pidfd,
			     &(struct devwl_place){.path = "/dev/devwl-74-x",
						   .type = DEVWL_DEV_CHAR,
						   .major = 1,
						   .minor = 3,
						   .mode = 0666,
						   .gid = 4000000000u},
			     &err);
	LT_CHECK(r == -EINVAL && strstr(err.msg, "gid 4000000000 is not mapped"),
		 "an unmapped gid: %d %s", r, err.msg);
	pt_ask(&t, buf, sizeof(buf), "stat /dev/devwl-74-x");
	LT_CHECK(strcmp(buf, "err stat ENOENT") == 0, "made all the same: %s", buf);

	twin_in_our_namespace(&t);
	twin_slots_reused(&t);

	r = devwl_node_unplace(t.pidfd, "/dev/devwl-74", DEVWL_DEV_CHAR, 1, 3, &err);
	LT_CHECK(r == 0, "unplace /dev/devwl-74: %d %s", r, err.msg);
	r = devwl_node_unplace(t.pidfd, "/dev/dri/by-path/card9", DEVWL_DEV_CHAR, 1, 3, &err);
	LT_CHECK(r == 0, "unplace /dev/dri/by-path/card9: %d %s", r, err.msg);
	pt_stop(&t);
	if (lt_failures)
		fprintf(stderr, "%d check(s) failed\n", lt_failures);
	else
		printf("PASS\n");
	return lt_failures ? 1 : 0;
}
