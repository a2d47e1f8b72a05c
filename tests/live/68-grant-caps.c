/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Under a deny baseline devwl does not program (devwld serving a runtime's cgroup, an
 * embedder), a granted device is opened on the caller's behalf — with the caller's whole
 * credential, its capabilities included, never the handler's (doc/DESIGN.md, "Grants").
 * /dev/kmsg checks CAP_SYSLOG at open under kernel.dmesg_restrict: granted by the policy,
 * it opens for a caller holding CAP_SYSLOG and is refused EPERM to one without, as the
 * kernel refuses it natively. A procfs file reached through a magic link is the kernel's
 * to open (the baseline covers it): /proc/self/root/proc/PID/mem of a root process with
 * every capability stays EACCES without CAP_SYS_PTRACE. Before, both were opened with
 * the handler's capabilities and injected.
 */
#include <linux/capability.h>
#include <sys/syscall.h>

#include "livetest.h"

static char kmsg_path[256], mem_path[256];

/* Drop cap from the effective set of this thread (the probe is single-threaded). */
static int drop_effective(int cap)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	d[cap / 32].effective &= ~(1u << (cap % 32));
	return (int)syscall(SYS_capset, &h, d);
}

static void report(const char *what, int fd)
{
	printf("%s %s\n", what, fd >= 0 ? "ok" : strerrorname_np(errno));
	if (fd >= 0)
		close(fd);
}

/* The calls, with or without CAP_SYSLOG and CAP_SYS_PTRACE (arg: "keep" or "drop"). */
static int child(void *arg)
{
	bool drop = strcmp(arg, "drop") == 0;

	if (drop && (drop_effective(CAP_SYSLOG) < 0 || drop_effective(CAP_SYS_PTRACE) < 0))
		return 3;
	report("kmsg", open(kmsg_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
	report("mem", open(mem_path, O_RDWR | O_CLOEXEC));
	fflush(stdout);
	return 0;
}

/* What the kernel answers the same calls natively (no filter, no baseline). */
static char *native(const char *arg)
{
	int out[2], status = 0;
	pid_t pid;
	char *buf = NULL;

	if (pipe2(out, O_CLOEXEC) < 0)
		LT_DIE("pipe: %m");
	pid = fork();
	if (pid < 0)
		LT_DIE("fork: %m");
	if (pid == 0) {
		dup2(out[1], 1);
		_exit(child((void *)arg));
	}
	close(out[1]);
	buf = lt_read_all(out[0]);
	waitpid(pid, &status, 0);
	return buf;
}

static char *restrict_old;

static void restore_restrict(void)
{
	if (restrict_old)
		lt_write("/proc/sys/kernel/dmesg_restrict", restrict_old);
}

int main(void)
{
	struct lt_nodes nodes;
	struct lt_cgroup cg;
	char *want = NULL, *got = NULL, old[8] = "";
	int fd = -1, status = 0;
	pid_t victim = -1;

	lt_need_root();
	lt_watchdog(120);
	fd = open("/proc/sys/kernel/dmesg_restrict", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, old, sizeof(old) - 1) <= 0)
		LT_SKIP("no kernel.dmesg_restrict here");
	close(fd);
	restrict_old = old;
	atexit(restore_restrict);
	if (!lt_write("/proc/sys/kernel/dmesg_restrict", "1"))
		LT_SKIP("cannot set kernel.dmesg_restrict");
	lt_cgroup_make(&cg);
	if (!cg.ok)
		LT_SKIP("no cgroup-v1 devices controller: no deny baseline to stand behind");
	lt_nodes_make(&nodes);
	lt_mknod(nodes.dir, "kmsg", S_IFCHR, 1, 11);
	snprintf(kmsg_path, sizeof(kmsg_path), "%s/kmsg", nodes.dir);
	victim = fork();
	if (victim == 0) {
		pause();
		_exit(0);
	}
	snprintf(mem_path, sizeof(mem_path), "/proc/self/root/proc/%d/mem", (int)victim);

	for (int keep = 0; keep < 2; keep++) {
		const char *arg = keep ? "keep" : "drop";
		struct lt_sup s;

		want = native(arg);
		lt_sup_init(&s, "deny a;allow c 1:11 r");
		s.cgroup = &cg;
		got = lt_run(&s, NULL, child, (void *)arg, &status);
		LT_CHECK(strcmp(got, want) == 0,
			 "%s CAP_SYSLOG/CAP_SYS_PTRACE:\n  natively: %s  devwl: %s", arg, want,
			 got);
		LT_CHECK(s.errors == 0, "%s: handler errors", arg);
		if (keep)
			LT_CHECK(strstr(got, "kmsg ok"), "granted kmsg with CAP_SYSLOG: %s", got);
		else
			LT_CHECK(strstr(got, "kmsg EPERM") && strstr(got, "mem EACCES"),
				 "without the capabilities: %s", got);
		free(want);
		free(got);
		lt_sup_free(&s);
	}
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	lt_cgroup_remove(&cg);
	lt_nodes_remove(&nodes);
	if (lt_failures)
		return 1;
	printf("PASS\n");
	return 0;
}
