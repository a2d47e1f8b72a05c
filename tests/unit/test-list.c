/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Intrusive lists (base/list.h): order kept, an item unlinked twice does no harm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "list.h"

struct item {
	int value;
	struct list_head link;
};

/* The values on h, in order, as a number: 1, 2, 3 is 123. */
static int values(const struct list_head *h)
{
	int v = 0;

	for (const struct list_head *l = h->next; l != h; l = l->next)
		v = v * 10 + container_of(l, struct item, link)->value;
	return v;
}

static void test_list_add_del(void **state)
{
	struct item a = {.value = 1}, b = {.value = 2}, c = {.value = 3};
	struct list_head h;

	(void)state;
	list_init(&h);
	assert_true(list_empty(&h));
	list_add_tail(&a.link, &h);
	list_add_tail(&b.link, &h);
	list_add_tail(&c.link, &h);
	assert_false(list_empty(&h));
	assert_int_equal(values(&h), 123);
	list_del(&b.link);
	assert_int_equal(values(&h), 13);
	assert_true(list_empty(&b.link));
	list_del(&b.link);
	assert_int_equal(values(&h), 13);
	list_del(&a.link);
	list_del(&c.link);
	assert_true(list_empty(&h));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_add_del),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
