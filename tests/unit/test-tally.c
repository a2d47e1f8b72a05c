/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The metrics' decision series (supervisor/core/tally.c): the subtree label never
 * carries a container id, whatever --metrics-depth, and a container's own node's series
 * go with it.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "audit.h"

#define ID "4f1c2a9be07d1111111111111111111111111111111111111111111111111111"

static size_t len(const char *path, unsigned int depth, const char *id)
{
	return tally_subtree_len(path, depth, id);
}

static void test_tally_subtree_len_no_id(void **state)
{
	(void)state;
	/* The default template at the default depth: "/containers", not its id. */
	assert_int_equal(len("/containers/" ID, 2, ID), strlen("/containers"));
	assert_int_equal(len("/containers/" ID, 16, ID), strlen("/containers"));
	/* A template that puts the id inside a component ("ctr-{id}"). */
	assert_int_equal(len("/lab/ctr-" ID "/x", 3, ID), strlen("/lab"));
	/* An attach's own node, NODE/ID, and an id at the top: "/". */
	assert_int_equal(len("/k8s/prod/" ID, 3, ID), strlen("/k8s/prod"));
	assert_int_equal(len("/" ID, 2, ID), 1);
	/* Kubernetes names are no ids; depth bounds them as before. */
	assert_int_equal(len("/k8s/prod/db-0/db", 2, ID), strlen("/k8s/prod"));
	assert_int_equal(len("/k8s/prod/db-0/db", 0, ID), 1);
	/* A short id counts only as a whole component: "a" is in many names. */
	assert_int_equal(len("/lab/a", 2, "a"), strlen("/lab"));
	assert_int_equal(len("/lab/data", 2, "a"), strlen("/lab/data"));
	assert_int_equal(len("/lab/data", 2, NULL), strlen("/lab/data"));
}

static struct audit a;

static void tally(const char *path, const char *id)
{
	struct devwl_event ev = {.syscall = "openat", .verdict = DEVWL_VERDICT_ALLOW};

	pthread_mutex_lock(&a.lock);
	tally_event(&a, path, id, &ev);
	pthread_mutex_unlock(&a.lock);
}

static void test_tally_event_series(void **state)
{
	char id[65];

	(void)state;
	pthread_mutex_init(&a.lock, NULL);
	a.depth = 4;
	/* A thousand containers of the default template: one series. */
	for (int i = 0; i < 1000; i++) {
		snprintf(id, sizeof(id), "%064d", i);
		char path[80];

		snprintf(path, sizeof(path), "/containers/%s", id);
		tally(path, id);
	}
	assert_int_equal(a.nseries, 1);
	assert_string_equal(a.series[0].subtree, "/containers");
	assert_int_equal(a.series[0].n, 1000);
	/* A Kubernetes container's own node at depth 4, then gone: its series with it. */
	tally("/k8s/prod/db-0/db", ID);
	tally("/k8s/prod/web-0/web", "abcdefabcdef9999");
	assert_int_equal(a.nseries, 3);
	tally_forget(&a, "/k8s/prod/db-0/db");
	assert_int_equal(a.nseries, 2);
	for (size_t i = 0; i < a.nseries; i++)
		assert_string_not_equal(a.series[i].subtree, "/k8s/prod/db-0/db");
	tally_clear(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tally_subtree_len_no_id),
		cmocka_unit_test(test_tally_event_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
