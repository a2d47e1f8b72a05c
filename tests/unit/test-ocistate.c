/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OCI state a runtime's listener message or a hook's stdin carries
 * (supervisor/format/ocistate.c): what is taken, what is refused and why, and that hostile or
 * cut-off JSON gives an error, never a crash or a leak (run it under ASan).
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
#include <json-c/json.h>

#include "ocistate.h"

/* Parse a listener message (or a hook's state: listener false) into st. */
static int state_of(const char *json, bool listener, struct oci_state *st, struct devwl_error *err)
{
	struct json_object *obj = json_tokener_parse(json);
	int r;

	if (!obj)
		fail_msg("not JSON: %s", json);
	r = oci_state_from_json(obj, listener, st, err);
	json_object_put(obj);
	return r;
}

#define MSG(meta, annos)                                                                           \
	"{\"ociVersion\":\"1.0.2\",\"fds\":[\"seccompFd\"],\"pid\":42" meta                        \
	",\"state\":{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\",\"pid\":42,"   \
	"\"bundle\":\"/b\"" annos "}}"
#define META(path) ",\"metadata\":\"node=" path "\""

static void test_oci_state_from_json_listener(void **state)
{
	struct oci_state st = {0};
	struct devwl_error err = {0};

	(void)state;
	assert_int_equal(state_of(MSG(META("/a"), ",\"annotations\":{\"k\":\"v\",\"n\":1}"), true,
				  &st, &err),
			 0);
	assert_string_equal(st.id, "c1");
	assert_int_equal(st.pid, 42);
	assert_string_equal(st.metadata, "node=/a");
	/* Only the string-valued annotations. */
	assert_int_equal(st.nannos, 1);
	assert_string_equal(oci_annotation(&st, "k"), "v");
	assert_null(oci_annotation(&st, "n"));
	oci_state_clear(&st);

	/* crun exec: pid 0 and only the id to go by. */
	assert_int_equal(state_of("{\"fds\":[\"seccompFd\"],\"pid\":0,\"state\":{\"id\":\"x\","
				  "\"pid\":0,\"bundle\":\".\"}}",
				  true, &st, &err),
			 0);
	assert_int_equal(st.pid, 0);
	assert_null(st.metadata);
	oci_state_clear(&st);
}

static void expect_state_error(const char *json, bool listener, const char *why)
{
	struct oci_state st = {0};
	struct devwl_error err = {0};

	assert_int_equal(state_of(json, listener, &st, &err), -EINVAL);
	assert_null(st.id);
	if (!strstr(err.msg, why))
		fail_msg("%s: reason \"%s\" lacks \"%s\"", json, err.msg, why);
}

static void test_oci_state_from_json_errors(void **state)
{
	(void)state;
	expect_state_error("[1]", true, "not a JSON object");
	expect_state_error("{\"fds\":[]}", true, "no \"state\" object");
	expect_state_error("{\"state\":{\"id\":\"a\"},\"pid\":\"1\"}", true, "\"pid\" is not");
	expect_state_error("{\"state\":{\"id\":\"a\"},\"pid\":-1}", true, "\"pid\" out of range");
	expect_state_error("{\"state\":{\"id\":\"a\"},\"pid\":4294967296}", true, "out of range");
	expect_state_error("{\"state\":{\"id\":\"a\"},\"metadata\":1}", true,
			   "\"metadata\" is not");
	expect_state_error("{\"state\":{\"id\":\"../x\"}}", true, "not a valid container id");
	expect_state_error("{\"state\":{\"id\":\"..\"}}", true, "not a valid container id");
	expect_state_error("{\"state\":{\"id\":\"\"}}", true, "not a valid container id");
	expect_state_error("{\"state\":{\"id\":\"a\",\"annotations\":[]}}", true,
			   "\"annotations\" is not an object");
	/* A hook's state is the state itself. */
	expect_state_error("{\"state\":{\"id\":\"a\"}}", false, "not a valid container id");
}

static void test_oci_state_from_json_hook(void **state)
{
	struct oci_state st = {0};
	struct devwl_error err = {0};

	(void)state;
	assert_int_equal(state_of("{\"ociVersion\":\"1.0.2\",\"id\":\"h1\",\"pid\":7,\"status\":"
				  "\"created\",\"bundle\":\"/b\",\"annotations\":{\"a\":\"b\"}}",
				  false, &st, &err),
			 0);
	assert_string_equal(st.id, "h1");
	assert_int_equal(st.pid, 7);
	assert_string_equal(oci_annotation(&st, "a"), "b");
	assert_null(st.metadata);
	oci_state_clear(&st);
	/* devwl-oci-hook adds the bundle's listenerMetadata to the state: read as the
	 * listener's, with the listener's checks. */
	assert_int_equal(
		state_of("{\"id\":\"h1\",\"metadata\":\"node=/m mode=kernel\"}", false, &st, &err),
		0);
	assert_string_equal(st.metadata, "node=/m mode=kernel");
	oci_state_clear(&st);
	expect_state_error("{\"id\":\"h1\",\"metadata\":1}", false, "\"metadata\" is not a string");
	expect_state_error("{\"id\":\"h1\",\"metadata\":\"a\\u0000b\"}", false,
			   "\"metadata\" holds a NUL byte");
}

/* An id of n bytes of c under "state", as a listener message. */
static char *msg_with_id(size_t n, char c)
{
	char *id = malloc(n + 1), *msg = NULL;

	assert_non_null(id);
	memset(id, c, n);
	id[n] = '\0';
	assert_true(asprintf(&msg, "{\"state\":{\"id\":\"%s\"}}", id) > 0);
	free(id);
	return msg;
}

static void test_oci_state_from_json_id(void **state)
{
	struct oci_state st = {0};
	struct devwl_error err = {0};
	char *msg;

	(void)state;
	/* runc's alphabet, and at most 1024 bytes. */
	assert_int_equal(state_of("{\"state\":{\"id\":\"a-b_c+d.e9\"}}", true, &st, &err), 0);
	assert_string_equal(st.id, "a-b_c+d.e9");
	oci_state_clear(&st);
	msg = msg_with_id(1024, 'x');
	assert_int_equal(state_of(msg, true, &st, &err), 0);
	assert_int_equal(strlen(st.id), 1024);
	oci_state_clear(&st);
	free(msg);
	msg = msg_with_id(1025, 'x');
	assert_int_equal(state_of(msg, true, &st, &err), -EINVAL);
	assert_null(st.id);
	free(msg);
	/* Each would be another path component or another log word. */
	expect_state_error("{\"state\":{\"id\":\"a/b\"}}", true, "not a valid container id");
	expect_state_error("{\"state\":{\"id\":\"a b\"}}", true, "not a valid container id");
	expect_state_error("{\"state\":{\"id\":\"a\\nb\"}}", true, "not a valid container id");
	expect_state_error("{\"state\":{\"id\":\"a\\u0000b\"}}", true, "not a valid container id");
	expect_state_error("{\"state\":{\"id\":\".\"}}", true, "not a valid container id");
	expect_state_error("{\"state\":{\"id\":\"a\"},\"metadata\":\"node=/a\\u0000/b\"}", true,
			   "\"metadata\" holds a NUL byte");
	expect_state_error("{\"state\":{\"id\":7}}", true, "not a valid container id");
	expect_state_error("{\"state\":[]}", true, "no \"state\" object");
	expect_state_error("\"x\"", false, "not a JSON object");
}

static void test_oci_state_from_json_annotations(void **state)
{
	struct oci_state st = {0};
	struct devwl_error err = {0};
	struct json_object *msg = json_object_new_object(), *s = json_object_new_object(),
			   *annos = json_object_new_object();
	char key[32];

	(void)state;
	/* A value with a NUL byte would read as a shorter one: left out, as are non-strings. */
	assert_int_equal(state_of("{\"state\":{\"id\":\"a\",\"annotations\":{\"nul\":\"a\\u0000b\","
				  "\"obj\":{},\"arr\":[\"x\"],\"null\":null,\"ok\":\"\"}}}",
				  true, &st, &err),
			 0);
	assert_int_equal(st.nannos, 1);
	assert_string_equal(oci_annotation(&st, "ok"), "");
	assert_null(oci_annotation(&st, "nul"));
	assert_null(oci_annotation(&st, "missing"));
	oci_state_clear(&st);

	/* Many: every one kept (the policy's "match" rules may name any). */
	assert_non_null(msg);
	assert_non_null(s);
	assert_non_null(annos);
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(json_object_object_add(annos, key, json_object_new_string(key)),
				 0);
	}
	assert_int_equal(json_object_object_add(s, "id", json_object_new_string("many")), 0);
	assert_int_equal(json_object_object_add(s, "annotations", annos), 0);
	assert_int_equal(json_object_object_add(msg, "state", s), 0);
	assert_int_equal(oci_state_from_json(msg, true, &st, &err), 0);
	assert_int_equal(st.nannos, 5000);
	assert_string_equal(oci_annotation(&st, "k4999"), "k4999");
	oci_state_clear(&st);
	json_object_put(msg);
}

/*
 * Every prefix of a valid message, and the message with each byte replaced: whatever
 * json-c makes of it is either taken whole or refused with a reason, and never half
 * filled in (ASan: no leak, no read out of bounds).
 */
static void test_oci_state_from_json_mangled(void **state)
{
	static const char good[] = MSG(META("/a/b"), ",\"annotations\":{\"k\":\"v\",\"n\":1}");
	static const char repl[] = "\"{}[]:,0\\\x01\xff";
	size_t len = strlen(good), accepted = 0, refused = 0;
	char buf[sizeof(good)];

	(void)state;
	for (size_t cut = 0; cut <= len; cut++) {
		for (size_t pos = 0; pos <= cut; pos++) {
			for (size_t k = 0; k < (pos < cut ? sizeof(repl) - 1 : 1); k++) {
				struct oci_state st = {0};
				struct devwl_error err = {0};
				struct json_object *obj;
				int r;

				memcpy(buf, good, cut);
				buf[cut] = '\0';
				if (pos < cut)
					buf[pos] = repl[k];
				obj = json_tokener_parse(buf);
				if (!obj)
					continue;
				r = oci_state_from_json(obj, true, &st, &err);
				json_object_put(obj);
				if (r == 0) {
					assert_non_null(st.id);
					accepted++;
				} else {
					assert_int_equal(r, -EINVAL);
					assert_null(st.id);
					assert_int_equal(st.nannos, 0);
					assert_true(err.msg[0] != '\0');
					refused++;
				}
				oci_state_clear(&st);
			}
		}
	}
	/* Both outcomes happened: the loop reached the parser, not only json-c. */
	assert_true(accepted > 0);
	assert_true(refused > 0);
}

/* Nested deeper than json-c's limit: json-c refuses it; within it, an odd "state". */
static void test_oci_state_from_json_deep(void **state)
{
	enum { DEPTH = 10000 };
	char *deep = malloc(2 * DEPTH + 64);
	size_t n = 0;

	(void)state;
	assert_non_null(deep);
	n += (size_t)sprintf(deep, "{\"state\":");
	for (int i = 0; i < DEPTH; i++)
		deep[n++] = '[';
	for (int i = 0; i < DEPTH; i++)
		deep[n++] = ']';
	strcpy(deep + n, "}");
	assert_null(json_tokener_parse(deep));
	free(deep);
	expect_state_error("{\"state\":{\"state\":{\"id\":\"a\"}}}", true,
			   "not a valid container id");
}

static void test_oci_state_clear_twice(void **state)
{
	struct oci_state st = {0};
	struct devwl_error err = {0};

	(void)state;
	oci_state_clear(&st);
	assert_int_equal(
		state_of(MSG(META("/a"), ",\"annotations\":{\"k\":\"v\"}"), true, &st, &err), 0);
	oci_state_clear(&st);
	assert_null(st.id);
	assert_null(st.annos);
	oci_state_clear(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oci_state_from_json_listener),
		cmocka_unit_test(test_oci_state_from_json_errors),
		cmocka_unit_test(test_oci_state_from_json_hook),
		cmocka_unit_test(test_oci_state_from_json_id),
		cmocka_unit_test(test_oci_state_from_json_annotations),
		cmocka_unit_test(test_oci_state_from_json_mangled),
		cmocka_unit_test(test_oci_state_from_json_deep),
		cmocka_unit_test(test_oci_state_clear_twice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
