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
 *   hammer --watch STOPFILE PATH [PAUSE_US]
 *                             open PATH until STOPFILE exists (PAUSE_US between opens,
 *                             default none) and print a line "NS STATE" each time the
 *                             result changes: NS the CLOCK_REALTIME time of that open in
 *                             ns (comparable with the host's clock: the hot-plug tests
 *                             and bench/hotplug.sh time attach and detach by it), STATE
 *                             "ok b MAJ:MIN" / "ok c MAJ:MIN" (what the fd is: fstat's
 *                             st_rdev), "ok -" (not a device) or the errno's name. At
 *                             the end one "count STATE N" line per state seen, "done".
 *                             Written unbuffered: the host reads them while it runs.
 *                             Built static too (hammer-static) for a busybox container.
 */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

/* The states --watch has seen, with how often; a handful in practice. */
#define WATCH_STATES 64
struct watch_state {
	char text[48];
	long long count;
};

static void watch_result(char *buf, size_t size, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0) {
		snprintf(buf, size, "%s", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
		return;
	}
	if (fstat(fd, &st) < 0)
		snprintf(buf, size, "fstat-%s", strerrorname_np(errno));
	else if (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode))
		snprintf(buf, size, "ok %c %u:%u", S_ISBLK(st.st_mode) ? 'b' : 'c',
			 major(st.st_rdev), minor(st.st_rdev));
	else
		snprintf(buf, size, "ok -");
	close(fd);
}

static int watch(const char *stop, const char *path, long pause_us)
{
	static struct watch_state seen[WATCH_STATES];
	struct timespec pause = {pause_us / 1000000, pause_us % 1000000 * 1000};
	char now[48], last[48] = "", line[128];
	size_t nseen = 0, i;

	for (unsigned long n = 0;; n++) {
		struct timespec ts;

		if (n % 64 == 0 && access(stop, F_OK) == 0)
			break;
		clock_gettime(CLOCK_REALTIME, &ts);
		watch_result(now, sizeof(now), path);
		if (strcmp(now, last)) {
			int len = snprintf(line, sizeof(line), "%lld %s\n",
					   (long long)ts.tv_sec * 1000000000 + ts.tv_nsec, now);

			/* One write a line, so a reader never sees half of one. */
			if (write(STDOUT_FILENO, line, (size_t)len) != len)
				return 1;
			memcpy(last, now, sizeof(last));
		}
		for (i = 0; i < nseen && strcmp(seen[i].text, now); i++)
			;
		if (i == nseen && nseen < WATCH_STATES)
			memcpy(seen[nseen++].text, now, sizeof(now));
		if (i < nseen)
			seen[i].count++;
		if (pause_us > 0)
			nanosleep(&pause, NULL);
	}
	for (i = 0; i < nseen; i++)
		printf("count %s %lld\n", seen[i].text, seen[i].count);
	printf("done\n");
	return nseen < WATCH_STATES ? 0 : 1;
}

int main(int argc, char **argv)
{
	long long opens = 0, errors = 0, last, maxgap = 0;
	int counts[4096] = {0};

	if (argc == 4 && !strcmp(argv[1], "--once"))
		return once(argv[2], argv[3]);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "--watch"))
		return watch(argv[2], argv[3], argc == 5 ? atol(argv[4]) : 0);
	if (argc >= 4 && !strcmp(argv[1], "--answers"))
		return answers(argv[2], argv + 3, argc - 3);
	if (argc < 3) {
		fputs("usage: hammer STOPFILE PATH... | hammer --once GOFILE PATH | "
		      "hammer --answers GOFILE PATH... | hammer --watch STOPFILE PATH [PAUSE_US]\n",
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
