/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Paths at and beyond the kernel's limits, and path memory the kernel cannot read:
 * PATH_MAX-1 bytes (plus the NUL: accepted), PATH_MAX and more (ENAMETOOLONG), NULL,
 * an unterminated path running into an unmapped page or across into a PROT_NONE page
 * (EFAULT), one ending right before such a page (fine), an empty path (ENOENT), and paths
 * in exec-only pages (which the kernel reads but process_vm_readv does not). Every call is
 * made first natively (no filter) and then under devwl, for open, openat, openat2, creat
 * and mknod: the errors must be the kernel's own, a denied device never opens, an allowed
 * one opens. No devices cgroup here, so a wrong CONTINUE would show as an open device.
 */
#include <limits.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/openat2.h>

#include "livetest.h"

static char dir[128];
static size_t pg;

/* A path of exactly len bytes (without the NUL) naming target, padded with leading '/'. */
static char *long_path(char *buf, size_t len, const char *target)
{
	size_t t = strlen(target);

	memset(buf, '/', len - t);
	memcpy(buf + len - t, target, t + 1);
	return buf;
}

static long call(const char *op, const char *path)
{
	if (strcmp(op, "open") == 0)
		return syscall(SYS_open, path, O_RDONLY | O_CLOEXEC);
	if (strcmp(op, "openat") == 0)
		return syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (strcmp(op, "openat2") == 0) {
		struct open_how how = {.flags = O_RDONLY | O_CLOEXEC};

		return syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	}
	return syscall(SYS_creat, path, 0600);
}

static void report(const char *op, const char *kind, long ret, int err, bool is_mknod)
{
	char res[128];

	if (is_mknod)
		snprintf(res, sizeof(res), "%s", ret < 0 ? strerrorname_np(err) : "ok");
	else
		lt_describe(res, sizeof(res), ret, err);
	printf("%s %s: %s\n", op, kind, res);
	if (!is_mknod && ret >= 0)
		close((int)ret);
}

static void mknod_case(const char *kind, const char *path, unsigned int minor)
{
	long r = syscall(SYS_mknod, path, S_IFCHR | 0600, makedev(1, minor));

	report("mknod", kind, r, errno, true);
}

static int child_cases(void *arg)
{
	static const char *ops[] = {"open", "openat", "openat2", "creat"};
	const char *tag = arg;
	static char big[3 * 4096];
	char zero[256], full[256], file[256], target[256];
	char *region = NULL, *hole = NULL, *xo = NULL, *p = NULL;

	printf("start: ok\n"); /* stdio's buffer exists before the layout below */
	snprintf(zero, sizeof(zero), "%s/zero", dir);
	snprintf(full, sizeof(full), "%s/full", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	/* [RW][RW][PROT_NONE] and, elsewhere, [RW][unmapped]; an exec-only page. */
	region = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	hole = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	xo = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED || hole == MAP_FAILED || xo == MAP_FAILED)
		return 3;
	memset(region, 'a', 2 * pg);
	mprotect(region + 2 * pg, pg, PROT_NONE);
	memset(hole, 'a', pg);
	munmap(hole + pg, pg);

	for (size_t i = 0; i < ARRAY_SIZE_LT(ops); i++) {
		const char *op = ops[i];
		long r = 0;

		r = call(op, long_path(big, PATH_MAX - 1, zero));
		report(op, "max-1-zero", r, errno, false);
		r = call(op, long_path(big, PATH_MAX - 1, full));
		report(op, "max-1-full", r, errno, false);
		r = call(op, long_path(big, PATH_MAX - 1, file));
		report(op, "max-1-file", r, errno, false);
		r = call(op, long_path(big, PATH_MAX, zero));
		report(op, "max", r, errno, false);
		r = call(op, long_path(big, PATH_MAX + 1000, zero));
		report(op, "max+", r, errno, false);
		r = call(op, NULL);
		report(op, "null", r, errno, false);
		r = call(op, hole + pg - 100);
		report(op, "unterminated", r, errno, false);
		/* "/tmp/aaaa…" up to the PROT_NONE page. */
		p = region + 2 * pg - 10;
		memcpy(p, "/tmp/aaaaa", 10);
		r = call(op, p);
		report(op, "protnone", r, errno, false);
		/* Ends with its NUL as the last readable byte. */
		p = region + 2 * pg - strlen(zero) - 1;
		memcpy(p, zero, strlen(zero) + 1);
		r = call(op, p);
		report(op, "page-end-zero", r, errno, false);
		p = region + pg - 5;
		memcpy(p, zero, strlen(zero) + 1);
		r = call(op, p);
		report(op, "cross-zero", r, errno, false);
		r = call(op, "");
		report(op, "empty", r, errno, false);
		const char *xs[3][2] = {{"xo-zero", zero}, {"xo-full", full}, {"xo-file", file}};
		for (size_t k = 0; k < 3; k++) {
			mprotect(xo, pg, PROT_READ | PROT_WRITE);
			strcpy(xo, xs[k][1]);
			mprotect(xo, pg, PROT_EXEC);
			r = call(op, xo);
			report(op, xs[k][0], r, errno, false);
		}
	}

	/* mknod: c 1:5 may be made, c 1:7 not. */
	snprintf(target, sizeof(target), "%s/nd/m5-%s", dir, tag);
	mknod_case("max-1-allowed", long_path(big, PATH_MAX - 1, target), 5);
	snprintf(target, sizeof(target), "%s/nd/m7-%s", dir, tag);
	mknod_case("max-1-denied", long_path(big, PATH_MAX - 1, target), 7);
	mknod_case("max", long_path(big, PATH_MAX, target), 5);
	mknod_case("null", NULL, 5);
	mknod_case("unterminated", hole + pg - 100, 5);
	p = region + 2 * pg - 10;
	memcpy(p, "/tmp/aaaaa", 10);
	mknod_case("protnone", p, 5);
	mknod_case("empty", "", 5);
	mprotect(xo, pg, PROT_READ | PROT_WRITE);
	snprintf(xo, pg, "%s/nd/x5-%s", dir, tag);
	mprotect(xo, pg, PROT_EXEC);
	mknod_case("xo-allowed", xo, 5);
	mprotect(xo, pg, PROT_READ | PROT_WRITE);
	snprintf(xo, pg, "%s/nd/x7-%s", dir, tag);
	mprotect(xo, pg, PROT_EXEC);
	mknod_case("xo-denied", xo, 7);
	return 0;
}

struct want {
	const char *kind;
	const char *native;
	const char *devwl;
};

static const struct want open_wants[] = {
	{"max-1-zero", "ok type=c rdev=1:5", "ok type=c rdev=1:5"},
	{"max-1-full", "ok type=c rdev=1:7", "EPERM"},
	{"max-1-file", "ok type=f", "ok type=f"},
	{"max", "ENAMETOOLONG", "ENAMETOOLONG"},
	{"max+", "ENAMETOOLONG", "ENAMETOOLONG"},
	{"null", "EFAULT", "EFAULT"},
	{"unterminated", "EFAULT", "EFAULT"},
	{"protnone", "EFAULT", "EFAULT"},
	{"page-end-zero", "ok type=c rdev=1:5", "ok type=c rdev=1:5"},
	{"cross-zero", "ok type=c rdev=1:5", "ok type=c rdev=1:5"},
	{"empty", "ENOENT", "ENOENT"},
	/* Exec-only memory: the kernel reads it, process_vm_readv cannot; devwl reads it by
	 * force and refuses the denied device. The granted one, with no baseline, the kernel
	 * opens itself, reading the path again as it does; made on the caller's behalf
	 * (mknod), nothing is granted on memory read by force (a fail-closed difference). */
	{"xo-zero", "ok type=c rdev=1:5", "ok type=c rdev=1:5"},
	{"xo-full", "ok type=c rdev=1:7", "EPERM"},
	{"xo-file", "ok type=f", "ok type=f"},
};

static const struct want mknod_wants[] = {
	{"max-1-allowed", "ok", "ok"},
	{"max-1-denied", "ok", "EPERM"},
	{"max", "ENAMETOOLONG", "ENAMETOOLONG"},
	{"null", "EFAULT", "EFAULT"},
	{"unterminated", "EFAULT", "EFAULT"},
	{"protnone", "EFAULT", "EFAULT"},
	{"empty", "ENOENT", "ENOENT"},
	{"xo-allowed", "ok", "EFAULT"},
	{"xo-denied", "ok", "EPERM"},
};

static void check(const char *native, const char *devwl, const char *op, const struct want *w)
{
	char label[64];
	const char *got = NULL;

	snprintf(label, sizeof(label), "%s %s", op, w->kind);
	got = lt_result_of(native, label);
	LT_CHECK(strcmp(got, w->native) == 0, "native %s: got %s, want %s", label, got, w->native);
	got = lt_result_of(devwl, label);
	LT_CHECK(strcmp(got, w->devwl) == 0, "devwl %s: got %s, want %s", label, got, w->devwl);
}

int main(void)
{
	static const char *ops[] = {"open", "openat", "openat2", "creat"};
	struct lt_nodes nodes;
	struct lt_sup s;
	char *native = NULL, *devwl = NULL;
	int status = 0, fds = 0, checks = 0;

	lt_need_root();
	lt_watchdog(60);
	pg = (size_t)sysconf(_SC_PAGESIZE);
	lt_nodes_make(&nodes);
	snprintf(dir, sizeof(dir), "%s", nodes.dir);

	native = lt_native(child_cases, "native", &status);
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "native child status %#x", status);
	fds = lt_count_fds();
	lt_sup_init(&s, "deny a;allow c 1:5 rwm");
	devwl = lt_run(&s, NULL, child_cases, "devwl", &status);
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "devwl child status %#x", status);
	LT_CHECK(s.errors == 0, "%d handler errors", s.errors);
	for (size_t i = 0; i < ARRAY_SIZE_LT(ops); i++)
		for (size_t k = 0; k < ARRAY_SIZE_LT(open_wants); k++, checks++)
			check(native, devwl, ops[i], &open_wants[k]);
	for (size_t k = 0; k < ARRAY_SIZE_LT(mknod_wants); k++, checks++)
		check(native, devwl, "mknod", &mknod_wants[k]);
	lt_sup_free(&s);
	LT_CHECK(lt_count_fds() == fds, "supervisor fds: %d before, %d after", fds, lt_count_fds());
	if (lt_failures)
		fprintf(stderr, "native:\n%s\ndevwl:\n%s\n", native, devwl);
	free(native);
	free(devwl);
	lt_nodes_remove(&nodes);
	printf("%d calls compared with the kernel, %d failures\n", checks, lt_failures);
	return lt_failures ? 1 : 0;
}
