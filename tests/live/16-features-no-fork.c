/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwl_features() probes without a child process: an embedder that ignores SIGCHLD
 * (children reaped by the kernel) or reaps with waitpid(-1) in a loop still gets every
 * feature the kernel has, sees no SIGCHLD and reaps nothing, and is single-threaded
 * again afterwards. What the kernel has is learnt independently here, in a throwaway
 * child of the test's own, before any library call.
 */
#include <dirent.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "livetest.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

static int load_allow_all(unsigned int flags)
{
	struct sock_filter insn = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {.len = 1, .filter = &insn};

	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

/* The kernel's features, by installing listeners in a child (the test's, not devwl's). */
static unsigned int expected_features(void)
{
	struct seccomp_notif_addfd addfd = {.id = 0, .flags = SECCOMP_ADDFD_FLAG_SEND};
	uint32_t action = SECCOMP_RET_USER_NOTIF;
	int status = 0;
	pid_t pid = -1;

	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0)
		return 0;
	pid = fork();
	if (pid < 0)
		LT_DIE("fork: %m");
	if (pid == 0) {
		unsigned int found = DEVWL_FEATURE_USER_NOTIF;
		int fd = -1;

		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		fd = load_allow_all(SECCOMP_FILTER_FLAG_NEW_LISTENER |
				    SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV);
		if (fd >= 0)
			found |= DEVWL_FEATURE_WAIT_KILLABLE_RECV;
		else
			fd = load_allow_all(SECCOMP_FILTER_FLAG_NEW_LISTENER);
		if (fd < 0)
			_exit(100);
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd) < 0 && errno == ENOENT)
			found |= DEVWL_FEATURE_ADDFD_SEND;
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, 1UL) == 0)
			found |= DEVWL_FEATURE_SYNC_WAKE_UP;
		_exit((int)found);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			LT_DIE("waitpid: %m");
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 100)
		LT_DIE("the test's own probe failed: %#x", status);
	return (unsigned int)WEXITSTATUS(status);
}

static volatile sig_atomic_t sigchld_seen;
static volatile int reaped;
static volatile int stop_reaper;

static void on_sigchld(int sig)
{
	(void)sig;
	sigchld_seen++;
}

/* An embedder's reaper: waitpid(-1) in a loop, as a process manager does. */
static void *reaper(void *arg)
{
	(void)arg;
	while (!stop_reaper) {
		if (waitpid(-1, NULL, WNOHANG) > 0)
			reaped++;
		else
			usleep(100);
	}
	return NULL;
}

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de = NULL;
	int n = 0;

	if (!d)
		LT_DIE("opendir: %m");
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* In a fresh process (features are cached per process): 0 when all is as it should be. */
static int scenario(bool ignore, unsigned int want)
{
	pthread_t th;
	unsigned int got = 0;
	int threads = 0;
	pid_t pid = fork();
	int status = 0;

	if (pid < 0)
		LT_DIE("fork: %m");
	if (pid) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
	}
	if (ignore) {
		signal(SIGCHLD, SIG_IGN);
		got = devwl_features();
		if (got != want) {
			fprintf(stderr, "FAIL: SIGCHLD ignored: features %#x, kernel has %#x\n",
				got, want);
			_exit(1);
		}
		_exit(0);
	}
	signal(SIGCHLD, on_sigchld);
	threads = count_threads();
	if (pthread_create(&th, NULL, reaper, NULL) != 0)
		LT_DIE("pthread_create");
	got = devwl_features();
	/* The library's probe thread is joined: give the kernel a moment to drop its task. */
	for (int i = 0; i < 200 && count_threads() > threads + 1; i++)
		usleep(5000);
	stop_reaper = 1;
	pthread_join(th, NULL);
	if (got != want) {
		fprintf(stderr, "FAIL: waitpid(-1) reaper: features %#x, kernel has %#x\n", got,
			want);
		_exit(1);
	}
	if (sigchld_seen || reaped) {
		fprintf(stderr, "FAIL: a child was created: %d SIGCHLD, %d reaped\n",
			(int)sigchld_seen, reaped);
		_exit(1);
	}
	if (count_threads() != threads) {
		fprintf(stderr, "FAIL: %d threads after devwl_features(), %d before\n",
			count_threads(), threads);
		_exit(1);
	}
	/* Cached: the same answer again, still no child. */
	if (devwl_features() != want || sigchld_seen) {
		fprintf(stderr, "FAIL: second call differs\n");
		_exit(1);
	}
	_exit(0);
}

int main(void)
{
	unsigned int want = 0;

	lt_watchdog(60);
	want = expected_features();
	if (!(want & DEVWL_FEATURE_USER_NOTIF))
		LT_SKIP("kernel without seccomp user notification");
	LT_CHECK(scenario(true, want) == 0, "with SIGCHLD ignored");
	LT_CHECK(scenario(false, want) == 0, "with a waitpid(-1) reaper");
	if (lt_failures)
		return 1;
	printf("PASS (features %#x)\n", want);
	return 0;
}
