/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The TOCTOU race of the man page: one thread opens a path in a loop while another flips
 * the path buffer between a regular file, an allowed device and a denied one. Over
 * 100,000 attempts no fd to the denied device may ever reach the workload (every
 * returned fd is checked with fstat). The workload is in a devices cgroup denying
 * everything, the kernel baseline devwl's CONTINUE answers rely on.
 */
#include <sys/syscall.h>

#include "livetest.h"

#define ATTEMPTS 100000

static char dir[128];
static char names[3][256];
static char buf[256];
static volatile int done;

static void *flipper(void *arg)
{
	unsigned int i = 0;

	(void)arg;
	while (!done) {
		memcpy(buf, names[i % 3], strlen(names[0]) + 1);
		i++;
	}
	return NULL;
}

static int child_race(void *arg)
{
	int leaks = 0, zero = 0, file = 0, eperm = 0, other = 0;
	pthread_t t;

	(void)arg;
	memcpy(buf, names[0], sizeof(buf));
	if (pthread_create(&t, NULL, flipper, NULL) != 0)
		return 3;
	for (int i = 0; i < ATTEMPTS; i++) {
		int fd = (int)syscall(SYS_openat, AT_FDCWD, buf, O_RDONLY | O_CLOEXEC);
		struct stat st;

		if (fd < 0) {
			if (errno == EPERM)
				eperm++;
			else
				other++;
			continue;
		}
		if (fstat(fd, &st) == 0) {
			if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 7))
				leaks++;
			else if (S_ISCHR(st.st_mode))
				zero++;
			else
				file++;
		}
		close(fd);
	}
	done = 1;
	pthread_join(t, NULL);
	printf("attempts=%d leaks=%d zero=%d file=%d eperm=%d other=%d\n", ATTEMPTS, leaks, zero,
	       file, eperm, other);
	return 0;
}

int main(void)
{
	struct lt_nodes nodes;
	struct lt_cgroup cg;
	struct lt_sup s;
	int status = 0, attempts = 0, leaks = -1, zero = 0, file = 0, eperm = 0, other = 0;
	char *out = NULL;

	lt_need_root();
	lt_cgroup_make(&cg);
	if (!cg.ok)
		LT_SKIP("no v1 devices cgroup: the baseline this race relies on is missing");
	lt_nodes_make(&nodes);
	snprintf(dir, sizeof(dir), "%s", nodes.dir);
	/* Same length, so the flipper never leaves a torn, longer name. */
	snprintf(names[0], sizeof(names[0]), "%s/file", dir);
	snprintf(names[1], sizeof(names[1]), "%s/zero", dir);
	snprintf(names[2], sizeof(names[2]), "%s/full", dir);
	lt_sup_init(&s, "deny a;allow c 1:5 r");
	s.cgroup = &cg;
	out = lt_run(&s, NULL, child_race, NULL, &status);
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	LT_CHECK(sscanf(out, "attempts=%d leaks=%d zero=%d file=%d eperm=%d other=%d", &attempts,
			&leaks, &zero, &file, &eperm, &other) == 6,
		 "child output: %s", out);
	LT_CHECK(attempts >= ATTEMPTS, "only %d attempts", attempts);
	LT_CHECK(leaks == 0, "%d fds of the denied device reached the workload", leaks);
	LT_CHECK(zero > 0 && file > 0 && eperm > 0, "race not exercised: %s", out);
	LT_CHECK(s.errors == 0, "%d handler errors", s.errors);
	printf("%s", out);
	free(out);
	lt_sup_free(&s);
	lt_cgroup_remove(&cg);
	lt_nodes_remove(&nodes);
	return lt_failures ? 1 : 0;
}
