/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What each system call on devwl's notification paths costs here, alone, in a loop:
 * the figures behind the "why" of a missed target in bench/RESULTS.md. The target is
 * a sleeping child, as a trapped caller would be; the numbers are medians of 7 runs.
 *   bench-syscalls [N]
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/openat2.h>

#define RUNS 7

static pid_t target = -1;
static char target_buf[4096] = "/tmp/bench-syscalls-file";
static int proc_fd = -1, file_opath = -1, pipe_r = -1;
static char path_root[64], path_status[64], path_userns[64], path_self_fd[64];
static struct __user_cap_data_struct caps[2];

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void fail(const char *what)
{
	perror(what);
	kill(target, SIGKILL);
	exit(1);
}

static void op_getppid(void)
{
	syscall(SYS_getppid);
}

static void op_gettid(void)
{
	syscall(SYS_gettid);
}

static void op_vm_read_16(void)
{
	char buf[16];
	struct iovec l = {buf, sizeof(buf)}, r = {target_buf, sizeof(buf)};

	if (process_vm_readv(target, &l, 1, &r, 1, 0) < 0)
		fail("process_vm_readv");
}

static void op_vm_read_page(void)
{
	static char buf[4096];
	struct iovec l = {buf, 1427}, r = {target_buf, 1427};

	if (process_vm_readv(target, &l, 1, &r, 1, 0) < 0)
		fail("process_vm_readv");
}

static void op_open_root(void)
{
	int fd = openat(proc_fd, path_root, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		fail("open root");
	close(fd);
}

static void op_statx(void)
{
	struct statx stx;

	if (statx(file_opath, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID,
		  &stx) < 0)
		fail("statx");
}

static void op_lookup(void)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS};
	struct stat st;
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, target_buf, &how, sizeof(how));

	if (fd < 0 || fstat(fd, &st) < 0)
		fail("openat2");
	close(fd);
}

static void op_status(void)
{
	static char buf[16384];
	int fd = openat(proc_fd, path_status, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0)
		fail("status");
	close(fd);
}

static void op_userns(void)
{
	struct stat st;

	if (fstatat(proc_fd, path_userns, &st, 0) < 0)
		fail("ns/user");
}

static void op_setfs(void)
{
	syscall(SYS_setfsgid, 0);
	syscall(SYS_setfsuid, 0);
	syscall(SYS_setfsgid, -1);
	syscall(SYS_setfsuid, -1);
}

static void op_capset(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};

	if (syscall(SYS_capset, &hdr, caps) < 0)
		fail("capset");
}

static void op_reopen(void)
{
	int fd = openat(proc_fd, path_self_fd, O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		fail("reopen");
	close(fd);
}

static void op_open_null(void)
{
	int fd = open("/dev/null", O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		fail("open /dev/null");
	close(fd);
}

static void op_sigmask(void)
{
	sigset_t all, old;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void op_poll(void)
{
	struct pollfd p = {.fd = pipe_r, .events = POLLIN};

	if (poll(&p, 1, -1) != 1)
		fail("poll");
}

static void op_close_dup(void)
{
	int fd = dup(pipe_r);

	if (fd < 0)
		fail("dup");
	close(fd);
}

static const struct {
	const char *name;
	void (*fn)(void);
} ops[] = {
	{"getppid (syscall entry/exit)", op_getppid},
	{"gettid", op_gettid},
	{"poll, one fd ready", op_poll},
	{"process_vm_readv, 16 bytes", op_vm_read_16},
	{"process_vm_readv, 1427 bytes (to page end)", op_vm_read_page},
	{"openat /proc/PID/root O_PATH + close", op_open_root},
	{"statx AT_EMPTY_PATH (mnt id)", op_statx},
	{"openat2 O_PATH /tmp/file + fstat + close", op_lookup},
	{"open+read+close /proc/PID/status", op_status},
	{"fstatat /proc/PID/ns/user", op_userns},
	{"setfsgid+setfsuid+2 read-backs", op_setfs},
	{"capset", op_capset},
	{"reopen /proc/thread-self/fd/N O_RDWR + close", op_reopen},
	{"open /dev/null O_RDWR + close", op_open_null},
	{"2 x rt_sigprocmask", op_sigmask},
	{"dup + close", op_close_dup},
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	int p[2], fd = -1;

	fd = open(target_buf, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("create file");
	close(fd);
	if (pipe2(p, O_CLOEXEC) < 0 || write(p[1], "x", 1) != 1)
		fail("pipe");
	pipe_r = p[0];
	target = fork();
	if (target == 0) {
		pause();
		_exit(0);
	}
	proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	file_opath = open(target_buf, O_PATH | O_CLOEXEC);
	if (proc_fd < 0 || file_opath < 0 || syscall(SYS_capget, &hdr, caps) < 0)
		fail("setup");
	snprintf(path_root, sizeof(path_root), "%d/root", (int)target);
	snprintf(path_status, sizeof(path_status), "%d/status", (int)target);
	snprintf(path_userns, sizeof(path_userns), "%d/ns/user", (int)target);
	fd = open("/dev/null", O_PATH | O_CLOEXEC);
	snprintf(path_self_fd, sizeof(path_self_fd), "thread-self/fd/%d", fd);

	printf("%-46s %8s\n", "operation", "ns");
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		double t[RUNS];

		for (int r = 0; r < RUNS; r++) {
			unsigned long long t0 = now_ns();

			for (long k = 0; k < n / 10; k++)
				ops[i].fn();
			t[r] = (double)(now_ns() - t0) / (double)(n / 10);
		}
		qsort(t, RUNS, sizeof(t[0]), cmp_double);
		printf("%-46s %8.0f\n", ops[i].name, t[RUNS / 2]);
	}
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	unlink(target_buf);
	return 0;
}
