/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CDI device names of a container's annotations (supervisor/format/cdinames.c):
 * what is granted, what is refused and why, on values a pod author may write to hurt,
 * and which nodes opt in ("cdi_annotations").
 */
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cdinames.h"

static void add(struct cdi_names *n, const char *value)
{
	assert_int_equal(cdi_names_add("cdi.k8s.io/test", value, n), 0);
}

static void test_cdi_names_add_valid(void **state)
{
	struct cdi_names n = {0};

	(void)state;
	add(&n, "vendor.com/gpu=0");
	add(&n, "nvidia.com/gpu=GPU-1b2c,example.org/net.dev=eth_1,vendor.com/gpu=0");
	assert_int_equal(n.n, 3); /* the repeat is one name */
	assert_string_equal(n.names[0], "vendor.com/gpu=0");
	assert_string_equal(n.names[1], "nvidia.com/gpu=GPU-1b2c");
	assert_string_equal(n.names[2], "example.org/net.dev=eth_1");
	assert_int_equal(n.nbad, 0);
	assert_int_equal(n.nannos, 2);
	cdi_names_clear(&n);
	assert_null(n.names);
}

/* item is refused, and why contains want. */
static void refused(const char *value, const char *item, const char *want)
{
	struct cdi_names n = {0};

	add(&n, value);
	assert_int_equal(n.n, 0);
	assert_int_equal(n.nbad, 1);
	assert_string_equal(n.bad[0].key, "cdi.k8s.io/test");
	assert_string_equal(n.bad[0].item, item);
	if (!strstr(n.bad[0].why, want))
		fail_msg("%s: \"%s\", want \"%s\"", value, n.bad[0].why, want);
	cdi_names_clear(&n);
}

static void test_cdi_names_add_refused(void **state)
{
	(void)state;
	refused("", "", "empty");
	refused("vendor.com/gpu", "vendor.com/gpu", "VENDOR/CLASS=NAME");
	refused("vendor.com=gpu/0", "vendor.com=gpu/0", "VENDOR/CLASS=NAME");
	refused("vendor.com/gpu=*", "vendor.com/gpu=*", "wildcard");
	refused("vendor.com/gpu=", "vendor.com/gpu=", "device name");
	refused("/gpu=0", "/gpu=0", "vendor");
	refused("vendor.com/=0", "vendor.com/=0", "class");
	refused(" vendor.com/gpu=0", " vendor.com/gpu=0", "vendor");
	refused("vendor.com/gpu=0 ", "vendor.com/gpu=0 ", "device name");
	refused("vendor.com/gpu=0/1", "vendor.com/gpu=0/1", "device name");
	refused("vendor.com/gpu=../../x", "vendor.com/gpu=../../x", "device name");
	/* Non-ASCII: refused, and shown as '?' so no log line carries it. */
	refused("v\xc3\xa9ndor.com/gpu=0", "v??ndor.com/gpu=0", "vendor");
	refused("vendor.com/gpu=0\n", "vendor.com/gpu=0?", "device name");
}

static void test_cdi_names_add_hostile(void **state)
{
	struct cdi_names n = {0};
	size_t len = 1 << 20;
	char *big = malloc(len + 1);

	(void)state;
	assert_non_null(big);
	/* A megabyte of commas: a million empty names, a bounded list of refusals. */
	memset(big, ',', len);
	big[len] = '\0';
	add(&n, big);
	assert_int_equal(n.n, 0);
	assert_int_equal(n.nbad, CDI_BAD_MAX);
	assert_int_equal(n.nbad + n.nbad_more, len + 1);
	cdi_names_clear(&n);

	/* One huge name: refused, shown cut. */
	memcpy(big, "vendor.com/gpu=", 15);
	memset(big + 15, 'a', len - 15);
	add(&n, big);
	assert_int_equal(n.n, 0);
	assert_int_equal(n.nbad, 1);
	assert_string_equal(n.bad[0].why, "name too long");
	assert_true(strlen(n.bad[0].item) < 128);
	cdi_names_clear(&n);

	/* Many distinct valid names: CDI_NAMES_MAX granted, the rest refused. */
	{
		char *p = big;

		for (int i = 0; i < CDI_NAMES_MAX + 5; i++)
			p += sprintf(p, "%sv.com/c=d%d", i ? "," : "", i);
	}
	add(&n, big);
	assert_int_equal(n.n, CDI_NAMES_MAX);
	assert_int_equal(n.nbad, 5);
	assert_string_equal(n.bad[0].why, "more CDI devices than devwld grants a container");
	cdi_names_clear(&n);

	/* Good and bad in one value: each judged alone. */
	add(&n, "a.com/b=c,,x,a.com/b=d");
	assert_int_equal(n.n, 2);
	assert_int_equal(n.nbad, 2);
	assert_string_equal(n.names[1], "a.com/b=d");
	cdi_names_clear(&n);
	free(big);
}

static void test_cdi_names_of(void **state)
{
	struct annotation annos[] = {
		{"io.kubernetes.cri.container-name", "gpu"},
		{"cdi.k8s.io/plugin_dev0", "vendor.com/gpu=0"},
		{"cdi.k8s.io/", "vendor.com/gpu=1"},
		{"cdi.k8s.io.evil/x", "vendor.com/gpu=2"},
		{"xcdi.k8s.io/x", "vendor.com/gpu=3"},
	};
	struct oci_state st = {.id = "c1", .annos = annos, .nannos = 5};
	struct oci_state none = {.id = "c2", .annos = annos, .nannos = 1};
	struct cdi_names n;

	(void)state;
	assert_int_equal(cdi_names_of(&st, &n), 0);
	assert_int_equal(n.nannos, 2);
	assert_int_equal(n.n, 1);
	assert_string_equal(n.names[0], "vendor.com/gpu=0");
	/* A key naming nothing after the prefix gets nothing. */
	assert_int_equal(n.nbad, 1);
	assert_string_equal(n.bad[0].key, "cdi.k8s.io/");
	cdi_names_clear(&n);
	assert_int_equal(cdi_names_of(&none, &n), 0);
	assert_int_equal(n.nannos, 0);
	assert_int_equal(n.n, 0);
}

static void optins(const char *json, int want_r, struct cdi_optins *o)
{
	struct json_object *obj = json_tokener_parse(json);
	struct devwl_error err = {0};

	assert_non_null(obj);
	assert_int_equal(cdi_optins_from_json(obj, "p.json", o, &err), want_r);
	if (want_r < 0)
		assert_non_null(strstr(err.msg, "p.json: node 2: \"cdi_annotations\""));
	json_object_put(obj);
}

static void test_cdi_optin(void **state)
{
	struct cdi_optins o = {0};

	(void)state;
	optins("[{\"path\": \"/k8s\", \"cdi_annotations\": true},"
	       " {\"path\": \"/k8s/kube-system\", \"cdi_annotations\": false},"
	       " {\"path\": \"/k8s/kube-system/gpu\", \"cdi_annotations\": true},"
	       " {\"path\": \"/lab\"}]",
	       0, &o);
	assert_int_equal(o.n, 3);
	assert_true(cdi_optin(&o, "/k8s"));
	assert_true(cdi_optin(&o, "/k8s/default/pod/ctr"));
	assert_false(cdi_optin(&o, "/k8s/kube-system"));
	assert_false(cdi_optin(&o, "/k8s/kube-system/pod/ctr"));
	assert_true(cdi_optin(&o, "/k8s/kube-system/gpu/x"));
	assert_false(cdi_optin(&o, "/k8sx/y")); /* a prefix of a name is no ancestor */
	assert_false(cdi_optin(&o, "/lab/x"));
	assert_false(cdi_optin(&o, "/"));
	cdi_optins_clear(&o);

	optins("[{\"path\": \"/\", \"cdi_annotations\": true}]", 0, &o);
	assert_true(cdi_optin(&o, "/any/where"));
	cdi_optins_clear(&o);

	optins("[{\"path\": \"/a\"}, {\"path\": \"/b\", \"cdi_annotations\": 1}]", -EINVAL, &o);
	assert_int_equal(o.n, 0);
	assert_false(cdi_optin(&o, "/b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdi_names_add_valid),
		cmocka_unit_test(test_cdi_names_add_refused),
		cmocka_unit_test(test_cdi_names_add_hostile),
		cmocka_unit_test(test_cdi_names_of),
		cmocka_unit_test(test_cdi_optin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
