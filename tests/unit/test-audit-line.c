/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Audit records (common/audit-line.c): the mode record of devwl-run and devwld, the
 * record of what a kernel-mode device program refused, and a decision's record read once
 * and formatted without reading anything. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit-line.h"
#include "statuswrap.h"
#include "util.h"

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

/* A kernel denial: no call, no path, the device, the reason and the rule of the node. */
static void test_audit_event_of_denial(void **state)
{
	const struct devwl_denial d = {.type = DEVWL_DEV_CHAR,
				       .major = 1,
				       .minor = 11,
				       .access = DEVWL_ACC_READ | DEVWL_ACC_WRITE,
				       .pid = 4242,
				       .tid = 4243};
	struct devwl_policy *p = devwl_policy_new();
	char buf[AUDIT_LINE_SMALL];
	struct audit_decision dec;
	struct devwl_event ev;
	const char *tail;
	int n;

	(void)state;
	assert_non_null(p);
	assert_int_equal(devwl_policy_write(p, "/", DEVWL_FILE_DENY, "c 1:11 w", 8, NULL), 0);
	audit_event_of_denial(&d, &ev);
	assert_int_equal(ev.verdict, DEVWL_VERDICT_DENY);
	assert_int_equal(ev.error, EPERM);
	audit_decision_of(&ev, "ctr", "/", AUDIT_KERNEL_REASON, devwl_policy_find(p, "/"), &dec);
	assert_non_null(dec.why.rule);
	n = audit_format(&dec, buf, sizeof(buf));
	assert_true(n > 0);
	/* After the time, which changes. */
	tail = strstr(buf, ",\"container\"");
	assert_non_null(tail);
	assert_string_equal(
		tail,
		",\"container\":\"ctr\",\"node\":\"/\",\"pid\":4242,\"tid\":4243,"
		"\"syscall\":null,\"path\":null,\"device\":\"c 1:11\",\"access\":\"rw\","
		"\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"kernel device program "
		"(kernel mode)\",\"rule\":\"deny c 1:11 w\",\"handling_ns\":0}\n");
	devwl_policy_free(p);
}

/*
 * A CONTINUE with a reason names the caller's process, read from its thread; a plain
 * CONTINUE (--audit-all) keeps pid null rather than read /proc for every file opened.
 */
static void test_audit_format_continue_pid(void **state)
{
	struct devwl_event ev = {.tid = (int)gettid(),
				 .syscall = "openat",
				 .path = "/f",
				 .access = DEVWL_ACC_READ,
				 .verdict = DEVWL_VERDICT_CONTINUE};
	char buf[AUDIT_LINE_SMALL], want[64];
	struct audit_decision d;

	(void)state;
	snprintf(want, sizeof(want), ",\"pid\":%d,\"tid\":%d,", (int)getpid(), (int)gettid());
	audit_decision_of(&ev, "ctr", "/", "not resolved by devwl", NULL, &d);
	assert_true(audit_format(&d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, want));
	status_opens = 0;
	audit_decision_of(&ev, "ctr", "/", NULL, NULL, &d);
	assert_int_equal(status_opens, 0);
	assert_true(audit_format(&d, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, ",\"pid\":null,"));
}

/*
 * A denial whose event does not name the process (libdevwl read no credentials): the
 * record reads /proc/TID/status once, when it is built, and formatting it again and again
 * (for the file, for each subscriber) reads nothing and gives the same line, time and all.
 */
static void test_audit_decision_of_reads_once(void **state)
{
	struct devwl_event ev = {.tid = (int)gettid(),
				 .syscall = "openat",
				 .path = "/dev/x",
				 .type = DEVWL_DEV_CHAR,
				 .major = 1,
				 .minor = 3,
				 .access = DEVWL_ACC_READ,
				 .verdict = DEVWL_VERDICT_DENY,
				 .error = EPERM};
	char one[AUDIT_LINE_SMALL], two[AUDIT_LINE_SMALL], want[64];
	_cleanup_free_ char *big = NULL;
	const char *line = NULL;
	struct audit_decision d;

	(void)state;
	status_opens = 0;
	audit_decision_of(&ev, "ctr", "/", "policy", NULL, &d);
	assert_int_equal(status_opens, 1);
	assert_true(audit_format(&d, one, sizeof(one)) > 0);
	assert_true(audit_line(&d, two, &big, &line) > 0);
	assert_int_equal(status_opens, 1);
	assert_string_equal(one, line);
	snprintf(want, sizeof(want), ",\"pid\":%d,\"tid\":%d,", (int)getpid(), (int)gettid());
	assert_non_null(strstr(one, want));
	assert_non_null(strstr(one, ",\"access\":\"r\",\"decision\":\"deny\","));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_audit_mode_format_devwld),
		cmocka_unit_test(test_audit_mode_format_run),
		cmocka_unit_test(test_audit_mode_format_too_small),
		cmocka_unit_test(test_audit_event_of_denial),
		cmocka_unit_test(test_audit_format_continue_pid),
		cmocka_unit_test(test_audit_decision_of_reads_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
