/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Learn mode's recorder and advice (common/learn.c) against a fake sysfs and /dev: a
 * device is named by the first identity that resolves back to it within the ceiling
 * (usb:, by-id:), by numbers otherwise or where a name would reach past the ceiling;
 * what the ceiling refused is told and never advised; the advice loads.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "devwl.h"
#include "faketree.h"
#include "fileio.h"
#include "learn.h"
#include "policysel.h"

static char warned[4096];

#define USB "devices/pci0000:00/0000:00:14.0/usb1/1-1"

static int build_tree(void **state)
{
	char tmpl[] = "/tmp/devwl-learn-XXXXXX";

	(void)state;
	tree_make(tmpl);
	/* An FTDI adapter (189:1) and its tty (188:0). */
	device(USB, "char", "189:1", "usb");
	put("sys/" USB "/idVendor", "0403\n");
	put("sys/" USB "/idProduct", "6001\n");
	put("sys/" USB "/serial", "A12345\n");
	device(USB "/1-1:1.0/ttyUSB0/tty/ttyUSB0", "char", "188:0", "tty");
	put("sys/dev/block/.keep", "");
	/* udev's link to a real node of the host (c 1:5), so that stat finds a device. */
	link_to("dev/serial/by-id/zero-port0", "!/dev/zero");
	return 0;
}

static void note(void *userdata, const char *msg)
{
	(void)userdata;
	strncat(warned, msg, sizeof(warned) - strlen(warned) - 2);
	strcat(warned, "\n");
}

static void record(struct learn *l, const struct selector_env *env, int type, uint32_t major,
		   uint32_t minor, int access, enum devwl_verdict verdict, const char *comm)
{
	struct devwl_event ev = {.syscall = "openat",
				 .type = type,
				 .major = major,
				 .minor = minor,
				 .access = access,
				 .verdict = verdict};
	struct learn_program prog = {0};

	snprintf(prog.comm, sizeof(prog.comm), "%s", comm);
	snprintf(prog.exe, sizeof(prog.exe), "/usr/bin/%s", comm);
	assert_int_equal(learn_record(l, &ev, &prog, env), 0);
}

/* The advice for /ci/job under a ceiling node holding rules (one per line). */
static char *advise(const struct learn *l, const struct selector_env *env, const char *rules)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *ceiling;
	char *json = NULL;

	assert_non_null(p);
	assert_int_equal(devwl_policy_mkdir(p, "/ci"), 0);
	ceiling = devwl_policy_find(p, "/ci");
	assert_int_equal(devwl_node_write(ceiling, DEVWL_FILE_DENY, "a", 1, NULL), 0);
	for (const char *r = rules; *r;) {
		size_t n = strcspn(r, "\n");

		assert_int_equal(devwl_node_write(ceiling, DEVWL_FILE_ALLOW, r, n, NULL), 0);
		r += n + (r[n] == '\n');
	}
	warned[0] = '\0';
	assert_int_equal(learn_advise(l, p, ceiling, "/ci/job", env, note, NULL, &json), 0);
	/* The check node is gone: the ceiling has no child left. */
	assert_null(devwl_policy_find(p, "/ci/.devwl-learn-check"));
	devwl_policy_free(p);
	return json;
}

static void expect_in(const char *json, const char *part)
{
	if (!strstr(json, part))
		fail_msg("no '%s' in\n%s", part, json);
}

static void test_learn_advise_names(void **state)
{
	struct selector_env env = {.sysfs = sysfs, .udev = udev, .dev = dev};
	struct learn *l = learn_new();
	char *json;

	(void)state;
	assert_non_null(l);
	record(l, &env, DEVWL_DEV_CHAR, 188, 0, DEVWL_ACC_READ, DEVWL_VERDICT_ALLOW, "minicom");
	record(l, &env, DEVWL_DEV_CHAR, 188, 0, DEVWL_ACC_READ | DEVWL_ACC_WRITE,
	       DEVWL_VERDICT_ALLOW, "minicom");
	record(l, &env, DEVWL_DEV_CHAR, 1, 5, DEVWL_ACC_READ, DEVWL_VERDICT_ALLOW, "head");
	record(l, &env, DEVWL_DEV_CHAR, 10, 250, DEVWL_ACC_WRITE, DEVWL_VERDICT_ERROR, "tool");
	record(l, &env, DEVWL_DEV_CHAR, 10, 200, DEVWL_ACC_READ, DEVWL_VERDICT_DENY, "tun");
	/* Not a device: not recorded. */
	record(l, &env, 0, 0, 0, DEVWL_ACC_READ, DEVWL_VERDICT_CONTINUE, "cat");
	assert_int_equal(learn_count(l), 4);

	/* Within a ceiling that holds the adapter too: identities. */
	json = advise(l, &env, "c 188:* rw\nc 189:* rw\nc 1:5 r\nc 10:* rw");
	expect_in(json, "\"path\": \"/ci\"");
	expect_in(json, "\"path\": \"/ci/job\"");
	/* Plain rules first, then the selectors, each with the union of its access. */
	expect_in(json, "\"deny a\",\n        \"allow c 10:250 w\",\n        \"allow "
			"by-id:zero-port0 r\",\n"
			"        \"allow usb:0403:6001:A12345 rw\"");
	expect_in(json,
		  "\"allow usb:0403:6001:A12345 rw\": \"openat r by minicom (/usr/bin/minicom); "
		  "openat rw by minicom (/usr/bin/minicom) (c 188:0)\"");
	expect_in(json, "\"allow c 10:250 w\": \"openat w by tool (/usr/bin/tool)\"");
	/* Refused by the ceiling: told, never advised. */
	assert_null(strstr(json, "10:200"));
	assert_non_null(strstr(warned, "c 10:200 r (openat r (refused) by tun (/usr/bin/tun)): "
				       "refused by the ceiling, not learned"));
	/* The advice loads, its selector rules taken out as every tool takes them. */
	{
		struct devwl_policy *p = NULL;
		struct policysel ps = {0};
		char *text = NULL;

		assert_int_equal(policysel_extract(json, "advice", &text, &ps, NULL), 0);
		assert_int_equal(ps.n, 2);
		assert_int_equal(devwl_policy_load_string(text, "advice", &p, NULL), 0);
		assert_int_equal(devwl_node_check(devwl_policy_find(p, "/ci/job"), DEVWL_DEV_CHAR,
						  10, 250, DEVWL_ACC_WRITE),
				 1);
		assert_int_equal(devwl_node_check(devwl_policy_find(p, "/ci/job"), DEVWL_DEV_CHAR,
						  10, 200, DEVWL_ACC_READ),
				 0);
		devwl_policy_free(p);
		policysel_clear(&ps);
		free(text);
	}
	free(json);

	/* A ceiling without the adapter itself: usb: would name it too, so numbers. */
	json = advise(l, &env, "c 188:* rw\nc 1:5 r\nc 10:* rw");
	expect_in(json, "\"allow c 188:0 rw\"");
	expect_in(json, "usb:0403:6001:A12345 rw names more than the ceiling allows");
	assert_null(strstr(json, "\"allow usb:"));
	free(json);
	learn_free(l);
}

static void test_learn_advise_nothing(void **state)
{
	struct learn *l = learn_new();
	char *json;

	(void)state;
	json = advise(l, NULL, "c 1:3 rw");
	expect_in(json, "\"rules\": [\n        \"deny a\"\n      ]");
	assert_null(strstr(json, "\"why\""));
	free(json);
	learn_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_learn_advise_names),
		cmocka_unit_test(test_learn_advise_nothing),
	};

	return cmocka_run_group_tests(tests, build_tree, remove_tree);
}
