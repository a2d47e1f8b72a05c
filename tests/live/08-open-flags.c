/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Open flags on device nodes, natively and under devwl: O_CREAT of an existing device is
 * checked like any open (creat() too), O_CREAT|O_EXCL gives EEXIST and never an fd,
 * O_TRUNC leaves a device a device, O_EXCL without O_CREAT keeps a block device's
 * exclusive claim, and openat2's own refusals (unknown flags or resolve bits, a mode
 * without O_CREAT, conflicting scopes, O_PATH with other flags, bad sizes, trailing
 * garbage, unreadable open_how, RESOLVE_CACHED with O_CREAT) come back exactly as the
 * kernel gives them, whatever the path names. No devices cgroup: a wrong CONTINUE of a
 * denied device would show as an open fd.
 */
#include <sys/syscall.h>
#include <linux/openat2.h>

#include "livetest.h"

static char dir[128];

static void line(const char *label, long ret, int err)
{
	char res[128];

	lt_describe(res, sizeof(res), ret, err);
	printf("%s: %s\n", label, res);
}

static long o2(const char *name, uint64_t flags, uint64_t mode, uint64_t resolve, size_t size)
{
	struct {
		struct open_how how;
		uint64_t tail[2];
	} b = {.how = {.flags = flags, .mode = mode, .resolve = resolve}};
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (size == 40)
		b.tail[1] = 1; /* a non-zero byte beyond the struct the kernel knows */
	return syscall(SYS_openat2, AT_FDCWD, p, &b, size);
}

static long op(const char *name, int flags)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return syscall(SYS_open, p, flags, 0600);
}

static int child_cases(void *arg)
{
	static const char *devs[] = {"zero", "full"};
	char p[256];
	long r = 0, r2 = 0;

	(void)arg;
	for (size_t i = 0; i < ARRAY_SIZE_LT(devs); i++) {
		const char *d = devs[i];
		char l[64];

#define CASE(label, expr)                                                                          \
	do {                                                                                       \
		snprintf(l, sizeof(l), "%s %s", label, d);                                         \
		r = (expr);                                                                        \
		line(l, r, errno);                                                                 \
		if (r >= 0)                                                                        \
			close((int)r);                                                             \
	} while (0)
		CASE("creat-rdonly", op(d, O_CREAT | O_RDONLY));
		CASE("creat-rdwr", op(d, O_CREAT | O_RDWR));
		CASE("creat-excl", op(d, O_CREAT | O_EXCL | O_RDONLY));
		CASE("creat-excl-link", op("lnk-zero", O_CREAT | O_EXCL | O_RDONLY));
		CASE("trunc", op(d, O_WRONLY | O_TRUNC));
		CASE("creat-trunc", op(d, O_CREAT | O_RDWR | O_TRUNC));
		snprintf(p, sizeof(p), "%s/%s", dir, d);
		CASE("creat()", syscall(SYS_creat, p, 0600));
		CASE("o2-plain", o2(d, O_RDONLY, 0, 0, sizeof(struct open_how)));
		CASE("o2-creat", o2(d, O_CREAT | O_RDONLY, 0600, 0, sizeof(struct open_how)));
		CASE("o2-resolve-bit", o2(d, O_RDONLY, 0, 0x100, sizeof(struct open_how)));
		CASE("o2-flag-bit", o2(d, O_RDONLY | 0x40000000, 0, 0, sizeof(struct open_how)));
		CASE("o2-flag-high", o2(d, O_RDONLY | (1ULL << 40), 0, 0, sizeof(struct open_how)));
		CASE("o2-mode", o2(d, O_RDONLY, 0600, 0, sizeof(struct open_how)));
		CASE("o2-mode-bits", o2(d, O_CREAT | O_RDONLY, 010000, 0, sizeof(struct open_how)));
		CASE("o2-scopes", o2(d, O_RDONLY, 0, RESOLVE_BENEATH | RESOLVE_IN_ROOT,
				     sizeof(struct open_how)));
		CASE("o2-path-rdwr", o2(d, O_PATH | O_RDWR, 0, 0, sizeof(struct open_how)));
		CASE("o2-path", o2(d, O_PATH, 0, 0, sizeof(struct open_how)));
		CASE("o2-creat-dir", o2(d, O_CREAT | O_DIRECTORY, 0, 0, sizeof(struct open_how)));
		CASE("o2-tmpfile-nodir",
		     o2(d, 020000000 | O_RDWR, 0600, 0, sizeof(struct open_how)));
		CASE("o2-cached-creat",
		     o2(d, O_CREAT | O_RDONLY, 0, RESOLVE_CACHED, sizeof(struct open_how)));
		CASE("o2-cached", o2(d, O_RDONLY, 0, RESOLVE_CACHED, sizeof(struct open_how)));
		CASE("o2-size-small", o2(d, O_RDONLY, 0, 0, 16));
		CASE("o2-size-big", o2(d, O_RDONLY, 0, 0, 8192));
		CASE("o2-size-tail0", o2(d, O_RDONLY, 0, 0, 32));
		CASE("o2-size-tail1", o2(d, O_RDONLY, 0, 0, 40));
		snprintf(p, sizeof(p), "%s/%s", dir, d);
		CASE("o2-how-null", syscall(SYS_openat2, AT_FDCWD, p, NULL, 24));
		CASE("tmpfile-nodir", op(d, 020000000 | O_RDWR));
#undef CASE
	}
	/* An exclusive claim on a block device holds against a second exclusive open. */
	r = op("loop0", O_RDONLY | O_EXCL);
	line("excl-1 loop0", r, errno);
	r2 = op("loop0", O_RDONLY | O_EXCL);
	line("excl-2 loop0", r2, errno);
	if (r2 >= 0)
		close((int)r2);
	if (r >= 0)
		close((int)r);
	return 0;
}

struct want {
	const char *label;
	const char *native;
	const char *devwl; /* NULL: the same as native */
};

#define ZERO "ok type=c rdev=1:5"
#define FULL "ok type=c rdev=1:7"

static const struct want wants[] = {
	{"creat-rdonly zero", ZERO, NULL},
	{"creat-rdonly full", FULL, "EPERM"},
	{"creat-rdwr zero", ZERO, NULL},
	{"creat-rdwr full", FULL, "EPERM"},
	{"creat-excl zero", "EEXIST", NULL},
	{"creat-excl full", "EEXIST", NULL},
	{"creat-excl-link zero", "EEXIST", NULL},
	{"trunc zero", ZERO, NULL},
	{"trunc full", FULL, "EPERM"},
	{"creat-trunc zero", ZERO, NULL},
	{"creat-trunc full", FULL, "EPERM"},
	{"creat() zero", ZERO, NULL},
	{"creat() full", FULL, "EPERM"},
	{"o2-plain zero", ZERO, NULL},
	{"o2-plain full", FULL, "EPERM"},
	{"o2-creat zero", ZERO, NULL},
	{"o2-creat full", FULL, "EPERM"},
	{"o2-resolve-bit zero", "EINVAL", NULL},
	{"o2-resolve-bit full", "EINVAL", NULL},
	{"o2-flag-bit zero", "EINVAL", NULL},
	{"o2-flag-bit full", "EINVAL", NULL},
	{"o2-flag-high zero", "EINVAL", NULL},
	{"o2-flag-high full", "EINVAL", NULL},
	{"o2-mode zero", "EINVAL", NULL},
	{"o2-mode full", "EINVAL", NULL},
	{"o2-mode-bits zero", "EINVAL", NULL},
	{"o2-mode-bits full", "EINVAL", NULL},
	{"o2-scopes zero", "EINVAL", NULL},
	{"o2-scopes full", "EINVAL", NULL},
	{"o2-path-rdwr zero", "EINVAL", NULL},
	{"o2-path-rdwr full", "EINVAL", NULL},
	{"o2-path zero", ZERO, NULL},
	{"o2-path full", FULL, NULL}, /* O_PATH never opens the driver: not checked */
	{"o2-creat-dir zero", "EINVAL", NULL},
	{"o2-creat-dir full", "EINVAL", NULL},
	{"o2-tmpfile-nodir zero", "EINVAL", NULL},
	{"o2-tmpfile-nodir full", "EINVAL", NULL},
	{"o2-cached-creat zero", "EAGAIN", NULL},
	{"o2-cached-creat full", "EAGAIN", NULL},
	{"o2-cached zero", ZERO, NULL},
	{"o2-cached full", FULL, "EPERM"},
	{"o2-size-small zero", "EINVAL", NULL},
	{"o2-size-small full", "EINVAL", NULL},
	{"o2-size-big zero", "E2BIG", NULL},
	{"o2-size-big full", "E2BIG", NULL},
	{"o2-size-tail0 zero", ZERO, NULL},
	{"o2-size-tail0 full", FULL, "EPERM"},
	{"o2-size-tail1 zero", "E2BIG", NULL},
	{"o2-size-tail1 full", "E2BIG", NULL},
	{"o2-how-null zero", "EFAULT", NULL},
	{"o2-how-null full", "EFAULT", NULL},
	{"tmpfile-nodir zero", "EINVAL", NULL},
	{"tmpfile-nodir full", "EINVAL", NULL},
	{"excl-1 loop0", "ok type=b rdev=7:0", NULL},
	{"excl-2 loop0", "EBUSY", NULL},
};

int main(void)
{
	struct lt_nodes nodes;
	struct lt_sup s;
	char *native = NULL, *devwl = NULL;
	int status = 0, fds = 0;

	lt_need_root();
	lt_watchdog(60);
	lt_nodes_make(&nodes);
	snprintf(dir, sizeof(dir), "%s", nodes.dir);
	native = lt_native(child_cases, NULL, &status);
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "native child status %#x", status);
	fds = lt_count_fds();
	lt_sup_init(&s, "deny a;allow c 1:5 rw;allow b 7:0 r");
	devwl = lt_run(&s, NULL, child_cases, NULL, &status);
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "devwl child status %#x", status);
	LT_CHECK(s.errors == 0, "%d handler errors", s.errors);
	lt_sup_free(&s);
	for (size_t i = 0; i < ARRAY_SIZE_LT(wants); i++) {
		const struct want *w = &wants[i];
		const char *got = lt_result_of(native, w->label);

		LT_CHECK(strcmp(got, w->native) == 0, "native %s: got %s, want %s", w->label, got,
			 w->native);
		got = lt_result_of(devwl, w->label);
		LT_CHECK(strcmp(got, w->devwl ?: w->native) == 0, "devwl %s: got %s, want %s",
			 w->label, got, w->devwl ?: w->native);
	}
	LT_CHECK(lt_count_fds() == fds, "supervisor fds: %d before, %d after", fds, lt_count_fds());
	if (lt_failures)
		fprintf(stderr, "native:\n%s\ndevwl:\n%s\n", native, devwl);
	free(native);
	free(devwl);
	lt_nodes_remove(&nodes);
	printf("%zu cases compared with the kernel, %d failures\n", ARRAY_SIZE_LT(wants),
	       lt_failures);
	return lt_failures ? 1 : 0;
}
