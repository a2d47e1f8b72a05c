/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/nodeset.c: the nodes only devwl opens for a workload, shared by its handlers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "devwl.h"

static void test_nodeset_add_has_remove(void **state)
{
	struct devwl_nodeset *s = devwl_nodeset_new();
	uint64_t dev = 0, ino = 0;

	(void)state;
	assert_non_null(s);
	assert_false(devwl_nodeset_has(s, 8, 9));
	assert_int_equal(devwl_nodeset_add(s, 8, 9), 0);
	assert_int_equal(devwl_nodeset_add(s, 8, 9), 0); /* once */
	assert_true(devwl_nodeset_has(s, 8, 9));
	assert_false(devwl_nodeset_has(s, 9, 8));
	assert_int_equal(devwl_nodeset_get(s, 0, &dev, &ino), 0);
	assert_true(dev == 8 && ino == 9);
	assert_int_equal(devwl_nodeset_get(s, 1, &dev, &ino), -ENOENT);
	assert_int_equal(devwl_nodeset_remove(s, 8, 9), 0);
	assert_false(devwl_nodeset_has(s, 8, 9));
	assert_int_equal(devwl_nodeset_remove(s, 8, 9), -ENOENT);
	devwl_nodeset_unref(s);
}

static void test_nodeset_bad_arguments(void **state)
{
	struct devwl_nodeset *s = devwl_nodeset_new();
	uint64_t dev = 0, ino = 0;

	(void)state;
	assert_int_equal(devwl_nodeset_add(NULL, 1, 2), -EINVAL);
	assert_int_equal(devwl_nodeset_add(s, 1, 0), -EINVAL); /* no inode is 0 */
	assert_false(devwl_nodeset_has(NULL, 1, 2));
	assert_false(devwl_nodeset_has(s, 1, 0));
	assert_int_equal(devwl_nodeset_remove(NULL, 1, 2), -EINVAL);
	assert_int_equal(devwl_nodeset_get(NULL, 0, &dev, &ino), -EINVAL);
	assert_int_equal(devwl_nodeset_get(s, 0, NULL, &ino), -EINVAL);
	devwl_nodeset_unref(NULL);
	devwl_nodeset_unref(s);
}

/* Bounded: the 1025th forgets the first, and a reference keeps the set alive. */
static void test_nodeset_ring_and_refs(void **state)
{
	struct devwl_nodeset *s = devwl_nodeset_new();
	uint64_t dev = 0, ino = 0;
	size_t n = 0;

	(void)state;
	for (uint64_t i = 1; i <= 1025; i++)
		assert_int_equal(devwl_nodeset_add(s, 1, i), 0);
	assert_false(devwl_nodeset_has(s, 1, 1));
	assert_true(devwl_nodeset_has(s, 1, 2));
	assert_true(devwl_nodeset_has(s, 1, 1025));
	while (devwl_nodeset_get(s, n, &dev, &ino) == 0)
		n++;
	assert_int_equal(n, 1024);
	assert_ptr_equal(devwl_nodeset_ref(s), s);
	devwl_nodeset_unref(s);
	assert_true(devwl_nodeset_has(s, 1, 1025));
	devwl_nodeset_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodeset_add_has_remove),
		cmocka_unit_test(test_nodeset_bad_arguments),
		cmocka_unit_test(test_nodeset_ring_and_refs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
