/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The growable array (base/array.c): room by doubling, sizes that overflow refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "array.h"

struct item {
	int a, b;
};

static void test_array_reserve_doubles(void **state)
{
	struct item *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(ARRAY_RESERVE(v, cap, 1), 0);
	assert_non_null(v);
	assert_int_equal(cap, 8);
	for (int i = 0; i < 8; i++)
		v[i] = (struct item){i, -i};
	assert_int_equal(ARRAY_RESERVE(v, cap, 9), 0);
	assert_int_equal(cap, 16);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(v[i].a, i);
		assert_int_equal(v[i].b, -i);
	}
	/* Room enough already: nothing moves. */
	{
		struct item *before = v;

		assert_int_equal(ARRAY_RESERVE(v, cap, 16), 0);
		assert_ptr_equal(v, before);
		assert_int_equal(cap, 16);
	}
	/* A jump past double goes on doubling until it fits. */
	assert_int_equal(ARRAY_RESERVE(v, cap, 100), 0);
	assert_int_equal(cap, 128);
	v[127] = (struct item){1, 2};
	free(v);
}

/* A size that does not fit a size_t is refused, and the array is left as it was. */
static void test_array_reserve_overflow(void **state)
{
	char *bytes = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(ARRAY_RESERVE(bytes, cap, 4), 0);
	bytes[0] = 'x';
	assert_int_equal(ARRAY_RESERVE(bytes, cap, SIZE_MAX), -ENOMEM);
	assert_int_equal(cap, 8);
	assert_int_equal(bytes[0], 'x');
	assert_int_equal(devwl_array_reserve(&bytes, &cap, 9, SIZE_MAX / 8), -ENOMEM);
	assert_int_equal(cap, 8);
	assert_int_equal(bytes[0], 'x');
	free(bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array_reserve_doubles),
		cmocka_unit_test(test_array_reserve_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
