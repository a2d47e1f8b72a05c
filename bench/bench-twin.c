/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-twin [--ops N] [--rounds R] [--run PATH] [--mknod-only | --files]: what a granted mknod +
 * unlink costs a workload in a user namespace under devwl-run --mode=kernel --userns, where devwl
 * binds a twin over each node and unmounts it again at the unlink (doc/DESIGN.md, "nodev mounts"),
 * against the same loop natively: root making and unlinking c 1:3 on a tmpfs of the host, where
 * mknod is allowed. Both sides run in rounds, alternately; prints each side's median wall-clock ns
 * per mknod+unlink and the median of the per-round ratios, against the target of 20 x native.
 * --mknod-only times the mknods alone, each at a name of its own (what a devwl-run without
 * --userns, one from before it, can be timed on: --run). --files times what --userns costs
 * the rest of the workload: a regular file made and unlinked, with a twin bound at another name
 * (the unlink traps, and names no twin). The inner loop checks every result: a node
 * that does not open (no twin) or an unlink that fails is an error, not a fast row. Needs root,
 * user namespaces and a built devwl-run; exits 77 where the host cannot run it.
 *
 * bench-twin --inner N DIR (what devwl-run runs): into a user and a mount namespace of
 * its own (root mapped to our uid), a tmpfs on DIR (nodev, as every mount of a user
 * namespace), N times mknod + open + unlink there; prints ns per iteration. --inner-files
 * N DIR: the same with regular files, a twin kept at DIR/null.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* N times: mknod c 1:3, open it (when check), unlink. ns per iteration, or < 0. */
/* --mknod-only: no unlink, every node a name of its own (what an old devwl can do). */
static bool mknod_only;
/* --files: a regular file made (open O_CREAT) and unlinked instead. */
static bool files;

static double loop(const char *dir, long n, bool check)
{
	char path[4096];
	double t0 = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, files && !check ? "f" : "null");
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		if (mknod_only)
			snprintf(path, sizeof(path), "%s/null%ld%s", dir, i, check ? "c" : "");
		if (files && !check) {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

			if (fd < 0 || close(fd) < 0 || unlink(path) < 0) {
				fprintf(stderr, "bench-twin: file %s: %m\n", path);
				return -1;
			}
			continue;
		}
		if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) < 0) {
			fprintf(stderr, "bench-twin: mknod %s: %m\n", path);
			return -1;
		}
		if (check) {
			int fd = open(path, O_RDWR | O_CLOEXEC);

			if (fd < 0) {
				fprintf(stderr, "bench-twin: open %s (no twin?): %m\n", path);
				return -1;
			}
			close(fd);
		}
		if (!mknod_only && !files && unlink(path) < 0) {
			fprintf(stderr, "bench-twin: unlink %s: %m\n", path);
			return -1;
		}
	}
	return (now_ns() - t0) / (double)n;
}

/* In a user namespace of our own: the workload devwl-run supervises. */
static int inner(long n, const char *dir)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();
	double ns = 0;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		perror("bench-twin: unshare");
		return 77;
	}
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0 ||
	    write_file("/proc/self/setgroups", "deny") < 0) {
		perror("bench-twin: uid_map");
		return 1;
	}
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	if (write_file("/proc/self/gid_map", map) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("none", dir, "tmpfs", 0, "size=64k") < 0) {
		perror("bench-twin: mapping, mounting");
		return 1;
	}
	/* One not timed: the first twin of a namespace makes its tmpfs (--files: kept). */
	if (loop(dir, 1, true) < 0)
		return 1;
	ns = loop(dir, n, false);
	if (ns < 0)
		return 1;
	printf("%.1f\n", ns);
	return 0;
}

/* Native: root, in a mount namespace of its own, on a tmpfs of the host's user namespace. */
static double native(long n, const char *dir)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		double ns = 0;

		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("none", dir, "tmpfs", 0, "size=64k") < 0) {
			perror("bench-twin: native tmpfs");
			_exit(1);
		}
		ns = loop(dir, n, false);
		if (ns < 0)
			_exit(1);
		printf("%.1f\n", ns);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* A command's one line of output as a number; < 0 on failure. */
static double run_line(char *const argv[], bool is_native, long n, const char *dir)
{
	int p[2];
	char buf[64] = "";
	ssize_t got = 0;
	pid_t pid = 0;
	int st = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		if (is_native)
			_exit(native(n, dir) < 0 ? 1 : 0);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	got = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	waitpid(pid, &st, 0);
	if (got <= 0 || !WIFEXITED(st))
		return -1;
	if (WEXITSTATUS(st) == 77)
		return -77;
	if (WEXITSTATUS(st) != 0)
		return -1;
	buf[got] = '\0';
	return strtod(buf, NULL);
}

/* The directory part of path, in a static buffer. */
static const char *dirname_of(const char *path)
{
	static char d[4096];
	char *slash = NULL;

	snprintf(d, sizeof(d), "%s", path);
	slash = strrchr(d, '/');
	if (slash)
		*slash = '\0';
	return d;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define ROUNDS_MAX 31

int main(int argc, char **argv)
{
	double dv[ROUNDS_MAX], nv[ROUNDS_MAX], rv[ROUNDS_MAX];
	char self[4096], dir[] = "/tmp/bench-twin.XXXXXX", ops[24];
	const char *run = NULL;
	long n = 2000;
	int rounds = 5;
	ssize_t len = 0;

	mknod_only = argc == 4 && strcmp(argv[1], "--inner-mknod") == 0;
	files = argc == 4 && strcmp(argv[1], "--inner-files") == 0;
	if (argc == 4 && (mknod_only || files || strcmp(argv[1], "--inner") == 0))
		return inner(atol(argv[2]), argv[3]);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc)
			n = atol(argv[++i]);
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--run") == 0 && i + 1 < argc)
			run = argv[++i];
		else if (strcmp(argv[i], "--mknod-only") == 0)
			mknod_only = true;
		else if (strcmp(argv[i], "--files") == 0)
			files = true;
		else {
			fprintf(stderr, "usage: bench-twin [--ops N] [--rounds R] [--run PATH] "
					"[--mknod-only | --files]\n");
			return 2;
		}
	}
	if (n < 1 || rounds < 1 || rounds > ROUNDS_MAX || (mknod_only && files))
		return 2;
	if (getuid() != 0) {
		fprintf(stderr, "bench-twin: needs root\n");
		return 77;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 1;
	self[len] = '\0';
	if (!run) {
		static char def[4200];

		/* build/bench/bench-twin -> build/tools/devwl-run */
		snprintf(def, sizeof(def), "%s/../tools/devwl-run", dirname_of(self));
		run = def;
	}
	if (!mkdtemp(dir))
		return 1;
	chmod(dir, 0755);
	snprintf(ops, sizeof(ops), "%ld", n);
	for (int r = 0; r < rounds; r++) {
		/* --mknod-only leaves --userns out: a devwl-run from before it knows none. */
		char *dargv[] = {(char *)run,
				 "--mode=kernel",
				 mknod_only ? "--" : "--userns",
				 mknod_only ? self : "--",
				 mknod_only ? "--inner-mknod" : self,
				 mknod_only ? ops
				 : files    ? "--inner-files"
					    : "--inner",
				 mknod_only ? dir : ops,
				 mknod_only ? NULL : dir,
				 NULL};
		double d = 0, nat = 0;

		/* Turn the order from round to round. */
		for (int side = 0; side < 2; side++) {
			if ((side + r) % 2 == 0)
				d = run_line(dargv, false, n, dir);
			else
				nat = run_line(NULL, true, n, dir);
		}
		if (d == -77) {
			rmdir(dir);
			fprintf(stderr, "bench-twin: no user namespace here\n");
			return 77;
		}
		if (d <= 0 || nat <= 0) {
			rmdir(dir);
			fprintf(stderr, "bench-twin: round %d failed (devwl %.1f, native %.1f)\n",
				r, d, nat);
			return 1;
		}
		dv[r] = d;
		nv[r] = nat;
		rv[r] = d / nat;
	}
	rmdir(dir);
	if (files)
		printf("a regular file made and unlinked (the unlink trapped, no twin at its name; "
		       "a twin bound at another), user namespace under devwl-run --mode=kernel "
		       "--userns, vs native as root on a tmpfs: %ld ops x %d rounds\n",
		       n, rounds);
	else
		printf("granted %s c 1:3, user namespace under devwl-run --mode=kernel%s, vs "
		       "native as root on a tmpfs: %ld ops x %d rounds\n",
		       mknod_only ? "mknod" : "mknod+unlink",
		       mknod_only ? " (twin bound)" : " --userns (twin bound and unmounted)", n,
		       rounds);
	printf("%-28s %12s\n", "side", "ns/op");
	printf("%-28s %12.0f\n", "devwl (user namespace)", median(dv, rounds));
	printf("%-28s %12.0f\n", "native (root, tmpfs)", median(nv, rounds));
	double ratio = median(rv, rounds);

	qsort(rv, (size_t)rounds, sizeof(*rv), cmp_double);
	if (files)
		printf("ratio %.2f (%.2f-%.2f) (no target: the trap's round trip)\n", ratio, rv[0],
		       rv[rounds - 1]);
	else
		printf("ratio %.1f (%.1f-%.1f) target <=20.0 %s\n", ratio, rv[0], rv[rounds - 1],
		       ratio <= 20.0 ? "met" : "MISSED");
	return 0;
}
