/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Granted mknods from two callers with different roots, call by call in turn on one
 * handler context: devwl looks an absolute path's parent up in the caller's root with
 * RESOLVE_IN_ROOT, no chroot (decide_mknod), and falls back to the chrooted lookup for a
 * relative path. Each node must land in the caller's own root, as its kernel would put
 * it: through /d (a directory the host has not), /l (an absolute symlink to /d), /up
 * (../../d) and /d/../../d (".." at the root stays there), and d relative to its cwd. B
 * then chroots into its own /sub (same mount: the cached root must be seen to change)
 * and makes them there. The callers hold no CAP_MKNOD and the node waives it: the
 * kernel could make none of them, so each one there was made by devwl, in that root.
 */
#include <dirent.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "livetest.h"

#define ROUNDS 8
#define PATHS  5
static const char *const paths[PATHS] = {"/d/n%d", "/l/l%d", "/up/u%d", "/d/../../d/p%d", "d/r%d"};

static void make_root(const char *dir)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/d", dir);
	if (mkdir(p, 0755) < 0)
		LT_DIE("mkdir %s: %m", p);
	snprintf(p, sizeof(p), "%s/l", dir);
	if (symlink("/d", p) < 0)
		LT_DIE("symlink %s: %m", p);
	snprintf(p, sizeof(p), "%s/up", dir);
	if (symlink("../../d", p) < 0)
		LT_DIE("symlink %s: %m", p);
}

struct child {
	const char *root;
	bool then_sub; /* after ROUNDS rounds, chroot("/sub") and do ROUNDS more */
};

static int drop_mknod(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	d[CAP_MKNOD / 32].effective &= ~(1U << (CAP_MKNOD % 32));
	return (int)syscall(SYS_capset, &h, d);
}

/* One line per phase: "ok=N other=N", ok only where the node is a c 1:3 at the path. */
static int child_main(void *arg)
{
	const struct child *c = arg;

	if (chroot(c->root) < 0 || chdir("/") < 0)
		return 120;
	if (drop_mknod() < 0)
		return 121;
	for (int phase = 0; phase < (c->then_sub ? 2 : 1); phase++) {
		int ok = 0, other = 0;

		if (phase == 1 && (chroot("/sub") < 0 || chdir("/") < 0))
			return 122;
		for (int i = 0; i < ROUNDS; i++)
			for (int k = 0; k < PATHS; k++) {
				char p[64];
				struct stat st;

				snprintf(p, sizeof(p), "%s%d", paths[k], i);
				if (syscall(SYS_mknodat, AT_FDCWD, p, S_IFCHR | 0600,
					    makedev(1, 3)) == 0 &&
				    lstat(p, &st) == 0 && S_ISCHR(st.st_mode) &&
				    st.st_rdev == makedev(1, 3))
					ok++;
				else
					other++;
			}
		printf("ok=%d other=%d\n", ok, other);
	}
	return 0;
}

static void handle(struct lt_sup *s, int nfd, const char *who, int i)
{
	struct devwl_event e;
	int r = devwl_notify_handle(s->notify, nfd, s->node, &e);

	LT_CHECK(r == 0, "%s call %d: devwl_notify_handle: %s", who, i, strerror(-r));
	if (r == 0)
		LT_CHECK(e.verdict == DEVWL_VERDICT_ALLOW && e.error == 0,
			 "%s call %d (%s): verdict %d error %d, want a node made", who, i, e.path,
			 (int)e.verdict, e.error);
}

/* How many entries dir holds. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

int main(void)
{
	char a[] = "/tmp/devwl-mkrootA.XXXXXX", b[] = "/tmp/devwl-mkrootB.XXXXXX", p[96];
	struct child ca = {.root = a}, cb = {.root = b, .then_sub = true};
	struct lt_sup s;
	int afd = -1, bfd = -1, aout = -1, bout = -1, status = 0;
	pid_t apid, bpid;
	char *got = NULL;

	lt_need_root();
	lt_watchdog(60);
	if (access("/d", F_OK) == 0 || access("/sub", F_OK) == 0)
		LT_SKIP("this host has a /d or /sub: a lookup in our root would not fail");
	if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		LT_SKIP("no private mount namespace: %m");
	if (!mkdtemp(a) || !mkdtemp(b))
		LT_DIE("mkdtemp: %m");
	if (mount("devwl-a", a, "tmpfs", 0, "size=1m") < 0 ||
	    mount("devwl-b", b, "tmpfs", 0, "size=1m") < 0)
		LT_SKIP("cannot mount tmpfs: %m");
	snprintf(p, sizeof(p), "%s/sub", b);
	if (mkdir(p, 0755) < 0)
		LT_DIE("mkdir %s: %m", p);
	make_root(a);
	make_root(b);
	make_root(p);

	lt_sup_init(&s, "deny a;allow c 1:3 rwm");
	devwl_node_set_mknod_needs_cap(s.node, false);
	/* What a device cgroup stands behind (the node gate): the mounts need not be nodev. */
	devwl_notify_set_baseline(s.notify, true);
	apid = lt_spawn(child_main, &ca, &afd, &aout);
	bpid = lt_spawn(child_main, &cb, &bfd, &bout);
	/* In turn: A, B, A, B ... so that every call finds the other root cached. */
	for (int i = 0; i < 2 * ROUNDS * PATHS; i++) {
		if (i < ROUNDS * PATHS)
			handle(&s, afd, "A", i);
		handle(&s, bfd, "B", i);
	}
	got = lt_read_all(aout);
	LT_CHECK(!strcmp(got, "ok=40 other=0\n"), "A: %s", got);
	free(got);
	got = lt_read_all(bout);
	LT_CHECK(!strcmp(got, "ok=40 other=0\nok=40 other=0\n"), "B (its root, then its /sub):\n%s",
		 got);
	free(got);
	while (waitpid(apid, &status, 0) < 0 && errno == EINTR)
		;
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "A: status %#x", status);
	while (waitpid(bpid, &status, 0) < 0 && errno == EINTR)
		;
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "B: status %#x", status);
	close(afd);
	close(bfd);
	/* Every node in its own root's /d, none in the other's or in ours. */
	snprintf(p, sizeof(p), "%s/d", a);
	LT_CHECK(entries(p) == ROUNDS * PATHS, "%s holds %d nodes", p, entries(p));
	snprintf(p, sizeof(p), "%s/d", b);
	LT_CHECK(entries(p) == ROUNDS * PATHS, "%s holds %d nodes", p, entries(p));
	snprintf(p, sizeof(p), "%s/sub/d", b);
	LT_CHECK(entries(p) == ROUNDS * PATHS, "%s holds %d nodes", p, entries(p));
	LT_CHECK(access("/d", F_OK) < 0, "a /d appeared in our root");

	devwl_notify_forget(s.notify);
	umount2(a, MNT_DETACH);
	umount2(b, MNT_DETACH);
	rmdir(a);
	rmdir(b);
	lt_sup_free(&s);
	if (lt_failures)
		return 1;
	printf("PASS\n");
	return 0;
}
