/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A target that execs while one of its threads is trapped: the exec kills the trapped
 * thread (and, when a non-leader execs, hands the leader's tid to the new image). The
 * notification dies with its thread; the supervisor must not answer it into the new
 * image (no fd may appear there: every trapped open is O_CLOEXEC, so any fd the new
 * image holds came from a misdirected injection), must not crash, leak or stall, and
 * must serve the new image's own calls. Both ways round, many times, at random moments.
 */
#include <dirent.h>
#include <sys/syscall.h>
#include <time.h>

#include "livetest.h"

#define ROUNDS 200

static char zero[256], full[256], self[4096];
static volatile int spin;

/* In the new image: count fds naming the test's nodes (inherited fds of others aside). */
static int report_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de = NULL;
	struct stat zst, fst;
	int n = 0, zfd = -1;

	if (!d || stat(zero, &zst) < 0 || stat(full, &fst) < 0)
		return 4;
	while ((de = readdir(d))) {
		struct stat st;

		if (fstat(atoi(de->d_name), &st) == 0 && st.st_dev == zst.st_dev &&
		    (st.st_ino == zst.st_ino || st.st_ino == fst.st_ino))
			n++;
	}
	closedir(d);
	/* The new image's own calls are still served. */
	zfd = open(zero, O_RDONLY | O_CLOEXEC);
	printf("fds %d zero %s\n", n, zfd >= 0 ? "ok" : strerrorname_np(errno));
	return 0;
}

static void *opener(void *arg)
{
	(void)arg;
	for (unsigned int i = 0;; i++) {
		int fd = (int)syscall(SYS_openat, AT_FDCWD, i % 2 ? full : zero,
				      O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

static void do_exec(void)
{
	char *argv[] = {self, "--report", zero, full, NULL};

	execv(self, argv);
	_exit(99);
}

static void *execer(void *arg)
{
	for (int i = 0; i < *(int *)arg; i++)
		spin++;
	do_exec();
	return NULL;
}

/* Even rounds: a thread traps, the leader execs. Odd: the leader traps, a thread execs. */
static int child_round(void *arg)
{
	static int delay;
	int round = *(int *)arg;
	pthread_t t;

	delay = rand() % 2000000;
	if (round % 2 == 0) {
		if (pthread_create(&t, NULL, opener, NULL) != 0)
			return 3;
		for (int i = 0; i < delay; i++)
			spin++;
		do_exec();
	}
	if (pthread_create(&t, NULL, execer, &delay) != 0)
		return 3;
	opener(NULL);
	return 0;
}

int main(int argc, char **argv)
{
	struct lt_nodes nodes;
	int fds = 0, bad = 0, handled = 0, gone = 0;

	if (argc == 4 && strcmp(argv[1], "--report") == 0) {
		snprintf(zero, sizeof(zero), "%s", argv[2]);
		snprintf(full, sizeof(full), "%s", argv[3]);
		return report_fds();
	}
	lt_need_root();
	lt_watchdog(120);
	if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0)
		LT_DIE("readlink: %m");
	lt_nodes_make(&nodes);
	snprintf(zero, sizeof(zero), "%s/zero", nodes.dir);
	snprintf(full, sizeof(full), "%s/full", nodes.dir);
	srand((unsigned int)time(NULL));
	fds = lt_count_fds();
	for (int i = 0; i < ROUNDS; i++) {
		struct lt_sup s;
		int status = 0;
		char *out = NULL;

		lt_sup_init(&s, "deny a;allow c 1:5 r");
		out = lt_run(&s, NULL, child_round, &i, &status);
		if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		      strcmp(out, "fds 0 zero ok\n") == 0)) {
			LT_CHECK(false, "round %d: status %#x, new image said: %s", i, status, out);
			bad++;
		}
		LT_CHECK(s.errors == 0, "round %d: %d handler errors", i, s.errors);
		handled += s.count;
		gone += s.gone;
		free(out);
		lt_sup_free(&s);
	}
	LT_CHECK(lt_count_fds() == fds, "supervisor fds: %d before, %d after", fds, lt_count_fds());
	lt_nodes_remove(&nodes);
	printf("%d exec rounds (%d bad): %d notifications, %d found their thread gone; "
	       "%d failures\n",
	       ROUNDS, bad, handled, gone, lt_failures);
	return lt_failures ? 1 : 0;
}
