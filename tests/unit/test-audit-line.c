/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Audit records (common/audit-line.c): the mode record of devwl-run and devwld. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "audit-line.h"

static void expect_mode(const struct audit_mode *m, const char *want)
{
	char buf[AUDIT_LINE_SMALL];
	int n = audit_mode_format(m, buf, sizeof(buf));

	if (n < 0 || strcmp(buf, want) != 0)
		fail_msg("formatted %d '%s', want '%s'", n, n < 0 ? "" : buf, want);
	assert_int_equal(n, (int)strlen(want));
}

/* devwld's: the container, its node, the cgroup it programmed, or why it did not. */
static void test_audit_mode_format_devwld(void **state)
{
	(void)state;
	expect_mode(
		&(struct audit_mode){.container = "c1",
				     .node = "/containers/c1",
				     .mode = "kernel-v2",
				     .cgroup = "/sys/fs/cgroup/c1",
				     .version = 2,
				     .size = 42},
		"{\"event\":\"mode\",\"container\":\"c1\",\"node\":\"/containers/c1\","
		"\"mode\":\"kernel-v2\",\"cgroup\":\"/sys/fs/cgroup/c1\",\"instructions\":42}\n");
	/* Ids, nodes and reasons are JSON strings, whatever they hold. */
	expect_mode(
		&(struct audit_mode){.container = "a\"b\\c",
				     .node = "/x\n\xff",
				     .mode = "unprogrammed",
				     .reason = "its cgroup \"/\" is not its own"},
		"{\"event\":\"mode\",\"container\":\"a\\\"b\\\\c\",\"node\":\"/x\\u000a\\ufffd\","
		"\"mode\":\"unprogrammed\",\"reason\":\"its cgroup \\\"/\\\" is not its "
		"own\"}\n");
}

/* devwl-run's: the mode, why, the cgroup version and its count; a warning with a pid. */
static void test_audit_mode_format_run(void **state)
{
	(void)state;
	expect_mode(&(struct audit_mode){.mode = "authoritative",
					 .reason = "asked for",
					 .cgroup = "v1",
					 .version = 1,
					 .size = 7},
		    "{\"event\":\"mode\",\"mode\":\"authoritative\",\"reason\":\"asked for\","
		    "\"cgroup\":\"v1\",\"writes\":7}\n");
	expect_mode(&(struct audit_mode){.mode = "authoritative", .reason = "in a user namespace"},
		    "{\"event\":\"mode\",\"mode\":\"authoritative\",\"reason\":\"in a user "
		    "namespace\"}\n");
	expect_mode(
		&(struct audit_mode){.mode = "kernel", .warning = "node made", .pid = 12},
		"{\"event\":\"mode\",\"mode\":\"kernel\",\"warning\":\"node made\",\"pid\":12}\n");
}

static void test_audit_mode_format_too_small(void **state)
{
	char buf[16];

	(void)state;
	assert_int_equal(
		audit_mode_format(&(struct audit_mode){.mode = "authoritative"}, buf, sizeof(buf)),
		-ENOSPC);
	assert_int_equal(audit_mode_format(&(struct audit_mode){.mode = "x"}, buf, 0), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_audit_mode_format_devwld),
		cmocka_unit_test(test_audit_mode_format_run),
		cmocka_unit_test(test_audit_mode_format_too_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
