/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-allowlist: what a policy decision costs on the fast path, and whether it grows.
 * doc/DESIGN.md §7 asks for checks that cost the same whatever the number of exceptions and
 * node lookups that do not grow with the number of nodes; this prints ns/op for both
 * and the ratios that say whether they hold. See bench/README.md.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devwl.h"

#define RUNS	7
#define QUERIES 4096 /* a power of two: the loop index masks into it */

static volatile int sink;

static uint64_t rng_state = 1;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct result {
	double median, min, max;
};

static struct result summarise(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return (struct result){v[n / 2], v[0], v[n - 1]};
}

struct query {
	int type;
	uint32_t major, minor;
	int access;
};

static struct result time_checks(const struct devwl_node *node, const struct query *q,
				 unsigned long iters, int want)
{
	double ns[RUNS];

	for (int r = 0; r < RUNS; r++) {
		uint64_t t0 = now_ns();
		int acc = 0;

		for (unsigned long i = 0; i < iters; i++) {
			const struct query *x = &q[i & (QUERIES - 1)];
			acc += devwl_node_check(node, x->type, x->major, x->minor, x->access);
		}
		ns[r] = (double)(now_ns() - t0) / (double)iters;
		/* Every query was built to give the same answer: a wrong one is a bug. */
		if (acc != (int)iters * want) {
			fprintf(stderr, "bench-allowlist: %d of %lu checks gave %d\n", acc, iters,
				want);
			exit(1);
		}
		sink += acc;
	}
	return summarise(ns, RUNS);
}

/*
 * A node with n exceptions on distinct char devices (major 1000+i/256, minor i%256, rw),
 * DENY (grants) or ALLOW (denials). Hits name one of them, misses a device none names.
 */
static struct devwl_node *make_node(struct devwl_policy *p, const char *path, bool deny, unsigned n)
{
	struct devwl_node *node;

	if (devwl_policy_mkdir(p, path) < 0)
		return NULL;
	node = devwl_policy_find(p, path);
	if (deny && devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL) < 0)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		const struct devwl_rule r = {.type = DEVWL_DEV_CHAR,
					     .access = DEVWL_ACC_READ | DEVWL_ACC_WRITE,
					     .major = 1000 + i / 256,
					     .minor = i % 256};
		if (devwl_node_update(node, deny ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY, &r) < 0)
			return NULL;
	}
	return node;
}

static void fill_queries(struct query *q, unsigned n, bool hit)
{
	for (unsigned i = 0; i < QUERIES; i++) {
		unsigned k = (unsigned)(rnd() % n);
		q[i] = (struct query){DEVWL_DEV_CHAR, 1000 + k / 256, k % 256, DEVWL_ACC_READ};
		if (!hit)
			q[i].major += 5000; /* nobody's major */
	}
}

static struct result time_finds(const struct devwl_policy *p, char **paths, unsigned n,
				unsigned long iters)
{
	double ns[RUNS];
	unsigned *order = malloc(QUERIES * sizeof(*order));

	if (!order)
		exit(1);
	for (unsigned i = 0; i < QUERIES; i++)
		order[i] = (unsigned)(rnd() % n);
	for (int r = 0; r < RUNS; r++) {
		uint64_t t0 = now_ns();
		unsigned long found = 0;

		for (unsigned long i = 0; i < iters; i++)
			found += devwl_policy_find(p, paths[order[i & (QUERIES - 1)]]) != NULL;
		ns[r] = (double)(now_ns() - t0) / (double)iters;
		if (found != iters) {
			fprintf(stderr, "bench-allowlist: lookups failed\n");
			exit(1);
		}
		sink += (int)found;
	}
	free(order);
	return summarise(ns, RUNS);
}

/* n nodes besides the root, paths shaped like /k8s/NS/POD (same length at any n). */
static struct devwl_policy *make_tree(unsigned n, char ***ret_paths)
{
	struct devwl_policy *p = devwl_policy_new();
	char **paths = calloc(n, sizeof(*paths));
	unsigned made = 0;

	if (!p || !paths)
		exit(1);
	if (devwl_policy_mkdir(p, "/k8s") < 0)
		exit(1);
	paths[made++] = strdup("/k8s");
	for (unsigned ns = 0; made < n; ns++) {
		char nspath[64];
		snprintf(nspath, sizeof(nspath), "/k8s/ns-%05u", ns);
		if (devwl_policy_mkdir(p, nspath) < 0)
			exit(1);
		paths[made++] = strdup(nspath);
		for (unsigned pod = 0; pod < 99 && made < n; pod++) {
			char podpath[96];
			snprintf(podpath, sizeof(podpath), "%s/pod-%05u", nspath, pod);
			if (devwl_policy_mkdir(p, podpath) < 0)
				exit(1);
			paths[made++] = strdup(podpath);
		}
	}
	for (unsigned i = 0; i < n; i++)
		if (!paths[i])
			exit(1);
	*ret_paths = paths;
	return p;
}

static void row(const char *what, struct result r)
{
	printf("%-44s %8.1f   %7.1f – %-7.1f\n", what, r.median, r.min, r.max);
}

int main(int argc, char **argv)
{
	static const unsigned sizes[] = {1, 100, 10000};
	unsigned long iters = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
	struct result chk[2][3][2]; /* [deny][size][hit] */
	static const unsigned tree_sizes[] = {10, 1000, 10000, 100000};
	struct result find[4];
	struct query *q = malloc(QUERIES * sizeof(*q));
	struct devwl_policy *p = devwl_policy_new();

	if (!q || !p || iters == 0) {
		fprintf(stderr, "usage: bench-allowlist [ITERATIONS]\n");
		return 2;
	}
	printf("devwl %s, devwl_node_check / devwl_policy_find, ns per call: median of %d "
	       "runs of %lu calls (min – max)\n\n",
	       devwl_version(), RUNS, iters);
	printf("%-44s %8s   %s\n", "case", "median", "range");
	for (int deny = 1; deny >= 0; deny--)
		for (int s = 0; s < 3; s++) {
			char path[32], what[64];
			struct devwl_node *node;

			snprintf(path, sizeof(path), "/%s%u", deny ? "deny" : "allow", sizes[s]);
			node = make_node(p, path, deny, sizes[s]);
			if (!node) {
				fprintf(stderr, "bench-allowlist: cannot build %s\n", path);
				return 1;
			}
			for (int hit = 1; hit >= 0; hit--) {
				fill_queries(q, sizes[s], hit);
				/* DENY: a hit is allowed. ALLOW: a hit is denied. */
				chk[deny][s][hit] = time_checks(node, q, iters, deny ? hit : !hit);
				snprintf(what, sizeof(what), "check %s node, %5u exceptions, %s",
					 deny ? "DENY " : "ALLOW", sizes[s], hit ? "hit " : "miss");
				row(what, chk[deny][s][hit]);
			}
		}
	devwl_policy_free(p);

	/* 10 and 100,000 are the ratio; the sizes between show where a cache stops
	 * holding the table and the nodes, which is memory, not the algorithm. */
	for (int t = 0; t < 4; t++) {
		unsigned n = tree_sizes[t];
		char **paths = NULL, what[64];
		struct devwl_policy *tree = make_tree(n, &paths);

		find[t] = time_finds(tree, paths, n, iters);
		snprintf(what, sizeof(what), "find, %6u nodes", n);
		row(what, find[t]);
		for (unsigned i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
		devwl_policy_free(tree);
	}

	printf("\nratios (medians; 1.0 = does not grow)\n");
	for (int deny = 1; deny >= 0; deny--)
		for (int hit = 1; hit >= 0; hit--)
			printf("  check %s %s: 10,000 vs 1 exception   %5.2f   (100 vs 1: %5.2f)\n",
			       deny ? "DENY " : "ALLOW", hit ? "hit " : "miss",
			       chk[deny][2][hit].median / chk[deny][0][hit].median,
			       chk[deny][1][hit].median / chk[deny][0][hit].median);
	printf("  find: 100,000 vs 10 nodes                 %5.2f   (100,000 vs 10,000: %5.2f)\n",
	       find[3].median / find[0].median, find[3].median / find[2].median);
	free(q);
	return 0;
}
