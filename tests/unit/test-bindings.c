/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Selector bindings (supervisor/format/bindings.c) and the uevents that make devwld
 * resolve them again (supervisor/format/uevent.c): what a binding writes when what it
 * names changes, where bindings come from, and which messages count.
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

#include "bindings.h"
#include "uevent.h"

#define B(maj, min, acc)                                                                           \
	{                                                                                          \
		.type = DEVWL_DEV_BLOCK, .access = (acc), .major = (maj), .minor = (min)           \
	}
#define RW (DEVWL_ACC_READ | DEVWL_ACC_WRITE)
#define R  DEVWL_ACC_READ

static struct rulevec vec(size_t n, const struct devwl_rule *rules)
{
	struct rulevec rv = {0};

	for (size_t i = 0; i < n; i++)
		assert_int_equal(rulevec_add(&rv, &rules[i]), 0);
	return rv;
}

/* rv holds exactly want (in order: diff's output is sorted). */
static void assert_rules(const struct rulevec *rv, size_t n, const struct devwl_rule *want)
{
	assert_int_equal(rv->n, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(rv->v[i].type, want[i].type);
		assert_int_equal(rv->v[i].major, want[i].major);
		assert_int_equal(rv->v[i].minor, want[i].minor);
		assert_int_equal(rv->v[i].access, want[i].access);
	}
}

static void diff(bool allow, size_t nold, const struct devwl_rule *old, size_t nnow,
		 const struct devwl_rule *now, struct rulevec *deny, struct rulevec *grant)
{
	struct rulevec o = vec(nold, old), n = vec(nnow, now);

	assert_int_equal(binding_diff(allow, &o, &n, deny, grant), 0);
	free(o.v);
	free(n.v);
}

/* A loop device renumbered: the old minor is revoked, the new one granted. */
static void test_binding_diff_allow_renumbered(void **state)
{
	const struct devwl_rule old[] = {B(7, 0, RW)}, now[] = {B(7, 3, RW)};
	struct rulevec deny, grant;

	(void)state;
	diff(true, 1, old, 1, now, &deny, &grant);
	assert_rules(&deny, 1, (struct devwl_rule[]){B(7, 0, RW)});
	assert_rules(&grant, 1, (struct devwl_rule[]){B(7, 3, RW)});
	free(deny.v);
	free(grant.v);
}

/* Unchanged devices write nothing (an operator's hand edit on them stays); a device
 * gone is revoked with the access it had; one added is granted. */
static void test_binding_diff_allow_partial(void **state)
{
	const struct devwl_rule old[] = {B(8, 16, RW), B(8, 0, RW), B(8, 17, RW)};
	const struct devwl_rule now[] = {B(8, 17, RW), B(8, 32, RW), B(8, 0, RW)};
	struct rulevec deny, grant;

	(void)state;
	diff(true, 3, old, 3, now, &deny, &grant);
	assert_rules(&deny, 1, (struct devwl_rule[]){B(8, 16, RW)});
	assert_rules(&grant, 1, (struct devwl_rule[]){B(8, 32, RW)});
	free(deny.v);
	free(grant.v);
	diff(true, 3, old, 3, old, &deny, &grant);
	assert_int_equal(deny.n + grant.n, 0);
	free(deny.v);
	free(grant.v);
}

/* A CDI spec that narrows a device's permissions takes back the bits it lost. */
static void test_binding_diff_allow_access(void **state)
{
	const struct devwl_rule old[] = {B(7, 1, RW)}, now[] = {B(7, 1, R | DEVWL_ACC_MKNOD)};
	struct rulevec deny, grant;

	(void)state;
	diff(true, 1, old, 1, now, &deny, &grant);
	assert_rules(&deny, 1, (struct devwl_rule[]){B(7, 1, DEVWL_ACC_WRITE)});
	assert_rules(&grant, 1, (struct devwl_rule[]){B(7, 1, DEVWL_ACC_MKNOD)});
	free(deny.v);
	free(grant.v);
}

/* A deny binding denies what is new, and never grants what it no longer names. */
static void test_binding_diff_deny(void **state)
{
	const struct devwl_rule old[] = {B(7, 0, RW)}, now[] = {B(7, 3, RW)};
	struct rulevec deny, grant;

	(void)state;
	diff(false, 1, old, 1, now, &deny, &grant);
	assert_rules(&deny, 1, (struct devwl_rule[]){B(7, 3, RW)});
	assert_int_equal(grant.n, 0);
	free(deny.v);
	free(grant.v);
	diff(false, 1, old, 0, NULL, &deny, &grant);
	assert_int_equal(deny.n + grant.n, 0);
	free(deny.v);
	free(grant.v);
}

/* From nothing (a load) and to nothing (every device gone). */
static void test_binding_diff_empty(void **state)
{
	const struct devwl_rule some[] = {B(7, 0, RW), B(7, 1, R)};
	struct rulevec deny, grant;

	(void)state;
	diff(true, 0, NULL, 2, some, &deny, &grant);
	assert_int_equal(deny.n, 0);
	assert_rules(&grant, 2, some);
	free(deny.v);
	free(grant.v);
	diff(true, 2, some, 0, NULL, &deny, &grant);
	assert_rules(&deny, 2, some);
	assert_int_equal(grant.n, 0);
	free(deny.v);
	free(grant.v);
}

/* A binding on node with old rules (copied), for bindings_plan(). */
static void bind(struct bindings *bs, const char *node, bool allow, size_t nold,
		 const struct devwl_rule *old)
{
	assert_int_equal(bindings_add(bs, node, allow, "usb:1234:5678", false), 0);
	bs->v[bs->n - 1].rules = vec(nold, old);
}

/* The plan's write k is binding's allow|deny of rule. */
static void assert_write(const struct binding_plan *p, size_t k, size_t binding, bool allow,
			 struct devwl_rule rule)
{
	assert_true(k < p->n);
	assert_int_equal(p->v[k].binding, binding);
	assert_int_equal(p->v[k].allow, allow);
	assert_rules(&(struct rulevec){.v = &p->v[k].rule, .n = 1}, 1, &rule);
}

static void free_now(struct rulevec *now, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(now[i].v);
}

/*
 * A device one allow binding gives up and another now names (two USB adapters swapping
 * numbers): the revocation comes first, so the device ends granted.
 */
static void test_bindings_plan_revoke_first(void **state)
{
	const struct devwl_rule x[] = {B(189, 1, RW)}, y[] = {B(189, 2, RW)};
	struct bindings bs = {0};
	struct rulevec now[2];
	struct binding_plan p;

	(void)state;
	bind(&bs, "/a", true, 1, y); /* 0: was y, now x */
	bind(&bs, "/a", true, 1, x); /* 1: was x, now y */
	now[0] = vec(1, x);
	now[1] = vec(1, y);
	assert_int_equal(bindings_plan(&bs, now, NULL, &p), 0);
	assert_int_equal(p.n, 4);
	assert_write(&p, 0, 0, false, y[0]);
	assert_write(&p, 1, 1, false, x[0]);
	assert_write(&p, 2, 0, true, x[0]);
	assert_write(&p, 3, 1, true, y[0]);
	binding_plan_free(&p);
	free_now(now, 2);
	bindings_clear(&bs);
}

/*
 * Later bindings win: a deny binding after an allow binding denies again what the allow
 * binding granted here; a device a revocation touched is granted again with all the
 * access a binding names, not only the bits that changed for it.
 */
static void test_bindings_plan_order(void **state)
{
	const struct devwl_rule r1[] = {B(7, 1, R)}, rw1[] = {B(7, 1, RW)}, r2[] = {B(7, 2, R)};
	struct bindings bs = {0};
	struct rulevec now[3];
	struct binding_plan p;

	(void)state;
	bind(&bs, "/a", true, 1, r1);  /* 0: 7:1 r gone */
	bind(&bs, "/a", true, 1, r1);  /* 1: 7:1 r to rw, 7:2 r new */
	bind(&bs, "/a", false, 0, r1); /* 2: deny, 7:2 r new */
	now[0] = (struct rulevec){0};
	now[1] = vec(1, rw1);
	assert_int_equal(rulevec_add(&now[1], &r2[0]), 0);
	now[2] = vec(1, r2);
	assert_int_equal(bindings_plan(&bs, now, NULL, &p), 0);
	assert_int_equal(p.n, 4);
	assert_write(&p, 0, 0, false, r1[0]);
	assert_write(&p, 1, 1, true, rw1[0]);
	assert_write(&p, 2, 1, true, r2[0]);
	assert_write(&p, 3, 2, false, r2[0]);
	binding_plan_free(&p);
	free_now(now, 3);
	bindings_clear(&bs);
}

/*
 * A deny binding writes denials only; skipped and unchanged bindings write nothing,
 * unless an earlier write touched what they name on their node or an ancestor.
 */
static void test_bindings_plan_deny_skip(void **state)
{
	const struct devwl_rule x[] = {B(7, 1, RW)}, y[] = {B(7, 2, RW)};
	struct bindings bs = {0};
	struct rulevec now[4];
	struct binding_plan p;
	bool skip[4] = {false, true, false, false};

	(void)state;
	bind(&bs, "/a", false, 1, x);  /* 0: deny, x gone, y new */
	bind(&bs, "/b", true, 1, x);   /* 1: skipped: left as it is */
	bind(&bs, "/a/c", true, 1, y); /* 2: unchanged, but y was touched above it */
	bind(&bs, "/ab", true, 1, y);  /* 3: unchanged, y touched on another node only */
	now[0] = vec(1, y);
	now[1] = (struct rulevec){0};
	now[2] = vec(1, y);
	now[3] = vec(1, y);
	assert_int_equal(bindings_plan(&bs, now, skip, &p), 0);
	assert_int_equal(p.n, 2);
	assert_write(&p, 0, 0, false, y[0]);
	assert_write(&p, 1, 2, true, y[0]);
	binding_plan_free(&p);
	/* Nothing changed anywhere: nothing to write. */
	free_now(now, 4);
	now[0] = vec(1, x);
	now[1] = vec(1, x);
	now[2] = vec(1, y);
	now[3] = vec(1, y);
	skip[1] = false;
	assert_int_equal(bindings_plan(&bs, now, skip, &p), 0);
	assert_int_equal(p.n, 0);
	binding_plan_free(&p);
	free_now(now, 4);
	bindings_clear(&bs);
}

/* A bind refused half-way takes back what it added, not what the node had already. */
static void test_binding_undo(void **state)
{
	const struct devwl_rule rw1[] = {B(7, 1, RW), B(7, 2, R)};
	struct rulevec rules = vec(2, rw1);
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node;
	uint8_t added[2] = {DEVWL_ACC_WRITE, DEVWL_ACC_READ};

	(void)state;
	assert_non_null(p);
	assert_int_equal(devwl_policy_mkdir(p, "/a"), 0);
	node = devwl_policy_find(p, "/a");
	assert_int_equal(devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL), 0);
	/* 7:1 r was there (a plain rule); the bind added w, and 7:2 r. */
	assert_int_equal(devwl_node_update(node, DEVWL_FILE_ALLOW, &rw1[0]), 0);
	assert_int_equal(devwl_node_update(node, DEVWL_FILE_ALLOW, &rw1[1]), 0);
	binding_undo(node, &rules, added, 2);
	assert_int_equal(devwl_node_check(node, DEVWL_DEV_BLOCK, 7, 1, DEVWL_ACC_READ), 1);
	assert_int_equal(devwl_node_check(node, DEVWL_DEV_BLOCK, 7, 1, DEVWL_ACC_WRITE), 0);
	assert_int_equal(devwl_node_check(node, DEVWL_DEV_BLOCK, 7, 2, DEVWL_ACC_READ), 0);
	devwl_policy_free(p);
	free(rules.v);
}

static void from_json(const char *text, int want, const char *msg, struct bindings *b)
{
	struct json_object *o = json_tokener_parse(text);
	struct devwl_error err = {0};

	assert_non_null(o);
	assert_int_equal(bindings_from_json(o, "p.json", b, &err), want);
	if (msg)
		assert_non_null(strstr(err.msg, msg));
	json_object_put(o);
}

static void test_bindings_from_json(void **state)
{
	struct bindings b = {0};

	(void)state;
	from_json("[{\"node\": \"/lab\", \"allow\": \"usb:0403:6001 rw\"},"
		  " {\"deny\": \"subsystem:hidraw rwm\", \"node\": \"/lab/x\"}]",
		  0, NULL, &b);
	assert_int_equal(b.n, 2);
	assert_string_equal(b.v[0].node, "/lab");
	assert_true(b.v[0].allow);
	assert_true(b.v[0].from_file);
	assert_string_equal(b.v[0].selector, "usb:0403:6001 rw");
	assert_string_equal(b.v[1].node, "/lab/x");
	assert_false(b.v[1].allow);
	bindings_forget(&b, "/lab/x");
	assert_int_equal(b.n, 1);
	bindings_forget(&b, "/la");
	assert_int_equal(b.n, 1);
	bindings_clear(&b);
	from_json("{}", -EINVAL, "\"selectors\": must be an array", &b);
	from_json("[1]", -EINVAL, "\"selectors\"[0]: must be an object", &b);
	from_json("[{\"node\": \"/a\"}]", -EINVAL, "\"allow\" or \"deny\" is missing", &b);
	from_json("[{\"node\": \"a\", \"allow\": \"loop:/x\"}]", -EINVAL, "node path", &b);
	from_json("[{\"node\": \"/a\", \"allow\": \"loop:/x\", \"deny\": \"loop:/y\"}]", -EINVAL,
		  "not both", &b);
	from_json("[{\"node\": \"/a\", \"allow\": \"c 1:3 rw\"}]", -EINVAL, "is no selector", &b);
	from_json("[{\"node\": \"/a\", \"alow\": \"loop:/x\"}]", -EINVAL, "unknown key \"alow\"",
		  &b);
	from_json("[{\"node\": \"/a\", \"allow\": 3}]", -EINVAL, "must be a string", &b);
	assert_int_equal(b.n, 0);
	bindings_clear(&b);
}

static void test_binding_of_line(void **state)
{
	static const char sel[] = "allow /lab loop:/tmp/a\\x20b.img rw";
	char *node = NULL, *s = NULL;
	bool allow = false;

	(void)state;
	assert_int_equal(binding_of_line(sel, strlen(sel), &node, &allow, &s), 1);
	assert_string_equal(node, "/lab");
	assert_true(allow);
	assert_string_equal(s, "loop:/tmp/a b.img rw");
	free(node);
	free(s);
	assert_int_equal(binding_of_line("deny /a cdi:x.com/gpu=0", 23, &node, &allow, &s), 1);
	assert_false(allow);
	free(node);
	free(s);
	/* Plain rules, device names and other commands are no binding. */
	assert_int_equal(binding_of_line("allow /a c 1:3 rw", 17, &node, &allow, &s), 0);
	assert_int_equal(binding_of_line("allow /a /dev/fuse rw", 21, &node, &allow, &s), 0);
	assert_int_equal(binding_of_line("mkdir /a", 8, &node, &allow, &s), 0);
	assert_int_equal(binding_of_line("allow /a", 8, &node, &allow, &s), 0);
	assert_int_equal(binding_of_line("allow /a usb\\x3", 15, &node, &allow, &s), 0);
}

/* devwlctl unbind's line: the same selector text as the allow or deny that bound it. */
static void test_unbind_of_line(void **state)
{
	static const char line[] = "unbind /lab deny loop:/tmp/a\\x20b.img w";
	char *node = NULL, *s = NULL;
	bool allow = true;

	(void)state;
	assert_int_equal(unbind_of_line(line, strlen(line), &node, &allow, &s), 1);
	assert_string_equal(node, "/lab");
	assert_false(allow);
	assert_string_equal(s, "loop:/tmp/a b.img w");
	free(node);
	free(s);
	assert_int_equal(unbind_of_line("unbind /lab allow c 1:3 rw", 26, &node, &allow, &s), 0);
	assert_int_equal(unbind_of_line("unbind /lab allow", 17, &node, &allow, &s), 0);
	assert_int_equal(unbind_of_line("unbind /lab", 11, &node, &allow, &s), 0);
	assert_int_equal(unbind_of_line("allow /a usb:1:2", 16, &node, &allow, &s), 0);
	assert_int_equal(unbind_of_line("unbind /a\0b allow usb:1:2", 26, &node, &allow, &s), 0);
}

/* The binding an unbind drops: the last of that node, verb and text, never a
 * container's; removal keeps the others' order. */
static void test_bindings_find_remove(void **state)
{
	struct bindings bs = {0};
	long i;

	(void)state;
	assert_int_equal(bindings_add(&bs, "/a", true, "usb:1:2 rw", false), 0);
	assert_int_equal(bindings_add(&bs, "/a", false, "usb:1:2 w", false), 0);
	assert_int_equal(bindings_add(&bs, "/b", true, "usb:1:2 rw", false), 0);
	assert_int_equal(bindings_add(&bs, "/a", true, "usb:1:2 rw", false), 0);
	assert_int_equal(bindings_add(&bs, "/a", true, "cdi:x.com/g=0", false), 0);
	assert_int_equal(binding_set_container(&bs, "c1"), 0);
	assert_int_equal(bindings_find(&bs, "/a", true, "usb:1:2 rw"), 3);
	assert_int_equal(bindings_find(&bs, "/a", false, "usb:1:2 w"), 1);
	assert_int_equal(bindings_find(&bs, "/a", false, "usb:1:2 rw"), -ENOENT);
	assert_int_equal(bindings_find(&bs, "/a", true, "usb:1:2"), -ENOENT);
	assert_int_equal(bindings_find(&bs, "/a", true, "cdi:x.com/g=0"), -ENOENT);
	bindings_remove(&bs, 1);
	assert_int_equal(bs.n, 4);
	assert_string_equal(bs.v[1].node, "/b");
	i = bindings_find(&bs, "/a", true, "usb:1:2 rw");
	assert_int_equal(i, 2);
	bindings_remove(&bs, (size_t)i);
	assert_int_equal(bindings_find(&bs, "/a", true, "usb:1:2 rw"), 0);
	assert_string_equal(bs.v[2].selector, "cdi:x.com/g=0");
	bindings_clear(&bs);
}

static void test_uevent_parse(void **state)
{
	static const char change[] = "change@/devices/virtual/block/loop0\0ACTION=change\0"
				     "DEVPATH=/devices/virtual/block/loop0\0SUBSYSTEM=block\0"
				     "MAJOR=7\0MINOR=0\0DEVNAME=loop0\0SEQNUM=4242";
	static const char bind[] =
		"bind@/devices/pci0000:00/0000:00:14.0/usb1/1-1\0"
		"ACTION=bind\0DEVPATH=/devices/pci0000:00/0000:00:14.0/usb1/1-1\0"
		"SUBSYSTEM=usb\0MAJOR=189\0MINOR=1";
	static const char noddev[] = "add@/module/loop\0ACTION=add\0DEVPATH=/module/loop\0"
				     "SUBSYSTEM=module";
	static const char libudev[] = "libudev\0\xfe\xed\xca\xfe";
	struct uevent ev;

	(void)state;
	assert_int_equal(uevent_parse(change, sizeof(change), &ev), 0);
	assert_string_equal(ev.action, "change");
	assert_string_equal(ev.devpath, "/devices/virtual/block/loop0");
	assert_string_equal(ev.subsystem, "block");
	assert_true(uevent_matters(&ev));
	assert_int_equal(uevent_parse(bind, sizeof(bind), &ev), 0);
	assert_false(uevent_matters(&ev));
	assert_int_equal(uevent_parse(noddev, sizeof(noddev), &ev), 0);
	assert_false(uevent_matters(&ev));
	assert_int_equal(uevent_parse(libudev, sizeof(libudev), &ev), -EINVAL);
	assert_int_equal(uevent_parse("add@/x", 6, &ev), -EINVAL); /* no final NUL */
	assert_int_equal(uevent_parse("add@/x\0ACTION=add", 18, &ev), -EINVAL);
	assert_int_equal(uevent_parse("", 1, &ev), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binding_diff_allow_renumbered),
		cmocka_unit_test(test_binding_diff_allow_partial),
		cmocka_unit_test(test_binding_diff_allow_access),
		cmocka_unit_test(test_binding_diff_deny),
		cmocka_unit_test(test_binding_diff_empty),
		cmocka_unit_test(test_bindings_plan_revoke_first),
		cmocka_unit_test(test_bindings_plan_order),
		cmocka_unit_test(test_bindings_plan_deny_skip),
		cmocka_unit_test(test_binding_undo),
		cmocka_unit_test(test_bindings_from_json),
		cmocka_unit_test(test_binding_of_line),
		cmocka_unit_test(test_unbind_of_line),
		cmocka_unit_test(test_bindings_find_remove),
		cmocka_unit_test(test_uevent_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
