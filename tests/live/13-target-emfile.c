/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The target out of fds: with its RLIMIT_NOFILE exhausted, a granted open must fail
 * EMFILE in the target as it does natively (the fd devwl opened on its behalf cannot be
 * installed, and must not stay behind in the supervisor), a denied one fails EPERM or
 * EMFILE, a regular one EMFILE; once an fd is freed the grant works again. Repeated, so
 * that a leak of one fd per call would show in the supervisor's fd count.
 */
#include <sys/resource.h>
#include <sys/syscall.h>

#include "livetest.h"

#define ROUNDS 200

static char dir[128];

static long op(const char *name, int flags)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return syscall(SYS_openat, AT_FDCWD, p, flags);
}

static void line(const char *label, long ret, int err)
{
	char res[128];

	lt_describe(res, sizeof(res), ret, err);
	printf("%s: %s\n", label, res);
	if (ret >= 0)
		close((int)ret);
}

static int child_full_table(void *arg)
{
	struct rlimit rl = {.rlim_cur = 32, .rlim_max = 32};
	int last = -1, n[4] = {0};
	long r = 0;

	(void)arg;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 3;
	while ((r = fcntl(1, F_DUPFD_CLOEXEC, 0)) >= 0)
		last = (int)r;
	if (errno != EMFILE || last < 0)
		return 4;
	for (int i = 0; i < ROUNDS; i++) {
		r = op("zero", O_RDONLY | (i % 2 ? O_CLOEXEC : 0));
		n[0] += r < 0 && errno == EMFILE;
		r = op("full", O_RDONLY);
		n[1] += r < 0 && (errno == EMFILE || errno == EPERM);
		r = op("file", O_RDONLY);
		n[2] += r < 0 && errno == EMFILE;
		r = op("nonexistent", O_RDONLY);
		n[3] += r < 0 && errno == EMFILE;
	}
	printf("emfile zero=%d full=%d file=%d missing=%d\n", n[0], n[1], n[2], n[3]);
	/* One fd free again: the grant goes through. */
	close(last);
	r = op("zero", O_RDONLY | O_CLOEXEC);
	line("freed zero", r, errno);
	r = op("full", O_RDONLY | O_CLOEXEC);
	line("freed full", r, errno);
	r = op("file", O_RDONLY | O_CLOEXEC);
	line("freed file", r, errno);
	r = op("full", O_RDONLY | O_CLOEXEC);
	line("freed full2", r, errno);
	r = op("zero", O_RDONLY | O_CLOEXEC);
	line("freed zero2", r, errno);
	return 0;
}

int main(void)
{
	struct lt_nodes nodes;
	struct lt_sup s;
	int status = 0, fds = 0, n[4] = {0};
	char *out = NULL, *native = NULL;

	lt_need_root();
	lt_watchdog(60);
	lt_nodes_make(&nodes);
	snprintf(dir, sizeof(dir), "%s", nodes.dir);
	native = lt_native(child_full_table, NULL, &status);
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "native status %#x", status);
	LT_CHECK(strncmp(native, "emfile zero=200 full=200 file=200 missing=200\n", 46) == 0,
		 "native: %s", native);
	fds = lt_count_fds();
	lt_sup_init(&s, "deny a;allow c 1:5 r");
	out = lt_run(&s, NULL, child_full_table, NULL, &status);
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	LT_CHECK(s.errors == 0, "%d handler errors", s.errors);
	LT_CHECK(sscanf(out, "emfile zero=%d full=%d file=%d missing=%d", &n[0], &n[1], &n[2],
			&n[3]) == 4,
		 "child said: %s", out);
	LT_CHECK(n[0] == ROUNDS && n[1] == ROUNDS && n[2] == ROUNDS && n[3] == ROUNDS,
		 "not EMFILE everywhere: %s", out);
	LT_CHECK(strcmp(lt_result_of(out, "freed zero"), "ok type=c rdev=1:5") == 0,
		 "after freeing an fd: %s", out);
	LT_CHECK(strcmp(lt_result_of(out, "freed full"), "EPERM") == 0, "after freeing an fd: %s",
		 out);
	lt_sup_free(&s);
	LT_CHECK(lt_count_fds() == fds, "supervisor fds: %d before, %d after", fds, lt_count_fds());
	printf("%d rounds against a full fd table: %s%d failures\n", ROUNDS, out, lt_failures);
	free(out);
	free(native);
	lt_nodes_remove(&nodes);
	return lt_failures ? 1 : 0;
}
