/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CONTINUE race through devwl-run: one thread opens a path in a loop while another
 * flips the path buffer between a regular file and a device the policy denies. devwl sees
 * the file and answers CONTINUE, the kernel re-reads the path and may find the device:
 * only the kernel baseline stops it. Over >= 100,000 attempts no fd to the denied device
 * may ever reach the workload (each fd is fstat-ed). Run for every baseline kind here;
 * once without a baseline too, for information (that run may leak: that is the point).
 *
 * Without arguments this is the test; "--workload DIR ATTEMPTS" is the workload it runs
 * under devwl-run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../hostprobe.h"

#define ATTEMPTS  100000
#define DEV_MAJOR 1
#define DEV_MINOR 3

/* The buffer both threads share: "DIR/f" or "DIR/d", only the last byte changes. */
static char path[PATH_MAX];
static size_t last;
static atomic_bool stop;

static void *flipper(void *arg)
{
	volatile char *p = (volatile char *)&path[last];

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		*p = 'd';
		*p = 'f';
	}
	return NULL;
}

static int workload(const char *dir, long attempts)
{
	long files = 0, denied = 0, other = 0, leaks = 0;
	pthread_t t;

	if (snprintf(path, sizeof(path), "%s/f", dir) >= (int)sizeof(path))
		return 2;
	last = strlen(path) - 1;
	if (pthread_create(&t, NULL, flipper, NULL) != 0)
		return 2;
	/* On a loaded machine the flipper may not run beside us for a while: go on (up to
	 * ten times as long) until both sides of the flip have been seen. */
	for (long i = 0; i < attempts || ((files == 0 || denied == 0) && i < 10 * attempts); i++) {
		struct stat st;
		/* The raw syscall: the path pointer itself goes to the kernel, as an
		 * attacker would pass it. */
		int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			if (errno == EPERM)
				denied++;
			else
				other++;
			continue;
		}
		if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
		    st.st_rdev == makedev(DEV_MAJOR, DEV_MINOR))
			leaks++;
		else
			files++;
		close(fd);
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	printf("attempts=%ld file=%ld eperm=%ld other=%ld leaks=%ld\n",
	       files + denied + other + leaks, files, denied, other, leaks);
	return leaks == 0 ? 0 : 3;
}

/* Run the workload under devwl-run with the given baseline option; 0 pass, 1 fail,
 * 77 this baseline is unavailable. *ret_leaks: how many fds leaked. */
static int run(const char *devwl_run, const char *self, const char *dir, const char *baseline,
	       bool informational, long *ret_leaks)
{
	char cmd[PATH_MAX * 3], line[512] = "";
	long attempts = 0, files = 0, denied = 0, other = 0, leaks = -1;
	FILE *f;
	int status;

	snprintf(cmd, sizeof(cmd), "%s %s --deny 'c %d:%d rwm' -- %s --workload %s %d 2>&1",
		 devwl_run, baseline, DEV_MAJOR, DEV_MINOR, self, dir, ATTEMPTS);
	f = popen(cmd, "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "attempts=%ld file=%ld eperm=%ld other=%ld leaks=%ld", &attempts,
			   &files, &denied, &other, &leaks) == 5)
			break;
		fprintf(stderr, "  %s: %s", baseline, line);
		/* The host can (main asked it): devwl-run's failure is the test's. */
		if (strstr(line, "cannot set up the kernel baseline")) {
			pclose(f);
			fprintf(stderr, "FAIL %s: devwl-run made no baseline where the host can\n",
				baseline);
			return 1;
		}
	}
	while (fgets(cmd, sizeof(cmd), f))
		fprintf(stderr, "  %s: %s", baseline, cmd);
	status = pclose(f);
	fprintf(stderr, "%s: attempts=%ld file=%ld eperm=%ld other=%ld leaks=%ld\n", baseline,
		attempts, files, denied, other, leaks);
	*ret_leaks = leaks;
	if (informational)
		return leaks < 0 ? 1 : 0;
	if (leaks < 0 || attempts < ATTEMPTS) {
		fprintf(stderr, "FAIL %s: the workload did not complete (status %#x)\n", baseline,
			status);
		return 1;
	}
	/* Both sides of the flip must have been seen, or nothing raced. */
	if (files == 0 || denied == 0) {
		fprintf(stderr, "FAIL %s: no race took place\n", baseline);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/devwl-49.XXXXXX", file[64], dev[64], self[PATH_MAX], run_path[PATH_MAX];
	const char *build = getenv("DEVWL_BUILD");
	const char *kinds[] = {"--baseline=v1", "--baseline=v2"};
	int ran = 0, failed = 0, fd;
	long leaks = 0;
	ssize_t n;

	if (argc == 4 && strcmp(argv[1], "--workload") == 0)
		return workload(argv[2], strtol(argv[3], NULL, 10));
	if (geteuid() != 0) {
		fputs("SKIP: needs root (mknod, device cgroup baseline)\n", stderr);
		return 77;
	}
	if (!build) {
		fputs("FAIL: DEVWL_BUILD not set (ctest sets it)\n", stderr);
		return 1;
	}
	snprintf(run_path, sizeof(run_path), "%s/tools/devwl-run", build);
	if (access(run_path, X_OK) < 0) {
		fprintf(stderr, "FAIL: no %s: the build should have made it\n", run_path);
		return 1;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0 || !mkdtemp(tmpl))
		return 1;
	self[n] = '\0';
	snprintf(file, sizeof(file), "%s/f", tmpl);
	snprintf(dev, sizeof(dev), "%s/d", tmpl);
	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	if (fd < 0 || mknod(dev, S_IFCHR | 0666, makedev(DEV_MAJOR, DEV_MINOR)) < 0) {
		fprintf(stderr, "SKIP: cannot create the nodes: %m\n");
		unlink(file);
		rmdir(tmpl);
		return 77;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char why[512] = "";
		int r;
		/* Asked of the host, not of devwl-run: where it can, devwl-run must. */
		if ((i == 0 ? hp_v1_devices(why, sizeof(why)) : hp_bpf_device(why, sizeof(why))) <
		    0) {
			fprintf(stderr, "%s: the host cannot: %s\n", kinds[i], why);
			continue;
		}
		r = run(run_path, self, tmpl, kinds[i], false, &leaks);
		ran++;
		if (r != 0 || leaks != 0) {
			if (leaks > 0)
				fprintf(stderr, "FAIL %s: %ld fds to the denied device leaked\n",
					kinds[i], leaks);
			failed++;
		}
	}
	/* Not asserted: shows the race is real, so the runs above could have failed. */
	if (run(run_path, self, tmpl, "--no-baseline", true, &leaks) == 0)
		fprintf(stderr, "for comparison, without a baseline: %ld fds leaked\n", leaks);
	unlink(dev);
	unlink(file);
	rmdir(tmpl);
	if (ran == 0) {
		fputs("SKIP: no device cgroup baseline possible on this host\n", stderr);
		return 77;
	}
	if (failed)
		return 1;
	printf("PASS (%d baseline kinds, %d attempts each)\n", ran, ATTEMPTS);
	return 0;
}
