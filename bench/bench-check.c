/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policy-side costs for bench/run, in the output format of ref-workload:
 *   bench-check check EXCEPTIONS N   devwl_node_check on a DENY node holding EXCEPTIONS
 *                                    allow exceptions, asking for each of them in turn
 *   bench-check find NODES N [K]     devwl_policy_find in a policy of NODES nodes named
 *                                    /gGGG/nIIIIII (one path length at every size),
 *                                    of K of them (all by default) in shuffled order:
 *                                    with all, most lookups miss the CPU caches; with a
 *                                    fixed K it is the same work in a bigger table
 * N operations are timed after a warm-up pass over the whole set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devwl.h"

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void die(const char *what, int r)
{
	fprintf(stderr, "bench-check: %s: %s\n", what, strerror(-r));
	exit(1);
}

/* A fixed xorshift, so both sides of a pair shuffle alike. */
static unsigned long long rng = 88172645463325252ULL;

static unsigned long long next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double bench_check(long count, long n)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node = NULL;
	unsigned long long t0 = 0;
	char rule[DEVWL_RULE_STR_MAX];
	long allowed = 0;
	int r = 0;

	if (!p)
		die("policy", -ENOMEM);
	r = devwl_policy_mkdir(p, "/c");
	if (r < 0)
		die("mkdir", r);
	node = devwl_policy_find(p, "/c");
	r = devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL);
	if (r < 0)
		die("deny a", r);
	/* Devices spread over majors and minors, as a real allow list would be. */
	for (long i = 0; i < count; i++) {
		snprintf(rule, sizeof(rule), "c %ld:%ld rw", 1 + i / 256, i % 256);
		r = devwl_node_write(node, DEVWL_FILE_ALLOW, rule, strlen(rule), NULL);
		if (r < 0)
			die(rule, r);
	}
	/* Warm the caches, and check the list is what it should be. */
	for (long i = 0; i < count; i++)
		allowed += devwl_node_check(node, DEVWL_DEV_CHAR, (uint32_t)(1 + i / 256),
					    (uint32_t)(i % 256), DEVWL_ACC_READ);
	if (allowed != count)
		die("warm-up: not every device allowed", -EPROTO);
	t0 = now_ns();
	for (long i = 0, j = 0; i < n; i++) {
		int ok = devwl_node_check(node, DEVWL_DEV_CHAR, (uint32_t)(1 + j / 256),
					  (uint32_t)(j % 256), DEVWL_ACC_READ);

		if (ok != 1)
			die("check: not allowed", -EPROTO);
		if (++j == count)
			j = 0;
	}
	t0 = now_ns() - t0;
	devwl_policy_free(p);
	return (double)t0 / (double)n;
}

static double bench_find(long count, long n, long distinct)
{
	struct devwl_policy *p = devwl_policy_new();
	char **paths = calloc((size_t)count, sizeof(*paths));
	unsigned long long t0 = 0;
	char path[64];
	int r = 0;

	if (!p || !paths)
		die("policy", -ENOMEM);
	for (long i = 0; i < count; i++) {
		if (i % 1000 == 0) {
			snprintf(path, sizeof(path), "/g%03ld", i / 1000);
			r = devwl_policy_mkdir(p, path);
			if (r < 0)
				die(path, r);
		}
		snprintf(path, sizeof(path), "/g%03ld/n%06ld", i / 1000, i);
		r = devwl_policy_mkdir(p, path);
		if (r < 0)
			die(path, r);
		paths[i] = strdup(path);
		if (!paths[i])
			die("strdup", -ENOMEM);
	}
	for (long i = count - 1; i > 0; i--) {
		long j = (long)(next_rand() % (unsigned long long)(i + 1));
		char *t = paths[i];

		paths[i] = paths[j];
		paths[j] = t;
	}
	if (distinct < 1 || distinct > count)
		distinct = count;
	for (long i = 0; i < distinct; i++)
		if (!devwl_policy_find(p, paths[i]))
			die(paths[i], -ENOENT);
	t0 = now_ns();
	for (long i = 0, j = 0; i < n; i++) {
		if (!devwl_policy_find(p, paths[j]))
			die(paths[j], -ENOENT);
		if (++j == distinct)
			j = 0;
	}
	t0 = now_ns() - t0;
	for (long i = 0; i < count; i++)
		free(paths[i]);
	free(paths);
	devwl_policy_free(p);
	return (double)t0 / (double)n;
}

int main(int argc, char **argv)
{
	long count = 0, n = 0, distinct = 0;
	double ns = 0;

	if (argc == 5) {
		distinct = atol(argv[4]);
		argc--;
	}
	if (argc != 4 || (count = atol(argv[2])) < 1 || (n = atol(argv[3])) < 1) {
		fputs("usage: bench-check check COUNT N | find COUNT N [K]\n", stderr);
		return 2;
	}
	if (strcmp(argv[1], "check") == 0)
		ns = bench_check(count, n);
	else if (strcmp(argv[1], "find") == 0)
		ns = bench_find(count, n, distinct);
	else
		return 2;
	printf("ns_per_op=%.1f ops_per_s=%.0f\n", ns, 1e9 / ns);
	return 0;
}
