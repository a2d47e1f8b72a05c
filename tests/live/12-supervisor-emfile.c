/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The supervisor out of fds: before each notification its RLIMIT_NOFILE is set so that
 * 0..7 more fds fit, stepping through every point where devwl's own opens (/proc fds,
 * lookups, the reopened device) start failing EMFILE. Each answer must be clean: the
 * allowed device opens or fails EPERM, the denied one fails EPERM, a regular file opens
 * or fails EPERM, never EMFILE passed on, never a wrongly granted device. Then the limit
 * is raised again and everything works as before; no fd is left behind. No devices
 * cgroup: a wrong CONTINUE of the denied device would show as an open fd.
 */
#include <sys/resource.h>
#include <sys/syscall.h>

#include "livetest.h"

#define OPS	     5
#define LIMITED	     (OPS * 8 * 3)
#define AFTER_ROUNDS 2

static char dir[128];
static struct rlimit saved;
static int base = -1;

static void limit_hook(struct lt_sup *s, int count)
{
	struct rlimit rl = saved;

	(void)s;
	if (base < 0) {
		base = fcntl(0, F_DUPFD_CLOEXEC, 0);
		close(base);
	}
	if (count < LIMITED)
		rl.rlim_cur = (rlim_t)base + (rlim_t)((count / OPS) % 8);
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		LT_DIE("setrlimit: %m");
}

static void line(int round, const char *what, long ret, int err, bool is_mknod)
{
	char res[128];

	if (is_mknod)
		snprintf(res, sizeof(res), "%s", ret < 0 ? strerrorname_np(err) : "ok");
	else
		lt_describe(res, sizeof(res), ret, err);
	printf("%d %s: %s\n", round, what, res);
	if (!is_mknod && ret >= 0)
		close((int)ret);
}

static int child_ops(void *arg)
{
	char p[256];
	long r = 0;

	(void)arg;
	for (int round = 0; round < LIMITED / OPS + AFTER_ROUNDS; round++) {
		snprintf(p, sizeof(p), "%s/zero", dir);
		r = syscall(SYS_openat, AT_FDCWD, p, O_RDONLY | O_CLOEXEC);
		line(round, "zero", r, errno, false);
		snprintf(p, sizeof(p), "%s/full", dir);
		r = syscall(SYS_openat, AT_FDCWD, p, O_RDONLY | O_CLOEXEC);
		line(round, "full", r, errno, false);
		snprintf(p, sizeof(p), "%s/file", dir);
		r = syscall(SYS_openat, AT_FDCWD, p, O_RDONLY | O_CLOEXEC);
		line(round, "file", r, errno, false);
		snprintf(p, sizeof(p), "%s/nd/m5-%d", dir, round);
		r = mknod(p, S_IFCHR | 0600, makedev(1, 5));
		line(round, "mknod-allowed", r, errno, true);
		snprintf(p, sizeof(p), "%s/nd/m7-%d", dir, round);
		r = mknod(p, S_IFCHR | 0600, makedev(1, 7));
		line(round, "mknod-denied", r, errno, true);
	}
	return 0;
}

int main(void)
{
	static const char *what[OPS] = {"zero", "full", "file", "mknod-allowed", "mknod-denied"};
	static const char *good[OPS] = {"ok type=c rdev=1:5", "EPERM", "ok type=f", "ok", "EPERM"};
	struct lt_nodes nodes;
	struct lt_sup s;
	int status = 0, fds = 0, ok_limited = 0, eperm_limited = 0;
	char *out = NULL;

	lt_need_root();
	lt_watchdog(60);
	lt_nodes_make(&nodes);
	snprintf(dir, sizeof(dir), "%s", nodes.dir);
	if (getrlimit(RLIMIT_NOFILE, &saved) < 0)
		LT_DIE("getrlimit: %m");
	fds = lt_count_fds();
	lt_sup_init(&s, "deny a;allow c 1:5 rm");
	s.before_handle = limit_hook;
	out = lt_run(&s, NULL, child_ops, NULL, &status);
	setrlimit(RLIMIT_NOFILE, &saved);
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	LT_CHECK(s.errors == 0, "%d handler errors", s.errors);
	for (int round = 0; round < LIMITED / OPS + AFTER_ROUNDS; round++) {
		for (int k = 0; k < OPS; k++) {
			char label[64];
			const char *got = NULL;
			bool limited = round < LIMITED / OPS;

			snprintf(label, sizeof(label), "%d %s", round, what[k]);
			got = lt_result_of(out, label);
			if (limited && strcmp(got, "EPERM") == 0 && strcmp(good[k], "EPERM") != 0) {
				eperm_limited++;
				continue;
			}
			if (limited && k == 0 && strcmp(got, good[k]) == 0)
				ok_limited++;
			LT_CHECK(strcmp(got, good[k]) == 0, "%s%s: got %s, want %s", label,
				 limited ? " (limited)" : "", got, good[k]);
		}
	}
	LT_CHECK(eperm_limited > 0 && ok_limited > 0,
		 "the limit was not exercised: %d EPERM, %d ok", eperm_limited, ok_limited);
	lt_sup_free(&s);
	LT_CHECK(lt_count_fds() == fds, "supervisor fds: %d before, %d after", fds, lt_count_fds());
	printf("%d calls with 0-7 free fds in the supervisor: %d refused EPERM for want of fds, "
	       "allowed device opened %d times; all right again after the limit was raised; "
	       "%d failures\n",
	       LIMITED, eperm_limited, ok_limited, lt_failures);
	free(out);
	lt_nodes_remove(&nodes);
	return lt_failures ? 1 : 0;
}
