/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwl_node_place() and devwl_node_unplace() into a running target with a mount
 * namespace and root of its own (placetest.h), from the host's mount namespace: the node
 * is made where the target sees the path, works for it and has the owner and mode asked
 * whatever our umask, while the host's same paths stay untouched; the same node again is
 * 1, another file -EEXIST; a symlink anywhere in the path (to the host's "/" or to /tmp)
 * is refused and nothing is made on either side; missing parents with and without
 * DEVWL_PLACE_MKDIR; a target that has exited is -ESRCH; unplace removes only that device
 * and an fd the target holds on the node keeps working after it.
 */
#include <dirent.h>

#include "placetest.h"

static char node[128], host_node[160];

static int place(struct pt_target *t, struct devwl_place p, struct devwl_error *err)
{
	*err = (struct devwl_error){0};
	/* The target's root is ours alone: as confined as the node gate asks (gate()). */
	p.flags |= DEVWL_PLACE_CONFINED;
	return devwl_node_place(t->pidfd, &p, err);
}

/* Invalid requests: refused before the target is looked at, each naming why. */
static void bad_requests(struct pt_target *t)
{
	static const struct {
		const char *path;
		int type;
		uint32_t maj;
		mode_t mode;
		unsigned int flags;
		int want;
		const char *says;
	} rows[] = {
		{"dev/x", DEVWL_DEV_CHAR, 1, 0666, 0, -EINVAL, "not absolute"},
		{"/dev/../x", DEVWL_DEV_CHAR, 1, 0666, 0, -EINVAL, "\"..\""},
		{"/dev/./x", DEVWL_DEV_CHAR, 1, 0666, 0, -EINVAL, "\".\""},
		{"/dev/x/", DEVWL_DEV_CHAR, 1, 0666, 0, -EINVAL, "ends in '/'"},
		{"/", DEVWL_DEV_CHAR, 1, 0666, 0, -EINVAL, "ends in '/'"},
		{"/dev/x", 'x', 1, 0666, 0, -EINVAL, "not DEVWL_DEV_CHAR or DEVWL_DEV_BLOCK"},
		{"/dev/x", 'c', 1, 0666, 0, -EINVAL, "not DEVWL_DEV_CHAR or DEVWL_DEV_BLOCK"},
		{"/dev/x", DEVWL_DEV_CHAR, 4096, 0666, 0, -EINVAL, "12-bit major"},
		{"/dev/x", DEVWL_DEV_CHAR, 1, 010666, 0, -EINVAL, "permission bits"},
		{"/dev/x", DEVWL_DEV_CHAR, 1, 0666, 8, -EINVAL, "unknown flags"},
	};
	struct devwl_place p = pt_place("/dev/x", DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, 0);
	struct devwl_error err;
	char longpath[PATH_MAX + 8];
	int fd = -1, r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		r = place(t,
			  pt_place(rows[i].path, rows[i].type, rows[i].maj, 3, rows[i].mode, 0, 0,
				   rows[i].flags),
			  &err);
		LT_CHECK(r == rows[i].want && err.code == r && strstr(err.msg, rows[i].says),
			 "place %s type %d mode %o flags %u: %d \"%s\", want %d saying %s",
			 rows[i].path, rows[i].type, (unsigned int)rows[i].mode, rows[i].flags, r,
			 err.msg, rows[i].want, rows[i].says);
	}
	p.reserved[2] = 1;
	r = place(t, p, &err);
	LT_CHECK(r == -EINVAL && strstr(err.msg, "reserved[2]"), "reserved: %d %s", r, err.msg);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	r = place(t, pt_place(longpath, DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, 0), &err);
	LT_CHECK(r == -ENAMETOOLONG, "a path of PATH_MAX: %d %s", r, err.msg);
	r = place(t,
		  pt_place("/dev/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
			   DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, 0),
		  &err);
	LT_CHECK(r == -ENAMETOOLONG && strstr(err.msg, "NAME_MAX"), "a long name: %d %s", r,
		 err.msg);
	r = devwl_node_place(t->pidfd, NULL, &err);
	LT_CHECK(r == -EINVAL, "NULL place: %d", r);
	r = devwl_node_unplace(t->pidfd, "/dev/../x", DEVWL_DEV_CHAR, 1, 3, &err);
	LT_CHECK(r == -EINVAL, "unplace of ..: %d %s", r, err.msg);

	/* Not a pidfd: an fd of another kind, and no fd at all. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	r = devwl_node_place(
		fd, &(struct devwl_place){.path = "/dev/x", .type = DEVWL_DEV_CHAR, .mode = 0666},
		&err);
	LT_CHECK(r == -EBADF && strstr(err.msg, "not a pidfd"), "/dev/null as pidfd: %d %s", r,
		 err.msg);
	close(fd);
	r = devwl_node_place(-1, &p, NULL);
	LT_CHECK(r == -EINVAL, "reserved checked first, err NULL: %d", r);
	p.reserved[2] = 0;
	r = devwl_node_place(-1, &p, &err);
	LT_CHECK(r == -EBADF, "pidfd -1: %d %s", r, err.msg);
}

static void make_and_use(struct pt_target *t)
{
	struct devwl_error err = {0};
	char buf[256];
	int r = 0;

	/* Our umask must not matter: the mode is set exactly. */
	umask(0777);
	r = place(t, pt_place(node, DEVWL_DEV_CHAR, 1, 3, 0606, 1234, 2345, 0), &err);
	LT_CHECK(r == 0, "place %s: %d %s", node, r, err.msg);
	umask(022);
	pt_ask(t, buf, sizeof(buf), "stat %s", node);
	LT_CHECK(strcmp(buf, "c 0606 1234:2345 1:3") == 0, "the target sees %s as %s", node, buf);
	pt_ask(t, buf, sizeof(buf), "rw %s", node);
	LT_CHECK(strcmp(buf, "ok") == 0, "the target reads and writes %s: %s", node, buf);
	LT_CHECK(!pt_host_has(host_node), "the host's %s is untouched", host_node);
	snprintf(buf, sizeof(buf), "%s%s", t->dir, node);
	LT_CHECK(!pt_host_has(buf), "the host's %s (under the target's tmpfs) is untouched", buf);

	/* The same node again: 1, left as it is (its owner and mode were not asked for). */
	r = place(t, pt_place(node, DEVWL_DEV_CHAR, 1, 3, 0600, 0, 0, 0), &err);
	LT_CHECK(r == 1, "the same node again: %d %s", r, err.msg);
	pt_ask(t, buf, sizeof(buf), "stat %s", node);
	LT_CHECK(strcmp(buf, "c 0606 1234:2345 1:3") == 0, "left as it was: %s", buf);

	/* Something else there: another number, another type, a file, a symlink. */
	r = place(t, pt_place(node, DEVWL_DEV_CHAR, 1, 5, 0666, 0, 0, 0), &err);
	LT_CHECK(r == -EEXIST && strstr(err.msg, "character device 1:3 is there"),
		 "another minor: %d %s", r, err.msg);
	r = place(t, pt_place(node, DEVWL_DEV_BLOCK, 1, 3, 0666, 0, 0, 0), &err);
	LT_CHECK(r == -EEXIST, "a block node of the same number: %d %s", r, err.msg);
	r = place(t, pt_place("/dev/file", DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, 0), &err);
	LT_CHECK(r == -EEXIST && strstr(err.msg, "a regular file is there"), "a file: %d %s", r,
		 err.msg);
	r = place(t, pt_place("/dev/lnk", DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, 0), &err);
	LT_CHECK(r == -EEXIST && strstr(err.msg, "a symbolic link is there"),
		 "a symlink to /dev/null in its place: %d %s", r, err.msg);
	r = place(t, pt_place("/dev", DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, DEVWL_PLACE_MKDIR), &err);
	LT_CHECK(r == -EEXIST && strstr(err.msg, "a directory is there"), "a directory: %d %s", r,
		 err.msg);
	/* Empty components are one '/'. */
	r = place(t, pt_place("//dev///devwl-place-73-same", DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, 0),
		  &err);
	LT_CHECK(r == 0, "//dev///name: %d %s", r, err.msg);
	pt_ask(t, buf, sizeof(buf), "stat /dev/devwl-place-73-same");
	LT_CHECK(strcmp(buf, "c 0666 0:0 1:3") == 0, "//dev///name made /dev/name: %s", buf);
	r = devwl_node_unplace(t->pidfd, "/dev/devwl-place-73-same", DEVWL_DEV_CHAR, 1, 3, &err);
	LT_CHECK(r == 0, "unplace /dev/devwl-place-73-same: %d %s", r, err.msg);
}

/* A symlink in the path, to the host's "/" or to /tmp as the host would read it: refused. */
static void symlinks(struct pt_target *t)
{
	static const struct {
		const char *path, *names, *host;
	} rows[] = {
		{"/hostroot/devwl-place-73-link", "\"/hostroot\"", "/devwl-place-73-link"},
		{"/hostroot/tmp/devwl-place-73-link", "\"/hostroot\"", "/tmp/devwl-place-73-link"},
		{"/dev/tmplink/devwl-place-73-link", "\"/dev/tmplink\"",
		 "/tmp/devwl-place-73-link"},
		{"/dev/tmplink/devwl-place-73-sub/devwl-place-73-link", "\"/dev/tmplink\"",
		 "/tmp/devwl-place-73-sub/devwl-place-73-link"},
	};
	struct devwl_error err = {0};
	char buf[256];
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		for (unsigned int flags = 0; flags <= DEVWL_PLACE_MKDIR;
		     flags += DEVWL_PLACE_MKDIR) {
			r = place(t,
				  pt_place(rows[i].path, DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, flags),
				  &err);
			LT_CHECK(r == -ELOOP && strstr(err.msg, rows[i].names) &&
					 strstr(err.msg, "symbolic link"),
				 "place %s (flags %u): %d \"%s\", want ELOOP naming %s",
				 rows[i].path, flags, r, err.msg, rows[i].names);
			LT_CHECK(!pt_host_has(rows[i].host), "the host has %s", rows[i].host);
			pt_ask(t, buf, sizeof(buf), "stat %s", rows[i].host);
			LT_CHECK(strncmp(buf, "err", 3) == 0, "the target has %s: %s", rows[i].host,
				 buf);
		}
		r = devwl_node_unplace(t->pidfd, rows[i].path, DEVWL_DEV_CHAR, 1, 3, &err);
		LT_CHECK(r == -ELOOP, "unplace %s: %d %s", rows[i].path, r, err.msg);
	}
	pt_ask(t, buf, sizeof(buf), "stat /tmp/devwl-place-73-sub");
	LT_CHECK(strncmp(buf, "err", 3) == 0,
		 "MKDIR made /tmp/devwl-place-73-sub through a link: %s", buf);
	LT_CHECK(!pt_host_has("/tmp/devwl-place-73-sub"), "the host has /tmp/devwl-place-73-sub");
	/* The link's text is the target's: no line break of it reaches the message. */
	r = place(t, pt_place("/dev/nllink/x", DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, 0), &err);
	LT_CHECK(r == -ELOOP && !strchr(err.msg, '\n') && strstr(err.msg, "/tmp?error"),
		 "a link to a text with a line break: %d %s", r, err.msg);
	/* A node as a parent: not a directory. */
	r = place(t, pt_place("/dev/file/x", DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, DEVWL_PLACE_MKDIR),
		  &err);
	LT_CHECK(r == -ENOTDIR && strstr(err.msg, "a regular file, not a directory"),
		 "a file as a parent: %d %s", r, err.msg);
}

static void parents(struct pt_target *t)
{
	struct devwl_error err = {0};
	char buf[256];
	int r = 0;

	r = place(t, pt_place("/dev/net/a/tun", DEVWL_DEV_CHAR, 1, 3, 0660, 0, 0, 0), &err);
	LT_CHECK(r == -ENOENT && strstr(err.msg, "\"/dev/net\" does not exist") && err.offset == 5,
		 "a missing parent: %d \"%s\" at %zu", r, err.msg, err.offset);
	pt_ask(t, buf, sizeof(buf), "stat /dev/net");
	LT_CHECK(strncmp(buf, "err", 3) == 0, "/dev/net made without MKDIR: %s", buf);
	umask(0777);
	r = place(t,
		  pt_place("/dev/net/a/tun", DEVWL_DEV_CHAR, 1, 3, 0660, 0, 0, DEVWL_PLACE_MKDIR),
		  &err);
	umask(022);
	LT_CHECK(r == 0, "MKDIR: %d %s", r, err.msg);
	pt_ask(t, buf, sizeof(buf), "stat /dev/net");
	LT_CHECK(strcmp(buf, "d 0755 0:0 0:0") == 0, "/dev/net as made: %s", buf);
	pt_ask(t, buf, sizeof(buf), "stat /dev/net/a");
	LT_CHECK(strcmp(buf, "d 0755 0:0 0:0") == 0, "/dev/net/a as made: %s", buf);
	pt_ask(t, buf, sizeof(buf), "rw /dev/net/a/tun");
	LT_CHECK(strcmp(buf, "ok") == 0, "the node under new parents works: %s", buf);
	LT_CHECK(!pt_host_has("/dev/net/a"), "the host has /dev/net/a");
	r = devwl_node_unplace(t->pidfd, "/dev/net/a/tun", DEVWL_DEV_CHAR, 1, 3, &err);
	LT_CHECK(r == 0, "unplace /dev/net/a/tun: %d %s", r, err.msg);
	r = devwl_node_unplace(t->pidfd, "/dev/nonesuch/tun", DEVWL_DEV_CHAR, 1, 3, &err);
	LT_CHECK(r == 1, "unplace under a missing parent: %d %s", r, err.msg);
}

static void unplace(struct pt_target *t)
{
	struct devwl_error err = {0};
	char buf[256];
	int r = 0;

	r = devwl_node_unplace(t->pidfd, "/dev/file", DEVWL_DEV_CHAR, 1, 3, &err);
	LT_CHECK(r == -EEXIST && strstr(err.msg, "a regular file"), "unplace a file: %d %s", r,
		 err.msg);
	pt_ask(t, buf, sizeof(buf), "stat /dev/file");
	LT_CHECK(buf[0] == 'f', "the file left: %s", buf);
	r = devwl_node_unplace(t->pidfd, node, DEVWL_DEV_CHAR, 1, 5, &err);
	LT_CHECK(r == -EEXIST, "unplace another minor: %d %s", r, err.msg);
	r = devwl_node_unplace(t->pidfd, "/dev/lnk", DEVWL_DEV_CHAR, 1, 3, &err);
	LT_CHECK(r == -EEXIST && strstr(err.msg, "symbolic link"), "unplace a symlink: %d %s", r,
		 err.msg);
	r = devwl_node_unplace(t->pidfd, node, 'x', 1, 3, &err);
	LT_CHECK(r == -EINVAL, "unplace type x: %d %s", r, err.msg);

	/* An fd the target holds stays usable: the kernel revokes nothing. */
	pt_ask(t, buf, sizeof(buf), "hold %s", node);
	LT_CHECK(strcmp(buf, "ok") == 0, "the target opens %s: %s", node, buf);
	r = devwl_node_unplace(t->pidfd, node, DEVWL_DEV_CHAR, 1, 3, &err);
	LT_CHECK(r == 0, "unplace %s: %d %s", node, r, err.msg);
	pt_ask(t, buf, sizeof(buf), "stat %s", node);
	LT_CHECK(strcmp(buf, "err stat ENOENT") == 0, "%s after unplace: %s", node, buf);
	pt_ask(t, buf, sizeof(buf), "held");
	LT_CHECK(strcmp(buf, "ok") == 0, "the fd held across unplace: %s", buf);
	r = devwl_node_unplace(t->pidfd, node, DEVWL_DEV_CHAR, 1, 3, &err);
	LT_CHECK(r == 1, "unplace again: %d %s", r, err.msg);
}

static int dir_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static bool has_probe(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	bool found = false;

	if (!d)
		return false;
	while ((de = readdir(d)))
		found |= !strncmp(de->d_name, ".devwl-nodev-", 13);
	closedir(d);
	return found;
}

/*
 * The node gate: unconfined, a node is made only on a mount proven nodev (DEVWL_PLACE_
 * MADE_NODEV), never on one where the kernel opens it (its "/": refused, nothing made,
 * the probe gone too), whatever our umask; a twin needs a confined target.
 */
static void gate(struct pt_target *t)
{
	struct devwl_place p = pt_place("/dev/devwl-73-gate", DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, 0);
	struct devwl_error err = {0};
	char buf[256];
	mode_t old = umask(0777);
	int r = 0;

	r = devwl_node_place(t->pidfd, &p, &err);
	LT_CHECK(r == -EPERM && strstr(err.msg, "only on a nodev mount"),
		 "unconfined, on a mount devices open on: %d %s", r, err.msg);
	pt_ask(t, buf, sizeof(buf), "stat /dev/devwl-73-gate");
	LT_CHECK(strcmp(buf, "err stat ENOENT") == 0, "made all the same: %s", buf);
	p.path = "/nd/null";
	r = devwl_node_place(t->pidfd, &p, &err);
	LT_CHECK(r == DEVWL_PLACE_MADE_NODEV, "unconfined, on a nodev mount: %d %s", r, err.msg);
	pt_ask(t, buf, sizeof(buf), "stat /nd/null");
	LT_CHECK(strcmp(buf, "c 0666 0:0 1:3") == 0, "the target sees %s", buf);
	pt_ask(t, buf, sizeof(buf), "rw /nd/null");
	LT_CHECK(strncmp(buf, "err", 3) == 0, "a node on a nodev mount opened: %s", buf);
	umask(old);
	p.path = "/dev/devwl-73-twin";
	p.flags = DEVWL_PLACE_TWIN;
	r = devwl_node_place(t->pidfd, &p, &err);
	LT_CHECK(r == -EINVAL && strstr(err.msg, "without DEVWL_PLACE_CONFINED"),
		 "a twin unconfined: %d %s", r, err.msg);
	r = devwl_node_unplace(t->pidfd, "/nd/null", DEVWL_DEV_CHAR, 1, 3, &err);
	LT_CHECK(r == 0, "unplace /nd/null: %d %s", r, err.msg);
	/* Nothing left: neither the node nor a probe. */
	snprintf(buf, sizeof(buf), "/proc/%d/root/nd", (int)t->pid);
	LT_CHECK(dir_entries(buf) == 0, "%s holds %d entries", buf, dir_entries(buf));
	snprintf(buf, sizeof(buf), "/proc/%d/root/dev", (int)t->pid);
	LT_CHECK(!has_probe(buf), "a probe was left in %s", buf);
}

static void dead_targets(void)
{
	struct devwl_place p =
		pt_place("/dev/devwl-place-73-dead", DEVWL_DEV_CHAR, 1, 3, 0666, 0, 0, 0);
	struct devwl_error err = {0};
	pid_t pid = 0;
	int fd = -1, r = 0;

	for (int reap = 0; reap <= 1; reap++) {
		fd = pt_dead_pidfd(reap, &pid);
		r = devwl_node_place(fd, &p, &err);
		LT_CHECK(r == -ESRCH && strstr(err.msg, "exited"), "%s target: %d %s",
			 reap ? "a reaped" : "a zombie", r, err.msg);
		r = devwl_node_unplace(fd, p.path, DEVWL_DEV_CHAR, 1, 3, &err);
		LT_CHECK(r == -ESRCH, "unplace, %s target: %d %s", reap ? "a reaped" : "a zombie",
			 r, err.msg);
		if (!reap)
			waitpid(pid, NULL, 0);
		close(fd);
	}
	LT_CHECK(!pt_host_has(p.path), "the host has %s", p.path);
}

int main(void)
{
	struct pt_target t;

	pt_need_kernel();
	snprintf(node, sizeof(node), "/dev/devwl-place-73-%d", (int)getpid());
	snprintf(host_node, sizeof(host_node), "%s", node);
	pt_start(&t, false);
	bad_requests(&t);
	make_and_use(&t);
	symlinks(&t);
	parents(&t);
	unplace(&t);
	gate(&t);
	pt_stop(&t);
	dead_targets();
	if (lt_failures)
		fprintf(stderr, "%d check(s) failed\n", lt_failures);
	else
		printf("PASS\n");
	return lt_failures ? 1 : 0;
}
