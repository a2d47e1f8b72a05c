/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Thousands of threads in one target, all trapping at once: 2000 threads released by one
 * barrier each open an allowed device, a denied one and a regular file. Every call must
 * get its own right answer (checked with fstat in the thread that made it), the target
 * must finish, the supervisor must not leak. No devices cgroup: a wrong CONTINUE of the
 * denied device would show as an open fd.
 */
#include <sys/syscall.h>
#include <time.h>

#include "livetest.h"

#define THREADS 2000

static char paths[3][256];
static pthread_barrier_t start;
static int results[THREADS][3]; /* 1 right, 0 wrong */

static bool right(int kind, int fd, int err)
{
	struct stat st;

	if (kind == 1)
		return fd < 0 && err == EPERM;
	if (fd < 0 || fstat(fd, &st) < 0)
		return false;
	return kind == 2 ? S_ISREG(st.st_mode) : S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 5);
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;

	pthread_barrier_wait(&start);
	for (int k = 0; k < 3; k++) {
		int kind = (id + k) % 3;
		int fd = (int)syscall(SYS_openat, AT_FDCWD, paths[kind], O_RDONLY | O_CLOEXEC);

		results[id][kind] = right(kind, fd, errno);
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

static int child_threads(void *arg)
{
	static pthread_t t[THREADS];
	pthread_attr_t attr;
	struct timespec a, b;
	int made = 0, good = 0;

	(void)arg;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_barrier_init(&start, NULL, THREADS + 1);
	for (made = 0; made < THREADS; made++)
		if (pthread_create(&t[made], &attr, worker, (void *)(intptr_t)made) != 0)
			break;
	if (made < THREADS) {
		printf("threads %d\n", made);
		fflush(stdout);
		_exit(5); /* the barrier would never open */
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	pthread_barrier_wait(&start);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	for (int i = 0; i < THREADS; i++)
		good += results[i][0] + results[i][1] + results[i][2];
	printf("threads %d right %d ms %ld\n", made, good,
	       (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000);
	return 0;
}

int main(void)
{
	struct lt_nodes nodes;
	struct lt_sup s;
	int status = 0, fds = 0, threads = 0, good = 0;
	long ms = 0;
	char *out = NULL;

	lt_need_root();
	lt_watchdog(120);
	lt_nodes_make(&nodes);
	snprintf(paths[0], sizeof(paths[0]), "%s/zero", nodes.dir);
	snprintf(paths[1], sizeof(paths[1]), "%s/full", nodes.dir);
	snprintf(paths[2], sizeof(paths[2]), "%s/file", nodes.dir);
	fds = lt_count_fds();
	lt_sup_init(&s, "deny a;allow c 1:5 r");
	out = lt_run(&s, NULL, child_threads, NULL, &status);
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x: %s", status,
		 out);
	LT_CHECK(sscanf(out, "threads %d right %d ms %ld", &threads, &good, &ms) == 3,
		 "child said: %s", out);
	LT_CHECK(threads == THREADS && good == 3 * THREADS, "%d of %d answers right", good,
		 3 * THREADS);
	LT_CHECK(s.errors == 0, "%d handler errors", s.errors);
	LT_CHECK(s.allowed == THREADS && s.denied == THREADS, "allowed %d denied %d", s.allowed,
		 s.denied);
	lt_sup_free(&s);
	LT_CHECK(lt_count_fds() == fds, "supervisor fds: %d before, %d after", fds, lt_count_fds());
	printf("%d threads, %d calls answered right in %ld ms (%d notifications); %d failures\n",
	       threads, good, ms, s.count, lt_failures);
	free(out);
	lt_nodes_remove(&nodes);
	return lt_failures ? 1 : 0;
}
