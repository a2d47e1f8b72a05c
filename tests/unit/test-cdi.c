/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CDI specs (common/cdi.c, common/cdi-spec.c, common/yamljson.c) from the fixture
 * directories tests/unit/cdi/static and dynamic, as /etc/cdi and /var/run/cdi: JSON and
 * YAML, device and spec-level nodes, a device the later directory replaces, a conflict
 * within one directory, bad specs reported by file and field while the rest load; then
 * single documents for the parser's refusals, spec files and directories another uid
 * could have written refused, and cdi: selectors end to end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cdi.h"
#include "devwl.h"
#include "selector.h"

static char top[] = "/tmp/devwl-cdi-XXXXXX", static_dir[PATH_MAX], dynamic_dir[PATH_MAX];

/* The fixtures of from copied into to, mode 0755 and its files 0644, whatever the
 * checkout's umask made them: specs are read only from files no one else can write. */
static void copy_fixtures(const char *from, const char *to)
{
	DIR *d = opendir(from);
	struct dirent *e;

	assert_non_null(d);
	assert_int_equal(mkdir(to, 0755), 0);
	assert_int_equal(chmod(to, 0755), 0);
	while ((e = readdir(d))) {
		char src[PATH_MAX], dst[PATH_MAX], buf[4096];
		ssize_t n;
		int in, out;

		if (e->d_name[0] == '.')
			continue;
		snprintf(src, sizeof(src), "%s/%s", from, e->d_name);
		snprintf(dst, sizeof(dst), "%s/%s", to, e->d_name);
		in = open(src, O_RDONLY | O_CLOEXEC);
		out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		assert_true(in >= 0 && out >= 0);
		while ((n = read(in, buf, sizeof(buf))) > 0)
			assert_int_equal(write(out, buf, (size_t)n), n);
		assert_int_equal(fchmod(out, 0644), 0);
		close(in);
		close(out);
	}
	closedir(d);
}

static int find_fixtures(void **state)
{
	const char *data = getenv("DEVWL_TEST_DATA");
	char from[PATH_MAX];

	(void)state;
	assert_non_null(data);
	assert_non_null(mkdtemp(top));
	snprintf(static_dir, sizeof(static_dir), "%s/static", top);
	snprintf(dynamic_dir, sizeof(dynamic_dir), "%s/dynamic", top);
	snprintf(from, sizeof(from), "%s/../cdi/static", data);
	copy_fixtures(from, static_dir);
	snprintf(from, sizeof(from), "%s/../cdi/dynamic", data);
	copy_fixtures(from, dynamic_dir);
	return 0;
}

static int drop_fixtures(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

static struct cdi_registry *load(bool reversed)
{
	const char *dirs[] = {reversed ? dynamic_dir : static_dir,
			      reversed ? static_dir : dynamic_dir, "/nonexistent/cdi"};
	struct cdi_registry *reg = NULL;

	assert_int_equal(cdi_load(dirs, 3, &reg), 0);
	return reg;
}

static void rules_text(const struct rulevec *rv, char *buf, size_t size)
{
	buf[0] = '\0';
	for (size_t i = 0; i < rv->n; i++) {
		char s[DEVWL_RULE_STR_MAX];

		devwl_rule_format(&rv->v[i], s, sizeof(s));
		strncat(buf, s, size - strlen(buf) - 2);
		strcat(buf, "\n");
	}
}

static void expect(const struct cdi_registry *reg, const char *kind, const char *name,
		   uint8_t access, const char *want)
{
	struct rulevec rv = {0};
	struct devwl_error err = {0};
	char got[1024];
	int r = cdi_resolve(reg, kind, name, access, &rv, &err);

	if (r < 0)
		fail_msg("%s=%s: %s", kind, name, err.msg);
	rules_text(&rv, got, sizeof(got));
	if (strcmp(got, want))
		fail_msg("%s=%s: got\n%swant\n%s", kind, name, got, want);
	free(rv.v);
}

static bool has_error(const struct cdi_registry *reg, const char *a, const char *b)
{
	for (size_t i = 0; i < cdi_n_errors(reg); i++)
		if (strstr(cdi_error(reg, i), a) && strstr(cdi_error(reg, i), b))
			return true;
	return false;
}

#define RWM DEVWL_ACC_MASK
#define RW  (DEVWL_ACC_READ | DEVWL_ACC_WRITE)

static void test_cdi_load_devices(void **state)
{
	struct cdi_registry *reg = load(false);

	(void)state;
	/* The device's own node and the spec's, each with its permissions and the access. */
	expect(reg, "example.com/gpu", "0", RWM, "c 195:0 rw\nc 195:255 rw\n");
	expect(reg, "example.com/gpu", "0", DEVWL_ACC_READ, "c 195:0 r\nc 195:255 r\n");
	expect(reg, "example.com/gpu", "1", RWM, "c 195:1 rwm\nc 195:255 rw\n");
	/* YAML: by stat of the host path; r only; "none" grants nothing; hex numbers. */
	expect(reg, "example.com/fpga", "a", RW, "c 1:3 rw\n");
	expect(reg, "example.com/fpga", "b", RWM, "b 7:200 r\n");
	expect(reg, "example.com/fpga", "b", DEVWL_ACC_WRITE, "");
	expect(reg, "example.com/fpga", "0x10", RWM, "c 31:16 rw\n");
	/* Every device of a kind. */
	expect(reg, "example.com/fpga", "*", DEVWL_ACC_READ, "b 7:200 r\nc 1:3 r\nc 31:16 r\n");
	expect(reg, "example.com/none", "*", RWM, "");
	cdi_free(reg);
}

static void test_cdi_load_later_dir_wins(void **state)
{
	struct cdi_registry *reg = load(false);

	(void)state;
	/* dynamic/gpu2.yaml's gpu=2 replaces static/gpu.json's whole: its nodes, and not
	 * the static spec's spec-level node either. */
	expect(reg, "example.com/gpu", "2", RWM, "c 195:2 rwm\n");
	expect(reg, "example.com/gpu", "*", RW,
	       "c 195:0 rw\nc 195:1 rw\nc 195:2 rw\nc 195:255 rw\n");
	cdi_free(reg);
	/* The other way round, the static copy wins. */
	reg = load(true);
	expect(reg, "example.com/gpu", "2", RWM, "c 195:92 rwm\nc 195:255 rw\n");
	cdi_free(reg);
}

static void test_cdi_load_conflict(void **state)
{
	struct cdi_registry *reg = load(false);
	struct rulevec rv = {0};
	struct devwl_error err = {0};

	(void)state;
	assert_true(has_error(reg, "conflict-b.yaml", "conflicting device example.com/conf=x"));
	assert_true(has_error(reg, "conflicting device", "conflict-a.json"));
	assert_int_equal(cdi_resolve(reg, "example.com/conf", "x", RWM, &rv, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "conflict"));
	assert_int_equal(rv.n, 0);
	/* The other device of the same spec is unaffected; * leaves x out. */
	expect(reg, "example.com/conf", "ok", RWM, "c 240:2 rwm\n");
	expect(reg, "example.com/conf", "*", RWM, "c 240:2 rwm\n");
	cdi_free(reg);
	/* dynamic/conf.json's single x does not lift the conflict, before or after it. */
	reg = load(true);
	assert_int_equal(cdi_resolve(reg, "example.com/conf", "x", RWM, &rv, &err), -ENOENT);
	assert_int_equal(rv.n, 0);
	cdi_free(reg);
}

/* The name learn mode gives a device (common/learn.c): a device that is it alone, never one
 * with other nodes too (a spec's common node counts), nor one in conflict. */
static void test_cdi_name_of(void **state)
{
	struct cdi_registry *reg = load(false);
	char name[64];

	(void)state;
	assert_int_equal(cdi_name_of(reg, DEVWL_DEV_CHAR, 1, 3, name, sizeof(name)), 0);
	assert_string_equal(name, "example.com/fpga=a");
	/* Its nodes that grant nothing (permissions none, types u and p) are nothing. */
	assert_int_equal(cdi_name_of(reg, DEVWL_DEV_BLOCK, 7, 200, name, sizeof(name)), 0);
	assert_string_equal(name, "example.com/fpga=b");
	/* The later directory's copy, without the static spec's common node. */
	assert_int_equal(cdi_name_of(reg, DEVWL_DEV_CHAR, 195, 2, name, sizeof(name)), 0);
	assert_string_equal(name, "example.com/gpu=2");
	/* gpu=0 and gpu=1 come with the spec's /dev/gpuctl: more than the device. */
	assert_int_equal(cdi_name_of(reg, DEVWL_DEV_CHAR, 195, 0, name, sizeof(name)), -ENOENT);
	assert_int_equal(cdi_name_of(reg, DEVWL_DEV_CHAR, 195, 255, name, sizeof(name)), -ENOENT);
	/* conf=x is in conflict (ignored); conf=ok is not. */
	assert_int_equal(cdi_name_of(reg, DEVWL_DEV_CHAR, 240, 5, name, sizeof(name)), -ENOENT);
	assert_int_equal(cdi_name_of(reg, DEVWL_DEV_CHAR, 240, 2, name, sizeof(name)), 0);
	assert_string_equal(name, "example.com/conf=ok");
	assert_int_equal(cdi_name_of(reg, DEVWL_DEV_BLOCK, 1, 3, name, sizeof(name)), -ENOENT);
	assert_int_equal(cdi_name_of(reg, DEVWL_DEV_CHAR, 1, 3, name, 8), -ENAMETOOLONG);
	cdi_free(reg);
}

static void test_cdi_load_bad_specs(void **state)
{
	struct cdi_registry *reg = load(false);
	struct rulevec rv = {0};
	struct devwl_error err = {0};

	(void)state;
	assert_true(has_error(reg, "bad-perm.json",
			      "devices[0].containerEdits.deviceNodes[0].permissions: \"rwx\""));
	assert_true(has_error(reg, "bad-kind.yaml", ": kind: \"nokind\" is not VENDOR/CLASS"));
	assert_true(has_error(reg, "bad-syntax.yaml:", "invalid YAML"));
	/* Four problems: three bad files and the conflict; README.txt is not read. */
	assert_int_equal(cdi_n_errors(reg), 4);
	assert_false(has_error(reg, "README", ""));
	assert_int_equal(cdi_resolve(reg, "example.com/bad", "d", RWM, &rv, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no CDI spec defines the device example.com/bad=d"));
	cdi_free(reg);
}

/* One document through the parser: 0, or the error's message into msg. */
static int parse(const char *text, bool yaml, struct cdi_spec **ret, char *msg)
{
	struct devwl_error err = {0};
	int r = cdi_spec_parse(text, strlen(text), yaml, "t", ret, &err);

	strcpy(msg, err.msg);
	return r;
}

static void refused(const char *text, bool yaml, const char *want)
{
	struct cdi_spec *spec = NULL;
	char msg[sizeof(((struct devwl_error *)0)->msg)];

	if (parse(text, yaml, &spec, msg) != -EINVAL || !strstr(msg, want))
		fail_msg("%s: \"%s\", want \"%s\"", text, msg, want);
	assert_null(spec);
}

#define ENV  "\"containerEdits\": {\"env\": [\"A=1\"]}"
#define HEAD "{\"cdiVersion\": \"0.6.0\", \"kind\": \"a.b/c\", "
#define NODE(x)                                                                                    \
	HEAD "\"devices\": [{\"name\": \"d\", \"containerEdits\": {\"deviceNodes\": [" x "]}}]}"

static void test_cdi_spec_parse_refusals(void **state)
{
	(void)state;
	refused("[]", false, "t: (top): not an object");
	refused("{\"kind\": \"a.b/c\", \"devices\": []}", false, "t: cdiVersion: missing");
	refused("{\"cdiVersion\": \"six\", \"kind\": \"a.b/c\"}", false, "cdiVersion: \"six\"");
	refused("{\"cdiVersion\": \"0.6.0\", \"kind\": \"a.b/c/d\"}", false, "kind: \"a.b/c/d\"");
	refused(HEAD "\"devices\": []}", false, "devices: empty");
	refused(HEAD "\"devices\": {}}", false, "devices: not an array");
	refused(HEAD "\"devices\": [{\"name\": \"-x\"}]}", false, "devices[0].name: \"-x\"");
	refused(HEAD "\"devices\": [{\"name\": \"x\", " ENV "}, {\"name\": \"x\", " ENV "}]}",
		false, "devices[1].name: \"x\" is already devices[0]");
	refused(HEAD "\"devices\": [{\"name\": \"x\"}]}", false,
		"devices[0].containerEdits: missing or empty");
	refused(HEAD "\"devices\": [{\"name\": \"x\", \"containerEdits\": {\"deviceNodes\": [], "
		     "\"env\": null}}]}",
		false, "devices[0].containerEdits: missing or empty");
	refused("{\"cdiVersion\": \"9.0.0\", \"kind\": \"a.b/c\"}", false,
		"cdiVersion: \"9.0.0\" is no CDI version devwl knows");
	refused(HEAD "\"devices\": [{\"name\": \"x\", \"containerEdits\": []}]}", false,
		"devices[0].containerEdits: not an object");
	refused(NODE("{\"type\": \"c\"}"), false, "deviceNodes[0].path: missing");
	refused(NODE("{\"path\": \"/dev/x\", \"type\": \"char\"}"), false,
		"\"char\" is not c, b, u or p");
	refused(NODE("{\"path\": \"/dev/x\", \"major\": -1}"), false, "major: -1 is out of range");
	refused(NODE("{\"path\": \"/dev/x\", \"minor\": 4294967295}"), false, "minor: 4294967295");
	refused(NODE("{\"path\": \"/dev/x\", \"major\": \"1\"}"), false, "major: not an integer");
	refused(NODE("{\"path\": \"/dev/x\", \"permissions\": \"rwz\"}"), false,
		"permissions: \"rwz\" is not made of r, w and m");
	refused(NODE("{\"path\": \"/dev/x\\u0000y\"}"), false, "path: holds a NUL byte");
	refused("{\"cdiVersion\": ", false, "t: byte");
	refused(HEAD "\"devices\": [{\"name\": \"d\", " ENV "}]} x", false, "invalid JSON");
	/* YAML: a quoted number is a string; an alias bomb stops; a non-scalar key. */
	refused("cdiVersion: 0.6.0\nkind: a.b/c\ndevices:\n- name: d\n  containerEdits:\n"
		"    deviceNodes:\n    - {path: /dev/x, major: \"1\"}\n",
		true, "deviceNodes[0].major: not an integer");
	refused("a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, "
		"*a]\n"
		"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, "
		"*c, *c, *c, *c]\n"
		"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, "
		"*e, *e, *e]\n",
		true, "more than 100000 nodes");
	refused("? [a]\n: b\n", true, "t:1:3: a mapping key that is no scalar");
	refused("", true, "t: no YAML document");
	refused("a: [\n", true, "t:2:1: invalid YAML");
}

static void test_cdi_spec_parse_accepts(void **state)
{
	struct cdi_spec *spec = NULL;
	char msg[sizeof(((struct devwl_error *)0)->msg)];

	(void)state;
	/* Unknown members and other edits are the runtime's; hostPath wins over path. */
	assert_int_equal(parse(NODE("{\"path\": \"/dev/x\", \"hostPath\": \"/dev/y\", \"type\": "
				    "\"u\", \"major\": 4, \"minor\": 64, \"fileMode\": 438, "
				    "\"uid\": 0, \"future\": true}"),
			       false, &spec, msg),
			 0);
	assert_string_equal(spec->kind, "a.b/c");
	assert_int_equal(spec->n_devs, 1);
	assert_int_equal(spec->devs[0].n_nodes, 1);
	assert_string_equal(spec->devs[0].nodes[0].path, "/dev/y");
	/* u: no rule, as the CDI gives it none. */
	assert_true(spec->devs[0].nodes[0].no_rule);
	assert_int_equal(spec->devs[0].nodes[0].access, DEVWL_ACC_MASK);
	cdi_spec_free(spec);
	spec = NULL;
	/* Letters may repeat, as the CDI's library lets them. */
	assert_int_equal(parse(NODE("{\"path\": \"/dev/x\", \"type\": \"c\", \"permissions\": "
				    "\"rrw\"}"),
			       false, &spec, msg),
			 0);
	assert_int_equal(spec->devs[0].nodes[0].type, DEVWL_DEV_CHAR);
	assert_int_equal(spec->devs[0].nodes[0].access, RW);
	cdi_spec_free(spec);
	spec = NULL;
	assert_int_equal(parse("cdiVersion: v1.1.0\nkind: x.io/y\ndevices:\n- name: 0\n"
			       "  containerEdits: {env: [A=1]}\n",
			       true, &spec, msg),
			 0);
	assert_string_equal(spec->devs[0].name, "0");
	assert_int_equal(spec->devs[0].n_nodes, 0);
	cdi_spec_free(spec);
	spec = NULL;
	/* YAML's nulls are JSON's (they were taken for out of memory); an alias repeats. */
	assert_int_equal(parse("cdiVersion: 0.6.0\nkind: x.io/y\ndevices:\n- name: a\n"
			       "  containerEdits:\n    deviceNodes: &n [{path: /dev/null}]\n"
			       "    env: ~\n    hooks:\n- name: b\n"
			       "  containerEdits: {deviceNodes: *n, mounts: null}\n",
			       true, &spec, msg),
			 0);
	assert_int_equal(spec->n_devs, 2);
	assert_int_equal(spec->devs[1].n_nodes, 1);
	assert_string_equal(spec->devs[1].nodes[0].path, "/dev/null");
	cdi_spec_free(spec);
}

static void test_cdi_resolve_host_nodes(void **state)
{
	struct cdi_spec *spec = NULL;
	char msg[sizeof(((struct devwl_error *)0)->msg)];

	(void)state;
	/* Nodes read from the host at resolution: a missing one and a wrong type fail. */
	assert_int_equal(parse(NODE("{\"path\": \"/dev/devwl-nothing\"}"), false, &spec, msg), 0);
	cdi_spec_free(spec);
	{
		char dir[] = "/tmp/devwl-cdi-XXXXXX", path[PATH_MAX];
		const char *dirs[] = {dir};
		struct cdi_registry *reg = NULL;
		struct rulevec rv = {0};
		struct devwl_error err = {0};
		FILE *f;

		assert_non_null(mkdtemp(dir));
		snprintf(path, sizeof(path), "%s/h.json", dir);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(HEAD "\"devices\": ["
			   "{\"name\": \"gone\", \"containerEdits\": {\"deviceNodes\": "
			   "[{\"path\": \"/dev/devwl-nothing\"}]}},"
			   "{\"name\": \"file\", \"containerEdits\": {\"deviceNodes\": "
			   "[{\"path\": \"/x\", \"hostPath\": \"/etc/hostname\"}]}},"
			   "{\"name\": \"wrong\", \"containerEdits\": {\"deviceNodes\": "
			   "[{\"path\": \"/dev/null\", \"type\": \"b\"}]}}]}",
		      f);
		fclose(f);
		assert_int_equal(chmod(path, 0644), 0);
		assert_int_equal(cdi_load(dirs, 1, &reg), 0);
		assert_int_equal(cdi_n_errors(reg), 0);
		assert_int_equal(cdi_resolve(reg, "a.b/c", "gone", RWM, &rv, &err), -ENOENT);
		assert_non_null(strstr(err.msg,
				       "h.json: /dev/devwl-nothing "
				       "(devices[0].containerEdits.deviceNodes[0].hostPath)"));
		assert_int_equal(cdi_resolve(reg, "a.b/c", "file", RWM, &rv, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "not a device node"));
		assert_int_equal(cdi_resolve(reg, "a.b/c", "wrong", RWM, &rv, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "type says block, /dev/null is a character"));
		free(rv.v);
		cdi_free(reg);
		unlink(path);
		rmdir(dir);
	}
}

/* A spec naming /dev/null as a.b/t=NAME, at dir/file with mode. */
static void write_spec(const char *dir, const char *file, const char *name, mode_t mode)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"{\"cdiVersion\": \"0.6.0\", \"kind\": \"a.b/t\", \"devices\": [{\"name\": "
		"\"%s\", \"containerEdits\": {\"deviceNodes\": [{\"path\": \"/dev/null\"}]}}]}",
		name);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

/* Does a.b/t=name resolve in dir, and is what the loading said (errors joined) want? */
static bool grants(const char *dir, const char *name, const char *want)
{
	const char *dirs[] = {dir};
	struct cdi_registry *reg = NULL;
	struct rulevec rv = {0};
	struct devwl_error err = {0};
	bool found;

	assert_int_equal(cdi_load(dirs, 1, &reg), 0);
	if (want && !has_error(reg, want, ""))
		fail_msg("no error \"%s\" (%zu: %s)", want, cdi_n_errors(reg),
			 cdi_n_errors(reg) ? cdi_error(reg, 0) : "");
	if (!want && cdi_n_errors(reg))
		fail_msg("an error: %s", cdi_error(reg, 0));
	found = cdi_resolve(reg, "a.b/t", name, RWM, &rv, &err) == 0 && rv.n == 1;
	free(rv.v);
	cdi_free(reg);
	return found;
}

/*
 * Another uid's spec, or one others can write, grants nothing and is reported; a spec
 * directory likewise, all of its specs with it; the other specs load. (Another owner is
 * tried as root only: no one else can give a file away.)
 */
static void test_cdi_load_untrusted(void **state)
{
	char dir[] = "/tmp/devwl-cdi-XXXXXX", path[PATH_MAX + 16], msg[PATH_MAX + 128];

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	write_spec(dir, "ok.json", "ok", 0644);
	write_spec(dir, "open.json", "open", 0666);
	snprintf(msg, sizeof(msg), "%s/open.json: not read: writable by everyone (mode 0666", dir);
	assert_false(grants(dir, "open", msg));
	assert_true(grants(dir, "ok", msg));
	snprintf(path, sizeof(path), "%s/open.json", dir);
	assert_int_equal(chmod(path, 0664), 0);
	assert_false(grants(dir, "open", "open.json: not read: writable by its group (mode 0664"));
	assert_int_equal(chmod(path, 0444), 0);
	assert_true(grants(dir, "open", NULL));
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_false(
			grants(dir, "open", "open.json: not read: owned by uid 65534 (mode 0444)"));
		assert_true(grants(dir, "ok", "owned by uid 65534"));
		assert_int_equal(chown(path, 0, 0), 0);
	}
	/* The directory: sticky or not, others who may add names there may add specs. */
	assert_int_equal(chmod(dir, 01777), 0);
	snprintf(msg, sizeof(msg),
		 "%s: not read: writable by everyone (mode 1777, owner uid %u); a CDI spec "
		 "directory is read only if root",
		 dir, (unsigned int)geteuid());
	assert_false(grants(dir, "ok", msg));
	assert_int_equal(chmod(dir, 0775), 0);
	assert_false(grants(dir, "ok", "not read: writable by its group (mode 0775"));
	assert_int_equal(chmod(dir, 0755), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(dir, 65534, 65534), 0);
		assert_false(grants(dir, "ok", "not read: owned by uid 65534 (mode 0755)"));
		assert_int_equal(chown(dir, 0, 0), 0);
	}
	assert_true(grants(dir, "ok", NULL));
	unlink(path);
	snprintf(path, sizeof(path), "%s/ok.json", dir);
	unlink(path);
	rmdir(dir);
}

static char warned[4096];

static void note(void *userdata, const char *msg)
{
	(void)userdata;
	strncat(warned, msg, sizeof(warned) - strlen(warned) - 2);
	strcat(warned, "\n");
}

static void test_selector_resolve_cdi(void **state)
{
	const char *dirs[] = {static_dir, dynamic_dir};
	struct selector_env env = {.cdi_dirs = dirs, .n_cdi_dirs = 2, .warn = note};
	struct devwl_rule *rules = NULL;
	struct devwl_error err = {0};
	size_t n = 0;

	(void)state;
	assert_int_equal(selector_resolve(&env, "cdi:example.com/gpu=0 r", 23, &rules, &n, &err),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(rules[0].major, 195);
	assert_int_equal(rules[0].minor, 0);
	assert_int_equal(rules[0].access, DEVWL_ACC_READ);
	assert_int_equal(rules[1].minor, 255);
	free(rules);
	/* The bad specs are told, not fatal. */
	assert_non_null(strstr(warned, "CDI: "));
	assert_non_null(strstr(warned, "bad-perm.json"));
	rules = NULL;
	assert_int_equal(selector_resolve(&env, "cdi:example.com/gpu=7 rw", 24, &rules, &n, &err),
			 -ENOENT);
	assert_non_null(strstr(err.msg, "cdi:example.com/gpu=7: no CDI spec defines"));
	assert_null(rules);
	assert_int_equal(selector_resolve(&env, "cdi:example.com/gpu=* w", 23, &rules, &n, &err),
			 0);
	assert_int_equal(n, 4);
	free(rules);
}

/* Specs read once answer as the directories do, and their errors are not told again. */
static void test_selector_resolve_cdi_preloaded(void **state)
{
	const char *dirs[] = {static_dir, dynamic_dir};
	struct selector_env env = {.cdi_dirs = dirs, .n_cdi_dirs = 2, .warn = note};
	struct cdi_registry *reg = NULL;
	struct devwl_rule *rules = NULL;
	struct devwl_error err = {0};
	size_t n = 0;

	(void)state;
	assert_int_equal(cdi_load(dirs, 2, &reg), 0);
	env.cdi = reg;
	warned[0] = '\0';
	assert_int_equal(selector_resolve(&env, "cdi:example.com/gpu=0 r", 23, &rules, &n, &err),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(rules[0].major, 195);
	assert_int_equal(rules[1].minor, 255);
	free(rules);
	assert_string_equal(warned, "");
	rules = NULL;
	assert_int_equal(selector_resolve(&env, "cdi:example.com/gpu=7 rw", 24, &rules, &n, &err),
			 -ENOENT);
	cdi_free(reg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdi_load_devices),
		cmocka_unit_test(test_cdi_load_later_dir_wins),
		cmocka_unit_test(test_cdi_load_conflict),
		cmocka_unit_test(test_cdi_name_of),
		cmocka_unit_test(test_cdi_load_bad_specs),
		cmocka_unit_test(test_cdi_spec_parse_refusals),
		cmocka_unit_test(test_cdi_spec_parse_accepts),
		cmocka_unit_test(test_cdi_resolve_host_nodes),
		cmocka_unit_test(test_cdi_load_untrusted),
		cmocka_unit_test(test_selector_resolve_cdi),
		cmocka_unit_test(test_selector_resolve_cdi_preloaded),
	};

	return cmocka_run_group_tests(tests, find_fixtures, drop_fixtures);
}
