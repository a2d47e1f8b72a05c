/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-kernel [N...]: the kernel program of a DENY node with N exceptions (default 1,
 * 100, 10000): its size in instructions, the time to compile it, and the time to compile,
 * load (verifier included) and swap it into a cgroup2 device cgroup with BPF_F_REPLACE
 * (devwl_cgroup_apply); medians of a few runs. Needs root and a cgroup2 mount, wherever
 * mountinfo says it is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "devwl.h"

#include "../tests/hostprobe.h"

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const unsigned defaults[] = {1, 100, 10000};
	char mnt[256] = "", dir[320] = "";
	struct devwl_cgroup *cg = NULL;
	int n = argc > 1 ? argc - 1 : 3;

	if (hp_cgroup_mount(NULL, mnt, sizeof(mnt)) == 0) {
		snprintf(dir, sizeof(dir), "%s/devwl-bench-kernel.%d", mnt, (int)getpid());
		if (mkdir(dir, 0755) == 0 && devwl_cgroup_open(dir, 0, &cg) < 0)
			rmdir(dir);
	}
	if (!cg) {
		fputs("bench-kernel: no cgroup2 device program possible here\n", stderr);
		return 77;
	}
	printf("%-12s %12s %14s %18s\n", "exceptions", "instructions", "compile (us)",
	       "compile+swap (us)");
	for (int k = 0; k < n; k++) {
		unsigned count = argc > 1 ? (unsigned)strtoul(argv[k + 1], NULL, 10) : defaults[k];
		struct devwl_policy *p = devwl_policy_new();
		struct devwl_node *node = devwl_policy_find(p, "/");
		double tc[7], ta[7];
		int insns = 0;
		char rule[64];

		devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL);
		for (unsigned i = 0; i < count; i++) {
			snprintf(rule, sizeof(rule), "%c %u:%u rw", i % 2 ? 'c' : 'b', 1 + i % 4000,
				 i / 4000);
			devwl_node_write(node, DEVWL_FILE_ALLOW, rule, strlen(rule), NULL);
		}
		for (int r = 0; r < 7; r++) {
			struct bpf_insn *prog = NULL;
			size_t len = 0;
			double t0 = now_us();
			devwl_node_compile_bpf(node, &prog, &len);
			tc[r] = now_us() - t0;
			free(prog);
			t0 = now_us();
			insns = devwl_cgroup_apply(cg, node);
			ta[r] = now_us() - t0;
		}
		qsort(tc, 7, sizeof(double), cmp);
		qsort(ta, 7, sizeof(double), cmp);
		if (insns < 0)
			printf("%-12u %12s %14.0f %18s\n", count, strerror(-insns), tc[3], "-");
		else
			printf("%-12u %12d %14.0f %18.0f\n", count, insns, tc[3], ta[3]);
		devwl_policy_free(p);
	}
	devwl_cgroup_free(cg);
	rmdir(dir);
	return 0;
}
