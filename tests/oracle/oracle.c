/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/oracle: the same random operation sequences applied to libdevwl and to the
 * kernel's cgroup-v1 devices controller, compared exactly: every write's errno, every
 * mkdir/rmdir errno, every listing byte for byte (also of every node after every
 * change), every check. On a divergence: the seed, the shortest failing prefix
 * (replayed on fresh scratch cgroups), a minimised sequence, and exit 1.
 *
 * oracle [--seeds N] [--ops N] [--seed S] [--verbose]
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "oracle.h"
#include "util.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

struct stats {
	size_t ops, writes, checks, lists, dirs, binds, held;
};

struct divergence {
	size_t index; /* the op after which library and kernel disagree */
	char what[8192];
};

struct listing_ctx {
	struct kside *ks;
	struct stats *st;
	struct divergence *div;
};

/* "0", "1" or "-EPERM": a result as both sides give it. */
static const char *errname(int r, char s[static 32])
{
	if (r >= 0)
		snprintf(s, 32, "%d", r);
	else
		snprintf(s, 32, "-%s", strerrorname_np(-r) ? strerrorname_np(-r) : "?");
	return s;
}

/* Describe a listing for a message: escaped, one line per rule. */
static void quote(char *out, size_t size, const char *s)
{
	size_t o = 0;

	for (; s && *s && o + 4 < size; s++) {
		if (*s == '\n') {
			out[o++] = '|';
			continue;
		}
		out[o++] = *s;
	}
	out[o] = '\0';
}

static int compare_listing(struct devwl_node *node, void *userdata)
{
	struct listing_ctx *c = userdata;
	_cleanup_free_ char *mine = NULL, *theirs = NULL;
	const char *path = devwl_node_path(node);
	char a[2048], b[2048], e1[32];
	int r;

	r = devwl_node_list(node, &mine);
	if (r < 0)
		return r;
	r = kside_list(c->ks, path, &theirs);
	if (r < 0) {
		snprintf(c->div->what, sizeof(c->div->what),
			 "node %s exists in libdevwl, kernel devices.list: %s", path,
			 errname(r, e1));
		return -EUCLEAN;
	}
	c->st->lists++;
	if (strcmp(mine, theirs) != 0) {
		quote(a, sizeof(a), mine);
		quote(b, sizeof(b), theirs);
		snprintf(c->div->what, sizeof(c->div->what),
			 "devices.list of %s differs:\n      libdevwl: %s\n      kernel:   %s",
			 path, a, b);
		return -EUCLEAN;
	}
	return 0;
}

/*
 * Run ops[0..n) on a fresh policy and a fresh scratch cgroup.
 * Returns 0 when all agree, 1 on a divergence (div filled), < 0 when the oracle itself
 * failed (div->what says why).
 */
static int run(struct kside *ks, const struct op *ops, size_t n, bool verbose, struct stats *st,
	       struct divergence *div)
{
	struct devwl_policy *p = devwl_policy_new();
	struct oracle_follow *f = oracle_follow_new();
	struct listing_ctx lc = {ks, st, div};
	char e1[32], e2[32];
	int ret = 0, r;

	if (!p || !f) {
		devwl_policy_free(p);
		oracle_follow_free(f);
		return -ENOMEM;
	}
	r = kside_begin(ks);
	if (r < 0) {
		snprintf(div->what, sizeof(div->what), "cannot create the scratch cgroup: %s",
			 errname(r, e1));
		devwl_policy_free(p);
		oracle_follow_free(f);
		return r;
	}
	for (size_t i = 0; i < n && ret == 0; i++) {
		const struct op *op = &ops[i];
		struct devwl_node *node = NULL;
		char desc[1024];
		int mine = 0, theirs = 0;
		bool changes = false;

		if (interrupted) {
			snprintf(div->what, sizeof(div->what), "interrupted by signal %d",
				 (int)interrupted);
			ret = -EINTR;
			break;
		}
		div->index = i;
		switch (op->kind) {
		case OP_MKDIR:
			mine = devwl_policy_mkdir(p, op->path);
			theirs = kside_mkdir(ks, op->path);
			st->dirs++;
			changes = true;
			break;
		case OP_RMDIR:
			mine = devwl_policy_rmdir(p, op->path);
			theirs = kside_rmdir(ks, op->path);
			if (mine == 0)
				oracle_follow_note_rmdir(f, op->path);
			st->dirs++;
			changes = true;
			break;
		case OP_WRITE:
			mine = devwl_policy_write(p, op->path, op->file, op->buf, op->len, NULL);
			theirs = kside_write(ks, op->path, op->file, op->buf, op->len);
			if (mine == 0 && oracle_follow_note_write(f, op) < 0)
				ret = -ENOMEM;
			st->writes++;
			changes = true;
			break;
		case OP_BIND:
		case OP_REPLUG:
			/* Each write compared inside; a broken invariant is a divergence. */
			r = oracle_follow_apply(f, p, ks, op, &st->held, div->what,
						sizeof(div->what));
			if (r != 0) {
				ret = r;
				break;
			}
			st->binds++;
			changes = true;
			break;
		case OP_CHECK:
			/* Only on nodes that exist (a minimised sequence may lack the mkdir). */
			node = devwl_policy_find(p, op->path);
			if (!node)
				continue;
			mine = devwl_node_check(node, op->type, op->major, op->minor, op->access);
			theirs = kside_check(ks, op->path, op->type, op->major, op->minor,
					     op->access);
			if (theirs < 0) {
				snprintf(div->what, sizeof(div->what), "probe failed for %s: %s",
					 op_describe(op, desc, sizeof(desc)), errname(theirs, e2));
				ret = theirs;
				break;
			}
			st->checks++;
			break;
		case OP_LIST:
			node = devwl_policy_find(p, op->path);
			if (!node)
				continue;
			r = compare_listing(node, &lc);
			if (r == -EUCLEAN)
				ret = 1;
			else if (r < 0)
				ret = r;
			break;
		}
		st->ops++;
		if (verbose)
			fprintf(stderr, "  [%3zu] %-60s lib %s kernel %s\n", i,
				op_describe(op, desc, sizeof(desc)), errname(mine, e1),
				errname(theirs, e2));
		if (ret)
			break;
		if (mine != theirs) {
			snprintf(div->what, sizeof(div->what), "libdevwl returned %s, kernel %s%s",
				 errname(mine, e1), errname(theirs, e2),
				 op->kind == OP_CHECK ? " (1 allowed, 0 denied)" : "");
			ret = 1;
			break;
		}
		/* After every change, every node's listing must still agree. */
		if (changes) {
			r = devwl_policy_foreach(p, compare_listing, &lc);
			if (r == -EUCLEAN)
				ret = 1;
			else if (r < 0)
				ret = r;
		}
	}
	devwl_policy_free(p);
	oracle_follow_free(f);
	r = kside_end(ks);
	if (r < 0 && ret == 0) {
		snprintf(div->what, sizeof(div->what), "cannot remove the scratch cgroups: %s",
			 errname(r, e1));
		ret = r;
	}
	return ret;
}

/* Does ops[0..n) diverge when replayed from scratch? 1 yes, 0 no, < 0 oracle failure. */
static int diverges(struct kside *ks, const struct op *ops, size_t n, struct divergence *div)
{
	struct stats st = {0};

	return run(ks, ops, n, false, &st, div);
}

static void print_ops(const struct op *ops, size_t n, const size_t *orig_index)
{
	char desc[1024];

	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "  [%3zu]%s %s\n", orig_index ? orig_index[i] : i,
			i + 1 == n ? " DIVERGES:" : "", op_describe(&ops[i], desc, sizeof(desc)));
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * Drop single operations while the sequence still diverges at its end, within a time
 * budget: a shorter story than the prefix, for whoever debugs it.
 */
static int minimise(struct kside *ks, const struct op *prefix, size_t n, double budget)
{
	_cleanup_free_ struct op *cur = calloc(n, sizeof(*cur));
	_cleanup_free_ struct op *trial = calloc(n, sizeof(*trial));
	_cleanup_free_ size_t *idx = calloc(n, sizeof(*idx));
	_cleanup_free_ size_t *tidx = calloc(n, sizeof(*tidx));
	struct divergence div = {0};
	double deadline = now() + budget;
	size_t len = n;

	if (!cur || !trial || !idx || !tidx)
		return -ENOMEM;
	memcpy(cur, prefix, n * sizeof(*cur)); /* shallow: bufs stay owned by prefix */
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	/* Passes until nothing more can go: a removal may make an earlier op removable. */
	for (bool removed = true; removed && now() < deadline && !interrupted;) {
		removed = false;
		for (size_t i = len - 1; i-- > 0 && now() < deadline && !interrupted;) {
			size_t t = 0;
			for (size_t j = 0; j < len; j++)
				if (j != i) {
					tidx[t] = idx[j];
					trial[t++] = cur[j];
				}
			if (diverges(ks, trial, t, &div) == 1 && div.index + 1 == t) {
				memcpy(cur, trial, t * sizeof(*cur));
				memcpy(idx, tidx, t * sizeof(*idx));
				len = t;
				removed = true;
			}
		}
	}
	diverges(ks, cur, len, &div);
	fprintf(stderr, "minimised to %zu ops (original indexes)%s:\n", len,
		now() >= deadline ? ", time budget spent" : "");
	print_ops(cur, len, idx);
	fprintf(stderr, "  %s\n", div.what);
	return 0;
}

/* Report a divergence found by the full run of seed: shortest prefix, then minimised. */
static void report(struct kside *ks, uint64_t seed, const struct op *ops,
		   const struct divergence *first)
{
	struct divergence div = {0};
	size_t lo = 1, hi = first->index + 1;
	char desc[1024];
	int r;

	fprintf(stderr, "oracle: DIVERGENCE with seed %" PRIu64 " at op %zu: %s\n  %s\n", seed,
		first->index, op_describe(&ops[first->index], desc, sizeof(desc)), first->what);
	r = diverges(ks, ops, hi, &div);
	if (r != 1) {
		fprintf(stderr,
			"oracle: the prefix of %zu ops does not diverge when replayed "
			"(%s): the kernel side is not deterministic here\n",
			hi, r < 0 ? div.what : "no divergence");
		return;
	}
	/* Every prefix of a sequence that agrees also agrees: binary search is exact. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (diverges(ks, ops, mid, &div) == 1)
			hi = mid;
		else
			lo = mid + 1;
	}
	diverges(ks, ops, hi, &div);
	fprintf(stderr, "shortest failing prefix: %zu ops (replayed on fresh scratch cgroups):\n",
		hi);
	print_ops(ops, hi, NULL);
	fprintf(stderr, "  %s\n", div.what);
	minimise(ks, ops, hi, 60.0);
	fprintf(stderr, "reproduce: oracle --seed %" PRIu64 " --ops %zu --verbose\n", seed, hi);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: oracle [--seeds N] [--ops N] [--seed S] [--verbose]\n"
		   "  --seeds N  number of seeds to run (default 20, starting at --seed or 1)\n"
		   "  --ops N    operations per seed (default 300)\n"
		   "  --seed S   first seed (alone: run only this seed)\n"
		   "  --verbose  print every operation and both results\n");
}

static int parse_u64(const char *s, uint64_t *ret)
{
	char *end = NULL;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || !end || *end || s[0] == '-' || !s[0])
		return -EINVAL;
	*ret = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"seeds", required_argument, NULL, 'n'}, {"ops", required_argument, NULL, 'o'},
		{"seed", required_argument, NULL, 's'},	 {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},	 {0},
	};
	uint64_t nseeds = 20, nops = 300, first = 1;
	bool verbose = false, seed_given = false, seeds_given = false;
	struct kside *ks = NULL;
	struct stats st = {0};
	struct sigaction sa = {.sa_handler = on_signal};
	char reason[512];
	double t0 = now();
	int c, r, exit_code = 0;

	while ((c = getopt_long(argc, argv, "n:o:s:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			seeds_given = true;
			if (parse_u64(optarg, &nseeds) < 0 || nseeds == 0) {
				fprintf(stderr, "oracle: bad --seeds %s\n", optarg);
				return 2;
			}
			break;
		case 'o':
			if (parse_u64(optarg, &nops) < 0 || nops == 0 || nops > 1000000) {
				fprintf(stderr, "oracle: bad --ops %s\n", optarg);
				return 2;
			}
			break;
		case 's':
			seed_given = true;
			if (parse_u64(optarg, &first) < 0) {
				fprintf(stderr, "oracle: bad --seed %s\n", optarg);
				return 2;
			}
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (seed_given && !seeds_given)
		nseeds = 1;

	r = kside_new(&ks, reason, sizeof(reason));
	if (r == 77) {
		fprintf(stderr, "oracle: SKIP: %s\n", reason);
		return 77;
	}
	if (r < 0) {
		fprintf(stderr, "oracle: cannot set up the kernel side: %s\n", strerror(-r));
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	kside_reap_stale();

	for (uint64_t s = first; s < first + nseeds && !exit_code; s++) {
		struct divergence div = {0};
		struct op *ops = ops_generate(s, nops);
		if (!ops) {
			fprintf(stderr, "oracle: out of memory\n");
			exit_code = 1;
			break;
		}
		if (verbose)
			fprintf(stderr, "seed %" PRIu64 ":\n", s);
		r = run(ks, ops, nops, verbose, &st, &div);
		if (r == 1) {
			report(ks, s, ops, &div);
			exit_code = 1;
		} else if (r < 0) {
			fprintf(stderr, "oracle: seed %" PRIu64 " op %zu: %s\n", s, div.index,
				div.what);
			exit_code = r == -EINTR ? 130 : 1;
		}
		ops_free(ops, nops);
	}
	kside_free(ks);
	fprintf(stderr,
		"oracle: %" PRIu64 " seed(s) from %" PRIu64 " x %" PRIu64 " ops: %zu ops compared "
		"(%zu writes, %zu checks, %zu mkdir/rmdir, %zu binds/replugs), %zu listings "
		"compared, %zu invariant checks, %s, %.1f s\n",
		nseeds, first, nops, st.ops, st.writes, st.checks, st.dirs, st.binds, st.lists,
		st.held,
		exit_code == 130 ? "interrupted"
		: exit_code	 ? "FAILED"
				 : "0 divergences",
		now() - t0);
	return exit_code;
}
