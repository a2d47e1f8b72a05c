/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What devwlctl says when devwld cannot be reached (tools/ctlmsg.c): which socket it
 * tried and where that path came from, and for each cause what to do.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctlmsg.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ctl_socket_pick_order),
		cmocka_unit_test(test_ctl_socket_error_not_running),
		cmocka_unit_test(test_ctl_socket_error_permission),
		cmocka_unit_test(test_ctl_socket_error_other),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
