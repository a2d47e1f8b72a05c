/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * YAML into json-c (common/yamljson.c): the values a CDI spec's YAML holds, anchors and
 * aliases; then each limit on documents written to stall a reader. Each of those is
 * followed by text libyaml cannot parse, or never closes: an error naming the limit, at
 * the place the limit was passed, shows the reader stopped there, before the rest was
 * read (a reader that loads the whole document first reports the syntax error instead,
 * after reading all of it).
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

#include "yamljson.h"

static struct json_object *parsed(const char *text)
{
	struct json_object *obj = NULL;
	struct devwl_error err = {0};

	if (yamljson_parse(text, strlen(text), "t", &obj, &err) < 0)
		fail_msg("%s: %s", text, err.msg);
	return obj;
}

static void same(const char *text, const char *want)
{
	struct json_object *obj = parsed(text);
	const char *got = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);

	if (strcmp(got, want))
		fail_msg("%s: got %s, want %s", text, got, want);
	json_object_put(obj);
}

/* text refused with -EINVAL, the message holding want, at byte offset at. */
static void refused(const char *text, const char *want, size_t at)
{
	struct json_object *obj = NULL;
	struct devwl_error err = {0};
	int r = yamljson_parse(text, strlen(text), "t", &obj, &err);

	if (r != -EINVAL || !strstr(err.msg, want) || err.offset != at)
		fail_msg("%.60s...: %d \"%s\" at %zu, want \"%s\" at %zu", text, r, err.msg,
			 err.offset, want, at);
	assert_null(obj);
}

/* s repeated n times, then tail. */
static char *repeat(const char *s, size_t n, const char *tail)
{
	size_t len = strlen(s);
	char *buf = malloc(len * n + strlen(tail) + 1);

	assert_non_null(buf);
	for (size_t i = 0; i < n; i++)
		memcpy(buf + i * len, s, len);
	strcpy(buf + len * n, tail);
	return buf;
}

static void test_yamljson_parse_values(void **state)
{
	struct json_object *obj = NULL, *v = NULL;

	(void)state;
	same("a: ~\nb: null\nc:\nd: True\ne: FALSE\nf: -12\ng: 0x10\nh: '7'\ni: 1.5\n"
	     "j: 99999999999999999999\nk: !!int \"5\"\n\"l\": |\n  x\n  y\n",
	     "{\"a\":null,\"b\":null,\"c\":null,\"d\":true,\"e\":false,\"f\":-12,\"g\":16,"
	     "\"h\":\"7\",\"i\":\"1.5\",\"j\":\"99999999999999999999\",\"k\":\"5\","
	     "\"l\":\"x\\ny\\n\"}");
	same("- [a, {b: c}]\n- - - d\n", "[[\"a\",{\"b\":\"c\"}],[[\"d\"]]]");
	/* An alias repeats its anchor's node, a scalar's as a key too. */
	same("a: &x [1, {b: 0x10}]\nc: *x\nd: &y key\n*y : v\ne: [*x, *y]\n",
	     "{\"a\":[1,{\"b\":16}],\"c\":[1,{\"b\":16}],\"d\":\"key\",\"key\":\"v\","
	     "\"e\":[[1,{\"b\":16}],\"key\"]}");
	same("? &k x\n: *k\nk: &n\nm: *n\n", "{\"x\":\"x\",\"k\":null,\"m\":null}");
	same("k: &x [1]\nk: *x\n", "{\"k\":[1]}");
	/* The first document only, however the rest reads. */
	same("a: 1\n---\nb: [[[\n", "{\"a\":1}");
	same("---\n", "null");
	/* An integer keeps its text, for a field that is a string. */
	obj = parsed("n: 0x1F\n");
	assert_true(json_object_object_get_ex(obj, "n", &v));
	assert_int_equal(json_object_get_int64(v), 31);
	assert_string_equal(json_object_get_userdata(v), "0x1F");
	json_object_put(obj);
}

static void test_yamljson_parse_refusals(void **state)
{
	(void)state;
	refused("", "t: no YAML document", 0);
	refused("a: [\n", "t:2:1: invalid YAML", 5);
	refused("? [a]\n: b\n", "t:1:3: a mapping key that is no scalar", 2);
	refused("a: &a 1\nb: &a 2\n", "t:2:4: anchor &a defined twice", 11);
	refused("a: *nope\n", "t:1:4: alias *nope of no anchor before it", 3);
	refused("&r [*r]\n", "t:1:5: alias *r within the node it names", 4);
	refused("a: &m {b: 1}\n*m : c\n", "t:2:1: a mapping key that is no scalar", 13);
}

/* 64 levels below the top are read; the 65th is refused where it starts, whatever
 * follows: here 100000 more [ that never close, in flow and in block style. */
static void test_yamljson_parse_deep(void **state)
{
	char *open = repeat("[", 65, ""), *shut = repeat("]", 65, ""), *ok = NULL;
	char *deep = repeat("[", 100000, ""), *block = malloc(1000 * 1002), *alias = NULL;
	size_t n = 0, at = 0;

	(void)state;
	assert_non_null(block);
	/* Closed, 65 [ are the levels 0 to 64: fine. */
	assert_true(asprintf(&ok, "%s%s", open, shut) > 0);
	json_object_put(parsed(ok));
	refused(deep, "t:1:66: nested deeper than 64 levels", 65);
	/* "-\n -\n  -\n...": each line's - a sequence in the one above; 1000 of them. */
	for (int i = 0; i < 1000; i++) {
		if (i == 65)
			at = n + 65;
		n += (size_t)sprintf(block + n, "%*s-\n", i, "");
	}
	refused(block, "t:66:66: nested deeper than 64 levels", at);
	/* An alias counts its anchor's levels where it is used: 1 + 60 below a, 5 + 60
	 * below b. */
	assert_true(asprintf(&alias, "a: &a %.60s%.60s\nb: [[[[*a]]]]\n", open, shut) > 0);
	json_object_put(parsed(alias));
	free(alias);
	assert_true(asprintf(&alias, "a: &a %.60s%.60s\nb: [[[[[*a]]]]]\n[", open, shut) > 0);
	refused(alias, "t:2:9: nested deeper than 64 levels (alias *a)", 6 + 120 + 1 + 8);
	free(alias);
	free(open);
	free(shut);
	free(ok);
	free(deep);
	free(block);
}

/* 100000 nodes at most, the top one counted: the 100000th item of its sequence passes
 * it, however many follow (200000, in a sequence never closed). */
static void test_yamljson_parse_wide(void **state)
{
	char *flow = repeat(" a,", 200000, ""), *block = repeat("k: v\n", 200000, "]");
	char *bomb = NULL, *x = repeat("x,", 999, "x]\n"), *aliases = repeat("*a,", 200, "");

	(void)state;
	flow[0] = '[';
	refused(flow, "t:1:299999: more than 100000 nodes", 299998);
	/* One key, written 200000 times: each value is a node. */
	refused(block, "t:100000:4: more than 100000 nodes", 99999 * 5 + 3);
	/* An alias counts the nodes it repeats: a is 1001, b's 99th alias passes 100000. */
	assert_true(asprintf(&bomb, "a: &a [%sb: [%s", x, aliases) > 0);
	refused(bomb, "t:2:299: more than 100000 nodes (aliases expanding?)",
		strlen("a: &a [") + strlen(x) + 4 + 98 * 3);
	free(flow);
	free(block);
	free(bomb);
	free(x);
	free(aliases);
}

/* A scalar of 64 KiB is read, one byte more is refused, as a value or as a key, before
 * the rest. */
static void test_yamljson_parse_long_scalar(void **state)
{
	char *fits = repeat("x", 65536, ""), *value = NULL, *key = NULL;

	(void)state;
	assert_true(asprintf(&value, "a: %s\n", fits) > 0);
	json_object_put(parsed(value));
	free(value);
	assert_true(asprintf(&value, "a: %sx\nb: [\n", fits) > 0);
	refused(value, "t:1:4: a scalar of 65537 bytes, more than 65536", 3);
	assert_true(asprintf(&key, "{\"%sx\": [", fits) > 0);
	refused(key, "t:1:2: a scalar of 65537 bytes, more than 65536", 1);
	free(fits);
	free(value);
	free(key);
}

/* libyaml checks each %TAG against those before it before the first event: more than 16
 * are refused before it parses (here 20000 of them, each its own). */
static void test_yamljson_parse_directives(void **state)
{
	char *text = malloc(20000 * 32);
	size_t n = 0, at = 0;

	(void)state;
	assert_non_null(text);
	for (int i = 0; i < 16; i++)
		n += (size_t)sprintf(text + n, "%%TAG !a%d! tag:a%d,\n", i, i);
	strcpy(text + n, "--- !a15!x y\n");
	same(text, "\"y\"");
	at = n;
	for (int i = 16; i < 20000; i++)
		n += (size_t)sprintf(text + n, "%%TAG !a%d! tag:a%d,\n", i, i);
	strcpy(text + n, "--- [\n");
	refused(text, "t:17:1: more than 16 directives", at);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yamljson_parse_values),
		cmocka_unit_test(test_yamljson_parse_refusals),
		cmocka_unit_test(test_yamljson_parse_deep),
		cmocka_unit_test(test_yamljson_parse_wide),
		cmocka_unit_test(test_yamljson_parse_long_scalar),
		cmocka_unit_test(test_yamljson_parse_directives),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
