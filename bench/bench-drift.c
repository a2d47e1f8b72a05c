/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-drift [N...]: what devwld's drift check costs its loop (devwld(8), KERNEL MODE:
 * drift): N scratch device cgroups (default 1 and 100) programmed with a DENY node of a
 * runtime's usual nine grants, then one round of devwl_cgroup_check() over all of them
 * (v1: devices.list read and compared; v2: one BPF_PROG_QUERY), side by side with the
 * same round without the check (the walk alone). Prints microseconds per container,
 * medians of 15 rounds, and the round's share of a 5 s period. Needs root; a kind the
 * host cannot program is left out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "devwl.h"

#include "../tests/hostprobe.h"

#define ROUNDS	  15
#define PERIOD_US 5e6

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

static double median(double *v)
{
	qsort(v, ROUNDS, sizeof(double), cmp);
	return v[ROUNDS / 2];
}

/* The median round over n cgroups, in us per cgroup; check false: the walk alone. */
static double round_us(struct devwl_cgroup **cg, unsigned n, bool check, int *ret_bad)
{
	volatile unsigned walked = 0;
	double t[ROUNDS];
	char what[768];

	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_us();

		for (unsigned i = 0; i < n; i++) {
			if (check && devwl_cgroup_check(cg[i], what, sizeof(what)) != 0)
				(*ret_bad)++;
			walked = walked + (cg[i] != NULL);
		}
		t[r] = (now_us() - t0) / n;
	}
	return median(t);
}

/* Make n cgroups under mnt and program them with node; how many were made. */
static unsigned make(const char *mnt, unsigned n, const struct devwl_node *node,
		     struct devwl_cgroup **cg, char (*dirs)[320])
{
	unsigned made = 0;

	for (unsigned i = 0; i < n; i++) {
		snprintf(dirs[i], sizeof(dirs[i]), "%s/devwl-bench-drift.%d.%u", mnt, (int)getpid(),
			 i);
		if (mkdir(dirs[i], 0755) < 0)
			break;
		if (devwl_cgroup_open(dirs[i], 0, &cg[i]) < 0 ||
		    devwl_cgroup_apply(cg[i], node) < 0) {
			devwl_cgroup_free(cg[i]);
			rmdir(dirs[i]);
			break;
		}
		made++;
	}
	return made;
}

static void drop(struct devwl_cgroup **cg, char (*dirs)[320], unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		devwl_cgroup_free(cg[i]);
		rmdir(dirs[i]);
	}
}

int main(int argc, char **argv)
{
	static const unsigned defaults[] = {1, 100};
	static const char *const grants[] = {"c 1:3 rwm", "c 1:5 rwm",	  "c 1:7 rwm",
					     "c 1:8 rwm", "c 1:9 rwm",	  "c 5:0 rwm",
					     "c 5:2 rwm", "c 10:200 rwm", "c 136:* rwm"};
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node = p ? devwl_policy_find(p, "/") : NULL;
	int n = argc > 1 ? argc - 1 : 2, shown = 0;
	char why[256];

	if (!node)
		return 1;
	devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL);
	for (size_t i = 0; i < sizeof(grants) / sizeof(grants[0]); i++)
		devwl_node_write(node, DEVWL_FILE_ALLOW, grants[i], strlen(grants[i]), NULL);
	printf("%-6s %-10s %16s %16s %14s %18s\n", "kind", "containers", "check (us/ct)",
	       "no check (us/ct)", "round (us)", "share of 5 s (%)");
	for (int kind = 1; kind <= 2; kind++) {
		char mnt[256];

		if (kind == 1 ? hp_v1_devices(why, sizeof(why)) < 0 ||
					hp_cgroup_mount("devices", mnt, sizeof(mnt)) < 0
			      : hp_bpf_device(why, sizeof(why)) < 0 ||
					hp_cgroup_mount(NULL, mnt, sizeof(mnt)) < 0) {
			printf("v%d     (not here)\n", kind);
			continue;
		}
		for (int k = 0; k < n; k++) {
			unsigned want =
				argc > 1 ? (unsigned)strtoul(argv[k + 1], NULL, 10) : defaults[k];
			struct devwl_cgroup **cg = calloc(want ? want : 1, sizeof(*cg));
			char(*dirs)[320] = calloc(want ? want : 1, sizeof(*dirs));
			unsigned made;
			double with, without;
			int bad = 0;

			if (!cg || !dirs)
				return 1;
			made = make(mnt, want, node, cg, dirs);
			if (made < want) {
				printf("v%d     %-10u (made %u cgroups only)\n", kind, want, made);
			} else {
				with = round_us(cg, made, true, &bad);
				without = round_us(cg, made, false, &bad);
				printf("v%d     %-10u %16.2f %16.3f %14.1f %18.4f%s\n", kind, made,
				       with, without, with * made, 100 * with * made / PERIOD_US,
				       bad ? "  (drift seen?)" : "");
				shown++;
			}
			drop(cg, dirs, made);
			free(cg);
			free(dirs);
		}
	}
	devwl_policy_free(p);
	return shown ? 0 : 77;
}
