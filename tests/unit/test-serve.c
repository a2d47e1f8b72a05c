/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The handler threads' private copy of a container's node (supervisor/serve/views.c,
 * serve_node_copy): it must decide every device and access exactly as the node it
 * copies, whatever the node's behavior, exceptions, wildcards and waiver. Random
 * hierarchies, every node compared over a grid of devices.
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

#include "devwl.h"
#include "serve.h"

static const uint32_t numbers[] = {0, 1, 3, 5, DEVWL_ANY};

static void rule_text(unsigned int *seed, char *buf, size_t size)
{
	static const char *const access[] = {"r", "w", "m", "rw", "rm", "wm", "rwm"};
	char major[16], minor[16];
	uint32_t ma = numbers[rand_r(seed) % 5], mi = numbers[rand_r(seed) % 5];

	if (rand_r(seed) % 12 == 0) {
		snprintf(buf, size, "a");
		return;
	}
	snprintf(major, sizeof(major), ma == DEVWL_ANY ? "*" : "%u", ma);
	snprintf(minor, sizeof(minor), mi == DEVWL_ANY ? "*" : "%u", mi);
	snprintf(buf, size, "%c %s:%s %s", rand_r(seed) % 2 ? 'c' : 'b', major, minor,
		 access[rand_r(seed) % 7]);
}

/* Every (type, major, minor, access) on the grid decides alike on both nodes. */
static void assert_same(const struct devwl_node *a, const struct devwl_node *b)
{
	static const int types[] = {DEVWL_DEV_CHAR, DEVWL_DEV_BLOCK};

	assert_int_equal(devwl_node_mknod_needs_cap(a), devwl_node_mknod_needs_cap(b));
	for (size_t t = 0; t < 2; t++)
		for (uint32_t ma = 0; ma < 7; ma++)
			for (uint32_t mi = 0; mi < 7; mi++)
				for (int acc = 0; acc <= DEVWL_ACC_MASK; acc++)
					assert_int_equal(
						devwl_node_check(a, types[t], ma, mi, acc),
						devwl_node_check(b, types[t], ma, mi, acc));
}

static int compare_copy(struct devwl_node *node, void *userdata)
{
	struct devwl_policy *copy = serve_node_copy(node);

	(void)userdata;
	assert_non_null(copy);
	assert_int_equal(devwl_policy_count(copy), 1);
	assert_same(node, devwl_policy_find(copy, "/"));
	devwl_policy_free(copy);
	return 0;
}

static void test_serve_node_copy_random(void **state)
{
	static const char *const paths[] = {"/a", "/a/b", "/a/b/c", "/d", "/d/e"};
	unsigned int seed = 1;

	(void)state;
	for (int round = 0; round < 200; round++) {
		struct devwl_policy *p = devwl_policy_new();

		assert_non_null(p);
		/* Some nodes deny by default before their children exist. */
		for (size_t i = 0; i < 5; i++) {
			assert_int_equal(devwl_policy_mkdir(p, paths[i]), 0);
			if (rand_r(&seed) % 2)
				(void)devwl_policy_write(p, paths[i], DEVWL_FILE_DENY, "a", 1,
							 NULL);
		}
		for (int w = 0; w < 40; w++) {
			char rule[64];

			rule_text(&seed, rule, sizeof(rule));
			/* Refusals (EPERM, EINVAL) are part of the game: the hierarchy decides. */
			(void)devwl_policy_write(
				p, rand_r(&seed) % 6 ? paths[rand_r(&seed) % 5] : "/",
				rand_r(&seed) % 2 ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY, rule,
				strlen(rule), NULL);
		}
		devwl_node_set_mknod_needs_cap(devwl_policy_find(p, "/d/e"), rand_r(&seed) % 2);
		assert_int_equal(devwl_policy_foreach(p, compare_copy, NULL), 0);
		devwl_policy_free(p);
	}
}

static void test_serve_node_copy_is_private(void **state)
{
	struct devwl_policy *p = devwl_policy_new(), *copy = NULL;
	struct devwl_node *n = NULL;

	(void)state;
	assert_int_equal(devwl_policy_mkdir(p, "/c"), 0);
	n = devwl_policy_find(p, "/c");
	assert_int_equal(devwl_node_write(n, DEVWL_FILE_DENY, "a", 1, NULL), 0);
	assert_int_equal(devwl_node_write(n, DEVWL_FILE_ALLOW, "c 1:3 rw", 8, NULL), 0);
	copy = serve_node_copy(n);
	assert_non_null(copy);
	/* A revocation on the original does not reach the copy: the loop makes a new one. */
	assert_int_equal(devwl_node_write(n, DEVWL_FILE_DENY, "c 1:3 rw", 8, NULL), 0);
	assert_int_equal(devwl_node_check(n, DEVWL_DEV_CHAR, 1, 3, DEVWL_ACC_READ), 0);
	assert_int_equal(devwl_node_check(devwl_policy_find(copy, "/"), DEVWL_DEV_CHAR, 1, 3,
					  DEVWL_ACC_READ),
			 1);
	devwl_policy_free(copy);
	devwl_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_serve_node_copy_random),
		cmocka_unit_test(test_serve_node_copy_is_private),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
