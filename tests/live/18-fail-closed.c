/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where devwl cannot decide it answers EPERM, never CONTINUE. Faults are injected into
 * the handler's own steps by interposing the libc functions the (static) library calls,
 * in this test binary only — the shipped library carries no hook:
 *  - a syscall number devwl does not trap, notified by another filter;
 *  - open_by_handle_at when reading the caller's credentials, fetching its mount fd,
 *    resolving the handle or inspecting the result fails;
 *  - a handle that resolves to nothing is refused, not re-read; one that resolves to a
 *    non-device or a granted device is the kernel's to open (CONTINUE), in the caller's
 *    context (doc/DESIGN.md, "Grants").
 * The workload has no kernel baseline here, so a wrong CONTINUE would show as a
 * successful open.
 */
#include <dlfcn.h>
#include <stdarg.h>

#include "rawfilter.h"

enum fault { FAULT_NONE, FAULT_STATUS, FAULT_GETFD, FAULT_HANDLE, FAULT_FSTAT };
static volatile enum fault fault;
static volatile int fault_hits;
static volatile bool after_handle;

int openat(int dirfd, const char *path, int flags, ...);
int openat(int dirfd, const char *path, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	mode_t mode = 0;
	va_list ap;
	size_t len = strlen(path);

	va_start(ap, flags);
	if (flags & (O_CREAT | __O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	if (fault == FAULT_STATUS && len > 7 && strcmp(path + len - 7, "/status") == 0) {
		fault_hits++;
		errno = EMFILE;
		return -1;
	}
	if (!real)
		real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	return real(dirfd, path, flags, mode);
}

int open_by_handle_at(int mount_fd, struct file_handle *fh, int flags);
int open_by_handle_at(int mount_fd, struct file_handle *fh, int flags)
{
	static int (*real)(int, struct file_handle *, int);

	if (fault == FAULT_HANDLE) {
		fault_hits++;
		errno = ENOMEM;
		return -1;
	}
	if (!real)
		real = (int (*)(int, struct file_handle *, int))dlsym(RTLD_NEXT,
								      "open_by_handle_at");
	after_handle = true;
	return real(mount_fd, fh, flags);
}

int fstat(int fd, struct stat *st);
int fstat(int fd, struct stat *st)
{
	static int (*real)(int, struct stat *);

	if (fault == FAULT_FSTAT && after_handle) {
		after_handle = false;
		fault_hits++;
		errno = ENOMEM;
		return -1;
	}
	if (!real)
		real = (int (*)(int, struct stat *))dlsym(RTLD_NEXT, "fstat");
	return real(fd, st);
}

/* Forwards six arguments whatever the call takes, as libc's own syscall() reads six
 * registers: not a bug, so not instrumented. */
long syscall(long nr, ...);
__attribute__((no_sanitize("address", "undefined"))) long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (fault == FAULT_GETFD && nr == SYS_pidfd_getfd) {
		fault_hits++;
		errno = EMFILE;
		return -1;
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static int getppid_child(void *arg)
{
	long r = 0;

	(void)arg;
	errno = 0;
	r = syscall(SYS_getppid);
	printf("getppid: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	return 0;
}

/* One "probe handle PATH rdonly" run with a fault armed in the supervisor. */
static void handle_case(const char *dir, const char *name, enum fault f, const char *want,
			enum devwl_verdict verdict)
{
	char args[256];
	struct lt_sup s;
	char *out = NULL;

	lt_sup_init(&s, "deny a;allow c 1:5 r");
	snprintf(args, sizeof(args), "handle %s/%s rdonly", dir, name);
	fault_hits = 0;
	after_handle = false;
	fault = f;
	out = lt_probe_run(&s, args);
	fault = FAULT_NONE;
	LT_CHECK(lt_match(out, want), "fault %d, %s: got '%s', want '%s'", (int)f, args, out, want);
	LT_CHECK(f == FAULT_NONE || fault_hits > 0, "fault %d never hit", (int)f);
	/* Counted, not the last answer: a sanitizer's exit-time opens come after it. */
	LT_CHECK(verdict == DEVWL_VERDICT_ALLOW	     ? s.allowed == 1
		 : verdict == DEVWL_VERDICT_CONTINUE ? s.continued >= 1 && !s.allowed && !s.denied
						     : s.denied == 1,
		 "fault %d, %s: %d allowed, %d denied, %d continued, want verdict %d", (int)f, args,
		 s.allowed, s.denied, s.continued, (int)verdict);
	free(out);
	lt_sup_free(&s);
}

int main(void)
{
	struct lt_nodes nodes;
	struct lt_sup s;

	lt_need_root();
	lt_watchdog(120);

	/* A number devwl does not know: EPERM, not CONTINUE. */
	{
		uint32_t nrs[] = {SYS_getppid};
		struct devwl_event e;
		struct lt_raw raw;
		char *out = NULL;

		lt_sup_init(&s, "deny a");
		lt_raw_start(&raw, AUDIT_ARCH_X86_64, nrs, 1, getppid_child, NULL);
		LT_CHECK(lt_raw_handle(&raw, s.notify, s.node, &e), "no notification");
		LT_CHECK(e.verdict == DEVWL_VERDICT_DENY && e.error == EPERM,
			 "unknown syscall: verdict %d error %d, want EPERM", e.verdict, e.error);
		out = lt_raw_finish(&raw);
		LT_CHECK(strcmp(lt_result_of(out, "getppid"), "EPERM") == 0,
			 "unknown syscall: %s, want EPERM", lt_result_of(out, "getppid"));
		free(out);
		lt_sup_free(&s);
	}

	lt_nodes_make(&nodes);
	/* Without a fault: the allowed device and a regular file, both the kernel's to open. */
	handle_case(nodes.dir, "zero", FAULT_NONE, "ok *rdev=1:5 *read=00000000",
		    DEVWL_VERDICT_ALLOW);
	handle_case(nodes.dir, "file", FAULT_NONE, "ok *type=f", DEVWL_VERDICT_CONTINUE);
	handle_case(nodes.dir, "full", FAULT_NONE, "EPERM", DEVWL_VERDICT_DENY);
	/* Each of devwl's own steps failing: EPERM. */
	handle_case(nodes.dir, "zero", FAULT_STATUS, "EPERM", DEVWL_VERDICT_DENY);
	handle_case(nodes.dir, "zero", FAULT_GETFD, "EPERM", DEVWL_VERDICT_DENY);
	handle_case(nodes.dir, "zero", FAULT_HANDLE, "EPERM", DEVWL_VERDICT_DENY);
	handle_case(nodes.dir, "zero", FAULT_FSTAT, "EPERM", DEVWL_VERDICT_DENY);
	handle_case(nodes.dir, "full", FAULT_HANDLE, "EPERM", DEVWL_VERDICT_DENY);
	handle_case(nodes.dir, "file", FAULT_HANDLE, "EPERM", DEVWL_VERDICT_DENY);
	lt_nodes_remove(&nodes);
	if (lt_failures)
		return 1;
	printf("PASS\n");
	return 0;
}
