/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A container's attached devices (supervisor/format/attachment.c): what an attachment by
 * selector does when its selector names something else, and that a reload grants again
 * only the attachments present, never one waiting for its device.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "attachment.h"
#include "devwl.h"

#define ATTACH_SAY_TEST_MAX 1024

static const struct devwl_rule loop3 = {DEVWL_DEV_BLOCK, 0, 7, 3};
static const struct devwl_rule loop5 = {DEVWL_DEV_BLOCK, 0, 7, 5};

static struct attachment attached(bool absent, bool refused)
{
	return (struct attachment){.type = DEVWL_DEV_BLOCK,
				   .major = 7,
				   .minor = 3,
				   .access = DEVWL_ACC_READ,
				   .absent = absent,
				   .refused = refused,
				   .path = "/dev/xdisk",
				   .selector = "loop:/var/tmp/a.img"};
}

static void test_step_present(void **state)
{
	struct attachment a = attached(false, false);
	struct devwl_rule two[2] = {loop3, loop5}, chr = {DEVWL_DEV_CHAR, 0, 7, 3},
			  range = {DEVWL_DEV_BLOCK, 0, 7, DEVWL_ANY},
			  all = {DEVWL_DEV_ALL, 0, DEVWL_ANY, DEVWL_ANY};
	const char *why = "x";
	(void)state;

	assert_int_equal(attachment_follow_step(&a, &loop3, 1, &why), ATTACHMENT_KEEP);
	assert_null(why);
	assert_int_equal(attachment_follow_step(&a, &loop5, 1, &why), ATTACHMENT_MOVE);
	assert_null(why);
	/* The same numbers of the other type are another device. */
	assert_int_equal(attachment_follow_step(&a, &chr, 1, &why), ATTACHMENT_MOVE);
	/* None, several, a range: when in doubt, deny (even with the old one among them). */
	assert_int_equal(attachment_follow_step(&a, NULL, 0, &why), ATTACHMENT_AWAY);
	assert_non_null(strstr(why, "no device"));
	assert_int_equal(attachment_follow_step(&a, two, 2, &why), ATTACHMENT_AWAY);
	assert_non_null(strstr(why, "several"));
	assert_int_equal(attachment_follow_step(&a, &range, 1, &why), ATTACHMENT_AWAY);
	assert_non_null(strstr(why, "range"));
	assert_int_equal(attachment_follow_step(&a, &all, 1, &why), ATTACHMENT_AWAY);
}

static void test_step_absent(void **state)
{
	struct attachment a = attached(true, false), r = attached(true, true);
	struct devwl_rule two[2] = {loop3, loop5};
	const char *why = NULL;
	(void)state;

	/* Back on the minor it had (a loop file attached again), or another. */
	assert_int_equal(attachment_follow_step(&a, &loop3, 1, &why), ATTACHMENT_RETURN);
	assert_int_equal(attachment_follow_step(&a, &loop5, 1, &why), ATTACHMENT_RETURN);
	/* Still none, or still not one: nothing to do, nothing to say again. */
	assert_int_equal(attachment_follow_step(&a, NULL, 0, &why), ATTACHMENT_KEEP);
	assert_int_equal(attachment_follow_step(&a, two, 2, &why), ATTACHMENT_KEEP);
	/* Refused at 7:3: not tried there again, but at other numbers. */
	assert_int_equal(attachment_follow_step(&r, &loop3, 1, &why), ATTACHMENT_KEEP);
	assert_int_equal(attachment_follow_step(&r, &loop5, 1, &why), ATTACHMENT_RETURN);
}

static void test_regrant_skips_absent(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node;
	struct attachment v[2] = {attached(false, false), attached(true, false)};
	(void)state;

	assert_non_null(p);
	assert_int_equal(devwl_policy_mkdir(p, "/c"), 0);
	node = devwl_policy_find(p, "/c");
	assert_int_equal(devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL), 0);
	v[1].minor = 5;
	assert_int_equal(attachments_regrant(v, 2, node), 0);
	assert_int_equal(devwl_node_check(node, DEVWL_DEV_BLOCK, 7, 3, DEVWL_ACC_READ), 1);
	assert_int_equal(v[0].added, DEVWL_ACC_READ);
	/* The absent one's last numbers belong to whatever device holds them now. */
	assert_int_equal(devwl_node_check(node, DEVWL_DEV_BLOCK, 7, 5, DEVWL_ACC_READ), 0);
	assert_int_equal(v[1].added, 0);
	assert_false(v[1].lapsed);
	devwl_policy_free(p);
}

/* What devwlctl attach and detach print: every part an operator must check. */
static void test_attachment_say_attach(void **state)
{
	struct attachment a = {.type = DEVWL_DEV_BLOCK,
			       .major = 7,
			       .minor = 3,
			       .access = DEVWL_ACC_READ | DEVWL_ACC_WRITE,
			       .path = (char *)"/dev/xdisk",
			       .mode = 0660,
			       .uid = 0,
			       .gid = 6};
	char buf[ATTACH_SAY_TEST_MAX];

	(void)state;
	attachment_say(buf, sizeof(buf), ATTACHMENT_ATTACHED, &a, "/dev/loop3", "abc123",
		       "prod/db-0/db", "/k8s/prod/db-0/db");
	assert_string_equal(buf, "attached b 7:3 (/dev/loop3) rw to container abc123 "
				 "(prod/db-0/db) at /dev/xdisk, mode 0660, owner 0:6; granted on "
				 "node /k8s/prod/db-0/db");
	a.selector = (char *)"loop:/srv/disk.img";
	a.uid = (uid_t)-1;
	a.gid = (gid_t)-1;
	attachment_say(buf, sizeof(buf), ATTACHMENT_WOULD_ATTACH, &a, NULL, "abc123", NULL,
		       "/containers/abc123");
	assert_string_equal(buf, "would attach b 7:3 (by loop:/srv/disk.img) rw to container "
				 "abc123 at /dev/xdisk, mode 0660, owner its root:its root; "
				 "granted on node /containers/abc123 (dry run: nothing changed)");
}

static void test_attachment_say_detach(void **state)
{
	struct attachment a = {.type = DEVWL_DEV_CHAR,
			       .major = 1,
			       .minor = 5,
			       .access = DEVWL_ACC_READ,
			       .path = (char *)"/dev/z"};
	char buf[ATTACH_SAY_TEST_MAX], small[20];

	(void)state;
	attachment_say(buf, sizeof(buf), ATTACHMENT_DETACHED, &a, NULL, "abc", "web", "/n");
	assert_string_equal(buf, "detached c 1:5 r from container abc (web): /dev/z removed, "
				 "grant revoked on node /n");
	attachment_say(buf, sizeof(buf), ATTACHMENT_DETACHED_NODE_LEFT, &a, NULL, "abc", NULL,
		       "/n");
	assert_non_null(strstr(buf, "/dev/z left (no process of it to reach it by), grant "
				    "revoked on node /n"));
	attachment_say(buf, sizeof(buf), ATTACHMENT_WOULD_DETACH, &a, NULL, "abc", NULL, "/n");
	assert_string_equal(buf, "would detach c 1:5 r from container abc: /dev/z would be "
				 "removed and the grant revoked on node /n (dry run: nothing "
				 "changed)");
	/* Truncated, terminated. */
	attachment_say(small, sizeof(small), ATTACHMENT_DETACHED, &a, NULL, "abc", NULL, "/n");
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_present),
		cmocka_unit_test(test_step_absent),
		cmocka_unit_test(test_regrant_skips_absent),
		cmocka_unit_test(test_attachment_say_attach),
		cmocka_unit_test(test_attachment_say_detach),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
