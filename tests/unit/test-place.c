/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The id translation of devwl_node_place() (lib/place.c): a target's uid or gid through
 * the text of its /proc/PID/uid_map or gid_map, as the kernel prints it (right-aligned
 * columns), into ours; ids outside every range unmapped, and texts that are not a map
 * refused rather than half read. The rest of place.c needs a target: live tests 73, 74.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "place.h"

static int lookup(const char *map, uint32_t id, uint32_t *ret)
{
	*ret = 0xdeadbeef;
	return place_idmap_lookup(map, id, ret);
}

static void test_place_idmap_lookup_initial_namespace(void **state)
{
	static const char map[] = "         0          0 4294967295\n";
	uint32_t out = 0;

	(void)state;
	assert_int_equal(lookup(map, 0, &out), 0);
	assert_int_equal(out, 0);
	assert_int_equal(lookup(map, 1000, &out), 0);
	assert_int_equal(out, 1000);
	assert_int_equal(lookup(map, 4294967294u, &out), 0);
	assert_int_equal(out, 4294967294u);
	/* (uid_t)-1 is never an id: the kernel's widest map stops short of it. */
	assert_int_equal(lookup(map, UINT32_MAX, &out), -ENOENT);
	assert_int_equal(out, 0xdeadbeef);
}

static void test_place_idmap_lookup_container(void **state)
{
	static const char map[] = "         0     100000      65536\n"
				  "     65536       1000          1\n"
				  "    100000     300000         10\n";
	uint32_t out = 0;

	(void)state;
	assert_int_equal(lookup(map, 0, &out), 0);
	assert_int_equal(out, 100000);
	assert_int_equal(lookup(map, 65535, &out), 0);
	assert_int_equal(out, 165535);
	assert_int_equal(lookup(map, 65536, &out), 0);
	assert_int_equal(out, 1000);
	assert_int_equal(lookup(map, 65537, &out), -ENOENT);
	assert_int_equal(lookup(map, 100009, &out), 0);
	assert_int_equal(out, 300009);
	assert_int_equal(lookup(map, 100010, &out), -ENOENT);
	assert_int_equal(lookup(map, UINT32_MAX, &out), -ENOENT);
}

static void test_place_idmap_lookup_empty(void **state)
{
	uint32_t out = 0;

	(void)state;
	/* No map written yet: nothing is mapped. */
	assert_int_equal(lookup("", 0, &out), -ENOENT);
	assert_int_equal(lookup("\n", 0, &out), -ENOENT);
	assert_int_equal(lookup("0 0 0\n", 0, &out), -ENOENT);
}

static void test_place_idmap_lookup_not_a_map(void **state)
{
	static const char *const bad[] = {
		"0 100000\n",		  /* two columns */
		"0 100000 65536 7\n",	  /* four */
		"0 -1 10\n",		  /* a sign */
		"0 100000 x\n",		  /* not a number */
		"0 100000 4294967296\n",  /* beyond 32 bits */
		"4294967295 0 2\n",	  /* a range past the last id */
		"0 4294967295 2\n",	  /* in both columns */
		"0 0 1 junk",		  /* trailing text */
		"0 100000 65536\n5 5 5x", /* a bad line after the one that maps */
	};
	uint32_t out = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(lookup(bad[i], 0, &out), -EINVAL);
		assert_int_equal(out, 0xdeadbeef);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place_idmap_lookup_initial_namespace),
		cmocka_unit_test(test_place_idmap_lookup_container),
		cmocka_unit_test(test_place_idmap_lookup_empty),
		cmocka_unit_test(test_place_idmap_lookup_not_a_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
