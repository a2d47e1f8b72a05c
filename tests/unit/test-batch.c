/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The devwlctl batch protocol (common/batch.c): one command per line in, one result per
 * command out, a malformed line answered "error EINVAL" without ending the session.
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

#include "batch.h"
#include "devwl.h"

/* Run lines (each without its newline) through one session; return everything written. */
static char *session(struct devwl_policy *p, const char *const *lines, const size_t *lens, size_t n)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);

	assert_non_null(out);
	for (size_t i = 0; i < n; i++)
		batch_exec(p, lines[i], lens ? lens[i] : strlen(lines[i]), out);
	assert_int_equal(fclose(out), 0);
	return buf;
}

/*
 * "error ENAME: REASON" lines cut to "error ENAME", in place: the tables below check the
 * errno of each answer; test_batch_exec_reasons checks the reasons.
 */
static char *errnos_only(char *out)
{
	char *w = out;

	for (const char *r = out; *r;) {
		const char *nl = strchrnul(r, '\n');
		size_t n = (size_t)(nl - r);

		if (!strncmp(r, "error ", 6) && memchr(r, ':', n))
			n = (size_t)((const char *)memchr(r, ':', n) - r);
		memmove(w, r, n);
		w += n;
		r = nl;
		if (*r)
			*w++ = *r++;
	}
	*w = '\0';
	return out;
}

static void expect_session(struct devwl_policy *p, const char *const *lines, size_t n,
			   const char *want)
{
	char *got = errnos_only(session(p, lines, NULL, n));

	if (strcmp(got, want) != 0)
		fail_msg("session output:\n%s--- want:\n%s---", got, want);
	free(got);
}

/* One line with explicit length (it may hold NUL bytes). */
static void expect_line(struct devwl_policy *p, const char *line, size_t len, const char *want)
{
	char *got = errnos_only(session(p, &line, &len, 1));

	if (strcmp(got, want) != 0)
		fail_msg("'%.*s' answered '%s', want '%s'", (int)len, line, got, want);
	free(got);
}

#define LINE(s) s, sizeof(s) - 1
#define N(a)	(sizeof(a) / sizeof((a)[0]))

static void test_batch_exec_ok_and_errors(void **state)
{
	static const char *const lines[] = {
		"mkdir /a",	      "mkdir /a",
		"mkdir /x/y",	      "mkdir /a/b",
		"rmdir /a",	      "rmdir /",
		"rmdir /nope",	      "mkdir bad",
		"deny /a/b a",	      "allow /a/b c 1:3 r",
		"mkdir /a/b/c",	      "allow /a/b/c a",
		"allow /a/b a",	      "rmdir /a/b/c",
		"deny /a a",	      "allow /nope c 1:3 r",
		"deny / c 1:3 rwmx",  "allow /a/b c 1:3 r",
		"allow / c 4097:1 q", "rmdir /a/b",
		"rmdir /a",
	};
	struct devwl_policy *p = devwl_policy_new();

	(void)state;
	assert_non_null(p);
	expect_session(p, lines, N(lines),
		       "ok\n"
		       "error EEXIST\n"
		       "error ENOENT\n"
		       "ok\n"
		       "error EBUSY\n"
		       "error EBUSY\n"
		       "error ENOENT\n"
		       "error EINVAL\n"
		       "ok\n"
		       "ok\n"
		       "ok\n"
		       /* allow a under a DENY parent; then on a node with children */
		       "error EPERM\n"
		       "error EINVAL\n"
		       "ok\n"
		       "error EINVAL\n"
		       "error ENOENT\n"
		       "ok\n"
		       /* the deny on / took c 1:3 r away from /a/b too */
		       "error EPERM\n"
		       "error EINVAL\n"
		       "ok\n"
		       "ok\n");
	devwl_policy_free(p);
}

static void test_batch_exec_list_show(void **state)
{
	static const char *const lines[] = {
		"list /",
		"show /",
		"mkdir /n",
		"deny /n a",
		"list /n",
		"show /n",
		"allow /n c 1:3 rw",
		"allow /n b *:* m",
		"list /n",
		"show /n",
		"list /missing",
		"show /missing",
		"deny / c 9:9 w",
		"show /",
		"list /n extra",
		"show",
		"list /n/",
		"check /n/.. c 1 3 r",
	};
	struct devwl_policy *p = devwl_policy_new();

	(void)state;
	assert_non_null(p);
	expect_session(p, lines, N(lines),
		       "a *:* rwm\n.\n"
		       "behavior allow\n.\n"
		       "ok\n"
		       "ok\n"
		       /* a DENY node without exceptions: the terminator alone */
		       ".\n"
		       "behavior deny\n.\n"
		       "ok\n"
		       "ok\n"
		       "c 1:3 rw\nb *:* m\n.\n"
		       "behavior deny\nallow c 1:3 rw\nallow b *:* m\n.\n"
		       "error ENOENT\n"
		       "error ENOENT\n"
		       "ok\n"
		       "behavior allow\ndeny c 9:9 w\n.\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       /* malformed node paths are EINVAL for every command */
		       "error EINVAL\n"
		       "error EINVAL\n");
	devwl_policy_free(p);
}

static void test_batch_exec_check(void **state)
{
	static const char *const lines[] = {
		"mkdir /d",
		"deny /d a",
		"allow /d c 1:3 rw",
		"check /d c 1 3 r",
		"check /d c 1 3 rw",
		"check /d c 1 3 wr",
		"check /d c 1 3 rwm",
		"check /d c 1 3 m",
		"check /d b 1 3 r",
		"check /d c 1 3 -",
		"check /d c 1 4 -",
		"check / c 1 4 -",
		"check / b 8 0 rwm",
		"check /d c 4294967295 3 r",
		/* malformed */
		"check /d c 4294967296 3 r",
		"check /d c -1 3 r",
		"check /d c * 3 r",
		"check /d a 1 3 r",
		"check /d c 1 3 x",
		"check /d c 1 3 ",
		"check /d c 1 3",
		"check /d c 1 3 r extra",
		"check /d c  1 3 r",
		"check /d c 1 3 --",
		"check /d c 0x1 3 r",
		"check /d",
		"check /missing c 1 3 r",
	};
	struct devwl_policy *p = devwl_policy_new();

	(void)state;
	assert_non_null(p);
	expect_session(p, lines, N(lines),
		       "ok\nok\nok\n"
		       "allow\n"
		       "allow\n"
		       "allow\n"
		       "deny\n"
		       "deny\n"
		       "deny\n"
		       /* "-" is access(F_OK): named by an exception, or an ALLOW node */
		       "allow\n"
		       "deny\n"
		       "allow\n"
		       "allow\n"
		       "deny\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error ENOENT\n");
	devwl_policy_free(p);
}

/* RULE escapes: each decoded byte reaches the grammar as the kernel would see it. */
static void test_batch_exec_rule_escapes(void **state)
{
	struct devwl_policy *p = devwl_policy_new();

	(void)state;
	assert_non_null(p);
	expect_line(p, LINE("mkdir /e"), "ok\n");
	expect_line(p, LINE("deny /e a"), "ok\n");
	/* \t, \v, \f, \r are whitespace to the kernel: separators. */
	expect_line(p, LINE("allow /e c\\t1:1\\vr"), "ok\n");
	expect_line(p, LINE("allow /e c\\f1:2\\rw"), "ok\n");
	/* \n: only the first line counts, and it may end the access field. */
	expect_line(p, LINE("allow /e c 1:3 m\\nc 9:9 rwm"), "ok\n");
	/* \0: the write ends there. */
	expect_line(p, LINE("allow /e c 1:4 r\\0w"), "ok\n");
	/* \xHH, either case: 0xa0 is kernel whitespace, "\x63" is 'c'. */
	expect_line(p, LINE("allow /e \\xa0\\x63 1:5 w\\xA0"), "ok\n");
	/* \\ is a backslash, which the grammar refuses. */
	expect_line(p, LINE("allow /e c 1:6 \\\\"), "error EINVAL\n");
	expect_line(p, LINE("list /e"), "c 1:1 r\nc 1:2 w\nc 1:3 m\nc 1:4 r\nc 1:5 w\n.\n");
	/* Bad escapes: unknown letter, short or non-hex \x, a trailing backslash. */
	expect_line(p, LINE("allow /e c 1:7 \\q"), "error EINVAL\n");
	expect_line(p, LINE("allow /e c 1:7 \\x4"), "error EINVAL\n");
	expect_line(p, LINE("allow /e c 1:7 \\xg0"), "error EINVAL\n");
	expect_line(p, LINE("allow /e c 1:7 r\\"), "error EINVAL\n");
	/* A raw NUL byte in RULE ends the write like \0. */
	expect_line(p, LINE("allow /e c 1:8 r\0garbage"), "ok\n");
	expect_line(p, LINE("list /e"),
		    "c 1:1 r\nc 1:2 w\nc 1:3 m\nc 1:4 r\nc 1:5 w\nc 1:8 r\n.\n");
	devwl_policy_free(p);
}

static void test_batch_unescape_all(void **state)
{
	static const char in[] = "a\\n\\t\\r\\v\\f\\0\\\\\\x00\\xff\\x7Fz";
	static const char want[] = "a\n\t\r\v\f\0\\\0\xff\x7fz";
	char out[sizeof(in)];

	(void)state;
	assert_int_equal(batch_unescape(in, sizeof(in) - 1, out), sizeof(want) - 1);
	assert_memory_equal(out, want, sizeof(want) - 1);
	assert_int_equal(batch_unescape("", 0, out), 0);
	assert_int_equal(batch_unescape("\\", 1, out), -EINVAL);
	assert_int_equal(batch_unescape("\\x1", 3, out), -EINVAL);
	assert_int_equal(batch_unescape("\\e", 2, out), -EINVAL);
	/* The length bounds the input: an escape cut by it is incomplete. */
	assert_int_equal(batch_unescape("\\x41", 3, out), -EINVAL);
	assert_int_equal(batch_unescape("\\x41", 4, out), 1);
	assert_int_equal(out[0], 'A');
}

/* batch_escape() of s[0..len): one line that batch_unescape() reads back to the same bytes. */
static void expect_round_trip(const char *s, size_t len)
{
	char *esc = NULL, *back = NULL;
	size_t esc_len = 0;
	FILE *f = open_memstream(&esc, &esc_len);

	assert_non_null(f);
	batch_escape(f, s, len);
	assert_int_equal(fclose(f), 0);
	for (size_t i = 0; i < esc_len; i++)
		if ((unsigned char)esc[i] < 0x20 || esc[i] == 0x7f)
			fail_msg("escaped '%.*s' holds byte 0x%02x at %zu", (int)len, s,
				 (unsigned char)esc[i], i);
	back = malloc(esc_len + 1);
	assert_non_null(back);
	assert_int_equal(batch_unescape(esc, esc_len, back), (int)len);
	assert_memory_equal(back, s, len);
	free(back);
	free(esc);
}

static void test_batch_escape_round_trip(void **state)
{
	static const char *const hostile[] = {
		"",
		"c 1:3 rwm",
		"\\",
		"\\\\",
		"\\x41",
		"\\x4",
		"\\n",
		"c 1:3 r\nallow / a",
		"trailing backslash \\",
		"\r\t\v\f\x01\x1b[2J\x7f\x80\xa0\xff",
	};
	char every[256];

	(void)state;
	for (size_t i = 0; i < N(hostile); i++)
		expect_round_trip(hostile[i], strlen(hostile[i]));
	for (size_t i = 0; i < sizeof(every); i++)
		every[i] = (char)i;
	expect_round_trip(every, sizeof(every));
	expect_round_trip(LINE("a\0b"));
}

/* An escaped rule is one RULE on one line: a newline in it cannot start a second command. */
static void test_batch_escape_one_command(void **state)
{
	static const char rule[] = "c 1:3 m\nmkdir /smuggled";
	struct devwl_policy *p = devwl_policy_new();
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);

	(void)state;
	assert_non_null(p);
	assert_non_null(f);
	fputs("allow /e ", f);
	batch_escape(f, rule, sizeof(rule) - 1);
	assert_int_equal(fclose(f), 0);
	assert_null(memchr(line, '\n', len));
	expect_line(p, LINE("mkdir /e"), "ok\n");
	expect_line(p, LINE("deny /e a"), "ok\n");
	expect_line(p, line, len, "ok\n");
	/* The grammar reads the first line of a rule, as the kernel does. */
	expect_line(p, LINE("list /e"), "c 1:3 m\n.\n");
	assert_null(devwl_policy_find(p, "/smuggled"));
	free(line);
	devwl_policy_free(p);
}

/* Malformed lines get "error EINVAL" and the session goes on with the next one. */
static void test_batch_exec_malformed_session_continues(void **state)
{
	static const char *const lines[] = {
		"",	     " ",	  "mkdir",	    "mkdir ",	" mkdir /a",
		"mkdir  /a", "mkdir /a ", "mkdir /a extra", "MKDIR /a", "frobnicate /a",
		"allow",     "allow /",	  "list",	    "check",	"mkdir /a",
		"list /a",
	};
	struct devwl_policy *p = devwl_policy_new();
	char longline[8192];

	(void)state;
	assert_non_null(p);
	expect_session(p, lines, N(lines),
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "error EINVAL\n"
		       "ok\n"
		       "a *:* rwm\n.\n");
	/* Raw NUL bytes in the command or node, and an overlong node, are malformed. */
	expect_line(p, LINE("mk\0dir /b"), "error EINVAL\n");
	expect_line(p, LINE("mkdir /b\0c"), "error EINVAL\n");
	longline[0] = '\0';
	strcat(longline, "mkdir /");
	memset(longline + 7, 'x', 5000);
	longline[5007] = '\0';
	expect_line(p, longline, strlen(longline), "error EINVAL\n");
	/* An empty RULE is a zero-length write, which the kernel's cgroup file layer
	 * answers with success before any parsing: nothing changes. A lone NUL byte is a
	 * one-byte write that parses as an empty rule. */
	expect_line(p, LINE("deny / "), "ok\n");
	expect_line(p, LINE("list /"), "a *:* rwm\n.\n");
	expect_line(p, LINE("deny / \\0"), "error EINVAL\n");
	/* A rule over 4096 bytes. */
	strcpy(longline, "deny / c 1:3 r");
	memset(longline + 14, ' ', 4100);
	longline[4114] = '\0';
	expect_line(p, longline, strlen(longline), "error E2BIG\n");
	/* Still alive, state intact. */
	expect_line(p, LINE("show /a"), "behavior allow\n.\n");
	assert_null(devwl_policy_find(p, "/b"));
	devwl_policy_free(p);
}

/* The answer to line, whole: the reason included. */
static void expect_reason(struct devwl_policy *p, const char *line, const char *want)
{
	size_t len = strlen(line);
	char *got = session(p, &line, &len, 1);

	if (strcmp(got, want) != 0)
		fail_msg("'%s' answered\n  '%s'\nwant\n  '%s'", line, got, want);
	free(got);
}

/*
 * Every error answer says why after the errno name: the bad input as given or the rule
 * as parsed, the node, and for a refusal of the hierarchy the ancestor that refuses and
 * its rules, so that an operator need not read devwld's log to learn it.
 */
static void test_batch_exec_reasons(void **state)
{
	static const char *const setup[] = {
		"mkdir /k8s",
		"deny /k8s a",
		"allow /k8s c 1:5 rw",
		"mkdir /k8s/ns",
		"mkdir /k8s/ns/pod",
		"mkdir /open",
		"deny /open c 1:* w",
		"mkdir /open/child",
		"mkdir /containers",
		"deny /containers a",
		"allow /containers c 1:5 rw",
		"mkdir /containers/a",
	};
	struct devwl_policy *p = devwl_policy_new();

	(void)state;
	assert_non_null(p);
	free(session(p, setup, NULL, N(setup)));
	/* The example of devwlctl(1): the parent and its rules. */
	expect_reason(p, "allow /containers/a c 1:3 rw",
		      "error EPERM: allow c 1:3 rw on /containers/a: the parent /containers does "
		      "not allow it (its rules: c 1:5 rw)\n");
	/* The rule as parsed (spaces, order of the access letters). */
	expect_reason(p, "allow /containers/a   c 1:3 wr  ",
		      "error EPERM: allow c 1:3 rw on /containers/a: the parent /containers does "
		      "not allow it (its rules: c 1:5 rw)\n");
	/* Refused further up as well: where it would have to be allowed first. */
	expect_reason(p, "allow /k8s/ns/pod c 1:9 w",
		      "error EPERM: allow c 1:9 w on /k8s/ns/pod: the parent /k8s/ns does not "
		      "allow it (its rules: c 1:5 rw); neither does /k8s above it (its rules: "
		      "c 1:5 rw): it would have to be allowed there first\n");
	/* An ALLOW parent refuses with a denial of its own. */
	expect_reason(p, "allow /open/child c 1:3 w",
		      "error EPERM: allow c 1:3 w on /open/child: the parent /open denies c 1:* "
		      "w\n");
	expect_reason(p, "allow /containers/a a",
		      "error EPERM: allow a on /containers/a: the parent /containers denies by "
		      "default, so no node below it can allow all (its rules: c 1:5 rw)\n");
	/* The grammar's complaint, with the text as given. */
	expect_reason(p, "allow /containers/a c 1:3 rwx",
		      "error EINVAL: allow \"c 1:3 rwx\" on /containers/a: access must be made of "
		      "'r', 'w' and 'm'\n");
	expect_reason(p, "allow /containers/a c 10-229",
		      "error EINVAL: allow \"c 10-229\" on /containers/a: expected ':' after the "
		      "major\n");
	expect_reason(p, "deny /containers/a c 1:3",
		      "error EINVAL: deny \"c 1:3\" on /containers/a: missing access (a subset of "
		      "\"rwm\")\n");
	/* Control characters never end the answer's line. */
	expect_reason(p, "allow /containers/a c 1:3 \x01\\x02",
		      "error EINVAL: allow \"c 1:3 \\x01\\x02\" on /containers/a: access must be "
		      "made of 'r', 'w' and 'm'\n");
	expect_reason(p, "allow /nope c 1:3 r", "error ENOENT: no node /nope\n");
	expect_reason(p, "check /nope c 1 3 r", "error ENOENT: no node /nope\n");
	expect_reason(p, "mkdir /x/y", "error ENOENT: no parent /x: make it first\n");
	expect_reason(p, "mkdir /k8s", "error EEXIST: node /k8s exists\n");
	expect_reason(p, "rmdir /k8s/ns", "error EBUSY: /k8s/ns has children: remove them first\n");
	expect_reason(p, "deny /k8s a",
		      "error EINVAL: deny a on /k8s: /k8s has children, so its default can no "
		      "longer change\n");
	expect_reason(p, "mkdir bad",
		      "error EINVAL: mkdir: \"bad\" is not a node path like /a/b\n");
	expect_reason(p, "frobnicate /a",
		      "error EINVAL: unknown command \"frobnicate\" (mkdir, rmdir, allow, deny, "
		      "list, show, check)\n");
	expect_reason(
		p, "check /k8s c 1 x r",
		"error EINVAL: check /k8s: \"c 1 x r\" is not TYPE MAJOR MINOR ACCESS (c or b, "
		"numbers from 0 to 4294967295, ACCESS of r, w and m, or - for none)\n");
	devwl_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_exec_ok_and_errors),
		cmocka_unit_test(test_batch_exec_list_show),
		cmocka_unit_test(test_batch_exec_check),
		cmocka_unit_test(test_batch_exec_rule_escapes),
		cmocka_unit_test(test_batch_unescape_all),
		cmocka_unit_test(test_batch_escape_round_trip),
		cmocka_unit_test(test_batch_escape_one_command),
		cmocka_unit_test(test_batch_exec_malformed_session_continues),
		cmocka_unit_test(test_batch_exec_reasons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
