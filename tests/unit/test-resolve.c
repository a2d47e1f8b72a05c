/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whose container a name means (supervisor/core/resolve.c): a full id, a prefix of one
 * id, a Kubernetes name, always among one owner's containers; unknown and ambiguous
 * names refused, saying why.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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
		cmocka_unit_test(test_resolve_full_id_forms),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
