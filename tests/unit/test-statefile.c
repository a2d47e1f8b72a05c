/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state file's text (supervisor/format/statefile.c): what state_text() writes comes back
 * whole through parse_state(), and a file that is cut off, mangled, oversized or
 * hostile is refused with a reason, never half taken (run it under ASan for leaks).
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

#include "devwld.h"
#include "keeper_table.h"
#include "state.h"
#include "statefile.h"

static const char edit_nul[] = "allow /c c 1:3 r\0w";

/* A daemon's worth of state: a hierarchy, two containers, on-demand nodes, edits. */
struct fixture {
	struct devwld d;
	struct container c[2];
	struct cproc p[3];
	struct attachment a[2];
};

static void add_proc(struct container *c, struct cproc *p, bool has_slot, uint32_t slot,
		     uint64_t tag, pid_t pid, uid_t uid, pid_t peer)
{
	*p = (struct cproc){.container = c,
			    .pid = pid,
			    .peer_uid = uid,
			    .peer_pid = peer,
			    .has_slot = has_slot,
			    .slot = slot,
			    .tag = tag};
	list_add_tail(&p->link, &c->procs);
	c->nprocs++;
}

static void fixture_init(struct fixture *f)
{
	struct devwl_error err = {0};

	memset(f, 0, sizeof(*f));
	f->d.policy = devwl_policy_new();
	assert_non_null(f->d.policy);
	assert_int_equal(devwl_policy_mkdir(f->d.policy, "/c"), 0);
	assert_int_equal(devwl_policy_write(f->d.policy, "/c", DEVWL_FILE_DENY, "a", 1, &err), 0);
	assert_int_equal(
		devwl_policy_write(f->d.policy, "/c", DEVWL_FILE_ALLOW, "c 1:3 rwm", 9, &err), 0);
	/* The kernel's order: a node's behaviour changes only while it has no children. */
	assert_int_equal(devwl_policy_mkdir(f->d.policy, "/c/x"), 0);
	assert_int_equal(
		devwl_policy_write(f->d.policy, "/c/x", DEVWL_FILE_DENY, "c 1:3 w", 7, &err), 0);
	f->d.cfg.policy_file = "/etc/devwl/policy.json";
	f->d.policy_text = strdup("{\"version\": 1}\n");
	assert_non_null(f->d.policy_text);
	assert_int_equal(strset_add(&f->d.ondemand, "/c/x"), 0);
	assert_int_equal(strset_add(&f->d.ondemand, "/c"), 0);
	assert_int_equal(strset_add(&f->d.ruled, "/c"), 0);
	assert_int_equal(edits_add(&f->d.edits, "mkdir /c/y", 10), 0);
	/* A rule may hold a NUL byte: it survives as JSON's \u0000. */
	assert_int_equal(edits_add(&f->d.edits, edit_nul, sizeof(edit_nul) - 1), 0);
	/* Selector bindings, with what each was last written as. */
	assert_int_equal(bindings_add(&f->d.bindings, "/c", true, "loop:/srv/a \"b\".img r", false),
			 0);
	assert_int_equal(rulevec_add(&f->d.bindings.v[0].rules,
				     &(struct devwl_rule){.type = DEVWL_DEV_BLOCK,
							  .access = DEVWL_ACC_READ,
							  .major = 7,
							  .minor = (1u << 20) - 1}),
			 0);
	assert_int_equal(bindings_add(&f->d.bindings, "/c/x", false, "usb:0403:6001", true), 0);
	/* One made for a container's CDI annotations names it. */
	assert_int_equal(bindings_add(&f->d.bindings, "/c/x", true, "cdi:vendor.com/gpu=0", false),
			 0);
	assert_int_equal(binding_set_container(&f->d.bindings, "c1"), 0);
	list_init(&f->d.containers);
	f->c[0].id = "c1";
	f->c[0].k8s_name = "ns/pod/ctr";
	f->c[0].rt_name = "eager_tesla";
	f->c[0].node_path = "/c/x";
	f->c[0].created_node = true;
	f->c[0].owner_uid = UINT32_MAX;
	f->c[1].id = "a-b_c+d.e";
	f->c[1].node_path = "/c";
	for (int i = 0; i < 2; i++) {
		list_init(&f->c[i].procs);
		list_add_tail(&f->c[i].link, &f->d.containers);
		f->d.ncontainers++;
	}
	add_proc(&f->c[0], &f->p[0], true, 0, 0, 1, UINT32_MAX, 2);
	add_proc(&f->c[0], &f->p[1], true, KEEPER_SLOTS_MAX - 1, UINT64_MAX, INT32_MAX, UINT32_MAX,
		 INT32_MAX);
	/* Without a keeper slot it cannot come back: not written. */
	add_proc(&f->c[1], &f->p[2], false, 7, 7, 7, 7, 7);
	f->a[0] = (struct attachment){.type = DEVWL_DEV_BLOCK,
				      .major = 7,
				      .minor = (1u << 20) - 1,
				      .access = DEVWL_ACC_READ | DEVWL_ACC_WRITE,
				      .added = DEVWL_ACC_WRITE,
				      .absent = true,
				      .refused = true,
				      .path = "/dev/loop\"7",
				      .selector = "loop:/var/tmp/a \"b\".img",
				      .mode = 0660,
				      .uid = (uid_t)-1,
				      .gid = 6};
	f->a[1] = (struct attachment){.type = DEVWL_DEV_CHAR,
				      .major = 10,
				      .minor = 229,
				      .access = DEVWL_ACC_MKNOD,
				      .lapsed = true,
				      .path = "/dev/fuse",
				      .uid = UINT32_MAX - 1,
				      .gid = (gid_t)-1};
	f->c[0].attached = f->a;
	f->c[0].nattached = 2;
	/* Nodes only devwld opens for it: the largest numbers, and one removed (not kept). */
	f->c[0].nodeset = devwl_nodeset_new();
	assert_non_null(f->c[0].nodeset);
	assert_int_equal(devwl_nodeset_add(f->c[0].nodeset, 0, 1), 0);
	assert_int_equal(devwl_nodeset_add(f->c[0].nodeset, 77, 78), 0);
	assert_int_equal(devwl_nodeset_add(f->c[0].nodeset, INT64_MAX, INT64_MAX), 0);
	assert_int_equal(devwl_nodeset_remove(f->c[0].nodeset, 77, 78), 0);
	assert_int_equal(devwl_nodeset_remove(f->c[0].nodeset, 77, 78), -ENOENT);
	assert_int_equal(devwl_nodeset_add(f->c[0].nodeset, 1, 0), -EINVAL);
}

static void fixture_fini(struct fixture *f)
{
	devwl_nodeset_unref(f->c[0].nodeset);
	devwl_policy_free(f->d.policy);
	free(f->d.policy_text);
	strset_clear(&f->d.ondemand);
	strset_clear(&f->d.ruled);
	edits_clear(&f->d.edits);
	bindings_clear(&f->d.bindings);
}

static char *fixture_text(void)
{
	struct fixture f;
	char *text = NULL;

	fixture_init(&f);
	assert_int_equal(state_text(&f.d, &text), 0);
	fixture_fini(&f);
	return text;
}

static void expect_hierarchy(const struct devwl_policy *got, const struct devwl_policy *want)
{
	char *a = NULL, *b = NULL;

	assert_int_equal(devwl_policy_to_string(got, &a), 0);
	assert_int_equal(devwl_policy_to_string(want, &b), 0);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

static void test_state_text_round_trip(void **state)
{
	struct fixture f;
	struct saved s = {0};
	struct devwl_error err = {0};
	char *text = NULL, *again = NULL;

	(void)state;
	fixture_init(&f);
	assert_int_equal(state_text(&f.d, &text), 0);
	if (parse_state("state.json", text, &s, &err) < 0)
		fail_msg("%s\n%s", err.msg, text);

	expect_hierarchy(s.policy, f.d.policy);
	assert_string_equal(s.policy_text, f.d.policy_text);
	assert_int_equal(s.ondemand.n, 2);
	assert_string_equal(s.ondemand.v[0], "/c");
	assert_string_equal(s.ondemand.v[1], "/c/x");
	assert_true(s.has_ruled);
	assert_int_equal(s.ruled.n, 1);
	assert_string_equal(s.ruled.v[0], "/c");
	assert_int_equal(s.edits.n, 2);
	assert_int_equal(s.edits.v[0].len, 10);
	assert_memory_equal(s.edits.v[0].line, "mkdir /c/y", 10);
	assert_int_equal(s.edits.v[1].len, sizeof(edit_nul) - 1);
	assert_memory_equal(s.edits.v[1].line, edit_nul, sizeof(edit_nul) - 1);
	assert_int_equal(s.bindings.n, 3);
	assert_string_equal(s.bindings.v[0].node, "/c");
	assert_true(s.bindings.v[0].allow);
	assert_false(s.bindings.v[0].from_file);
	assert_string_equal(s.bindings.v[0].selector, "loop:/srv/a \"b\".img r");
	assert_int_equal(s.bindings.v[0].rules.n, 1);
	assert_int_equal(s.bindings.v[0].rules.v[0].type, DEVWL_DEV_BLOCK);
	assert_int_equal(s.bindings.v[0].rules.v[0].major, 7);
	assert_int_equal(s.bindings.v[0].rules.v[0].minor, (1u << 20) - 1);
	assert_int_equal(s.bindings.v[0].rules.v[0].access, DEVWL_ACC_READ);
	assert_string_equal(s.bindings.v[1].node, "/c/x");
	assert_false(s.bindings.v[1].allow);
	assert_true(s.bindings.v[1].from_file);
	assert_int_equal(s.bindings.v[1].rules.n, 0);
	assert_null(s.bindings.v[1].container);
	assert_string_equal(s.bindings.v[2].selector, "cdi:vendor.com/gpu=0");
	assert_string_equal(s.bindings.v[2].container, "c1");

	assert_int_equal(s.ncontainers, 2);
	assert_string_equal(s.containers[0].id, "c1");
	assert_string_equal(s.containers[0].node, "/c/x");
	assert_true(s.containers[0].created);
	assert_int_equal(s.containers[0].owner, UINT32_MAX);
	assert_int_equal(s.containers[0].nprocs, 2);
	assert_int_equal(s.containers[0].procs[0].slot, 0);
	assert_int_equal(s.containers[0].procs[0].tag, 0);
	assert_int_equal(s.containers[0].procs[0].pid, 1);
	assert_int_equal(s.containers[0].procs[0].peer_pid, 2);
	assert_int_equal(s.containers[0].procs[1].slot, KEEPER_SLOTS_MAX - 1);
	assert_true(s.containers[0].procs[1].tag == UINT64_MAX);
	assert_int_equal(s.containers[0].procs[1].pid, INT32_MAX);
	assert_int_equal(s.containers[0].procs[1].peer_uid, UINT32_MAX);
	assert_int_equal(s.containers[0].procs[1].peer_pid, INT32_MAX);
	assert_string_equal(s.containers[0].k8s_name, "ns/pod/ctr");
	assert_null(s.containers[1].k8s_name);
	/* The runtime's name too: a restart keeps what devwlctl names it by. */
	assert_string_equal(s.containers[0].rt_name, "eager_tesla");
	assert_null(s.containers[1].rt_name);
	assert_int_equal(s.containers[0].nattached, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct attachment *got = &s.containers[0].attached[i], *want = &f.a[i];

		assert_int_equal(got->type, want->type);
		assert_int_equal(got->major, want->major);
		assert_int_equal(got->minor, want->minor);
		assert_int_equal(got->access, want->access);
		assert_int_equal(got->added, want->added);
		assert_int_equal(got->lapsed, want->lapsed);
		assert_int_equal(got->absent, want->absent);
		assert_false(got->refused); /* not kept: a restart tries again */
		assert_string_equal(got->path, want->path);
		if (want->selector)
			assert_string_equal(got->selector, want->selector);
		else
			assert_null(got->selector);
		assert_int_equal(got->mode, want->mode);
		assert_int_equal(got->uid, want->uid);
		assert_int_equal(got->gid, want->gid);
	}
	assert_int_equal(s.containers[1].nattached, 0);
	assert_int_equal(s.containers[0].nnodev, 2);
	assert_true(s.containers[0].nodev[0].dev == 0 && s.containers[0].nodev[0].ino == 1);
	assert_true(s.containers[0].nodev[1].dev == INT64_MAX &&
		    s.containers[0].nodev[1].ino == INT64_MAX);
	assert_int_equal(s.containers[1].nnodev, 0);
	assert_string_equal(s.containers[1].id, "a-b_c+d.e");
	assert_string_equal(s.containers[1].node, "/c");
	assert_false(s.containers[1].created);
	assert_int_equal(s.containers[1].owner, 0);
	assert_int_equal(s.containers[1].nprocs, 0);

	/* What was read writes the same text again. */
	devwl_policy_free(f.d.policy);
	f.d.policy = s.policy;
	s.policy = NULL;
	assert_int_equal(state_text(&f.d, &again), 0);
	assert_string_equal(again, text);

	saved_clear(&s);
	fixture_fini(&f);
	free(text);
	free(again);
}

/* No policy file, no text, no containers: the nulls come back as NULL. */
static void test_state_text_empty(void **state)
{
	struct devwld d;
	struct saved s = {0};
	struct devwl_error err = {0};
	char *text = NULL;

	(void)state;
	memset(&d, 0, sizeof(d));
	d.policy = devwl_policy_new();
	assert_non_null(d.policy);
	list_init(&d.containers);
	assert_int_equal(state_text(&d, &text), 0);
	assert_int_equal(parse_state("state.json", text, &s, &err), 0);
	assert_null(s.policy_text);
	assert_int_equal(s.ondemand.n, 0);
	assert_int_equal(s.edits.n, 0);
	assert_int_equal(s.ncontainers, 0);
	assert_int_equal(devwl_policy_count(s.policy), devwl_policy_count(d.policy));
	saved_clear(&s);
	devwl_policy_free(d.policy);
	free(text);
}

/* Set (value: JSON text) or delete (value NULL) the member at path ("a.0.b") of text. */
static char *mutate(const char *text, const char *path, const char *value)
{
	struct json_object *top = json_tokener_parse(text), *o = top;
	char *p = strdup(path), *save = NULL, *key = strtok_r(p, ".", &save), *next, *out;

	assert_non_null(top);
	assert_non_null(p);
	for (; (next = strtok_r(NULL, ".", &save)); key = next)
		o = json_object_is_type(o, json_type_array)
			    ? json_object_array_get_idx(o, (size_t)atoi(key))
			    : json_object_object_get(o, key);
	assert_non_null(o);
	if (json_object_is_type(o, json_type_array)) {
		assert_non_null(value);
		json_object_array_put_idx(o, (size_t)atoi(key), json_tokener_parse(value));
	} else if (value) {
		struct json_object *v = json_tokener_parse(value);

		/* json_tokener_parse("null") is NULL: json-c's null. */
		if (!v && strcmp(value, "null"))
			fail_msg("bad value %s", value);
		json_object_object_add(o, key, v);
	} else {
		json_object_object_del(o, key);
	}
	out = strdup(json_object_to_json_string(top));
	assert_non_null(out);
	json_object_put(top);
	free(p);
	return out;
}

static void expect_refused(const char *text, const char *why)
{
	struct saved s = {0};
	struct devwl_error err = {0};
	int r = parse_state("state.json", text, &s, &err);

	if (r != -EINVAL)
		fail_msg("got %d, want -EINVAL (%s) for\n%.400s", r, why, text);
	if (!strstr(err.msg, why))
		fail_msg("reason \"%s\" lacks \"%s\"", err.msg, why);
	saved_clear(&s);
}

static void expect_mutation_refused(const char *text, const char *path, const char *value,
				    const char *why)
{
	char *bad = mutate(text, path, value);

	expect_refused(bad, why);
	free(bad);
}

/* A state written before "ruled" was kept reads as one without it (state.c guesses). */
static void test_parse_state_without_ruled(void **state)
{
	char *t = fixture_text(), *old = mutate(t, "ruled", NULL);
	struct saved s = {0};
	struct devwl_error err = {0};

	(void)state;
	if (parse_state("state.json", old, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_false(s.has_ruled);
	assert_int_equal(s.ruled.n, 0);
	assert_int_equal(s.ondemand.n, 2);
	saved_clear(&s);
	free(old);
	free(t);
}

static void test_parse_state_refused(void **state)
{
	char *t = fixture_text();

	(void)state;
	expect_refused("", "");
	expect_refused("[]", "\"devwld_state\" missing");
	expect_refused("{\"devwld_state\":1", "");
	expect_mutation_refused(t, "devwld_state", "2", "version 2, not 1");
	expect_mutation_refused(t, "devwld_state", "\"1\"", "wrong type");
	expect_mutation_refused(t, "policy_text", "7", "\"policy_text\" has the wrong type");
	expect_mutation_refused(t, "hierarchy", NULL, "\"hierarchy\" missing");
	expect_mutation_refused(t, "hierarchy", "{\"version\":99}", "hierarchy:");
	expect_mutation_refused(t, "ondemand", "{}", "\"ondemand\" has the wrong type");
	expect_mutation_refused(t, "ondemand.0", "\"../x\"", "\"ondemand\"[0] is not a node path");
	expect_mutation_refused(t, "ondemand.1", "5", "\"ondemand\"[1] is not a node path");
	expect_mutation_refused(t, "ruled", "7", "\"ruled\" has the wrong type");
	expect_mutation_refused(t, "ruled.0", "\"c\"", "\"ruled\"[0] is not a node path");
	expect_mutation_refused(t, "edits", "\"x\"", "\"edits\" has the wrong type");
	expect_mutation_refused(t, "edits.0", "\"list /\"",
				"\"edits\"[0] is not a devwlctl change");
	expect_mutation_refused(t, "edits.1", "[]", "\"edits\"[1] is not a devwlctl change");
	expect_mutation_refused(t, "bindings", "{}", "\"bindings\" has the wrong type");
	expect_mutation_refused(t, "bindings.0", "7", "\"bindings\"[0] is not a binding");
	expect_mutation_refused(t, "bindings.0.node", "\"c\"", "\"bindings\"[0] is not a binding");
	expect_mutation_refused(t, "bindings.1.selector", "\"c 1:3 rw\"",
				"\"bindings\"[1] is not a binding");
	expect_mutation_refused(t, "bindings.2.container", "\"../x\"",
				"\"bindings\"[2]: \"container\" is no container id");
	expect_mutation_refused(t, "bindings.2.container", "3",
				"\"bindings\"[2]: \"container\" is no container id");
	expect_mutation_refused(t, "bindings.0.rules.0", "\"a\"",
				"\"bindings\"[0]: rule 0 is not a device's");
	expect_mutation_refused(t, "bindings.0.rules.0", "\"b 7:0 rx\"",
				"\"bindings\"[0]: rule 0 is not a device's");
	expect_mutation_refused(t, "containers", NULL, "\"containers\" missing");
	expect_mutation_refused(t, "containers.0", "3", "a container is not an object");
	expect_mutation_refused(t, "containers.0.id", "\"\"", "not a container id");
	expect_mutation_refused(t, "containers.0.id", "\"a/b\"", "not a container id");
	expect_mutation_refused(t, "containers.0.k8s_name", "5", "\"k8s_name\" has the wrong type");
	expect_mutation_refused(t, "containers.0.name", "5", "\"name\" has the wrong type");
	expect_mutation_refused(t, "containers.0.attached", "{}",
				"\"attached\" has the wrong type");
	expect_mutation_refused(t, "containers.0.nodev_nodes", "{}",
				"\"nodev_nodes\" has the wrong type");
	expect_mutation_refused(t, "containers.0.nodev_nodes.0", "[1]",
				"\"nodev_nodes\"[0] is no [dev, inode]");
	expect_mutation_refused(t, "containers.0.nodev_nodes.1", "[1, 0]",
				"\"nodev_nodes\"[1] is no [dev, inode]");
	expect_mutation_refused(t, "containers.0.nodev_nodes.0", "[-1, 5]",
				"\"nodev_nodes\"[0] is no [dev, inode]");
	expect_mutation_refused(t, "containers.0.nodev_nodes.0", "[\"1\", 5]",
				"\"nodev_nodes\"[0] is no [dev, inode]");
	expect_mutation_refused(t, "containers.0.attached.0", "1",
				"an attachment is not an object");
	expect_mutation_refused(t, "containers.0.attached.0.type", "\"a\"", "is not c or b");
	expect_mutation_refused(t, "containers.0.attached.0.major", "4096", "\"major\"");
	expect_mutation_refused(t, "containers.0.attached.0.minor", "1048576", "\"minor\"");
	expect_mutation_refused(t, "containers.0.attached.0.access", "\"rr\"", "is no access");
	expect_mutation_refused(t, "containers.0.attached.0.added", "\"m\"", "inconsistent");
	expect_mutation_refused(t, "containers.0.attached.0.access", "\"\"", "inconsistent");
	expect_mutation_refused(t, "containers.0.attached.1.path", "\"dev/fuse\"", "is no path");
	expect_mutation_refused(t, "containers.0.attached.1.mode", "4096", "\"mode\"");
	expect_mutation_refused(t, "containers.0.attached.1.uid", "-2", "out of range");
	expect_mutation_refused(t, "containers.0.attached.1.gid", "4294967295", "out of range");
	expect_mutation_refused(t, "containers.0.attached.1.lapsed", "1", "wrong type");
	expect_mutation_refused(t, "containers.0.attached.0.selector", "5", "wrong type");
	expect_mutation_refused(t, "containers.0.attached.0.selector", "\"/dev/loop0\"",
				"is no selector");
	expect_mutation_refused(t, "containers.0.attached.0.selector", NULL, "to wait by");
	expect_mutation_refused(t, "containers.0.attached.0.absent", "\"yes\"", "wrong type");
	expect_mutation_refused(t, "containers.0.id", "\"a\\u0000b\"", "not a container id");
	expect_mutation_refused(t, "containers.0.node", "\"c\"", "bad node");
	expect_mutation_refused(t, "containers.0.node", "\"/c\\u0000/..\"", "bad node");
	expect_mutation_refused(t, "containers.0.created_node", "1", "wrong type");
	expect_mutation_refused(t, "containers.0.procs", "{}", "\"procs\" has the wrong type");
	expect_mutation_refused(t, "containers.0.procs.0", "null", "a process is not an object");
	expect_mutation_refused(t, "containers.0.procs.0.slot", "1048576", "\"slot\" out of range");
	expect_mutation_refused(t, "containers.0.procs.0.slot", "-1", "\"slot\" out of range");
	expect_mutation_refused(t, "containers.0.procs.0.slot", "1.5",
				"\"slot\" has the wrong type");
	expect_mutation_refused(t, "containers.0.procs.0.pid", "2147483648",
				"\"pid\" out of range");
	expect_mutation_refused(t, "containers.0.procs.0.peer_uid", "4294967296",
				"\"peer_uid\" out of range");
	expect_mutation_refused(t, "containers.0.procs.0.peer_pid", NULL, "\"peer_pid\" missing");
	expect_mutation_refused(t, "containers.0.procs.0.tag", "\"123\"", "bad process \"tag\"");
	/* strtoull() takes these; as written they are never there. */
	expect_mutation_refused(t, "containers.0.procs.0.tag", "\"-000000000000001\"",
				"bad process \"tag\"");
	expect_mutation_refused(t, "containers.0.procs.0.tag", "\" 00000000000000f\"",
				"bad process \"tag\"");
	expect_mutation_refused(t, "containers.0.procs.0.tag", "\"000000000000000g\"",
				"bad process \"tag\"");
	expect_mutation_refused(t, "containers.0.owner_uid", "-1", "\"owner_uid\" out of range");
	expect_mutation_refused(t, "containers.0.owner_uid", "\"0\"", "wrong type");
	/* Only runtimes of its owner's uid join a container. */
	expect_mutation_refused(t, "containers.0.owner_uid", "0",
				"a process of uid 4294967295 in a container of uid 0");
	expect_mutation_refused(t, "containers.0.procs.1.peer_uid", "5",
				"a process of uid 5 in a container of uid 4294967295");
	free(t);
}

/* A state of a devwld that keyed containers by id alone has no owner_uid: a container is
 * then its processes' uid's, or root's. */
static void test_parse_state_no_owner(void **state)
{
	char *t = fixture_text(), *a = mutate(t, "containers.0.owner_uid", NULL);
	char *old = mutate(a, "containers.1.owner_uid", NULL);
	struct saved s = {0};
	struct devwl_error err = {0};

	(void)state;
	assert_null(strstr(old, "owner_uid"));
	if (parse_state("state.json", old, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s.containers[0].owner, UINT32_MAX);
	assert_int_equal(s.containers[1].owner, 0);
	saved_clear(&s);
	free(old);
	free(a);
	free(t);
}

/* Numbers past what json-c holds in an int64, and long strings: refused or taken whole. */
static void test_parse_state_oversized(void **state)
{
	char *t = fixture_text(), *big = malloc(1 << 20), *json = NULL;

	(void)state;
	expect_mutation_refused(t, "containers.0.procs.0.pid", "99999999999999999999999",
				"\"pid\" out of range");
	expect_mutation_refused(t, "containers.0.procs.0.slot", "1e300", "wrong type");
	expect_mutation_refused(t, "devwld_state", "18446744073709551617", "not 1");
	/* A 1 MiB id is no container id; a 1 MiB policy text is kept as it is. */
	assert_non_null(big);
	memset(big, 'a', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	assert_true(asprintf(&json, "\"%s\"", big) > 0);
	expect_mutation_refused(t, "containers.0.id", json, "not a container id");
	{
		char *ok = mutate(t, "policy_text", json);
		struct saved s = {0};
		struct devwl_error err = {0};

		assert_int_equal(parse_state("state.json", ok, &s, &err), 0);
		assert_int_equal(strlen(s.policy_text), (1 << 20) - 1);
		saved_clear(&s);
		free(ok);
	}
	free(json);
	free(big);
	free(t);
}

/*
 * Every prefix of a good file is refused; every one-byte change of it is taken or
 * refused with a reason. Either way nothing leaks and nothing is read out of bounds.
 */
static void test_parse_state_mangled(void **state)
{
	static const char repl[] = "\"{}[],:0a\\\x01\xff";
	char *t = fixture_text(), *buf;
	size_t len = strlen(t), taken = 0, refused = 0;

	(void)state;
	buf = malloc(len + 1);
	assert_non_null(buf);
	for (size_t cut = 0; cut < len; cut++) {
		struct saved s = {0};
		struct devwl_error err = {0};

		memcpy(buf, t, cut);
		buf[cut] = '\0';
		/* A prefix that is a whole JSON value is one the whitespace after it trims. */
		if (parse_state("state.json", buf, &s, &err) == 0) {
			assert_true(strspn(t + cut, " \n") == len - cut);
		} else {
			assert_true(err.msg[0] != '\0');
		}
		saved_clear(&s);
	}
	for (size_t pos = 0; pos < len; pos++) {
		for (size_t k = 0; k < sizeof(repl) - 1; k++) {
			struct saved s = {0};
			struct devwl_error err = {0};
			int r;

			memcpy(buf, t, len + 1);
			buf[pos] = repl[k];
			r = parse_state("state.json", buf, &s, &err);
			if (r == 0) {
				assert_non_null(s.policy);
				taken++;
			} else {
				/* -EINVAL, or the hierarchy's own refusal (-EPERM, -ENOENT). */
				if (r > 0 || (r != -ENOMEM && !err.msg[0]))
					fail_msg("byte %zu as %#x: %d without a reason", pos,
						 (unsigned char)repl[k], r);
				refused++;
			}
			saved_clear(&s);
		}
	}
	assert_true(taken > 0);
	assert_true(refused > 0);
	free(buf);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_text_round_trip),
		cmocka_unit_test(test_state_text_empty),
		cmocka_unit_test(test_parse_state_without_ruled),
		cmocka_unit_test(test_parse_state_refused),
		cmocka_unit_test(test_parse_state_no_owner),
		cmocka_unit_test(test_parse_state_oversized),
		cmocka_unit_test(test_parse_state_mangled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
