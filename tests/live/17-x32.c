/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x32 device-path calls are denied, never judged on 32-bit pointers the kernel takes as
 * 64-bit. Under devwl's own filter the kernel answers them EPERM itself (no notification
 * reaches the supervisor) while x32 calls that cannot reach a device (a fifo mknod, an
 * O_PATH open) are left to the kernel; a handler given x32 numbers by another filter
 * answers EPERM. Whether the kernel has x32 does not matter: seccomp sees the number
 * before the kernel looks it up.
 */
#include "rawfilter.h"

#if defined(__x86_64__)
#define X32 0x40000000u
static const struct {
	const char *name;
	uint32_t nr;
} x32_calls[] = {
	{"open", X32 | 2},
	{"openat", X32 | 257},
	{"creat", X32 | 85},
	{"openat2", X32 | 437},
	{"mknod", X32 | 133},
	{"mknodat", X32 | 259},
	{"open_by_handle_at", X32 | 304},
};

struct ctx {
	char zero[128];
	char fifo[128];
	char node[128];
};

/* Each x32 call with arguments that name an allowed device at a low address. */
static int x32_child(void *arg)
{
	struct ctx *c = arg;
	struct open_how {
		uint64_t flags, mode, resolve;
	} how = {0};
	char handle[8 + 128] = {0};
	long r = 0;

	errno = 0;
	r = syscall(X32 | 2, c->zero, O_RDONLY);
	printf("open: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	r = syscall(X32 | 257, AT_FDCWD, c->zero, O_RDONLY);
	printf("openat: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	r = syscall(X32 | 85, c->zero, 0644);
	printf("creat: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	r = syscall(X32 | 437, AT_FDCWD, c->zero, &how, sizeof(how));
	printf("openat2: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	r = syscall(X32 | 133, c->node, S_IFCHR | 0600, makedev(1, 5));
	printf("mknod: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	r = syscall(X32 | 259, AT_FDCWD, c->node, S_IFCHR | 0600, makedev(1, 5));
	printf("mknodat: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	r = syscall(X32 | 304, AT_FDCWD, handle, O_RDONLY);
	printf("open_by_handle_at: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	/* Cannot reach a device: not the filter's business. */
	r = syscall(X32 | 133, c->fifo, S_IFIFO | 0600, 0);
	printf("mknod-fifo: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	r = syscall(X32 | 257, AT_FDCWD, c->zero, O_PATH);
	printf("openat-path: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	return 0;
}

int main(void)
{
	struct lt_nodes nodes;
	struct lt_sup s;
	struct ctx c;
	char *out = NULL;
	int status = 0;

	lt_need_root();
	lt_watchdog(120);
	lt_nodes_make(&nodes);
	snprintf(c.zero, sizeof(c.zero), "%s/zero", nodes.dir);
	snprintf(c.fifo, sizeof(c.fifo), "%s/fifo", nodes.dir);
	snprintf(c.node, sizeof(c.node), "%s/made", nodes.dir);

	/* 1. devwl's filter: EPERM in the kernel, nothing reaches the supervisor. */
	lt_sup_init(&s, "deny a;allow c 1:5 rwm");
	out = lt_run(&s, NULL, x32_child, &c, &status);
	for (size_t i = 0; i < ARRAY_SIZE_LT(x32_calls); i++)
		LT_CHECK(strcmp(lt_result_of(out, x32_calls[i].name), "EPERM") == 0,
			 "devwl filter, x32 %s: %s, want EPERM", x32_calls[i].name,
			 lt_result_of(out, x32_calls[i].name));
	LT_CHECK(strcmp(lt_result_of(out, "mknod-fifo"), "EPERM") != 0,
		 "x32 fifo mknod refused: the filter should leave it to the kernel");
	LT_CHECK(strcmp(lt_result_of(out, "openat-path"), "EPERM") != 0,
		 "x32 O_PATH open refused: the filter should leave it to the kernel");
	LT_CHECK(s.count == 0, "%d x32 calls reached the supervisor, want 0", s.count);
	free(out);
	lt_sup_free(&s);

	/* 2. Another program's filter notifies them: the handler answers EPERM. */
	{
		uint32_t nrs[ARRAY_SIZE_LT(x32_calls)];
		struct lt_raw raw;
		struct devwl_event e;
		int handled = 0;

		for (size_t i = 0; i < ARRAY_SIZE_LT(x32_calls); i++)
			nrs[i] = x32_calls[i].nr;
		lt_sup_init(&s, "deny a;allow c 1:5 rwm");
		lt_raw_start(&raw, AUDIT_ARCH_X86_64, nrs, ARRAY_SIZE_LT(nrs), x32_child, &c);
		/* The 7 device calls, then the fifo mknod and the O_PATH open: all notified. */
		for (int i = 0; i < 9 && lt_raw_handle(&raw, s.notify, s.node, &e); i++) {
			handled++;
			LT_CHECK(e.verdict == DEVWL_VERDICT_DENY && e.error == EPERM,
				 "handler, x32 nr %#x: verdict %d error %d, want EPERM",
				 (unsigned)e.syscall_nr, e.verdict, e.error);
		}
		out = lt_raw_finish(&raw);
		LT_CHECK(handled == 9, "%d notifications, want 9", handled);
		for (size_t i = 0; i < ARRAY_SIZE_LT(x32_calls); i++)
			LT_CHECK(strcmp(lt_result_of(out, x32_calls[i].name), "EPERM") == 0,
				 "handler, x32 %s: %s, want EPERM", x32_calls[i].name,
				 lt_result_of(out, x32_calls[i].name));
		free(out);
		lt_sup_free(&s);
	}
	lt_nodes_remove(&nodes);
	if (lt_failures)
		return 1;
	printf("PASS\n");
	return 0;
}
#else
int main(void)
{
	LT_SKIP("x32 exists only on x86_64");
}
#endif
