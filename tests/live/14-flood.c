/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A flood: one target hammers trapped opens from several threads (granted device opens
 * and regular files) while a quiet target makes an occasional device open. One handler
 * serves both notify fds, one notification per ready fd per turn, as devwld's loop does.
 * The quiet target's every call must be answered right, and the test must finish; its
 * latencies alone and under the flood are printed (not asserted: timing is not a test).
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include "livetest.h"

#define QUIET_CALLS   300
#define FLOOD_THREADS 4

static char zero[256], file[256];
static volatile int *stop; /* shared with the flooder */

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int child_quiet(void *arg)
{
	static uint64_t lat[QUIET_CALLS];
	int right = 0;

	(void)arg;
	for (int i = 0; i < QUIET_CALLS; i++) {
		uint64_t t0 = now_us();
		int fd = (int)syscall(SYS_openat, AT_FDCWD, zero, O_RDONLY | O_CLOEXEC);
		struct stat st;

		lat[i] = now_us() - t0;
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
		    st.st_rdev == makedev(1, 5))
			right++;
		if (fd >= 0)
			close(fd);
		usleep(1000);
	}
	qsort(lat, QUIET_CALLS, sizeof(lat[0]), cmp_u64);
	printf("right %d p50 %llu p99 %llu max %llu\n", right,
	       (unsigned long long)lat[QUIET_CALLS / 2],
	       (unsigned long long)lat[QUIET_CALLS * 99 / 100],
	       (unsigned long long)lat[QUIET_CALLS - 1]);
	return 0;
}

static long flood_calls[FLOOD_THREADS];

static void *flood_thread(void *arg)
{
	int id = (int)(intptr_t)arg;

	while (!*stop) {
		int fd = (int)syscall(SYS_openat, AT_FDCWD, id % 2 ? file : zero,
				      O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
		flood_calls[id]++;
	}
	return NULL;
}

static int child_flood(void *arg)
{
	pthread_t t[FLOOD_THREADS];
	long total = 0;

	(void)arg;
	for (int i = 0; i < FLOOD_THREADS; i++)
		if (pthread_create(&t[i], NULL, flood_thread, (void *)(intptr_t)i) != 0)
			return 3;
	for (int i = 0; i < FLOOD_THREADS; i++) {
		pthread_join(t[i], NULL);
		total += flood_calls[i];
	}
	printf("flood %ld\n", total);
	return 0;
}

struct target {
	pid_t pid;
	int nfd, out;
	bool live;
};

struct serve {
	struct target *t;
	int n;
	struct devwl_notify *notify;
	struct devwl_node *node;
	int errors;
	long handled[2];
};

/* One notification per ready fd per turn. */
static void *serve_loop(void *arg)
{
	struct serve *sv = arg;

	for (;;) {
		struct pollfd p[2];
		int live = 0;

		for (int i = 0; i < sv->n; i++) {
			p[i] = (struct pollfd){.fd = sv->t[i].live ? sv->t[i].nfd : -1,
					       .events = POLLIN};
			live += sv->t[i].live;
		}
		if (!live)
			break;
		if (poll(p, (nfds_t)sv->n, 1000) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < sv->n; i++) {
			int r = 0;

			if (p[i].revents & POLLIN) {
				r = devwl_notify_handle(sv->notify, sv->t[i].nfd, sv->node, NULL);
				if (r < 0 && r != -ENOENT)
					sv->errors++;
				sv->handled[i]++;
			} else if (p[i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
				sv->t[i].live = false;
			}
		}
	}
	return NULL;
}

static char *read_all(int fd)
{
	static char buf[4096];
	size_t len = 0;
	ssize_t n = 0;

	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
	return buf;
}

static void run(struct devwl_policy *policy, bool flood, unsigned long long ret[3], long *calls)
{
	struct target t[2];
	struct serve sv = {.t = t, .n = flood ? 2 : 1};
	pthread_t th;
	int status = 0, right = 0;

	sv.notify = devwl_notify_new();
	sv.node = devwl_policy_find(policy, "/t");
	*stop = 0;
	if (flood) {
		t[1].pid = lt_spawn(child_flood, NULL, &t[1].nfd, &t[1].out);
		t[1].live = true;
		usleep(50000); /* the flood is on before the quiet one starts */
	}
	t[0].pid = lt_spawn(child_quiet, NULL, &t[0].nfd, &t[0].out);
	t[0].live = true;
	if (pthread_create(&th, NULL, serve_loop, &sv) != 0)
		LT_DIE("pthread_create");
	{
		char *o = read_all(t[0].out);

		LT_CHECK(sscanf(o, "right %d p50 %llu p99 %llu max %llu", &right, &ret[0], &ret[1],
				&ret[2]) == 4,
			 "quiet said: %s", o);
		LT_CHECK(right == QUIET_CALLS, "quiet: %d of %d opens right", right, QUIET_CALLS);
	}
	waitpid(t[0].pid, &status, 0);
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "quiet status %#x", status);
	*stop = 1;
	if (flood) {
		char *o = read_all(t[1].out);

		LT_CHECK(sscanf(o, "flood %ld", calls) == 1 && *calls > 0, "flooder said: %s", o);
		waitpid(t[1].pid, &status, 0);
		LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "flood status %#x", status);
	}
	pthread_join(th, NULL);
	LT_CHECK(sv.errors == 0, "%d handler errors", sv.errors);
	for (int i = 0; i < sv.n; i++)
		close(t[i].nfd);
	devwl_notify_free(sv.notify);
}

int main(void)
{
	struct lt_nodes nodes;
	struct devwl_policy *policy = NULL;
	unsigned long long alone[3] = {0}, loaded[3] = {0};
	long calls = 0;
	int fds = 0;

	lt_need_root();
	lt_watchdog(120);
	lt_nodes_make(&nodes);
	snprintf(zero, sizeof(zero), "%s/zero", nodes.dir);
	snprintf(file, sizeof(file), "%s/file", nodes.dir);
	stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stop == MAP_FAILED)
		LT_DIE("mmap: %m");
	policy = devwl_policy_new();
	if (!policy || devwl_policy_mkdir(policy, "/t") < 0 ||
	    devwl_node_write(devwl_policy_find(policy, "/t"), DEVWL_FILE_DENY, "a", 1, NULL) < 0 ||
	    devwl_node_write(devwl_policy_find(policy, "/t"), DEVWL_FILE_ALLOW, "c 1:5 r", 7,
			     NULL) < 0)
		LT_DIE("policy");
	fds = lt_count_fds();
	run(policy, false, alone, &calls);
	run(policy, true, loaded, &calls);
	LT_CHECK(lt_count_fds() == fds, "supervisor fds: %d before, %d after", fds, lt_count_fds());
	printf("quiet target, %d device opens, µs: alone p50 %llu p99 %llu max %llu; "
	       "beside a %d-thread flood (%ld calls) p50 %llu p99 %llu max %llu; %d failures\n",
	       QUIET_CALLS, alone[0], alone[1], alone[2], FLOOD_THREADS, calls, loaded[0],
	       loaded[1], loaded[2], lt_failures);
	devwl_policy_free(policy);
	lt_nodes_remove(&nodes);
	return lt_failures ? 1 : 0;
}
