/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whose container a name means (supervisor/core/resolve.c): a full id, a prefix of one
 * id, a Kubernetes name, always among one owner's containers; unknown and ambiguous
 * names refused, saying why, an unknown one with the owner's containers near it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "devwld.h"
#include "resolve.h"

#define ROOT_A "4f1c2a9be07d1111111111111111111111111111111111111111111111111111"
#define ROOT_B "4f1c2a9b00002222222222222222222222222222222222222222222222222222"

/* Root's A (prod/db-0/db) and B; the user's under A's short id and A's full id. */
static struct container cs[] = {
	{.id = (char *)"4f1c2a9be07d", .owner_uid = 65534},
	{.id = (char *)ROOT_A, .owner_uid = 65534},
	{.id = (char *)ROOT_A, .k8s_name = (char *)"prod/db-0/db", .owner_uid = 0},
	{.id = (char *)ROOT_B, .owner_uid = 0},
};
static struct devwld d;

static int setup(void **state)
{
	(void)state;
	list_init(&d.containers);
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		list_add_tail(&cs[i].link, &d.containers);
	return 0;
}

static struct container *resolved(uid_t owner, const char *name, int want)
{
	struct devwl_error err = {0};
	struct container *c = NULL;

	assert_int_equal(resolve_owned_container(&d, owner, name, &c, &err), want);
	if (want < 0) {
		assert_null(c);
		assert_int_equal(err.code, want);
	}
	return c;
}

static void test_resolve_owned_container_root_by_default(void **state)
{
	(void)state;
	/* The user's id is exactly the short id; the name still means root's. */
	assert_ptr_equal(resolved(RESOLVE_ROOT, "4f1c2a9be07d", 0), &cs[2]);
	assert_ptr_equal(resolved(RESOLVE_ROOT, ROOT_A, 0), &cs[2]);
	assert_ptr_equal(resolved(RESOLVE_ROOT, "prod/db-0/db", 0), &cs[2]);
	assert_ptr_equal(resolved(RESOLVE_ROOT, "4f1c2a9b0", 0), &cs[3]);
}

static void test_resolve_owned_container_other_owner(void **state)
{
	(void)state;
	/* A full id is that container, though it prefixes another of the owner's. */
	assert_ptr_equal(resolved(65534, "4f1c2a9be07d", 0), &cs[0]);
	assert_ptr_equal(resolved(65534, ROOT_A, 0), &cs[1]);
	assert_ptr_equal(resolved(65534, "4f1c2a9be07d1", 0), &cs[1]);
	/* Root's Kubernetes name is no name of the user's. */
	resolved(65534, "prod/db-0/db", -ENOENT);
	resolved(1000, "4f1c", -ENOENT);
}

static void test_resolve_owned_container_refusals(void **state)
{
	struct devwl_error err = {0};
	struct container *c = NULL;

	(void)state;
	resolved(RESOLVE_ROOT, "", -EINVAL);
	assert_int_equal(resolve_owned_container(&d, RESOLVE_ROOT, "nosuch", &c, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no container \"nosuch\" of uid 0"));
	assert_null(strstr(err.msg, "has one"));
	assert_int_equal(resolve_owned_container(&d, 65534, ROOT_B, &c, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "uid 0 has one: name it with --owner 0"));
	/* Ambiguous: both of root's, each with its owner; none of the user's. */
	assert_int_equal(resolve_owned_container(&d, RESOLVE_ROOT, "4f1c2a9b", &c, &err), -EINVAL);
	assert_null(c);
	assert_non_null(strstr(err.msg, "\"4f1c2a9b\" names 2 containers of uid 0"));
	assert_non_null(strstr(err.msg, ROOT_A " (uid 0)"));
	assert_non_null(strstr(err.msg, ROOT_B " (uid 0)"));
	assert_null(strstr(err.msg, "65534"));
	assert_int_equal(resolve_owned_container(&d, 65534, "4f1c", &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "names 2 containers of uid 65534"));
}

static void test_resolve_distance_edits(void **state)
{
	char big[RESOLVE_NEAR_MAX + 2];

	(void)state;
	assert_int_equal(resolve_distance("eager_tesla", 11, "eager_tesla", 11, 2), 0);
	assert_int_equal(resolve_distance("eager_tesl", 10, "eager_tesla", 11, 2), 1);
	assert_int_equal(resolve_distance("EAGER_TESLA", 11, "eager_tesla", 11, 2), 0);
	assert_int_equal(resolve_distance("eagre_tesla", 11, "eager_tesla", 11, 2), 1);
	assert_int_equal(resolve_distance("eager_tasla", 11, "eager_tesla", 11, 2), 1);
	assert_int_equal(resolve_distance("eger_tsla", 9, "eager_tesla", 11, 2), 2);
	assert_int_equal(resolve_distance("4f1c", 4, "4f1c2a9b", 4, 1), 0);
	/* Past max: max + 1, however far (the band is all that is computed). */
	assert_int_equal(resolve_distance("eger_tsla", 9, "eager_tesla", 11, 1), 2);
	assert_int_equal(resolve_distance("", 0, "web", 3, 2), 3);
	assert_int_equal(resolve_distance("bold_curie", 10, "eager_tesla", 11, 2), 3);
	assert_int_equal(resolve_distance("abcdefgh", 8, "badcfehg", 8, 3), 4);
	assert_int_equal(resolve_distance("abcdefgh", 8, "badcfehg", 8, 4), 4);
	assert_int_equal(resolve_distance("kitten", 6, "sitting", 7, 10), 3);
	assert_int_equal(resolve_distance("xkitten", 7, "kitten", 6, 1), 1);
	memset(big, 'a', sizeof(big));
	assert_int_equal(resolve_distance(big, sizeof(big), "a", 1, 2), UINT_MAX);
	assert_int_equal(resolve_distance(big, 8, big, 8, RESOLVE_NEAR_MAX), UINT_MAX);
	assert_int_equal(resolve_distance(big, RESOLVE_NEAR_MAX, big, RESOLVE_NEAR_MAX, 2), 0);
}

/* The whole table, no band: what the banded distance must agree with up to max. */
static unsigned int full_distance(const char *a, size_t na, const char *b, size_t nb)
{
	unsigned int t[16][16];

	for (size_t i = 0; i <= na; i++)
		for (size_t j = 0; j <= nb; j++) {
			unsigned int cost = i && j && (a[i - 1] | 0x20) != (b[j - 1] | 0x20);

			if (!i || !j) {
				t[i][j] = (unsigned int)(i + j);
				continue;
			}
			t[i][j] = t[i - 1][j - 1] + cost;
			if (t[i - 1][j] + 1 < t[i][j])
				t[i][j] = t[i - 1][j] + 1;
			if (t[i][j - 1] + 1 < t[i][j])
				t[i][j] = t[i][j - 1] + 1;
			if (i > 1 && j > 1 && (a[i - 1] | 0x20) == (b[j - 2] | 0x20) &&
			    (a[i - 2] | 0x20) == (b[j - 1] | 0x20) && t[i - 2][j - 2] + 1 < t[i][j])
				t[i][j] = t[i - 2][j - 2] + 1;
		}
	return t[na][nb];
}

static void test_resolve_distance_band_agrees(void **state)
{
	static const char letters[] = "abAB";
	unsigned int seed = 1;
	char a[15], b[15];

	(void)state;
	for (int n = 0; n < 20000; n++) {
		size_t na, nb;
		unsigned int max, full;

		seed = seed * 1103515245u + 12345u;
		na = (seed >> 8) % 15;
		nb = (seed >> 16) % 15;
		max = (seed >> 24) % 5;
		for (size_t i = 0; i < na; i++) {
			seed = seed * 1103515245u + 12345u;
			a[i] = letters[(seed >> 16) % 4];
		}
		for (size_t i = 0; i < nb; i++) {
			seed = seed * 1103515245u + 12345u;
			b[i] = letters[(seed >> 16) % 4];
		}
		full = full_distance(a, na, b, nb);
		assert_int_equal(resolve_distance(a, na, b, nb, max), full <= max ? full : max + 1);
	}
}

static void test_resolve_nearness_ranks(void **state)
{
	struct container pm = {.id = (char *)"3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c",
			       .rt_name = (char *)"eager_tesla"};
	struct container k8s = {.id = (char *)ROOT_A, .k8s_name = (char *)"prod/db-0/db"};

	(void)state;
	/* Names: but for case, a typo or two, a start. */
	assert_int_equal(resolve_nearness(&pm, "Eager_Tesla"), 1);
	assert_int_equal(resolve_nearness(&pm, "eager_tesl"), 2);
	assert_int_equal(resolve_nearness(&pm, "eagre_tesla"), 2);
	assert_int_equal(resolve_nearness(&pm, "eger_tsla"), 3);
	assert_int_equal(resolve_nearness(&pm, "eager"), 3);
	assert_int_equal(resolve_nearness(&k8s, "prod/db-1/db"), 2);
	/* Ids: a start but for case, or one edit from it. */
	assert_int_equal(resolve_nearness(&pm, "3F2A1B"), 1);
	assert_int_equal(resolve_nearness(&pm, "3f2a1c9c"), 2);
	assert_int_equal(resolve_nearness(&pm, "3f21b9c8"), 2);
	/* Not near. */
	assert_int_equal(resolve_nearness(&pm, "bold_curie"), 0);
	assert_int_equal(resolve_nearness(&pm, "ea"), 0);
	assert_int_equal(resolve_nearness(&pm, "3f2c"), 2);
	assert_int_equal(resolve_nearness(&pm, "3f9"), 0);
	assert_int_equal(resolve_nearness(&pm, "3f2a1c9c8e"), 0);
	assert_int_equal(resolve_nearness(&k8s, "prod/web-0/web"), 0);
	assert_int_equal(resolve_nearness(&k8s, "eager_tesla"), 0);
}

/* An unknown name lists the owner's near containers, nearest first, never another
 * owner's, and none when nothing is near. */
static void test_resolve_owned_container_near_matches(void **state)
{
	static struct container near[] = {
		{.id = (char *)"aaaa000000000000000000000000000000000000000000000000000000000001",
		 .rt_name = (char *)"eager_turing",
		 .owner_uid = 0},
		{.id = (char *)"aaaa000000000000000000000000000000000000000000000000000000000002",
		 .rt_name = (char *)"eager_tesla",
		 .owner_uid = 0},
		{.id = (char *)"bbbb000000000000000000000000000000000000000000000000000000000003",
		 .rt_name = (char *)"eager_tesla",
		 .owner_uid = 1000},
		{.id = (char *)"cccc000000000000000000000000000000000000000000000000000000000004",
		 .rt_name = (char *)"bold_curie",
		 .owner_uid = 0},
	};
	struct devwl_error err = {0};
	struct container *c = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++)
		list_add_tail(&near[i].link, &d.containers);
	assert_int_equal(resolve_owned_container(&d, RESOLVE_ROOT, "eager_tesl", &c, &err),
			 -ENOENT);
	assert_null(c);
	assert_non_null(strstr(err.msg, "no container \"eager_tesl\" of uid 0: did you mean "
					"eager_tesla (aaaa00000000...)?"));
	/* Not near: eager_turing, five edits away; bold_curie; the user's. */
	assert_null(strstr(err.msg, "eager_turing"));
	assert_null(strstr(err.msg, "bbbb"));
	/* Nearest first: the start of a name (3) after one edit (2). */
	assert_int_equal(resolve_owned_container(&d, RESOLVE_ROOT, "eager_turinj", &c, &err),
			 -ENOENT);
	assert_non_null(strstr(err.msg, "did you mean eager_turing (aaaa00000000...)?"));
	assert_int_equal(resolve_owned_container(&d, RESOLVE_ROOT, "eager", &c, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "did you mean eager_turing (aaaa00000000...), "
					"eager_tesla (aaaa00000000...)?"));
	/* Ids by their start, but for case. */
	assert_int_equal(resolve_owned_container(&d, RESOLVE_ROOT, "CCCC", &c, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "did you mean bold_curie (cccc00000000...)?"));
	/* The user's own eager_tesla, not root's; root's never named to it. */
	assert_int_equal(resolve_owned_container(&d, 1000, "eager_tesl", &c, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "did you mean eager_tesla (bbbb00000000...)?"));
	assert_null(strstr(err.msg, "aaaa"));
	assert_int_equal(resolve_owned_container(&d, 1000, "bold_curi", &c, &err), -ENOENT);
	assert_null(strstr(err.msg, "did you mean"));
	assert_null(strstr(err.msg, "cccc"));
	/* Nothing near: no question. */
	assert_int_equal(resolve_owned_container(&d, RESOLVE_ROOT, "zzzzzz", &c, &err), -ENOENT);
	assert_null(strstr(err.msg, "did you mean"));
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++)
		list_del(&near[i].link);
}

static void test_resolve_full_id_forms(void **state)
{
	(void)state;
	assert_true(resolve_full_id(ROOT_A));
	assert_false(resolve_full_id("4f1c2a9be07d"));
	assert_false(resolve_full_id(ROOT_A "0"));
	assert_false(resolve_full_id(
		"4F1C2A9BE07D1111111111111111111111111111111111111111111111111111"));
	assert_false(resolve_full_id("prod/db-0/db"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_owned_container_root_by_default),
		cmocka_unit_test(test_resolve_owned_container_other_owner),
		cmocka_unit_test(test_resolve_owned_container_refusals),
		cmocka_unit_test(test_resolve_distance_edits),
		cmocka_unit_test(test_resolve_distance_band_agrees),
		cmocka_unit_test(test_resolve_nearness_ranks),
		cmocka_unit_test(test_resolve_owned_container_near_matches),
		cmocka_unit_test(test_resolve_full_id_forms),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
