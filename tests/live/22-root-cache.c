/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One handler context serving two callers with different roots, call by call in turn:
 * the context keeps the last caller root open and resolves absolute paths in it with
 * RESOLVE_IN_ROOT (no chroot). Each caller must get its own root's answer every time:
 * in root A, /x, /l (absolute symlink to /x) and /up (../../x) are a regular file; in
 * root B they are /dev/kmsg's number, denied. B then chroots into its own /sub (same
 * mount, another directory: the cache must see the root changed) where they are files
 * again. No baseline: a root mixed up would let the kernel open kmsg. Last, the cached
 * root pins its mount (umount EBUSY) until devwl_notify_forget().
 */
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include "livetest.h"

#define ROUNDS 40
static const char *const names[] = {"/x", "/l", "/up"};
#define NAMES 3

static void make_root(const char *dir, bool device)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/x", dir);
	if (device) {
		if (mknod(p, S_IFCHR | 0666, makedev(1, 11)) < 0)
			LT_DIE("mknod %s: %m", p);
	} else {
		int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

		if (fd < 0)
			LT_DIE("create %s: %m", p);
		close(fd);
	}
	snprintf(p, sizeof(p), "%s/l", dir);
	if (symlink("/x", p) < 0)
		LT_DIE("symlink %s: %m", p);
	snprintf(p, sizeof(p), "%s/up", dir);
	if (symlink("../../x", p) < 0)
		LT_DIE("symlink %s: %m", p);
}

struct child {
	const char *root;
	bool then_sub; /* after ROUNDS rounds, chroot("/sub") and do ROUNDS more */
};

/* One line per phase: "ok=N eperm=N other=N". */
static int child_main(void *arg)
{
	const struct child *c = arg;

	if (chroot(c->root) < 0 || chdir("/") < 0)
		return 120;
	for (int phase = 0; phase < (c->then_sub ? 2 : 1); phase++) {
		int ok = 0, eperm = 0, other = 0;

		if (phase == 1 && (chroot("/sub") < 0 || chdir("/") < 0))
			return 121;
		for (int i = 0; i < ROUNDS; i++)
			for (int k = 0; k < NAMES; k++) {
				long fd = syscall(SYS_openat, AT_FDCWD, names[k],
						  O_RDONLY | O_CLOEXEC);

				if (fd >= 0) {
					ok++;
					close((int)fd);
				} else if (errno == EPERM) {
					eperm++;
				} else {
					other++;
				}
			}
		printf("ok=%d eperm=%d other=%d\n", ok, eperm, other);
	}
	return 0;
}

static void handle(struct lt_sup *s, int nfd, enum devwl_verdict want, const char *who, int i)
{
	struct devwl_event e;
	int r = devwl_notify_handle(s->notify, nfd, s->node, &e);

	LT_CHECK(r == 0, "%s call %d: devwl_notify_handle: %s", who, i, strerror(-r));
	if (r == 0)
		LT_CHECK(e.verdict == want, "%s call %d (%s): verdict %d, want %d", who, i, e.path,
			 (int)e.verdict, (int)want);
}

int main(void)
{
	char a[] = "/tmp/devwl-rootA.XXXXXX", b[] = "/tmp/devwl-rootB.XXXXXX", sub[64];
	struct child ca = {.root = a}, cb = {.root = b, .then_sub = true};
	struct lt_sup s;
	int afd = -1, bfd = -1, aout = -1, bout = -1, status = 0;
	pid_t apid, bpid;
	char *got = NULL;

	lt_need_root();
	lt_watchdog(60);
	/* Mounts of our own, gone with us whatever happens. */
	if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		LT_SKIP("no private mount namespace: %m");
	if (!mkdtemp(a) || !mkdtemp(b))
		LT_DIE("mkdtemp: %m");
	if (mount("devwl-a", a, "tmpfs", 0, "size=1m") < 0 ||
	    mount("devwl-b", b, "tmpfs", 0, "size=1m") < 0)
		LT_SKIP("cannot mount tmpfs: %m");
	snprintf(sub, sizeof(sub), "%s/sub", b);
	if (mkdir(sub, 0755) < 0)
		LT_DIE("mkdir %s: %m", sub);
	make_root(a, false);
	make_root(b, true);
	make_root(sub, false);

	lt_sup_init(&s, "deny a");
	apid = lt_spawn(child_main, &ca, &afd, &aout);
	bpid = lt_spawn(child_main, &cb, &bfd, &bout);
	/* In turn: A, B, A, B ... so that every call finds the other root cached. */
	for (int i = 0; i < 2 * ROUNDS * NAMES; i++) {
		if (i < ROUNDS * NAMES)
			handle(&s, afd, DEVWL_VERDICT_CONTINUE, "A", i);
		handle(&s, bfd, i < ROUNDS * NAMES ? DEVWL_VERDICT_DENY : DEVWL_VERDICT_CONTINUE,
		       "B", i);
	}
	got = lt_read_all(aout);
	LT_CHECK(!strcmp(got, "ok=120 eperm=0 other=0\n"), "A: %s", got);
	free(got);
	got = lt_read_all(bout);
	LT_CHECK(!strcmp(got, "ok=0 eperm=120 other=0\nok=120 eperm=0 other=0\n"),
		 "B (its root, then its /sub):\n%s", got);
	free(got);
	while (waitpid(apid, &status, 0) < 0 && errno == EINTR)
		;
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "A: status %#x", status);
	while (waitpid(bpid, &status, 0) < 0 && errno == EINTR)
		;
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "B: status %#x", status);
	close(afd);
	close(bfd);

	/* A's root was let go of when B's came; B's (its /sub, on B's mount) is kept. */
	LT_CHECK(umount2(a, 0) == 0, "umount %s: %m (a root no longer cached is pinned)", a);
	LT_CHECK(umount2(b, 0) < 0 && errno == EBUSY,
		 "umount %s: want EBUSY while its root is cached (%m)", b);
	devwl_notify_forget(s.notify);
	LT_CHECK(umount2(b, 0) == 0, "umount %s after devwl_notify_forget: %m", b);
	rmdir(a);
	rmdir(b);
	lt_sup_free(&s);
	if (lt_failures)
		return 1;
	printf("PASS\n");
	return 0;
}
