/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A workload for the restart tests, run under devwl-run --connect:
 *
 *   hammer STOPFILE PATH...   open and close each PATH in turn until STOPFILE exists; then
 *                             print "opens N errors E maxgap_us G" (G: the longest time
 *                             between two answered opens, i.e. the longest the supervisor
 *                             kept us waiting) and one "errno NAME COUNT" line per kind of
 *                             failure; exit 0 only without failures.
 *   hammer --once GOFILE PATH wait for GOFILE, open PATH twice, print "first ERR" and
 *                             "second ERR" (ERR: OK or the errno name).
 *   hammer --answers GOFILE PATH...
 *                             print "waiting", wait for GOFILE (no trapped call meanwhile),
 *                             open each PATH once and print "PATH ERR".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static const char *try_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return strerrorname_np(errno);
	close(fd);
	return "OK";
}

static int once(const char *go, const char *path)
{
	while (access(go, F_OK) < 0)
		usleep(10000);
	printf("first %s\n", try_open(path));
	fflush(stdout);
	printf("second %s\n", try_open(path));
	return 0;
}

static int answers(const char *go, char **paths, int n)
{
	printf("waiting\n");
	fflush(stdout);
	while (access(go, F_OK) < 0)
		usleep(10000);
	for (int i = 0; i < n; i++)
		printf("%s %s\n", paths[i], try_open(paths[i]));
	return 0;
}

int main(int argc, char **argv)
{
	long long opens = 0, errors = 0, last, maxgap = 0;
	int counts[4096] = {0};

	if (argc == 4 && !strcmp(argv[1], "--once"))
		return once(argv[2], argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "--answers"))
		return answers(argv[2], argv + 3, argc - 3);
	if (argc < 3) {
		fputs("usage: hammer STOPFILE PATH... | hammer --once GOFILE PATH | "
		      "hammer --answers GOFILE PATH...\n",
		      stderr);
		return 2;
	}
	last = now_us();
	for (unsigned long i = 0;; i++) {
		const char *path = argv[2 + i % (unsigned long)(argc - 2)];
		int fd;
		long long t;

		if (i % 64 == 0 && access(argv[1], F_OK) == 0)
			break;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		t = now_us();
		if (fd < 0) {
			errors++;
			counts[errno < 4096 ? errno : 0]++;
			continue;
		}
		close(fd);
		opens++;
		if (t - last > maxgap)
			maxgap = t - last;
		last = t;
	}
	printf("opens %lld errors %lld maxgap_us %lld\n", opens, errors, maxgap);
	for (int e = 0; e < 4096; e++)
		if (counts[e])
			printf("errno %s %d\n", strerrorname_np(e) ? strerrorname_np(e) : "?",
			       counts[e]);
	return errors ? 1 : 0;
}
