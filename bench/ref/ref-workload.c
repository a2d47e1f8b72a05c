/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The workload every row times, and with no supervisor the native loop: N operations of
 * one kind, each checked against the expected outcome, then one line
 *   ns_per_op=F ops_per_s=F
 * on stdout. Under a reference supervisor (REF_NOTIFY_SOCK_ENV set) it installs the
 * reference filter itself once set up, so that only the timed calls trap; under devwl-run
 * the filter is already there.
 *
 * ref-workload [--procs P] [--warmup W] [--expect ok|EPERM] KIND N ARG...
 *   open PATH      open(PATH, O_RDONLY) + close
 *   open-rw PATH   open(PATH, O_RDWR) + close
 *   opath PATH     open(PATH, O_PATH) + close
 *   odir PATH      open(PATH, O_RDONLY | O_DIRECTORY) + close
 *   mknod DIR      mknod(DIR/n, S_IFCHR | 0600, 1:3), timed alone; unlink after each
 *   cmd -- ARGV    fork + exec ARGV + wait (wall time per run)
 * With --procs P, P processes each do N operations at once; the figures are for all of
 * them together (ops_per_s is the total).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ref-filter.h"

enum kind { K_OPEN, K_OPEN_RW, K_OPATH, K_ODIR, K_MKNOD, K_CMD };

struct work {
	enum kind kind;
	const char *arg;
	char node[PATH_MAX];
	char **cmd;
	int expect; /* 0: success, else the errno expected */
};

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void check(const struct work *w, int r, const char *what)
{
	int err = r < 0 ? errno : 0;

	if (err == w->expect)
		return;
	fprintf(stderr, "ref-workload: %s %s: expected %s, got %s\n", what, w->arg,
		w->expect ? strerror(w->expect) : "success", err ? strerror(err) : "success");
	exit(1);
}

static int open_flags(enum kind k)
{
	switch (k) {
	case K_OPEN_RW:
		return O_RDWR | O_CLOEXEC;
	case K_OPATH:
		return O_PATH | O_CLOEXEC;
	case K_ODIR:
		return O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	default:
		return O_RDONLY | O_CLOEXEC;
	}
}

/* Run n operations; returns the nanoseconds spent in the timed part. */
static unsigned long long run(struct work *w, long n)
{
	unsigned long long t0 = 0, total = 0;
	int status = 0;

	switch (w->kind) {
	case K_OPEN:
	case K_OPEN_RW:
	case K_OPATH:
	case K_ODIR: {
		int flags = open_flags(w->kind);

		t0 = now_ns();
		for (long i = 0; i < n; i++) {
			int fd = open(w->arg, flags);

			if (fd < 0 || w->expect)
				check(w, fd, "open");
			if (fd >= 0)
				close(fd);
		}
		return now_ns() - t0;
	}
	case K_MKNOD:
		for (long i = 0; i < n; i++) {
			int r = 0;

			t0 = now_ns();
			r = mknod(w->node, S_IFCHR | 0600, makedev(1, 3));
			total += now_ns() - t0;
			check(w, r, "mknod");
			if (r == 0 && unlink(w->node) < 0) {
				perror("ref-workload: unlink");
				exit(1);
			}
		}
		return total;
	case K_CMD:
		t0 = now_ns();
		for (long i = 0; i < n; i++) {
			pid_t pid = fork();

			if (pid < 0) {
				perror("ref-workload: fork");
				exit(1);
			}
			if (pid == 0) {
				execvp(w->cmd[0], w->cmd);
				fprintf(stderr, "ref-workload: exec %s: %m\n", w->cmd[0]);
				_exit(127);
			}
			if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0) {
				fprintf(stderr, "ref-workload: %s failed (status %#x)\n", w->cmd[0],
					status);
				exit(1);
			}
		}
		return now_ns() - t0;
	}
	return 0;
}

/* Under a reference supervisor: trap from here on, and hand it the notify fd. */
static void trap_if_asked(void)
{
	const char *env = getenv(REF_NOTIFY_SOCK_ENV);
	int sock = -1, fd = -1, r = 0;

	if (!env)
		return;
	sock = atoi(env);
	unsetenv(REF_NOTIFY_SOCK_ENV);
	fd = ref_filter_install();
	if (fd < 0) {
		fprintf(stderr, "ref-workload: installing the filter: %s\n", strerror(-fd));
		exit(1);
	}
	r = ref_send_fd(sock, fd);
	if (r < 0) {
		fprintf(stderr, "ref-workload: sending the notify fd: %s\n", strerror(-r));
		exit(1);
	}
	close(fd);
	close(sock);
}

/* P processes at once, released together; the wall time from release to the last exit. */
static unsigned long long run_procs(struct work *w, long n, int procs)
{
	int go[2] = {-1, -1};
	unsigned long long t0 = 0;
	int status = 0, failed = 0;

	if (pipe2(go, O_CLOEXEC) < 0) {
		perror("ref-workload: pipe");
		exit(1);
	}
	for (int p = 0; p < procs; p++) {
		pid_t pid = fork();
		char c = 0;

		if (pid < 0) {
			perror("ref-workload: fork");
			exit(1);
		}
		if (pid == 0) {
			close(go[1]);
			if (w->kind == K_MKNOD)
				snprintf(w->node, sizeof(w->node), "%s/n%d", w->arg, p);
			if (read(go[0], &c, 1) != 0)
				_exit(1);
			run(w, n);
			_exit(0);
		}
	}
	close(go[0]);
	t0 = now_ns();
	close(go[1]); /* EOF releases them all */
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	if (failed)
		exit(1);
	return now_ns() - t0;
}

static void usage(void)
{
	fputs("usage: ref-workload [--procs P] [--warmup W] [--expect ok|EPERM] KIND N ARG...\n"
	      "KIND: open|open-rw|opath|odir PATH, mknod DIR, cmd -- ARGV\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct work w = {.expect = 0};
	long n = 0, warmup = -1;
	int procs = 1, i = 1;
	unsigned long long ns = 0;
	double total = 0;

	for (; i < argc && strncmp(argv[i], "--", 2) == 0 && argv[i][2]; i += 2) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--procs") == 0)
			procs = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--warmup") == 0)
			warmup = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--expect") == 0)
			w.expect = strcmp(argv[i + 1], "EPERM") == 0 ? EPERM : 0;
		else
			usage();
	}
	if (argc - i < 3 || procs < 1)
		usage();
	n = atol(argv[i + 1]);
	w.arg = argv[i + 2];
	if (strcmp(argv[i], "open") == 0)
		w.kind = K_OPEN;
	else if (strcmp(argv[i], "open-rw") == 0)
		w.kind = K_OPEN_RW;
	else if (strcmp(argv[i], "opath") == 0)
		w.kind = K_OPATH;
	else if (strcmp(argv[i], "odir") == 0)
		w.kind = K_ODIR;
	else if (strcmp(argv[i], "mknod") == 0)
		w.kind = K_MKNOD;
	else if (strcmp(argv[i], "cmd") == 0)
		w.kind = K_CMD;
	else
		usage();
	if (n < 1)
		usage();
	if (w.kind == K_CMD) {
		w.cmd = argv + i + 2;
		if (strcmp(w.cmd[0], "--") == 0)
			w.cmd++;
		if (!w.cmd[0])
			usage();
		w.arg = w.cmd[0];
	}
	if (w.kind == K_MKNOD)
		snprintf(w.node, sizeof(w.node), "%s/n", w.arg);
	if (warmup < 0)
		warmup = w.kind == K_CMD ? 1 : n / 10 + 1;

	trap_if_asked();
	if (warmup)
		run(&w, warmup);
	ns = procs == 1 ? run(&w, n) : run_procs(&w, n, procs);
	total = (double)n * procs;
	printf("ns_per_op=%.1f ops_per_s=%.0f\n", (double)ns / total, total * 1e9 / (double)ns);
	return 0;
}
