/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What devwlctl says (tools/ctlmsg.c) when devwld cannot be reached: which socket it
 * tried and where that path came from, and for each cause what to do; and the lines of
 * devwlctl events for people, each kind of record column by column (the oci tests read
 * --json; tests/oci/75-events.sh checks one decision's line end to end). And the verbs of
 * the control protocol (common/ctlverb.c): how a line is taken, and every devwlctl
 * command in devwlctl --help and devwlctl(1).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctlmsg.h"
#include "ctlverb.h"
#include "docpage.h"

static void test_ctl_socket_pick_order(void **state)
{
	enum socket_origin o = SOCKET_ENV;

	(void)state;
	assert_string_equal(ctl_socket_pick("/a.sock", "/b.sock", &o), "/a.sock");
	assert_int_equal(o, SOCKET_OPTION);
	assert_string_equal(ctl_socket_pick(NULL, "/b.sock", &o), "/b.sock");
	assert_int_equal(o, SOCKET_ENV);
	/* An empty DEVWL_SOCKET is no path: the default, as if unset. */
	assert_string_equal(ctl_socket_pick(NULL, "", &o), "/run/devwl/control.sock");
	assert_int_equal(o, SOCKET_DEFAULT);
	assert_string_equal(ctl_socket_pick(NULL, NULL, &o), "/run/devwl/control.sock");
	assert_int_equal(o, SOCKET_DEFAULT);
}

static void test_ctl_socket_error_not_running(void **state)
{
	char buf[512];

	(void)state;
	ctl_socket_error(-ENOENT, "/run/devwl/control.sock", SOCKET_DEFAULT, buf, sizeof(buf));
	assert_non_null(strstr(buf, "cannot reach devwld at /run/devwl/control.sock"));
	assert_non_null(strstr(buf, "ENOENT"));
	assert_non_null(strstr(buf, "is devwld running?"));
	assert_non_null(strstr(buf, "--socket PATH or DEVWL_SOCKET=PATH"));
	ctl_socket_error(-ECONNREFUSED, "/tmp/c.sock", SOCKET_ENV, buf, sizeof(buf));
	assert_non_null(strstr(buf, "/tmp/c.sock (from DEVWL_SOCKET)"));
	assert_non_null(strstr(buf, "ECONNREFUSED: is devwld running?"));
	ctl_socket_error(-ENOENT, "/tmp/c.sock", SOCKET_OPTION, buf, sizeof(buf));
	assert_non_null(strstr(buf, "(given with --socket)"));
}

static void test_ctl_socket_error_permission(void **state)
{
	char buf[512];

	(void)state;
	ctl_socket_error(-EACCES, "/run/devwl/control.sock", SOCKET_DEFAULT, buf, sizeof(buf));
	assert_non_null(
		strstr(buf, "EACCES: the control socket is root's alone: run devwlctl as root"));
	ctl_socket_error(-ECONNRESET, "/x", SOCKET_OPTION, buf, sizeof(buf));
	assert_non_null(strstr(buf, "it answers root alone"));
}

static void test_ctl_socket_error_other(void **state)
{
	char buf[512], small[24];

	(void)state;
	ctl_socket_error(-EIO, "/x", SOCKET_OPTION, buf, sizeof(buf));
	assert_string_equal(buf, "devwlctl: /x (given with --socket): EIO");
	/* Truncated, never overrun. */
	assert_ptr_equal(ctl_socket_error(-ENOENT, "/x", SOCKET_DEFAULT, small, sizeof(small)),
			 small);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* ctl_event_print() of the JSON line json, compared with want. */
static void expect_event(const char *json, const char *want)
{
	struct json_object *obj = json_tokener_parse(json);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(obj);
	assert_non_null(f);
	ctl_event_print(f, obj);
	fclose(f);
	json_object_put(obj);
	if (strcmp(text, want))
		fail_msg("printed '%s', want '%s'", text, want);
	free(text);
}

#define ID64 "4f1c2a9be07d1111111111111111111111111111111111111111111111111111"

static void test_ctl_event_print_decision(void **state)
{
	(void)state;
	expect_event("{\"time\":\"2026-12-03T16:54:01.123456789Z\",\"container\":\"ev-1\","
		     "\"node\":\"/containers/ev-1\",\"pid\":42,\"tid\":43,\"syscall\":\"mknodat\","
		     "\"path\":\"/tmp/mem\",\"device\":\"c 1:1\",\"access\":\"m\","
		     "\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"policy\","
		     "\"rule\":\"no rule allows it\",\"handling_ns\":9}",
		     "16:54:01.123 ev-1 /containers/ev-1 42 mknodat /tmp/mem c 1:1 m deny EPERM "
		     "(policy: no rule allows it)\n");
	/* A long id as 12 characters, in its node too; null fields as "-" (a kernel denial). */
	expect_event("{\"time\":\"2026-12-03T16:54:01.123456789Z\",\"container\":\"" ID64 "\","
		     "\"node\":\"/containers/" ID64 "\",\"pid\":null,\"tid\":0,\"syscall\":null,"
		     "\"path\":null,\"device\":\"c 1:7\",\"access\":\"r\",\"decision\":\"deny\","
		     "\"errno\":\"EPERM\",\"reason\":\"kernel device program (kernel mode)\"}",
		     "16:54:01.123 4f1c2a9be07d /containers/{id} - - - c 1:7 r deny EPERM "
		     "(kernel device program (kernel mode))\n");
	/* A plain allow: nothing after the decision. */
	expect_event(
		"{\"time\":\"2026-12-03T16:54:01.123456789Z\",\"container\":\"c\",\"node\":\"/n\","
		"\"pid\":1,\"syscall\":\"openat\",\"path\":\"/dev/null\",\"device\":\"c 1:3\","
		"\"access\":\"w\",\"decision\":\"allow\"}",
		"16:54:01.123 c /n 1 openat /dev/null c 1:3 w allow\n");
}

/* A drift record: the cgroup, what changed and what devwld did, in one line. */
static void test_ctl_event_print_drift(void **state)
{
	(void)state;
	expect_event("{\"time\":\"2026-12-07T04:40:00.123456789Z\",\"event\":\"drift\","
		     "\"container\":\"k\",\"node\":\"/km\",\"cgroup\":\"/sys/fs/cgroup/k\","
		     "\"version\":1,\"changed\":[\"rules\"],"
		     "\"what\":\"missing c 1:5 rwm; extra c 1:7 rwm\",\"result\":\"repaired\","
		     "\"repairs\":1}",
		     "04:40:00.123 k /km drift v1 /sys/fs/cgroup/k: missing c 1:5 rwm; extra c 1:7 "
		     "rwm (repaired, repairs 1)\n");
}

static void test_ctl_event_print_record(void **state)
{
	(void)state;
	expect_event("{\"time\":\"2026-12-03T16:54:01.123456789Z\",\"event\":\"attach\","
		     "\"container\":\"a\",\"node\":\"/lab/a\",\"path\":\"/dev/loop3\","
		     "\"device\":\"b 7:3\",\"access\":\"rw\",\"result\":\"attached\"}",
		     "16:54:01.123 a /lab/a attach /dev/loop3 b 7:3 rw attached\n");
	expect_event(
		"{\"time\":\"2026-12-03T16:54:01.123456789Z\",\"event\":\"attach\","
		"\"container\":\"a\",\"node\":\"/lab/a\",\"path\":\"/dev/xdisk\","
		"\"device\":\"b 7:4\",\"old_device\":\"b 7:3\",\"access\":\"rw\","
		"\"result\":\"back\",\"selector\":\"loop:/a.img\",\"cause\":\"uevent add\"}",
		"16:54:01.123 a /lab/a attach /dev/xdisk b 7:4 rw back by loop:/a.img, was b 7:3 "
		"[uevent add]\n");
}

static void test_ctl_event_print_selector(void **state)
{
	(void)state;
	expect_event(
		"{\"time\":\"2026-12-03T16:54:01.123456789Z\",\"event\":\"selector\","
		"\"container\":\"a\",\"node\":\"/lab/a\",\"binding\":\"allow\","
		"\"selector\":\"cdi:test.devwl.org/disk=d0\",\"revoked\":[],"
		"\"granted\":[\"b 7:0 rw\"],\"cause\":\"cdi annotation\"}",
		"16:54:01.123 a selector /lab/a allow cdi:test.devwl.org/disk=d0: granted b 7:0 rw "
		"(cdi annotation)\n");
}

/* A line's verb and whether its arguments fit: the word then a space or the end. */
static void test_ctl_verb_of(void **state)
{
	static const struct {
		const char *line;
		enum ctl_verb v;
		bool fits;
	} cases[] = {
		{"containers", CTL_CONTAINERS, true},
		{"containers x", CTL_CONTAINERS, false},
		{"containersx", CTL_VERB_COUNT, false},
		{"events", CTL_EVENTS, true},
		{"events all container=a", CTL_EVENTS, true},
		{"attach", CTL_ATTACH, false},
		{"attach ", CTL_ATTACH, false},
		{"attach {}", CTL_ATTACH, true},
		{"mkdir /a", CTL_MKDIR, true},
		{"mknod_needs_cap /a false", CTL_MKNOD_CAP, true},
		{"mknod-cap /a false", CTL_VERB_COUNT, false},
		{"hook-create {}", CTL_HOOK_CREATE, true},
		{"", CTL_VERB_COUNT, false},
		{" stats", CTL_VERB_COUNT, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].line), a = 99;
		enum ctl_verb v = ctl_verb_of(cases[i].line, len, &a);

		if (v != cases[i].v || ctl_verb_fits(v, a, len) != cases[i].fits)
			fail_msg("\"%s\": verb %d, fits %d", cases[i].line, v,
				 ctl_verb_fits(v, a, len));
	}
	assert_int_equal(ctl_verb_by_word("mknod-cap"), CTL_MKNOD_CAP);
	assert_int_equal(ctl_verb_by_word("devices"), CTL_VERB_COUNT);
}

/* Every devwlctl command of the table in its --help and its manual page, and every row
 * complete: a verb added without its words fails here. */
static void test_ctl_verbs_documented(void **state)
{
	char *help = NULL, *page = doc_page("doc/devwlctl.1");
	size_t help_len = 0;
	FILE *f = open_memstream(&help, &help_len);

	(void)state;
	assert_non_null(f);
	ctl_usage(f);
	assert_int_equal(fclose(f), 0);
	for (size_t v = 0; v < CTL_VERB_COUNT; v++) {
		const char *w = ctl_verbs[v].word;
		char want[64];
		bool entry = false;

		if (!ctl_verbs[v].wire)
			fail_msg("verb %zu has no row in ctl_verbs[]", v);
		if (!w)
			continue;
		/* "  stats   ..." or "... | deny NODE RULE" in the help. */
		snprintf(want, sizeof(want), " %s ", w);
		if (!strstr(help, want))
			fail_msg("devwlctl --help does not name %s", w);
		/* An entry of its own under COMMANDS: ".B stats", ".BI deny \" NODE...". */
		for (const char *m = ".B \0.BI \0.BR \0"; *m; m += strlen(m) + 1) {
			snprintf(want, sizeof(want), "\n%s%s ", m, w);
			entry |= strstr(page, want) != NULL;
			snprintf(want, sizeof(want), "\n%s%s\n", m, w);
			entry |= strstr(page, want) != NULL;
		}
		if (!entry)
			fail_msg("devwlctl(1) has no entry for %s", w);
	}
	free(help);
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ctl_socket_pick_order),
		cmocka_unit_test(test_ctl_socket_error_not_running),
		cmocka_unit_test(test_ctl_socket_error_permission),
		cmocka_unit_test(test_ctl_socket_error_other),
		cmocka_unit_test(test_ctl_event_print_decision),
		cmocka_unit_test(test_ctl_event_print_record),
		cmocka_unit_test(test_ctl_event_print_drift),
		cmocka_unit_test(test_ctl_event_print_selector),
		cmocka_unit_test(test_ctl_verb_of),
		cmocka_unit_test(test_ctl_verbs_documented),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
