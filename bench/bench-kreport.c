/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-kreport plain|report N: the cost of reporting allowed accesses in kernel mode
 * (DEVWL_CGROUP_RECORD_ACCESSES). A child in a fresh cgroup2 device cgroup, programmed
 * with a DENY node granting /dev/null among a few others, opens and closes /dev/null N
 * times; prints its CPU ns per open. plain: the program records denials only; report: it
 * also reports each allowed access (at most once a second per key, the rest counted).
 * bench/kreport.sh runs both sides alternately. Needs root and a cgroup2 mount; exits
 * 77 where no device program can be attached.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "devwl.h"

#include "../tests/hostprobe.h"

/* The process's CPU time: the opens' own cost, less of what other work on a shared
 * machine adds to the wall clock. */
static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The child: into the cgroup, then the opens; ns per open on stdout. */
static int opens(const char *dir, long n)
{
	char procs[400];
	double t0;
	int fd;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1) {
		perror("bench-kreport: joining the cgroup");
		return 1;
	}
	close(fd);
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror("bench-kreport: /dev/null");
			return 1;
		}
		close(fd);
	}
	printf("%.1f\n", (now_ns() - t0) / (double)n);
	fflush(stdout); /* _exit() next */
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const rules[] = {"c 1:3 rwm", "c 1:5 rwm", "c 1:8 rwm",  "c 1:9 rwm",
					    "c 5:0 rwm", "c 5:2 rwm", "c 136:* rwm"};
	unsigned int flags = DEVWL_CGROUP_RECORD_DENIALS;
	char mnt[256] = "", dir[320] = "";
	struct devwl_cgroup *cg = NULL;
	struct devwl_policy *p = NULL;
	struct devwl_node *node;
	struct devwl_denial d[64];
	long n;
	int status = 1, st, r = -1;
	pid_t pid;

	if (argc != 3 || (strcmp(argv[1], "plain") && strcmp(argv[1], "report")) ||
	    (n = strtol(argv[2], NULL, 10)) <= 0) {
		fputs("usage: bench-kreport plain|report N\n", stderr);
		return 2;
	}
	if (!strcmp(argv[1], "report"))
		flags |= DEVWL_CGROUP_RECORD_ACCESSES;
	if (hp_cgroup_mount(NULL, mnt, sizeof(mnt)) == 0) {
		snprintf(dir, sizeof(dir), "%s/devwl-bench-kreport.%d", mnt, (int)getpid());
		if (mkdir(dir, 0755) == 0 && devwl_cgroup_open(dir, flags, &cg) < 0)
			rmdir(dir);
	}
	if (!cg) {
		fputs("bench-kreport: no cgroup2 device program possible here\n", stderr);
		return 77;
	}
	p = devwl_policy_new();
	node = p ? devwl_policy_find(p, "/") : NULL;
	if (node)
		r = devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL);
	for (size_t i = 0; r >= 0 && i < sizeof(rules) / sizeof(*rules); i++)
		r = devwl_node_write(node, DEVWL_FILE_ALLOW, rules[i], strlen(rules[i]), NULL);
	if (r >= 0)
		r = devwl_cgroup_apply(cg, node);
	if (r < 0) {
		fprintf(stderr, "bench-kreport: programming %s: %s\n", dir, strerror(-r));
		goto out;
	}
	if (!!(devwl_cgroup_recording(cg) & DEVWL_CGROUP_RECORD_ACCESSES) !=
	    !!(flags & DEVWL_CGROUP_RECORD_ACCESSES)) {
		fputs("bench-kreport: this kernel does not report allowed accesses\n", stderr);
		status = 77;
		goto out;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(opens(dir, n));
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		status = WEXITSTATUS(st);
	while (devwl_cgroup_read_denials(cg, d, 64) == 64)
		;
out:
	devwl_cgroup_free(cg);
	devwl_policy_free(p);
	rmdir(dir);
	return status;
}
