/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwlctl's changes as a reload applies them again (supervisor/format/edits.c): folding an
 * earlier copy of a write away keeps the list short for a device flipped for ever, and a
 * replay of the folded list leaves every node exactly as a replay of every change does,
 * over the hierarchy they were made on and over a different one (a changed policy file).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "edits.h"
#include "util.h"

static FILE *devnull;

static void add(struct edits *e, const char *line)
{
	assert_int_equal(edits_add(e, line, strlen(line)), 0);
}

static void flip_keeps_two(void **state)
{
	struct edits e = {0};

	(void)state;
	add(&e, "mkdir /w/x");
	for (int i = 0; i < 100000; i++)
		add(&e, i % 2 ? "deny /w c 1:7 rw" : "allow /w c 1:7 rw");
	assert_int_equal(e.n, 3);
	assert_string_equal(e.v[0].line, "mkdir /w/x");
	assert_string_equal(e.v[1].line, "allow /w c 1:7 rw");
	assert_string_equal(e.v[2].line, "deny /w c 1:7 rw");
	/* A run of writes to one device keeps each distinct write once, in its last place. */
	add(&e, "deny /w c 1:7 m");
	add(&e, "allow /w c 1:7 rw");
	assert_int_equal(e.n, 4);
	assert_string_equal(e.v[2].line, "deny /w c 1:7 m");
	assert_string_equal(e.v[3].line, "allow /w c 1:7 rw");
	/* The same write however spelt. */
	add(&e, "deny /w c 1:7 m\\0ignored");
	add(&e, "allow /w c 1:7 wr");
	assert_int_equal(e.n, 4);
	assert_string_equal(e.v[2].line, "deny /w c 1:7 m\\0ignored");
	assert_string_equal(e.v[3].line, "allow /w c 1:7 wr");
	edits_clear(&e);
}

/* What is not a write of one rule to one device, or not in the run, is never folded. */
static void folds_only_within_a_run(void **state)
{
	static const char *const kept[][3] = {
		{"allow /w c 1:7 rw", "mkdir /w/y", "allow /w c 1:7 rw"},
		{"allow /w c 1:7 rw", "allow /v c 1:7 rw", "allow /w c 1:7 rw"},
		{"allow /w c 1:7 rw", "allow /w c 1:8 rw", "allow /w c 1:7 rw"},
		{"allow /w c 1:7 rw", "allow /w b 1:7 rw", "allow /w c 1:7 rw"},
		{"allow /w c 1:7 rw", "deny /w a", "allow /w c 1:7 rw"},
		{"deny /w a", "deny /w a", "deny /w a"},
		{"allow /w /dev/null rw", "allow /w /dev/null rw", "allow /w /dev/null rw"},
		{"mknod_needs_cap /w true", "mknod_needs_cap /w true", "mknod_needs_cap /w true"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		struct edits e = {0};

		for (size_t j = 0; j < 3; j++)
			add(&e, kept[i][j]);
		if (e.n != 3)
			fail_msg("case %zu (%s; %s; %s) folded to %zu lines", i, kept[i][0],
				 kept[i][1], kept[i][2], e.n);
		edits_clear(&e);
	}
}

/* A small world: nodes /p, /p/c, /p/c/d under "/", a few devices that overlap. */
static const char *const nodes[] = {"/p", "/p/c", "/p/c/d"};
static const char *const keys[] = {"c 1:7", "c 1:*", "c 1:8", "c *:*", "b 8:0"};
/* The accesses of the runs: "wr" is "rw" spelt otherwise. */
static const char *const run_access[] = {"rw", "r", "wr"};

static const char *pick(const char *const *v, size_t n, unsigned int *seed)
{
	return v[(size_t)rand_r(seed) % n];
}

static void random_write(char *buf, size_t size, const char *node, unsigned int *seed)
{
	static const char *const access[] = {"r", "w", "m", "rw", "rm", "wm", "rwm"};

	snprintf(buf, size, "%s %s %s %s", rand_r(seed) % 2 ? "allow" : "deny", node,
		 pick(keys, sizeof(keys) / sizeof(keys[0]), seed),
		 pick(access, sizeof(access) / sizeof(access[0]), seed));
}

/* A hierarchy as a policy file might give it: random defaults and exceptions. */
static struct devwl_policy *random_base(unsigned int seed)
{
	struct devwl_policy *p = devwl_policy_new();
	char line[128];

	assert_non_null(p);
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		assert_int_equal(devwl_policy_mkdir(p, nodes[i]), 0);
		if (rand_r(&seed) % 2) {
			snprintf(line, sizeof(line), "deny %s a", nodes[i]);
			edit_exec(p, line, strlen(line), devnull);
		}
		for (int j = rand_r(&seed) % 6; j > 0; j--) {
			random_write(line, sizeof(line), nodes[i], &seed);
			edit_exec(p, line, strlen(line), devnull);
		}
	}
	return p;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What a hierarchy grants, node by node: the exceptions' order in a listing is where
 * each was first added, which says nothing about what they allow. */
static char *grants(const struct devwl_policy *p)
{
	static const char *const paths[] = {"/", "/p", "/p/c", "/p/c/d", "/p/c/d/e"};
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	assert_non_null(f);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct devwl_node *node = devwl_policy_find(p, paths[i]);
		size_t n = node ? devwl_node_exception_count(node) : 0;
		char(*rules)[DEVWL_RULE_STR_MAX] = calloc(n + 1, sizeof(*rules));
		char **sorted = calloc(n + 1, sizeof(*sorted));

		assert_true(rules && sorted);
		fprintf(f, "%s: %s", paths[i],
			!node						    ? "none"
			: devwl_node_behavior(node) == DEVWL_BEHAVIOR_ALLOW ? "allow a"
									    : "deny a");
		for (size_t j = 0; j < n; j++) {
			struct devwl_rule r;

			assert_int_equal(devwl_node_exception(node, j, &r), 0);
			assert_true(devwl_rule_format(&r, rules[j], sizeof(rules[j])) > 0);
			sorted[j] = rules[j];
		}
		qsort(sorted, n, sizeof(*sorted), cmp_str);
		for (size_t j = 0; j < n; j++)
			fprintf(f, ", %s", sorted[j]);
		fputc('\n', f);
		free(sorted);
		free(rules);
	}
	assert_int_equal(fclose(f), 0);
	return text;
}

static char *replay(unsigned int base_seed, const struct edits *e)
{
	struct devwl_policy *p = random_base(base_seed);
	char *text;

	for (size_t i = 0; i < e->n; i++)
		edit_exec(p, e->v[i].line, e->v[i].len, devnull);
	text = grants(p);
	devwl_policy_free(p);
	return text;
}

/* The list without folding, as edits.c kept it before. */
static void append_raw(struct edits *e, const char *line)
{
	struct edit *v = realloc(e->v, (e->n + 1) * sizeof(*v));

	assert_non_null(v);
	e->v = v;
	e->v[e->n].line = strdup(line);
	assert_non_null(e->v[e->n].line);
	e->v[e->n++].len = strlen(line);
}

static void assert_replays_agree(unsigned int base_seed, const struct edits *all,
				 const struct edits *fold, unsigned int trial)
{
	char *a = replay(base_seed, all), *b = replay(base_seed, fold);

	if (strcmp(a, b)) {
		for (size_t i = 0; i < all->n; i++)
			print_message("change: %s\n", all->v[i].line);
		for (size_t i = 0; i < fold->n; i++)
			print_message("folded: %s\n", fold->v[i].line);
		fail_msg("trial %u, base %u: all changes give\n%s\nfolded ones give\n%s", trial,
			 base_seed, a, b);
	}
	free(a);
	free(b);
}

/*
 * Random changes, mostly to a few devices of one node so that runs form, sometimes to
 * another node, "a" or a child made and removed to break them. Every change the live
 * hierarchy took is kept twice, all of them and folded; replays of both must agree over
 * the hierarchy they were made on and over another one.
 */
static void folded_replays_agree(void **state)
{
	unsigned int folded = 0;

	(void)state;
	for (unsigned int trial = 0; trial < 4000; trial++) {
		unsigned int seed = trial * 2654435761u + 1;
		struct devwl_policy *live = random_base(seed);
		struct edits all = {0}, fold = {0};
		const char *node = pick(nodes, 2, &seed);
		char line[128];

		for (int i = 0, n = 2 + rand_r(&seed) % 14; i < n; i++) {
			unsigned int what = (unsigned int)rand_r(&seed) % 20;

			if (what == 0)
				snprintf(line, sizeof(line), "%s /p/c a",
					 rand_r(&seed) % 2 ? "deny" : "allow");
			else if (what == 1)
				snprintf(line, sizeof(line), "%s /p/c/d/e",
					 rand_r(&seed) % 2 ? "mkdir" : "rmdir");
			else if (what == 2)
				random_write(line, sizeof(line), pick(nodes, 3, &seed), &seed);
			else
				snprintf(line, sizeof(line), "%s %s %s %s",
					 rand_r(&seed) % 2 ? "allow" : "deny", node,
					 pick(keys, 2, &seed), pick(run_access, 3, &seed));
			/* As devwld keeps them: the changes the live hierarchy took. */
			if (edit_exec(live, line, strlen(line), devnull) < 0)
				continue;
			append_raw(&all, line);
			assert_int_equal(edits_add(&fold, line, strlen(line)), 0);
		}
		assert_replays_agree(seed, &all, &fold, trial);
		assert_replays_agree(seed ^ 0x5bd1e995u, &all, &fold, trial);
		folded += fold.n < all.n;
		edits_clear(&all);
		edits_clear(&fold);
		devwl_policy_free(live);
	}
	/* Enough trials did fold, or they proved little. */
	print_message("%u of 4000 trials folded\n", folded);
	assert_true(folded > 1000);
}

/* devwlctl learn NODE on|off: the last change to that very node says, nothing else does
 * (a prefix, another verb, a malformed value); the replay checks the node and keeps the
 * hierarchy as it was (learn mode is devwld's, not the hierarchy's). */
static void learn_last_wins(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	_cleanup_free_ char *before = NULL, *after = NULL;
	struct edits e = {0};

	(void)state;
	assert_non_null(p);
	assert_int_equal(devwl_policy_mkdir(p, "/ci"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/ci/job"), 0);
	assert_int_equal(edits_learn(&e, "/ci/job"), -1);
	add(&e, "learn /ci/job on");
	add(&e, "learn /ci off");
	add(&e, "mknod_needs_cap /ci/job false");
	assert_int_equal(edits_learn(&e, "/ci/job"), 1);
	assert_int_equal(edits_learn(&e, "/ci"), 0);
	assert_int_equal(edits_learn(&e, "/ci/jo"), -1);
	assert_int_equal(edits_learn(&e, "/"), -1);
	add(&e, "learn /ci/job off");
	assert_int_equal(edits_learn(&e, "/ci/job"), 0);
	add(&e, "learn /ci/job maybe");
	assert_int_equal(edits_learn(&e, "/ci/job"), 0);
	assert_true(edit_is_change("learn /ci/job on", 16));
	assert_int_equal(devwl_policy_to_string(p, &before), 0);
	assert_int_equal(edit_exec(p, "learn /ci/job on", 16, devnull), 0);
	assert_int_equal(edit_exec(p, "learn /nope on", 14, devnull), -ENOENT);
	assert_int_equal(edit_exec(p, "learn /ci/job yes", 17, devnull), -EINVAL);
	assert_int_equal(devwl_policy_to_string(p, &after), 0);
	assert_string_equal(before, after);
	assert_int_equal(e.learns, 4);
	edits_forget(&e, "/ci/job");
	assert_int_equal(e.learns, 1);
	assert_int_equal(edits_learn(&e, "/ci"), 0);
	edits_forget(&e, "/ci");
	assert_int_equal(e.learns, 0);
	assert_int_equal(edits_learn(&e, "/ci/job"), -1);
	edits_clear(&e);
	devwl_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flip_keeps_two),
		cmocka_unit_test(folds_only_within_a_run),
		cmocka_unit_test(folded_replays_agree),
		cmocka_unit_test(learn_last_wins),
	};

	devnull = fopen("/dev/null", "w");
	if (!devnull)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
