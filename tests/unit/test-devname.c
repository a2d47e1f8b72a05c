/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Device names (lib/devname.c): paths resolved by stat(2) (the real /dev/null), and
 * char-NAME/block-NAME against a fixed /proc/devices text, so the answers do not depend
 * on the drivers of the machine; then the same names in a policy file and in the batch
 * protocol, and the kernel grammar unchanged beside them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "batch.h"
#include "devwl.h"

/* As a 6.x kernel prints it: pts holds eight majors, loop is a block major only. */
static const char proc_devices[] = "Character devices:\n"
				   "  1 mem\n"
				   "  4 /dev/vc/0\n"
				   "  4 tty\n"
				   "  4 ttyS\n"
				   "  5 /dev/tty\n"
				   "  5 /dev/console\n"
				   "  5 /dev/ptmx\n"
				   " 10 misc\n"
				   "136 pts\n"
				   "137 pts\n"
				   "138 pts\n"
				   "139 pts\n"
				   "140 pts\n"
				   "141 pts\n"
				   "142 pts\n"
				   "143 pts\n"
				   "226 drm\n"
				   "garbage line\n"
				   "\n"
				   "Block devices:\n"
				   "  7 loop\n"
				   "  8 sd\n"
				   " 65 sd\n"
				   "259 blkext\n";

static char *resolve(const char *text, int *ret_r)
{
	struct devwl_rule *rules = NULL;
	struct devwl_error err = {0};
	size_t n = 0;
	char *out = NULL;
	size_t size = 0;
	FILE *f = NULL;

	*ret_r = devwl_devname_resolve(text, strlen(text), proc_devices, &rules, &n, &err);
	if (*ret_r < 0) {
		assert_int_equal(err.code, *ret_r);
		return strdup(err.msg);
	}
	assert_true(n >= 1);
	f = open_memstream(&out, &size);
	assert_non_null(f);
	for (size_t i = 0; i < n; i++) {
		char s[DEVWL_RULE_STR_MAX];

		assert_true(devwl_rule_format(&rules[i], s, sizeof(s)) > 0);
		fprintf(f, "%s%s", i ? "; " : "", s);
	}
	fclose(f);
	free(rules);
	return out;
}

static void expect(const char *text, const char *want)
{
	int r = 0;
	char *got = resolve(text, &r);

	if (r < 0 || strcmp(got, want) != 0)
		fail_msg("'%s' resolved to '%s' (%d), want '%s'", text, got, r, want);
	free(got);
}

/* Fails with code and a message that holds what. */
static void expect_error(const char *text, int code, const char *what)
{
	int r = 0;
	char *got = resolve(text, &r);

	if (r != code || !strstr(got, what))
		fail_msg("'%s': %d '%s', want %d and a message with '%s'", text, r, got, code,
			 what);
	free(got);
}

static void test_devwl_devname_is_name_only_what_the_kernel_refuses(void **state)
{
	static const char *names[] = {"/dev/null", "  /dev/fuse rw", "char-pts", "block-loop r",
				      "\tchar-x"};
	static const char *rules[] = {"c 1:3 rwm", "a",	    "b 8:* r",	"",	      "ch",
				      "char",	   "block", "dev/null", "c /dev/null"};
	struct devwl_rule rule;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_true(devwl_devname_is_name(names[i], strlen(names[i])));
		/* The kernel refuses every name, so its grammar needs no change. */
		assert_int_equal(devwl_rule_parse(names[i], strlen(names[i]), &rule, NULL),
				 -EINVAL);
	}
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		assert_false(devwl_devname_is_name(rules[i], strlen(rules[i])));
}

static void test_devwl_devname_resolve_path(void **state)
{
	struct stat st;
	char want[64];

	(void)state;
	if (stat("/dev/null", &st) < 0 || !S_ISCHR(st.st_mode))
		skip();
	snprintf(want, sizeof(want), "c %u:%u rwm", major(st.st_rdev), minor(st.st_rdev));
	expect("/dev/null", want);
	snprintf(want, sizeof(want), "c %u:%u r", major(st.st_rdev), minor(st.st_rdev));
	expect("  /dev/null r  ", want);
	snprintf(want, sizeof(want), "c %u:%u rw", major(st.st_rdev), minor(st.st_rdev));
	expect("/dev/null wr", want);
	expect_error("/dev/devwl-no-such-node r", -ENOENT, "/dev/devwl-no-such-node");
	expect_error("/ r", -EINVAL, "not a character or block device");
	expect_error("/dev/null rwx", -EINVAL, "bad access");
	expect_error("/dev/null rr", -EINVAL, "bad access");
	expect_error("/dev/null r w", -EINVAL, "bad access");
}

static void test_devwl_devname_resolve_majors(void **state)
{
	(void)state;
	expect("char-mem", "c 1:* rwm");
	expect("char-pts rw",
	       "c 136:* rw; c 137:* rw; c 138:* rw; c 139:* rw; c 140:* rw; c 141:* rw; "
	       "c 142:* rw; c 143:* rw");
	expect("block-loop r", "b 7:* r");
	/* One major under two names, or a name twice: one rule per major. */
	expect("block-sd m", "b 8:* m; b 65:* m");
	expect("char-tty*", "c 4:* rwm");
	expect("char-/dev/ptmx", "c 5:* rwm");
	/* Each section holds its own type. */
	expect_error("char-loop", -ENOENT, "no character device major named \"loop\"");
	expect_error("block-pts", -ENOENT, "no block device major named \"pts\"");
	expect_error("char-", -EINVAL, "no name");
	expect_error("char-garbage", -ENOENT, "garbage");
	expect_error("char-pts x", -EINVAL, "bad access");
}

static void test_devwl_devname_resolve_bad_input(void **state)
{
	struct devwl_rule *rules = NULL;
	size_t n = 0;
	char *big = malloc(DEVWL_DEVNAME_MAX + 2);

	(void)state;
	assert_int_equal(devwl_devname_resolve("/dev/n\0ull", 10, proc_devices, &rules, &n, NULL),
			 -EINVAL);
	assert_int_equal(devwl_devname_resolve("c 1:3 rwm", 9, proc_devices, &rules, &n, NULL),
			 -EINVAL);
	assert_non_null(big);
	memset(big, 'x', DEVWL_DEVNAME_MAX + 1);
	big[0] = '/';
	big[DEVWL_DEVNAME_MAX + 1] = '\0';
	assert_int_equal(devwl_devname_resolve(big, strlen(big), proc_devices, &rules, &n, NULL),
			 -E2BIG);
	free(big);
	assert_null(rules);
	/* An empty or unterminated /proc/devices resolves nothing, safely. */
	assert_int_equal(devwl_devname_resolve("char-pts", 8, "", &rules, &n, NULL), -ENOENT);
	assert_int_equal(devwl_devname_resolve("char-pts", 8, "Character devices:\n136 pts", &rules,
					       &n, NULL),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(rules[0].major, 136);
	free(rules);
}

/* The real /proc/devices: every Linux has "1 mem". */
static void test_devwl_devname_resolve_real_proc_devices(void **state)
{
	struct devwl_rule *rules = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(devwl_devname_resolve("char-mem r", 10, NULL, &rules, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rules[0].type, DEVWL_DEV_CHAR);
	assert_int_equal(rules[0].major, 1);
	assert_int_equal(rules[0].minor, DEVWL_ANY);
	assert_int_equal(rules[0].access, DEVWL_ACC_READ);
	free(rules);
}

static void test_devwl_policy_load_string_device_names(void **state)
{
	static const char ok[] = "{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"rules\": "
				 "[\"deny a\", \"allow /dev/null rw\", \"allow char-mem r\"]}]}";
	static const char bad[] = "{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"rules\": "
				  "[\"deny a\", \"allow char-devwl-nothing r\"]}]}";
	struct devwl_policy *p = NULL;
	struct devwl_error err = {0};
	char *text = NULL;
	struct stat st;
	char want[96];

	(void)state;
	if (stat("/dev/null", &st) < 0 || !S_ISCHR(st.st_mode))
		skip();
	assert_int_equal(devwl_policy_load_string(ok, "ok.json", &p, &err), 0);
	assert_int_equal(devwl_node_list(devwl_policy_find(p, "/a"), &text), 0);
	snprintf(want, sizeof(want), "c %u:%u rw\nc 1:* r\n", major(st.st_rdev), minor(st.st_rdev));
	assert_string_equal(text, want);
	free(text);
	devwl_policy_free(p);
	p = NULL;
	assert_int_equal(devwl_policy_load_string(bad, "bad.json", &p, &err), -ENOENT);
	assert_null(p);
	/* The error names the file, the rule and the name that did not resolve. */
	assert_non_null(strstr(err.msg, "bad.json"));
	assert_non_null(strstr(err.msg, "\"allow char-devwl-nothing r\""));
	assert_non_null(strstr(err.msg, "no character device major named \"devwl-nothing\""));
}

static void test_batch_exec_device_names(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	static const char *lines[] = {"mkdir /a",
				      "deny /a a",
				      "allow /a char-mem rw",
				      "allow /a char-devwl-nothing r",
				      "allow /a /dev/devwl-nothing",
				      "deny /a char-mem w",
				      "list /a"};

	(void)state;
	assert_non_null(p);
	assert_non_null(out);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		batch_exec(p, lines[i], strlen(lines[i]), out);
	fclose(out);
	assert_string_equal(buf, "ok\nok\nok\n"
				 "error ENOENT: allow \"char-devwl-nothing r\" on /a: "
				 "char-devwl-nothing: /proc/devices lists no character device "
				 "major named \"devwl-nothing\"\n"
				 "error ENOENT: allow \"/dev/devwl-nothing\" on /a: "
				 "/dev/devwl-nothing: No such file or directory\n"
				 "ok\nc 1:* r\n.\n");
	free(buf);
	devwl_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devwl_devname_is_name_only_what_the_kernel_refuses),
		cmocka_unit_test(test_devwl_devname_resolve_path),
		cmocka_unit_test(test_devwl_devname_resolve_majors),
		cmocka_unit_test(test_devwl_devname_resolve_bad_input),
		cmocka_unit_test(test_devwl_devname_resolve_real_proc_devices),
		cmocka_unit_test(test_devwl_policy_load_string_device_names),
		cmocka_unit_test(test_batch_exec_device_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
