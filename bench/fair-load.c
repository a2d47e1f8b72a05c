/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The workloads of bench/fairness.sh, run under devwl-run --connect so that every open
 * traps to devwld:
 *
 *   fair-load flood PATH THREADS SECONDS
 *       THREADS threads open and close PATH as fast as they can for SECONDS; prints
 *       "flood opens N rate R/s errors E start_ns S end_ns E start_utc U end_utc V"
 *       (CLOCK_MONOTONIC, and wall-clock times in the audit records' format).
 *   fair-load spin PATH THREADS SECONDS
 *       The same CPU load without a trapped call (getppid() in a loop): what the quiet
 *       containers pay for sharing the CPUs alone, whatever devwld does.
 *   fair-load quiet PATH INTERVAL_US COUNT [RAW-FILE]
 *       COUNT opens of PATH, one every INTERVAL_US, each timed from the call to its
 *       return and checked: the fd must be PATH's device. Prints "quiet n N wrong W
 *       p50_us A p99_us B max_us C" and, with RAW-FILE, "START_NS LATENCY_NS" per open
 *       (CLOCK_MONOTONIC), so a script can tell the opens made during a flood.
 *
 * The latency the workload sees is what matters for fairness: it includes the wait
 * for devwld to get round to this container, which devwld's own handling_ns does not.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct flood {
	const char *path;
	bool spin;
	uint64_t until;
	atomic_ulong opens, errors;
};

static void *flood_thread(void *arg)
{
	struct flood *f = arg;
	unsigned long opens = 0, errors = 0;

	while (now_ns() < f->until) {
		int fd;

		if (f->spin) {
			(void)getppid();
			opens++;
			continue;
		}
		fd = open(f->path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			errors++;
			continue;
		}
		close(fd);
		opens++;
	}
	atomic_fetch_add(&f->opens, opens);
	atomic_fetch_add(&f->errors, errors);
	return NULL;
}

/* CLOCK_REALTIME as devwld's audit records write it, so the two compare as strings. */
static void utc_now(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	char s[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%09ldZ", s, ts.tv_nsec);
}

static int flood(const char *path, int threads, int seconds, bool spin)
{
	struct flood f = {.path = path, .spin = spin};
	pthread_t *tids = calloc((size_t)threads, sizeof(*tids));
	char start_utc[48], end_utc[48];
	uint64_t start = now_ns(), end;

	utc_now(start_utc, sizeof(start_utc));

	if (!tids)
		return 1;
	f.until = start + (uint64_t)seconds * 1000000000ULL;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tids[i], NULL, flood_thread, &f) != 0) {
			fprintf(stderr, "fair-load: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	end = now_ns();
	utc_now(end_utc, sizeof(end_utc));
	printf("flood opens %lu rate %.0f/s errors %lu start_ns %llu end_ns %llu start_utc %s "
	       "end_utc %s\n",
	       atomic_load(&f.opens), (double)atomic_load(&f.opens) * 1e9 / (double)(end - start),
	       atomic_load(&f.errors), (unsigned long long)start, (unsigned long long)end,
	       start_utc, end_utc);
	free(tids);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int quiet(const char *path, long interval_us, long count, const char *raw)
{
	uint64_t *lat = calloc((size_t)count, sizeof(*lat));
	uint64_t *when = calloc((size_t)count, sizeof(*when));
	uint64_t next;
	long wrong = 0;
	struct stat want;

	if (!lat || !when || stat(path, &want) < 0) {
		perror(path);
		return 1;
	}
	next = now_ns();
	for (long i = 0; i < count; i++) {
		struct timespec ts;
		struct stat got;
		uint64_t t0;
		int fd;

		next += (uint64_t)interval_us * 1000;
		ts.tv_sec = (time_t)(next / 1000000000ULL);
		ts.tv_nsec = (long)(next % 1000000000ULL);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		when[i] = t0 = now_ns();
		fd = open(path, O_RDONLY | O_CLOEXEC);
		lat[i] = now_ns() - t0;
		/* The answer must be right, not only quick: PATH's own device. */
		if (fd < 0 || fstat(fd, &got) < 0 || got.st_rdev != want.st_rdev ||
		    (got.st_mode & S_IFMT) != (want.st_mode & S_IFMT)) {
			if (wrong++ < 5)
				fprintf(stderr, "fair-load: open %ld of %s: %s\n", i, path,
					fd < 0 ? strerror(errno) : "not the device");
		}
		if (fd >= 0)
			close(fd);
	}
	if (raw) {
		FILE *f = fopen(raw, "we");

		if (!f) {
			perror(raw);
			return 1;
		}
		for (long i = 0; i < count; i++)
			fprintf(f, "%llu %llu\n", (unsigned long long)when[i],
				(unsigned long long)lat[i]);
		fclose(f);
	}
	qsort(lat, (size_t)count, sizeof(*lat), cmp_u64);
	printf("quiet n %ld wrong %ld p50_us %.1f p99_us %.1f max_us %.1f\n", count, wrong,
	       (double)lat[count / 2] / 1000.0,
	       (double)lat[(size_t)((double)count * 0.99)] / 1000.0,
	       (double)lat[count - 1] / 1000.0);
	free(lat);
	free(when);
	return wrong ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && (!strcmp(argv[1], "flood") || !strcmp(argv[1], "spin")) &&
	    atoi(argv[3]) > 0 && atoi(argv[4]) > 0)
		return flood(argv[2], atoi(argv[3]), atoi(argv[4]), argv[1][0] == 's');
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "quiet") && atol(argv[3]) > 0 &&
	    atol(argv[4]) > 0)
		return quiet(argv[2], atol(argv[3]), atol(argv[4]), argc == 6 ? argv[5] : NULL);
	fputs("usage: fair-load flood|spin PATH THREADS SECONDS\n"
	      "       fair-load quiet PATH INTERVAL_US COUNT [RAW-FILE]\n",
	      stderr);
	return 2;
}
