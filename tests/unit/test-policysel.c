/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Selector rules taken out of a policy file's node rules (common/policysel.c): which
 * rules are taken, what the loader then reads, and what is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "devwl.h"
#include "policysel.h"

/* Extract from text; the rest must load. Returns the loaded policy. */
static struct devwl_policy *extract_load(const char *text, struct policysel *ps)
{
	struct devwl_error err = {0};
	struct devwl_policy *p = NULL;
	char *plain = NULL;

	assert_int_equal(policysel_extract(text, "p.json", &plain, ps, &err), 0);
	/* As long, and every line where it was. */
	assert_int_equal(strlen(plain), strlen(text));
	for (size_t i = 0; text[i]; i++)
		assert_int_equal(plain[i] == '\n', text[i] == '\n');
	if (devwl_policy_load_string(plain, "p.json", &p, &err) < 0)
		fail_msg("%s", err.msg);
	free(plain);
	return p;
}

static size_t rule_count(struct devwl_policy *p, const char *path)
{
	return devwl_node_exception_count(devwl_policy_find(p, path));
}

static void test_policysel_extract_mixed(void **state)
{
	const char *text = "{\"version\": 1, \"nodes\": [\n"
			   " {\"path\": \"/\"},\n"
			   " {\"path\": \"/lab\", \"rules\": [\"deny a\",\n"
			   "   \"allow usb:0403:6001:A123 rw\",\n"
			   "   \"allow loop:/var/lib/x.img r\"]},\n"
			   " {\"path\": \"/lab/b\", \"rules\": [\"deny\\tby-id:usb-X\"]}]}\n";
	struct policysel ps = {0};
	struct devwl_policy *p;

	(void)state;
	p = extract_load(text, &ps);
	assert_int_equal(ps.n, 3);
	assert_string_equal(ps.v[0].node, "/lab");
	assert_true(ps.v[0].allow);
	assert_string_equal(ps.v[0].selector, "usb:0403:6001:A123 rw");
	assert_string_equal(ps.v[0].where, "p.json: node /lab: rule 2");
	assert_string_equal(ps.v[1].selector, "loop:/var/lib/x.img r");
	assert_string_equal(ps.v[1].where, "p.json: node /lab: rule 3");
	assert_string_equal(ps.v[2].node, "/lab/b");
	assert_false(ps.v[2].allow);
	assert_string_equal(ps.v[2].selector, "by-id:usb-X");
	/* "deny a" is still there: the node denies everything, no exception. */
	assert_int_equal(devwl_node_behavior(devwl_policy_find(p, "/lab")), DEVWL_BEHAVIOR_DENY);
	assert_int_equal(rule_count(p, "/lab"), 0);
	devwl_policy_free(p);
	policysel_clear(&ps);
}

/* Nothing to take: the text is what it was, byte for byte. */
static void test_policysel_extract_none(void **state)
{
	const char *text = "{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"rules\": "
			   "[\"deny a\", \"allow c 1:3 rw\", \"allow /dev/null\"]}]}";
	struct devwl_error err = {0};
	struct policysel ps = {0};
	char *plain = NULL;

	(void)state;
	assert_int_equal(policysel_extract(text, NULL, &plain, &ps, &err), 0);
	assert_string_equal(plain, text);
	assert_int_equal(ps.n, 0);
	free(plain);
}

/* Every rule a selector: an empty array is left. Escapes are read as JSON reads them. */
static void test_policysel_extract_only_selectors(void **state)
{
	const char *text = "{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":"
			   "[\"allow loop:\\/var\\/x.img r\",\"deny  subsystem:hidraw\"]}]}";
	struct policysel ps = {0};
	struct devwl_policy *p;

	(void)state;
	p = extract_load(text, &ps);
	assert_int_equal(ps.n, 2);
	assert_string_equal(ps.v[0].selector, "loop:/var/x.img r");
	assert_string_equal(ps.v[1].selector, "subsystem:hidraw");
	assert_false(ps.v[1].allow);
	assert_int_equal(rule_count(p, "/a"), 0);
	devwl_policy_free(p);
	policysel_clear(&ps);
}

/* A plain rule after a selector rule would act before it: refused, naming both. */
static void test_policysel_extract_plain_after_selector(void **state)
{
	const char *text = "{\"version\":1,\"nodes\":[{\"path\":\"/lab\",\"rules\":"
			   "[\"allow usb:0403:6001\",\"deny a\"]}]}";
	struct devwl_error err = {0};
	struct policysel ps = {0};
	char *plain = NULL;

	(void)state;
	assert_int_equal(policysel_extract(text, "p.json", &plain, &ps, &err), -EINVAL);
	assert_null(plain);
	assert_int_equal(ps.n, 0);
	assert_non_null(strstr(err.msg, "p.json: node /lab: rule 2 \"deny a\""));
	assert_non_null(strstr(err.msg, "selector rule 1"));
}

/* A key json-c reads as "rules" but written otherwise: the rules cannot be blanked, so
 * the file is refused rather than loaded with a selector left to the loader. */
static void test_policysel_extract_escaped_key(void **state)
{
	const char *text = "{\"version\":1,\"nodes\":[{\"path\":\"/lab\",\"rul\\u0065s\":"
			   "[\"allow usb:0403:6001\"]}]}";
	struct devwl_error err = {0};
	struct policysel ps = {0};
	char *plain = NULL;

	(void)state;
	assert_int_equal(policysel_extract(text, "p.json", &plain, &ps, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "p.json: node /lab: its selector rules cannot be found"));
	assert_int_equal(ps.n, 0);
}

/* "rules" twice: json-c keeps the last, and so does the walk. */
static void test_policysel_extract_key_twice(void **state)
{
	const char *text = "{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":[\"deny a\"],"
			   "\"rules\":[\"allow c 1:3 r\",\"allow usb:0403:6001\"]}]}";
	struct policysel ps = {0};
	struct devwl_policy *p;

	(void)state;
	p = extract_load(text, &ps);
	assert_int_equal(ps.n, 1);
	assert_string_equal(ps.v[0].where, "p.json: node /a: rule 2");
	assert_int_equal(devwl_node_behavior(devwl_policy_find(p, "/a")), DEVWL_BEHAVIOR_ALLOW);
	devwl_policy_free(p);
	policysel_clear(&ps);
}

/* What is no JSON, or no well-formed node, is left to the loader, which says why. */
static void test_policysel_extract_left_to_loader(void **state)
{
	static const char *const texts[] = {
		"{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":[\"allow usb:1\"",
		"[1, 2]",
		"{\"version\":1,\"nodes\":{\"path\":\"/a\"}}",
		"{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":[\"allow usb:1\", 5]}]}",
		"{\"version\":1,\"nodes\":[{\"path\":7,\"rules\":[\"allow usb:1\"]}]}",
		"{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":\"allow usb:1\"}]}",
		"{\"version\":1} trailing",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct devwl_error err = {0};
		struct devwl_policy *p = NULL;
		struct policysel ps = {0};
		char *plain = NULL;

		assert_int_equal(policysel_extract(texts[i], "p.json", &plain, &ps, &err), 0);
		assert_string_equal(plain, texts[i]);
		assert_int_equal(ps.n, 0);
		assert_true(devwl_policy_load_string(plain, "p.json", &p, &err) < 0);
		free(plain);
	}
}

/* Not selector rules: the loader refuses them as it always has. */
static void test_policysel_extract_not_selectors(void **state)
{
	const char *text = "{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":"
			   "[\"allowusb:0403:6001\",\"permit usb:0403:6001\",\"allow\"]}]}";
	struct devwl_error err = {0};
	struct policysel ps = {0};
	char *plain = NULL;

	(void)state;
	assert_int_equal(policysel_extract(text, "p.json", &plain, &ps, &err), 0);
	assert_int_equal(ps.n, 0);
	assert_string_equal(plain, text);
	free(plain);
}

static void test_policysel_load_file(void **state)
{
	char file[] = "/tmp/test-policysel-XXXXXX";
	const char *text = "{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":"
			   "[\"deny a\",\"allow loop:/x.img r\"]},\n{\"path\":\"/b\",\"rules\":"
			   "[\"allow q\"]}]}";
	const char *good = "{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":"
			   "[\"deny a\",\"allow loop:/x.img r\"]}]}";
	struct devwl_error err = {0};
	struct devwl_policy *p = NULL;
	struct policysel ps = {0};
	int fd = mkstemp(file);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	/* The loader's error still points at the line of the node in the file. */
	assert_true(policysel_load_file(file, &p, &ps, &err) < 0);
	assert_non_null(strstr(err.msg, ":2:1: node /b: rule 1"));
	fd = open(file, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, good, strlen(good)), (ssize_t)strlen(good));
	close(fd);
	if (policysel_load_file(file, &p, &ps, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(ps.n, 1);
	assert_non_null(strstr(ps.v[0].where, ": node /a: rule 2"));
	devwl_policy_free(p);
	policysel_clear(&ps);
	assert_int_equal(policysel_load_file("/nonexistent/p.json", &p, &ps, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/p.json"));
	unlink(file);
}

/* The file's "selectors" come after the node rules, as devwld writes them; a bad one
 * refuses the file, naming it. */
static void put(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_TRUNC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_policysel_load_file_selectors(void **state)
{
	char file[] = "/tmp/test-policysel-XXXXXX";
	const char *head = "{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":"
			   "[\"deny a\",\"allow loop:/x.img r\"]}],\"selectors\":";
	const struct {
		const char *sel, *msg;
	} bad[] = {
		{"{}", "\"selectors\": must be an array"},
		{"[{\"node\":\"/a\"}]", "selectors 1: must be"},
		{"[{\"node\":\"/a\",\"allow\":\"x\",\"deny\":\"y\"}]", "selectors 1: must be"},
		{"[{\"node\":\"/a\",\"deny\":7}]", "selectors 1: must be"},
		{"[{\"node\":\"/a\",\"deny\":\"usb:1:2\"},{\"node\":\"/z\",\"deny\":\"x\"}]",
		 "selectors 2: no node /z"},
	};
	char text[512];
	struct devwl_error err = {0};
	struct devwl_policy *p = NULL;
	struct policysel ps = {0};
	int fd = mkstemp(file);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	snprintf(text, sizeof(text), "%s%s}", head,
		 "[{\"node\":\"/a\",\"deny\":\"subsystem:hidraw\"}]");
	put(file, text);
	if (policysel_load_file(file, &p, &ps, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(ps.n, 2);
	assert_string_equal(ps.v[1].node, "/a");
	assert_false(ps.v[1].allow);
	assert_string_equal(ps.v[1].selector, "subsystem:hidraw");
	assert_non_null(strstr(ps.v[1].where, ": selectors 1"));
	devwl_policy_free(p);
	policysel_clear(&ps);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = NULL;
		snprintf(text, sizeof(text), "%s%s}", head, bad[i].sel);
		put(file, text);
		assert_int_equal(policysel_load_file(file, &p, &ps, &err) < 0, 1);
		if (!strstr(err.msg, bad[i].msg))
			fail_msg("%s: %s, want %s", bad[i].sel, err.msg, bad[i].msg);
		assert_null(p);
		assert_int_equal(ps.n, 0);
	}
	unlink(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policysel_extract_mixed),
		cmocka_unit_test(test_policysel_extract_none),
		cmocka_unit_test(test_policysel_extract_only_selectors),
		cmocka_unit_test(test_policysel_extract_plain_after_selector),
		cmocka_unit_test(test_policysel_extract_escaped_key),
		cmocka_unit_test(test_policysel_extract_key_twice),
		cmocka_unit_test(test_policysel_extract_left_to_loader),
		cmocka_unit_test(test_policysel_extract_not_selectors),
		cmocka_unit_test(test_policysel_load_file),
		cmocka_unit_test(test_policysel_load_file_selectors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
