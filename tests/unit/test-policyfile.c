/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policy files and OCI devices arrays (lib/policyfile.c): valid files load to the
 * listings the same writes give, every kind of bad file is refused with the errno and a
 * message naming file, node and rule, and what is saved loads back to the same
 * decisions and listings (random trees too).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "allowlist.h"
#include "devwl.h"
#include "docpage.h"

/* ---- helpers ------------------------------------------------------------------------- */

static const char *data_path(const char *name)
{
	static char path[4096];
	const char *dir = getenv("DEVWL_TEST_DATA");

	if (!dir)
		dir = "tests/unit/data";
	snprintf(path, sizeof(path), "%s/policy/%s", dir, name);
	return path;
}

static struct devwl_policy *load_ok(const char *text)
{
	struct devwl_policy *p = NULL;
	struct devwl_error err = {0};
	int r = devwl_policy_load_string(text, "t.json", &p, &err);

	if (r < 0)
		fail_msg("load failed (%d): %s\n%s", r, err.msg, text);
	assert_non_null(p);
	return p;
}

static char *show(const struct devwl_policy *p, const char *path)
{
	const struct devwl_node *n = devwl_policy_find(p, path);
	char *s = NULL;

	if (!n)
		fail_msg("no node %s", path);
	assert_int_equal(devwl_node_show(n, &s), 0);
	return s;
}

static void assert_show(const struct devwl_policy *p, const char *path, const char *want)
{
	char *s = show(p, path);

	if (strcmp(s, want))
		fail_msg("show %s:\n%s\nwant:\n%s", path, s, want);
	free(s);
}

static void assert_list(const struct devwl_policy *p, const char *path, const char *want)
{
	char *s = NULL;

	assert_int_equal(devwl_node_list(devwl_policy_find(p, path), &s), 0);
	if (strcmp(s, want))
		fail_msg("list %s:\n%s\nwant:\n%s", path, s, want);
	free(s);
}

/* The error must carry code, and msg must contain every string of the NULL-ended list. */
static void assert_error(int r, const struct devwl_error *err, int code, ...)
{
	const char *want;
	va_list ap;

	if (r != code)
		fail_msg("got %d, want %d (%s)", r, code, err->msg);
	assert_int_equal(err->code, code);
	va_start(ap, code);
	while ((want = va_arg(ap, const char *)))
		if (!strstr(err->msg, want))
			fail_msg("message \"%s\" lacks \"%s\"", err->msg, want);
	va_end(ap);
}

/* A failed load returns nothing: the output stays as it was. */
#define SENTINEL ((struct devwl_policy *)0x1)

static void load_bad(const char *text, int code, const char *s1, const char *s2, const char *s3)
{
	struct devwl_policy *p = SENTINEL;
	struct devwl_error err = {0};
	int r = devwl_policy_load_string(text, "bad.json", &p, &err);

	assert_ptr_equal(p, SENTINEL);
	assert_error(r, &err, code, "bad.json", s1, s2, s3, NULL);
}

static size_t assert_round_trip(const struct devwl_policy *p);

/* ---- loading valid files --------------------------------------------------------------- */

static void check_example(const struct devwl_policy *p)
{
	const struct devwl_node *gpu = devwl_policy_find(p, "/containers/gpu");

	assert_int_equal(devwl_policy_count(p), 5);
	assert_show(p, "/", "behavior allow\n");
	assert_show(p, "/containers",
		    "behavior deny\nallow c 1:3 rwm\nallow c 136:* rw\nallow c 195:* rw\n");
	assert_show(p, "/containers/web", "behavior deny\nallow c 1:3 rwm\nallow c 136:* rw\n");
	assert_show(p, "/containers/gpu",
		    "behavior deny\nallow c 1:3 rwm\nallow c 136:* r\nallow c 195:* rw\n"
		    "mknod_needs_cap false\n");
	assert_list(p, "/k8s", "c 1:3 rwm\n");
	assert_false(devwl_node_mknod_needs_cap(gpu));
	assert_true(devwl_node_mknod_needs_cap(devwl_policy_find(p, "/k8s")));
	assert_int_equal(devwl_node_check(gpu, DEVWL_DEV_CHAR, 195, 0, DEVWL_ACC_READ), 1);
	assert_int_equal(devwl_node_check(gpu, DEVWL_DEV_CHAR, 195, 0, DEVWL_ACC_MKNOD), 0);
	assert_int_equal(devwl_node_check(gpu, DEVWL_DEV_CHAR, 136, 4, DEVWL_ACC_WRITE), 0);
}

static void test_devwl_policy_load_file_example(void **state)
{
	struct devwl_policy *p = NULL;
	struct devwl_error err = {0};

	(void)state;
	if (devwl_policy_load_file(data_path("example.json"), &p, &err) < 0)
		fail_msg("%s", err.msg);
	check_example(p);
	devwl_policy_free(p);
}

static void test_devwl_policy_load_file_runc_defaults(void **state)
{
	struct devwl_policy *p = NULL;
	struct devwl_error err = {0};

	(void)state;
	if (devwl_policy_load_file(data_path("runc-defaults.json"), &p, &err) < 0)
		fail_msg("%s", err.msg);
	assert_show(p, "/", "behavior allow\ndeny b 259:* w\n");
	assert_list(p, "/runc",
		    "c *:* m\nb *:* m\nc 1:3 rwm\nc 1:8 rwm\nc 1:7 rwm\nc 5:0 rwm\nc 1:5 rwm\n"
		    "c 1:9 rwm\nc 136:* rwm\nc 5:2 rwm\n");
	assert_list(p, "/runc/web",
		    "c *:* m\nb *:* m\nc 1:3 rwm\nc 1:8 rwm\nc 1:7 rwm\nc 5:0 rwm\nc 1:5 rwm\n"
		    "c 1:9 rm\nc 136:* rwm\nc 5:2 rwm\n");
	assert_show(p, "/open", "behavior allow\ndeny b 259:* w\ndeny c 10:200 rw\n");
	devwl_policy_free(p);
}

/* The example shipped in examples/ loads and round-trips. */
static void test_devwl_policy_load_file_shipped_example(void **state)
{
	struct devwl_policy *p = NULL;
	struct devwl_error err = {0};
	char path[4200];

	(void)state;
	snprintf(path, sizeof(path), "%s/../../../../examples/policy.json", data_path("."));
	if (devwl_policy_load_file(path, &p, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(devwl_policy_count(p), 6);
	assert_list(p, "/k8s/default", "c *:* m\nc 1:3 rwm\nc 136:* rwm\n");
	assert_int_equal(devwl_node_check(devwl_policy_find(p, "/containers/web"), DEVWL_DEV_CHAR,
					  195, 0, DEVWL_ACC_READ),
			 0);
	assert_false(devwl_node_mknod_needs_cap(devwl_policy_find(p, "/containers/gpu")));
	assert_round_trip(p);
	devwl_policy_free(p);
}

static void test_devwl_policy_load_string_minimal(void **state)
{
	struct devwl_policy *p;

	(void)state;
	p = load_ok("{\"version\": 1}");
	assert_int_equal(devwl_policy_count(p), 1);
	assert_list(p, "/", "a *:* rwm\n");
	devwl_policy_free(p);
	/* Root rules, rules then devices on one node, extra whitespace after the verb. */
	p = load_ok("{\"version\":1,\"nodes\":[{\"path\":\"/\",\"rules\":[\"deny a\","
		    "\"allow\\t  c 1:3 r\"],\"devices\":[{\"allow\":true,\"type\":\"b\","
		    "\"major\":8,\"minor\":0,\"access\":\"mw\"}]},{\"path\":\"/x\"}]}\n\n");
	assert_show(p, "/", "behavior deny\nallow c 1:3 r\nallow b 8:0 wm\n");
	assert_show(p, "/x", "behavior deny\nallow c 1:3 r\nallow b 8:0 wm\n");
	devwl_policy_free(p);
	/* devwld's "cdi_annotations": accepted and ignored, the node as without it. */
	p = load_ok("{\"version\":1,\"nodes\":[{\"path\":\"/x\",\"cdi_annotations\":true,"
		    "\"rules\":[\"deny a\"]},{\"path\":\"/x/y\",\"cdi_annotations\":false}]}");
	assert_show(p, "/x/y", "behavior deny\n");
	devwl_policy_free(p);
	/* "why" (devwl-run --learn writes it): words only, the node as without it. */
	p = load_ok("{\"version\":1,\"nodes\":[{\"path\":\"/x\",\"rules\":[\"deny a\","
		    "\"allow c 1:3 rw\"],\"why\":{\"allow c 1:3 rw\":\"openat rw by sh\","
		    "\"not a rule\":\"\"}}]}");
	assert_show(p, "/x", "behavior deny\nallow c 1:3 rw\n");
	devwl_policy_free(p);
}

/* The kernel grammar's corners come through as the kernel reads them. */
static void test_devwl_policy_load_string_kernel_grammar(void **state)
{
	struct devwl_policy *p;

	(void)state;
	/* Only the first line counts, and a newline ends the access: an empty access. */
	p = load_ok("{\"version\":1,\"nodes\":[{\"path\":\"/\",\"rules\":[\"deny a\","
		    "\"allow c 1:3 \\nrwm\",\"allow c 1:5 rw\\nc 1:6 rwm\",\"allow a b c d\"]}]}");
	assert_show(p, "/", "behavior allow\n");
	devwl_policy_free(p);
	p = load_ok("{\"version\":1,\"nodes\":[{\"path\":\"/\",\"rules\":[\"deny a\","
		    "\"allow c 1:3 \\nrwm\",\"allow c 1:5 rw\\nc 1:6 rwm\",\"allow c 01:007 "
		    "rwmx\"]}]}");
	assert_show(p, "/", "behavior deny\nallow c 1:3 \nallow c 1:5 rw\nallow c 1:7 rwm\n");
	devwl_policy_free(p);
}

/* ---- refusing bad files ------------------------------------------------------------------ */

static void test_devwl_policy_load_file_missing(void **state)
{
	struct devwl_policy *p = SENTINEL;
	struct devwl_error err = {0};
	int r;

	(void)state;
	r = devwl_policy_load_file("/nonexistent/devwl/policy.json", &p, &err);
	assert_error(r, &err, -ENOENT, "/nonexistent/devwl/policy.json", "No such file", NULL);
	assert_ptr_equal(p, SENTINEL);
	r = devwl_policy_load_file("/", &p, &err);
	assert_error(r, &err, -EISDIR, "/: ", NULL);
	assert_ptr_equal(p, SENTINEL);
}

static void test_devwl_policy_load_file_too_large(void **state)
{
	char path[] = "/tmp/devwl-test-policy-XXXXXX";
	struct devwl_policy *p = SENTINEL;
	struct devwl_error err = {0};
	int fd = mkstemp(path), r;

	(void)state;
	assert_true(fd >= 0);
	/* Sparse: 16 MiB + 1 of nothing costs no disk. */
	assert_int_equal(ftruncate(fd, (16 << 20) + 1), 0);
	close(fd);
	r = devwl_policy_load_file(path, &p, &err);
	assert_error(r, &err, -E2BIG, path, "16777216", NULL);
	assert_ptr_equal(p, SENTINEL);
	unlink(path);
}

/* Each bad fixture: errno and what the message must name. */
static void test_devwl_policy_load_file_bad_fixtures(void **state)
{
	static const struct {
		const char *file;
		int code;
		const char *want[4];
	} cases[] = {
		{"bad-truncated.json", -EINVAL, {":5:1: invalid JSON", "unexpected end"}},
		{"bad-typo.json", -EINVAL, {"node /a", "unknown key \"rule\""}},
		{"bad-parent.json", -EINVAL, {"node /a/b/c", "parent /a/b must be defined"}},
		{"bad-rule.json",
		 -EINVAL,
		 {"node /k8s: rule 2 \"allow c 1:3 rwx\": access must be made of 'r', 'w' and "
		  "'m'"}},
		{"bad-refused.json",
		 -EPERM,
		 {"node /k8s: rule 3 \"allow c 1:5 rwm\": refused by parent /: it does not allow "
		  "c 1:5 rwm"}},
		/* A child cannot grant what its DENY parent does not (the kernel's rule). */
		{"bad-widen.json",
		 -EPERM,
		 {"node /containers/gpu: rule 1 \"allow c 195:* rw\": refused by parent "
		  "/containers: it does not allow c 195:* rw"}},
		{"bad-oci.json",
		 -EINVAL,
		 {"node /k8s: device 2: \"major\": 4294967296 is out of range"}},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct devwl_policy *p = SENTINEL;
		struct devwl_error err = {0};
		const char *path = data_path(cases[i].file);
		int r = devwl_policy_load_file(path, &p, &err);

		print_message("%s: %s\n", cases[i].file, err.msg);
		assert_error(r, &err, cases[i].code, path, cases[i].want[0],
			     cases[i].want[1] ? cases[i].want[1] : "", NULL);
		assert_ptr_equal(p, SENTINEL);
	}
}

static void test_devwl_policy_load_string_bad_json(void **state)
{
	(void)state;
	load_bad("", -EINVAL, "bad.json:1:1: invalid JSON", "unexpected end", NULL);
	load_bad("{\"version\": 1,\n  \"nodes\": [}", -EINVAL, "bad.json:2:13: invalid JSON", NULL,
		 NULL);
	load_bad("{\"version\": 1} {}", -EINVAL, "bad.json:1:", "invalid JSON", NULL);
	load_bad("{\"version\": 1} x", -EINVAL, "invalid JSON", NULL, NULL);
	load_bad("{\"version\": 1,}", -EINVAL, "invalid JSON", NULL, NULL);
	load_bad("{\"version\": tru}", -EINVAL, "invalid JSON", NULL, NULL);
	load_bad("{\"a\": \"\xff\xfe\"}", -EINVAL, "invalid JSON", NULL, NULL);
	/* Deeper than json-c's default nesting limit. */
	{
		char deep[200] = "{\"version\":1,\"containers\":";
		size_t n = strlen(deep);
		for (int i = 0; i < 40; i++)
			deep[n++] = '[';
		deep[n] = '\0';
		load_bad(deep, -EINVAL, "invalid JSON", "nesting too deep", NULL);
	}
}

/*
 * An error inside a node names the line and column where that node starts, and a key
 * nobody knows is answered with the keys that exist: a typo is found without the manual.
 */
static void test_devwl_policy_load_string_error_place(void **state)
{
	static const char text[] = "{ \"version\": 1,\n"
				   "  \"containers\": { \"match\": [] },\n"
				   "  \"nodes\": [\n"
				   "    { \"path\": \"/a\", \"rules\": [\"deny a\"] },\n"
				   "    {\n"
				   "      \"path\": \"/a/b\", \"rulez\": [] } ] }\n";
	static const char rule[] = "{\"version\": 1, \"nodes\": [{\"path\": \"/a\"},\n"
				   " {\"path\": \"/a/b\",\n"
				   "  \"rules\": [\"allow c 1:3 rwx\"]}]}";
	struct devwl_policy *p = SENTINEL;
	struct devwl_error err = {0};
	int r;

	(void)state;
	r = devwl_policy_load_string(text, "bad.json", &p, &err);
	assert_error(r, &err, -EINVAL,
		     "bad.json:5:5: node /a/b: unknown key \"rulez\" (known: path, rules, devices, "
		     "mknod_needs_cap, cdi_annotations, why, learn)",
		     NULL);
	assert_int_equal(err.offset, strstr(text, "    {\n") - text + 4);
	load_bad("{\"version\": 1, \"nodez\": []}", -EINVAL,
		 "unknown key \"nodez\" (known: version, nodes, containers, selectors)", NULL,
		 NULL);
	load_bad(rule, -EINVAL, "bad.json:2:2: node /a/b: rule 1 \"allow c 1:3 rwx\"", NULL, NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"devices\": [{\"allow\": "
		 "true, \"typ\": \"c\"}]}]}",
		 -EINVAL,
		 "bad.json:1:26: node /a: device 1: unknown key \"typ\" (known: allow, type,", NULL,
		 NULL);
	assert_ptr_equal(p, SENTINEL);
}

/* "selectors" is devwld's (devwl-policy(5)): the library accepts and ignores it, whatever it
 * holds, as it does "containers". */
static void test_devwl_policy_load_string_selectors_ignored(void **state)
{
	static const char text[] =
		"{\"version\": 1, \"nodes\": [{\"path\": \"/lab\", \"rules\": [\"deny a\"]}],\n"
		" \"selectors\": [{\"node\": \"/lab\", \"allow\": \"usb:0403:6001 rw\"},\n"
		"                {\"node\": \"/nowhere\", \"deny\": \"subsystem:hidraw rwm\"}]}";
	struct devwl_policy *p = NULL;
	struct devwl_error err = {0};

	(void)state;
	assert_int_equal(devwl_policy_load_string(text, "sel.json", &p, &err), 0);
	assert_non_null(p);
	assert_int_equal(devwl_policy_count(p), 2);
	assert_show(p, "/lab", "behavior deny\n");
	devwl_policy_free(p);
}

static void test_devwl_policy_load_string_bad_content(void **state)
{
	(void)state;
	load_bad("[]", -EINVAL, "must be a JSON object", NULL, NULL);
	load_bad("{}", -EINVAL, "\"version\" is missing", NULL, NULL);
	load_bad("{\"version\": 2}", -EINVAL, "\"version\": only 1", NULL, NULL);
	load_bad("{\"version\": \"1\"}", -EINVAL, "\"version\": only 1", NULL, NULL);
	load_bad("{\"version\": 1, \"node\": []}", -EINVAL, "unknown key \"node\"", NULL, NULL);
	load_bad("{\"version\": 1, \"nodes\": {}}", -EINVAL, "\"nodes\": must be an array",
		 "not an object", NULL);
	load_bad("{\"version\": 1, \"containers\": []}", -EINVAL,
		 "\"containers\": must be an object", NULL, NULL);
	load_bad("{\"version\": 1, \"nodes\": [1]}", -EINVAL, "node 1: must be an object", NULL,
		 NULL);
	load_bad("{\"version\": 1, \"nodes\": [{}]}", -EINVAL, "node 1: \"path\" is missing", NULL,
		 NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": 7}]}", -EINVAL,
		 "\"path\": must be a string", NULL, NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/a\"}, {\"path\": \"a/\"}]}", -EINVAL,
		 "node 2: \"path\": \"a/\" is not a node path", NULL, NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/a\\u0000b\"}]}", -EINVAL,
		 "is not a node path", "\\x00", NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/a\"}, {\"path\": \"/a\"}]}", -EINVAL,
		 "node /a: defined twice", NULL, NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/\"}, {\"path\": \"/\"}]}", -EINVAL,
		 "node /: defined twice", NULL, NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"mknod_needs_cap\": 0}]}",
		 -EINVAL, "node /a: \"mknod_needs_cap\": must be a boolean", NULL, NULL);
	/* devwld's key: libdevwl checks its type and ignores it. */
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"cdi_annotations\": \"yes\"}]}",
		 -EINVAL, "node /a: \"cdi_annotations\": must be a boolean, not a string", NULL,
		 NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"why\": [\"x\"]}]}", -EINVAL,
		 "node /a: \"why\": must be an object, not an array", NULL, NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"why\": {\"allow a\": 1}}]}",
		 -EINVAL, "node /a: \"why\": \"allow a\": must be a string, not an integer", NULL,
		 NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"rules\": \"deny a\"}]}",
		 -EINVAL, "node /a: \"rules\": must be an array", NULL, NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"rules\": [\"deny a\", 3]}]}",
		 -EINVAL, "node /a: rule 2: must be a string, not an integer", NULL, NULL);
	load_bad("{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"devices\": {}}]}", -EINVAL,
		 "node /a: \"devices\": must be an array", NULL, NULL);
}

static void test_devwl_policy_load_string_bad_rule(void **state)
{
	char *big;

	(void)state;
	load_bad("{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":[\"permit c 1:3 r\"]}]}",
		 -EINVAL, "node /a: rule 1 \"permit c 1:3 r\": must be \"allow RULE\"", NULL, NULL);
	load_bad("{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":[\"allow\"]}]}", -EINVAL,
		 "rule 1 \"allow\"", NULL, NULL);
	load_bad("{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":[\"deny c 1:3\"]}]}",
		 -EINVAL, "rule 1 \"deny c 1:3\": missing access", NULL, NULL);
	load_bad("{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":[\"deny c 1:4294967296 "
		 "r\"]}]}",
		 -EINVAL, "node /a: rule 1", "minor is larger than 4294967295", NULL);
	load_bad("{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":[\"deny x 1:3 r\\n\"]}]}",
		 -EINVAL, "rule 1 \"deny x 1:3 r\\n\": type must be", NULL, NULL);
	/* Longer than one kernel write: E2BIG, and the quoted rule is cut short. */
	big = calloc(1, 5000 + 100);
	assert_non_null(big);
	strcpy(big, "{\"version\":1,\"nodes\":[{\"path\":\"/a\",\"rules\":[\"deny c 1:3 r");
	memset(big + strlen(big), ' ', 4200);
	strcat(big, "\"]}]}");
	load_bad(big, -E2BIG, "node /a: rule 1 \"deny c 1:3 r    ", "...", "longer than 4096");
	free(big);
}

static void test_devwl_policy_load_string_refused(void **state)
{
	(void)state;
	/* "allow a" below a DENY parent. */
	load_bad("{\"version\":1,\"nodes\":[{\"path\":\"/\",\"rules\":[\"deny a\"]},"
		 "{\"path\":\"/a\",\"rules\":[\"allow a\"]}]}",
		 -EPERM, "node /a: rule 1 \"allow a\": refused by parent /", NULL, NULL);
	/* Lifting a denial the parent holds. */
	load_bad("{\"version\":1,\"nodes\":[{\"path\":\"/\",\"rules\":[\"deny c 1:* w\"]},"
		 "{\"path\":\"/a\",\"rules\":[\"allow c 1:3 rw\"]}]}",
		 -EPERM, "node /a: rule 1 \"allow c 1:3 rw\": refused by parent /", "denies", NULL);
	/* The same refusal from a devices entry names the entry. */
	load_bad("{\"version\":1,\"nodes\":[{\"path\":\"/\",\"rules\":[\"deny a\"]},"
		 "{\"path\":\"/"
		 "a\",\"devices\":[{\"allow\":false},{\"allow\":true,\"type\":\"c\"}]}]}",
		 -EPERM, "node /a: device 2: refused by parent /", "c *:* rwm", NULL);
	/* A default cannot change once a node has children. */
	load_bad("{\"version\":1,\"nodes\":[{\"path\":\"/a\"},{\"path\":\"/\",\"rules\":[\"deny "
		 "a\"]}]}",
		 -EINVAL, "node /: rule 1 \"deny a\": node / has children", NULL, NULL);
}

static void test_devwl_policy_load_string_bad_oci(void **state)
{
	static const struct {
		const char *entry, *want;
	} cases[] = {
		{"7", "device 2: must be an object, not an integer"},
		{"{}", "device 2: \"allow\" is missing"},
		{"{\"allow\": 1}", "device 2: \"allow\": must be a boolean"},
		{"{\"allow\": true, \"typ\": \"c\"}", "device 2: unknown key \"typ\""},
		{"{\"allow\": true, \"type\": \"x\"}", "device 2: \"type\": \"x\" is not"},
		{"{\"allow\": true, \"type\": \"cc\"}", "\"type\": \"cc\" is not"},
		{"{\"allow\": true, \"type\": 99}", "\"type\": must be a string"},
		{"{\"allow\": true, \"major\": \"1\"}", "device 2: \"major\": must be an integer"},
		{"{\"allow\": true, \"major\": 1.5}",
		 "\"major\": must be an integer or null, not a "
		 "fraction"},
		{"{\"allow\": true, \"minor\": -2}", "device 2: \"minor\": -2 is out of range"},
		{"{\"allow\": true, \"minor\": 4294967296}",
		 "\"minor\": 4294967296 is out of range"},
		{"{\"allow\": true, \"major\": 99999999999999999999999}",
		 "\"major\": 18446744073709551615 is out of range"},
		{"{\"allow\": true, \"major\": -99999999999999999999999}", "is out of range"},
		{"{\"allow\": true, \"access\": \"rwx\"}", "device 2: \"access\": \"rwx\" is not"},
		{"{\"allow\": true, \"access\": \"rwmr\"}",
		 "\"access\": \"rwmr\" is not up to three"},
		{"{\"allow\": true, \"access\": [\"r\"]}", "\"access\": must be a string"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512];

		snprintf(text, sizeof(text),
			 "{\"version\":1,\"nodes\":[{\"path\":\"/k8s\",\"devices\":[{\"allow\":"
			 "false},%s]}]}",
			 cases[i].entry);
		load_bad(text, -EINVAL, "node /k8s: ", cases[i].want, NULL);
	}
}

/* ---- to_string and round trips -------------------------------------------------------------- */

static char *dump(const struct devwl_policy *p)
{
	char *s = NULL;

	assert_int_equal(devwl_policy_to_string(p, &s), 0);
	return s;
}

/* Sort the lines of a listing in place, so that order-only differences compare equal. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *sorted_lines(const char *s)
{
	char *copy = strdup(s), *lines[4096], *out;
	size_t n = 0, len = strlen(s), o = 0;

	assert_non_null(copy);
	for (char *t = strtok(copy, "\n"); t && n < 4096; t = strtok(NULL, "\n"))
		lines[n++] = t;
	qsort(lines, n, sizeof(lines[0]), cmp_str);
	out = malloc(len + 2);
	assert_non_null(out);
	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(out + o, "%s\n", lines[i]);
	out[o] = '\0';
	free(copy);
	return out;
}

struct compare {
	const struct devwl_policy *other;
	size_t nodes, order_only; /* ALLOW nodes whose exceptions came back reordered */
};

static const uint32_t probe_numbers[] = {1, 2, 3, 7, DEVWL_ANY};

static int compare_node(struct devwl_node *a, void *userdata)
{
	struct compare *c = userdata;
	const struct devwl_node *b = devwl_policy_find(c->other, devwl_node_path(a));
	char *la = NULL, *lb = NULL, *sa = NULL, *sb = NULL;

	if (!b)
		fail_msg("node %s lost", devwl_node_path(a));
	c->nodes++;
	assert_int_equal(devwl_node_list(a, &la), 0);
	assert_int_equal(devwl_node_list(b, &lb), 0);
	if (strcmp(la, lb))
		fail_msg("list %s differs:\n%s---\n%s", devwl_node_path(a), la, lb);
	assert_int_equal(devwl_node_show(a, &sa), 0);
	assert_int_equal(devwl_node_show(b, &sb), 0);
	if (strcmp(sa, sb)) {
		/* Only an ALLOW node below the root may come back in another order. */
		char *xa = sorted_lines(sa), *xb = sorted_lines(sb);
		if (!devwl_node_parent(a) || devwl_node_behavior(a) != DEVWL_BEHAVIOR_ALLOW ||
		    strcmp(xa, xb))
			fail_msg("show %s differs:\n%s---\n%s", devwl_node_path(a), sa, sb);
		c->order_only++;
		free(xa);
		free(xb);
	}
	for (int t = DEVWL_DEV_BLOCK; t <= DEVWL_DEV_CHAR; t++)
		for (size_t i = 0; i < 5; i++)
			for (size_t j = 0; j < 5; j++)
				for (int acc = 0; acc <= DEVWL_ACC_MASK; acc++)
					if (devwl_node_check(a, t, probe_numbers[i],
							     probe_numbers[j], acc) !=
					    devwl_node_check(b, t, probe_numbers[i],
							     probe_numbers[j], acc))
						fail_msg("check %s differs", devwl_node_path(a));
	free(la);
	free(lb);
	free(sa);
	free(sb);
	return 0;
}

/* Save, load, compare every node both ways; then saving again is a fixed point. */
static size_t assert_round_trip(const struct devwl_policy *p)
{
	struct devwl_policy *q = NULL, *q2 = NULL;
	struct devwl_error err = {0};
	struct compare c = {0};
	char *s = dump(p), *s2, *s3;

	if (devwl_policy_load_string(s, "rt.json", &q, &err) < 0)
		fail_msg("reload failed: %s\n%s", err.msg, s);
	assert_int_equal(devwl_policy_count(p), devwl_policy_count(q));
	c.other = q;
	devwl_policy_foreach((struct devwl_policy *)p, compare_node, &c);
	assert_int_equal(c.nodes, devwl_policy_count(p));
	s2 = dump(q);
	if (devwl_policy_load_string(s2, "rt2.json", &q2, &err) < 0)
		fail_msg("second reload failed: %s\n%s", err.msg, s2);
	s3 = dump(q2);
	if (strcmp(s2, s3))
		fail_msg("not a fixed point:\n%s---\n%s", s2, s3);
	/* A tree with nothing reordered saves to the very same text. */
	if (!c.order_only && strcmp(s, s2))
		fail_msg("save differs after reload:\n%s---\n%s", s, s2);
	devwl_policy_free(q);
	devwl_policy_free(q2);
	free(s);
	free(s2);
	free(s3);
	return c.order_only;
}

static void test_devwl_policy_to_string_example(void **state)
{
	struct devwl_policy *p = NULL, *q;
	struct devwl_error err = {0};
	char *s;

	(void)state;
	assert_int_equal(devwl_policy_load_file(data_path("example.json"), &p, &err), 0);
	s = dump(p);
	assert_string_equal(s, "{\n"
			       "  \"version\":1,\n"
			       "  \"nodes\":[\n"
			       "    {\n"
			       "      \"path\":\"/containers\",\n"
			       "      \"rules\":[\n"
			       "        \"deny a\",\n"
			       "        \"allow c 1:3 rwm\",\n"
			       "        \"allow c 136:* rw\",\n"
			       "        \"allow c 195:* rw\"\n"
			       "      ]\n"
			       "    },\n"
			       "    {\n"
			       "      \"path\":\"/containers/web\",\n"
			       "      \"rules\":[\n"
			       "        \"deny a\",\n"
			       "        \"allow c 1:3 rwm\",\n"
			       "        \"allow c 136:* rw\"\n"
			       "      ]\n"
			       "    },\n"
			       "    {\n"
			       "      \"path\":\"/containers/gpu\",\n"
			       "      \"rules\":[\n"
			       "        \"deny a\",\n"
			       "        \"allow c 1:3 rwm\",\n"
			       "        \"allow c 136:* r\",\n"
			       "        \"allow c 195:* rw\"\n"
			       "      ],\n"
			       "      \"mknod_needs_cap\":false\n"
			       "    },\n"
			       "    {\n"
			       "      \"path\":\"/k8s\",\n"
			       "      \"rules\":[\n"
			       "        \"deny a\",\n"
			       "        \"allow c 1:3 rwm\"\n"
			       "      ]\n"
			       "    }\n"
			       "  ]\n"
			       "}\n");
	q = load_ok(s);
	check_example(q);
	assert_int_equal(assert_round_trip(p), 0);
	devwl_policy_free(p);
	devwl_policy_free(q);
	free(s);
}

static void test_devwl_policy_to_string_fresh(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	char *s;

	(void)state;
	assert_non_null(p);
	s = dump(p);
	assert_string_equal(s, "{\n  \"version\":1,\n  \"nodes\":[\n  ]\n}\n");
	free(s);
	/* A child equal to a fresh copy of its parent needs no rules. */
	assert_int_equal(devwl_policy_mkdir(p, "/a"), 0);
	s = dump(p);
	assert_non_null(strstr(s, "\"path\":\"/a\"\n"));
	free(s);
	assert_round_trip(p);
	devwl_policy_free(p);
}

static int write_str(struct devwl_policy *p, const char *path, enum devwl_file f, const char *r)
{
	return devwl_policy_write(p, path, f, r, strlen(r), NULL);
}

/* States that plain replay would get wrong, each made by real kernel writes. */
static void test_devwl_policy_to_string_corners(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	char *s;

	(void)state;
	assert_non_null(p);
	/* Empty-access exceptions (a multi-line write) on DENY and ALLOW nodes. */
	assert_int_equal(devwl_policy_mkdir(p, "/d"), 0);
	assert_int_equal(write_str(p, "/d", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(write_str(p, "/d", DEVWL_FILE_ALLOW, "c 1:3 \nx"), 0);
	assert_int_equal(write_str(p, "/d", DEVWL_FILE_ALLOW, "c 1:* rw"), 0);
	assert_int_equal(write_str(p, "/d", DEVWL_FILE_ALLOW, "c 1:3 m"), 0);
	assert_show(p, "/d", "behavior deny\nallow c 1:3 m\nallow c 1:* rw\n");
	assert_int_equal(write_str(p, "/", DEVWL_FILE_DENY, "c 9:9 \nx"), 0);
	assert_int_equal(write_str(p, "/", DEVWL_FILE_DENY, "b 8:* w"), 0);
	assert_show(p, "/", "behavior allow\ndeny c 9:9 \ndeny b 8:* w\n");
	/* An exception of a DENY child whose bits two parent exceptions grant apart. */
	assert_int_equal(devwl_policy_mkdir(p, "/d/e"), 0);
	assert_int_equal(write_str(p, "/d/e", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(write_str(p, "/d/e", DEVWL_FILE_ALLOW, "c 1:3 rw"), 0);
	assert_int_equal(write_str(p, "/d/e", DEVWL_FILE_ALLOW, "c 1:3 m"), 0);
	assert_show(p, "/d/e", "behavior deny\nallow c 1:3 rwm\n");
	assert_int_equal(write_str(p, "/d/e", DEVWL_FILE_ALLOW, "c 1:4 \nx"), 0);
	/* An ALLOW child that dropped its parent's empty-access exception, then gained
	 * exceptions after the parent's. */
	assert_int_equal(devwl_policy_mkdir(p, "/w"), 0);
	assert_int_equal(write_str(p, "/w", DEVWL_FILE_ALLOW, "c 9:9 r"), 0);
	assert_int_equal(write_str(p, "/w", DEVWL_FILE_DENY, "c 4:4 rw"), 0);
	assert_show(p, "/w", "behavior allow\ndeny b 8:* w\ndeny c 4:4 rw\n");
	/* An ALLOW child holding more of a key than its parent. */
	assert_int_equal(devwl_policy_mkdir(p, "/w/x"), 0);
	assert_int_equal(write_str(p, "/w", DEVWL_FILE_ALLOW, "c 4:4 w"), 0);
	assert_show(p, "/w/x", "behavior allow\ndeny b 8:* w\ndeny c 4:4 rw\n");
	assert_show(p, "/w", "behavior allow\ndeny b 8:* w\ndeny c 4:4 r\n");
	/* Waivers: set on one node, inherited, turned back on below. */
	devwl_node_set_mknod_needs_cap(devwl_policy_find(p, "/w"), false);
	assert_int_equal(devwl_policy_mkdir(p, "/w/y"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/w/y/z"), 0);
	devwl_node_set_mknod_needs_cap(devwl_policy_find(p, "/w/y/z"), true);

	s = dump(p);
	/* Empty access is written as a devices entry that says so. */
	assert_non_null(strstr(s, "\"access\":\"\""));
	/* The split grant replays in two writes. */
	assert_non_null(strstr(s, "\"allow c 1:3 m\""));
	assert_int_equal(assert_round_trip(p), 0);
	free(s);
	devwl_policy_free(p);
}

/*
 * The kernel keeps an ALLOW child's exceptions in the order they arrived, which can
 * interleave with its parent's; replay can only put the parent's first. Decisions and
 * devices.list are the same; only show's order differs (devwl-policy(5), CAVEATS).
 */
static void test_devwl_policy_to_string_reordered(void **state)
{
	struct devwl_policy *p = devwl_policy_new();

	(void)state;
	assert_non_null(p);
	assert_int_equal(write_str(p, "/", DEVWL_FILE_DENY, "c 1:1 r"), 0);
	assert_int_equal(write_str(p, "/", DEVWL_FILE_DENY, "c 2:2 r"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/a"), 0);
	assert_int_equal(write_str(p, "/", DEVWL_FILE_ALLOW, "c 1:1 r"), 0);
	assert_int_equal(write_str(p, "/", DEVWL_FILE_DENY, "c 1:1 r"), 0);
	assert_show(p, "/", "behavior allow\ndeny c 2:2 r\ndeny c 1:1 r\n");
	assert_show(p, "/a", "behavior allow\ndeny c 1:1 r\ndeny c 2:2 r\n");
	assert_int_equal(assert_round_trip(p), 1);
	devwl_policy_free(p);
}

/* A small universe of rules, so that random writes collide often. */
static void random_rule(unsigned *seed, struct devwl_rule *r)
{
	static const uint32_t nums[] = {1, 2, 3, DEVWL_ANY};

	r->type = rand_r(seed) % 16 == 0  ? DEVWL_DEV_ALL
		  : rand_r(seed) % 3 == 0 ? DEVWL_DEV_BLOCK
					  : DEVWL_DEV_CHAR;
	r->major = nums[rand_r(seed) % 4];
	r->minor = nums[rand_r(seed) % 4];
	r->access = (uint8_t)(rand_r(seed) % 8);
	if (r->type == DEVWL_DEV_ALL) {
		r->major = r->minor = DEVWL_ANY;
		r->access = DEVWL_ACC_MASK;
	}
}

static struct devwl_policy *random_policy(unsigned *seed, int ops)
{
	struct devwl_policy *p = devwl_policy_new();
	char paths[32][64];
	size_t n = 1;

	assert_non_null(p);
	strcpy(paths[0], "/");
	for (int i = 0; i < ops; i++) {
		const char *path = paths[rand_r(seed) % n];
		struct devwl_node *node = devwl_policy_find(p, path);
		int what = rand_r(seed) % 10;

		if (what == 0 && n < 32) {
			char child[96];
			snprintf(child, sizeof(child), "%s/n%zu", strcmp(path, "/") ? path : "", n);
			if (strlen(child) < 56 && devwl_policy_mkdir(p, child) == 0)
				strcpy(paths[n++], child);
		} else if (what == 1) {
			devwl_node_set_mknod_needs_cap(node, rand_r(seed) % 2);
		} else {
			struct devwl_rule r;
			random_rule(seed, &r);
			/* Refusals are part of the game: they leave the tree as it was. */
			devwl_node_update(
				node, rand_r(seed) % 2 ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY, &r);
		}
	}
	return p;
}

static void test_devwl_policy_to_string_random_round_trip(void **state)
{
	size_t reordered = 0, trees = 2000;
	unsigned seed = 12345;

	(void)state;
	for (size_t t = 0; t < trees; t++) {
		struct devwl_policy *p = random_policy(&seed, 10 + (int)(t % 120));
		reordered += assert_round_trip(p);
		devwl_policy_free(p);
	}
	print_message("%zu random trees round-tripped; %zu ALLOW nodes came back reordered\n",
		      trees, reordered);
}

/* ---- saving ------------------------------------------------------------------------------ */

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = calloc(1, 1 << 20);
	size_t n = 0;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 20) - 1, f);
	assert_false(ferror(f));
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_devwl_policy_save_file_atomic(void **state)
{
	char dir[] = "/tmp/devwl-test-save-XXXXXX", file[128], sub[128];
	struct devwl_policy *p = NULL, *q = NULL;
	struct devwl_error err = {0};
	struct stat st;
	char *want, *got;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/policy.json", dir);
	assert_int_equal(devwl_policy_load_file(data_path("runc-defaults.json"), &p, &err), 0);
	want = dump(p);

	/* A new file, then a replacement that keeps the old file's mode. */
	assert_int_equal(devwl_policy_save_file(p, file), 0);
	got = read_file(file);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(chmod(file, 0600), 0);
	assert_int_equal(devwl_policy_save_file(p, file), 0);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(count_entries(dir), 1); /* no temporary file left behind */
	assert_int_equal(devwl_policy_load_file(file, &q, &err), 0);
	assert_round_trip(q);
	devwl_policy_free(q);

	/* The rename fails onto a non-empty directory: it stays, the temp file goes. */
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(file, sizeof(file), "%s/sub/keep", dir);
	assert_int_equal(mkdir(file, 0755), 0);
	snprintf(file, sizeof(file), "%s/sub", dir);
	assert_true(devwl_policy_save_file(p, file) < 0);
	assert_int_equal(stat(sub, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(count_entries(dir), 2);
	assert_int_equal(count_entries(sub), 1);
	snprintf(file, sizeof(file), "%s/sub/keep", dir);
	rmdir(file);
	rmdir(sub);

	/* No such directory; a path naming a directory. */
	snprintf(file, sizeof(file), "%s/missing/policy.json", dir);
	assert_int_equal(devwl_policy_save_file(p, file), -ENOENT);
	snprintf(file, sizeof(file), "%s/", dir);
	assert_int_equal(devwl_policy_save_file(p, file), -EISDIR);
	assert_int_equal(devwl_policy_save_file(p, NULL), -EINVAL);

	snprintf(file, sizeof(file), "%s/policy.json", dir);
	unlink(file);
	assert_int_equal(rmdir(dir), 0);
	free(want);
	devwl_policy_free(p);
}

/* ---- OCI devices arrays ------------------------------------------------------------------- */

static void test_devwl_node_import_oci_valid(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_error err = {0};
	struct devwl_node *n;

	(void)state;
	assert_non_null(p);
	assert_int_equal(devwl_policy_mkdir(p, "/c"), 0);
	n = devwl_policy_find(p, "/c");
	if (devwl_node_import_oci(n,
				  "[{\"allow\":false,\"access\":\"rwm\"},"
				  "{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":3,"
				  "\"access\":\"rwm\"},"
				  "{\"allow\":true,\"type\":\"c\",\"major\":-1,\"minor\":-1,"
				  "\"access\":\"m\"},"
				  "{\"allow\":true,\"type\":\"b\",\"major\":8,\"minor\":null},"
				  "{\"allow\":true,\"type\":\"c\",\"major\":4,\"minor\":4294967295,"
				  "\"access\":\"\"},"
				  "{\"allow\":false,\"type\":\"c\",\"major\":1,\"minor\":3,"
				  "\"access\":\"w\"},"
				  "{\"allow\":true,\"type\":null,\"major\":5,\"access\":null}]",
				  &err) < 0)
		fail_msg("%s", err.msg);
	/* The last entry is "a": it ignores its numbers and restores allow-all. */
	assert_show(p, "/c", "behavior allow\n");
	assert_int_equal(devwl_node_import_oci(n,
					       "[{\"allow\":false}, {\"allow\":true,"
					       "\"type\":\"c\",\"major\":1,\"minor\":3,"
					       "\"access\":\"rw\"}, {\"allow\":true,\"type\":"
					       "\"c\",\"major\":4,\"access\":\"\"}]",
					       &err),
			 0);
	assert_show(p, "/c", "behavior deny\nallow c 1:3 rw\nallow c 4:* \n");
	assert_int_equal(devwl_node_import_oci(n, "  [ ]  ", &err), 0);
	assert_show(p, "/c", "behavior deny\nallow c 1:3 rw\nallow c 4:* \n");
	devwl_policy_free(p);
}

struct snapshot_text {
	char *v[16];
	size_t n;
};

static int snap_one(struct devwl_node *node, void *userdata)
{
	struct snapshot_text *t = userdata;

	assert_true(t->n < 16);
	assert_int_equal(devwl_node_show(node, &t->v[t->n++]), 0);
	return 0;
}

static void snap_text(struct devwl_policy *p, struct snapshot_text *t)
{
	memset(t, 0, sizeof(*t));
	devwl_policy_foreach(p, snap_one, t);
}

static void assert_same_snap(struct snapshot_text *a, struct snapshot_text *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_string_equal(a->v[i], b->v[i]);
		free(a->v[i]);
		free(b->v[i]);
	}
}

/* A refusal after a revocation that reached the descendants undoes everything. */
static void test_devwl_node_import_oci_all_or_nothing(void **state)
{
	struct devwl_policy *p = NULL;
	struct snapshot_text before, after;
	struct devwl_error err = {0};
	struct devwl_node *runc;
	int r;

	(void)state;
	assert_int_equal(devwl_policy_load_file(data_path("runc-defaults.json"), &p, &err), 0);
	runc = devwl_policy_find(p, "/runc");
	snap_text(p, &before);
	r = devwl_node_import_oci(runc,
				  "[{\"allow\":false,\"type\":\"c\",\"major\":1,\"minor\":3},"
				  "{\"allow\":false,\"type\":\"c\",\"major\":136},"
				  "{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":3,"
				  "\"access\":\"r\"},"
				  "{\"allow\":true,\"type\":\"b\",\"major\":259,\"minor\":1,"
				  "\"access\":\"rw\"}]",
				  &err);
	assert_error(r, &err, -EPERM, "node /runc: entry 4: refused by parent /", "b 259:1 rw",
		     NULL);
	snap_text(p, &after);
	assert_same_snap(&before, &after);

	/* "allow a" on a node with children: refused, nothing changed either. */
	snap_text(p, &before);
	r = devwl_node_import_oci(runc,
				  "[{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":"
				  "3},{\"allow\":true}]",
				  &err);
	assert_error(r, &err, -EINVAL, "entry 2", "has children", NULL);
	snap_text(p, &after);
	assert_same_snap(&before, &after);

	/* A bad entry anywhere is found before the first write. */
	snap_text(p, &before);
	r = devwl_node_import_oci(runc, "[{\"allow\":false},{\"allow\":true,\"major\":1.0}]", &err);
	assert_error(r, &err, -EINVAL, "OCI devices: entry 2: \"major\"", NULL);
	snap_text(p, &after);
	assert_same_snap(&before, &after);
	devwl_policy_free(p);
}

static void test_devwl_node_import_oci_bad(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *root;
	struct devwl_error err = {0};
	int r;

	(void)state;
	assert_non_null(p);
	root = devwl_policy_find(p, "/");
	r = devwl_node_import_oci(root, "{\"allow\": true}", &err);
	assert_error(r, &err, -EINVAL, "OCI devices: must be a JSON array", NULL);
	r = devwl_node_import_oci(root, "[{\"allow\": true}", &err);
	assert_error(r, &err, -EINVAL, "OCI devices:1:17: invalid JSON", "unexpected end", NULL);
	r = devwl_node_import_oci(root, "[{\"allow\": true, \"type\": \"c\", \"mjaor\": 1}]", &err);
	assert_error(r, &err, -EINVAL, "entry 1: unknown key \"mjaor\"", NULL);
	r = devwl_node_import_oci(root, "[1]", &err);
	assert_error(r, &err, -EINVAL, "entry 1: must be an object", NULL);
	r = devwl_node_import_oci(NULL, "[]", &err);
	assert_int_equal(r, -EINVAL);
	r = devwl_node_import_oci(root, NULL, &err);
	assert_int_equal(r, -EINVAL);
	assert_show(p, "/", "behavior allow\n");
	devwl_policy_free(p);
}

/* Export, replay on a fresh sibling, compare: for every node of random trees. */
struct export_ctx {
	struct devwl_policy *p;
	size_t nodes, reordered;
};

static int export_one(struct devwl_node *node, void *userdata)
{
	struct export_ctx *x = userdata;
	const struct devwl_node *parent = devwl_node_parent(node);
	struct devwl_policy *fresh = NULL;
	struct devwl_node *copy;
	struct devwl_error err = {0};
	char *json = NULL, *a = NULL, *b = NULL, path[128];

	assert_int_equal(devwl_node_export_oci(node, &json), 0);
	if (parent) {
		snprintf(path, sizeof(path), "%s/export-copy",
			 strcmp(devwl_node_path(parent), "/") ? devwl_node_path(parent) : "");
		assert_int_equal(devwl_policy_mkdir(x->p, path), 0);
		copy = devwl_policy_find(x->p, path);
	} else {
		fresh = devwl_policy_new();
		copy = devwl_policy_find(fresh, "/");
	}
	if (devwl_node_import_oci(copy, json, &err) < 0)
		fail_msg("%s: %s\n%s", devwl_node_path(node), err.msg, json);
	/* The waiver is not part of an OCI array. */
	devwl_node_set_mknod_needs_cap(copy, devwl_node_mknod_needs_cap(node));
	assert_int_equal(devwl_node_list(node, &a), 0);
	assert_int_equal(devwl_node_list(copy, &b), 0);
	assert_string_equal(a, b);
	free(a);
	free(b);
	assert_int_equal(devwl_node_show(node, &a), 0);
	assert_int_equal(devwl_node_show(copy, &b), 0);
	if (strcmp(a, b)) {
		char *xa = sorted_lines(a), *xb = sorted_lines(b);
		if (devwl_node_behavior(node) != DEVWL_BEHAVIOR_ALLOW || strcmp(xa, xb))
			fail_msg("%s:\n%s---\n%s\n%s", devwl_node_path(node), a, b, json);
		x->reordered++;
		free(xa);
		free(xb);
	}
	free(a);
	free(b);
	free(json);
	if (parent)
		assert_int_equal(devwl_policy_rmdir(x->p, path), 0);
	devwl_policy_free(fresh);
	x->nodes++;
	return 0;
}

static int collect(struct devwl_node *node, void *userdata)
{
	struct devwl_node ***next = userdata;

	*(*next)++ = node;
	return 0;
}

static void test_devwl_node_export_oci_random(void **state)
{
	struct export_ctx x = {0};
	unsigned seed = 777;

	(void)state;
	for (int t = 0; t < 500; t++) {
		struct devwl_node **nodes, **end;
		size_t count;

		x.p = random_policy(&seed, 10 + t % 80);
		/* The copies come and go under the parents: list the nodes first. */
		count = devwl_policy_count(x.p);
		nodes = calloc(count, sizeof(*nodes));
		assert_non_null(nodes);
		end = nodes;
		devwl_policy_foreach(x.p, collect, &end);
		for (size_t i = 0; i < count; i++)
			export_one(nodes[i], &x);
		free(nodes);
		devwl_policy_free(x.p);
	}
	print_message("exported and replayed %zu nodes; %zu ALLOW nodes came back reordered\n",
		      x.nodes, x.reordered);
}

/* Every key the parser knows, at each level, as it lists them when refusing an unknown
 * one, has its entry in devwl-policy(5): a key added to a table without its page fails. */
static void test_devwl_policy_keys_documented(void **state)
{
	static const char *const bad[] = {
		"{\"version\": 1, \"x\": 1}",
		"{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"x\": 1}]}",
		"{\"version\": 1, \"nodes\": [{\"path\": \"/a\", \"devices\": [{\"x\": 1}]}]}",
	};
	char *page = doc_page("doc/devwl-policy.5");

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct devwl_policy *p = NULL;
		struct devwl_error err = {0};
		char *known, *key, *save = NULL;

		assert_int_equal(devwl_policy_load_string(bad[i], "t.json", &p, &err), -EINVAL);
		known = strstr(err.msg, "(known: ");
		assert_non_null(known);
		known[strlen(known) - 1] = '\0';
		for (key = strtok_r(known + 8, ", ", &save); key;
		     key = strtok_r(NULL, ", ", &save)) {
			char entry[64], quoted[64];

			/* An entry (".B key") or the key in an example ("key":). */
			snprintf(entry, sizeof(entry), "\n.B %s", key);
			snprintf(quoted, sizeof(quoted), "\"%s\":", key);
			if (!strstr(page, entry) && !strstr(page, quoted))
				fail_msg("devwl-policy(5) does not document the key %s", key);
		}
	}
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devwl_policy_keys_documented),
		cmocka_unit_test(test_devwl_policy_load_file_example),
		cmocka_unit_test(test_devwl_policy_load_file_runc_defaults),
		cmocka_unit_test(test_devwl_policy_load_file_shipped_example),
		cmocka_unit_test(test_devwl_policy_load_string_minimal),
		cmocka_unit_test(test_devwl_policy_load_string_kernel_grammar),
		cmocka_unit_test(test_devwl_policy_load_file_missing),
		cmocka_unit_test(test_devwl_policy_load_file_too_large),
		cmocka_unit_test(test_devwl_policy_load_file_bad_fixtures),
		cmocka_unit_test(test_devwl_policy_load_string_bad_json),
		cmocka_unit_test(test_devwl_policy_load_string_selectors_ignored),
		cmocka_unit_test(test_devwl_policy_load_string_bad_content),
		cmocka_unit_test(test_devwl_policy_load_string_error_place),
		cmocka_unit_test(test_devwl_policy_load_string_bad_rule),
		cmocka_unit_test(test_devwl_policy_load_string_refused),
		cmocka_unit_test(test_devwl_policy_load_string_bad_oci),
		cmocka_unit_test(test_devwl_policy_to_string_example),
		cmocka_unit_test(test_devwl_policy_to_string_fresh),
		cmocka_unit_test(test_devwl_policy_to_string_corners),
		cmocka_unit_test(test_devwl_policy_to_string_reordered),
		cmocka_unit_test(test_devwl_policy_to_string_random_round_trip),
		cmocka_unit_test(test_devwl_policy_save_file_atomic),
		cmocka_unit_test(test_devwl_node_import_oci_valid),
		cmocka_unit_test(test_devwl_node_import_oci_all_or_nothing),
		cmocka_unit_test(test_devwl_node_import_oci_bad),
		cmocka_unit_test(test_devwl_node_export_oci_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
