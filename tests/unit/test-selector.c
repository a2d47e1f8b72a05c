/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Selectors (common/selector.c, common/sysfsid.c) against a fake sysfs tree the test
 * builds in a temporary directory: a USB serial adapter with its tty under a root hub, a
 * USB HID device with a hidraw node, a loop device with a partition and an unbound one
 * (their nodes no loop devices: a backing_file string names nothing), a
 * SCSI disk with a wwid and a partition, a virtio disk with a serial, udev's database for
 * the SCSI disk, by-id and by-path links, FIFOs where files belong, and a /sys/dev link
 * that leaves the tree. Then the grammar, its refusals, and the same selectors through
 * the batch protocol.
 */
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
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "batch.h"
#include "devwl.h"
#include "docpage.h"
#include "faketree.h"
#include "fileio.h"
#include "selector.h"

static char warned[4096];

#define USB1 "devices/pci0000:00/0000:00:14.0/usb1"

static int build_tree(void **state)
{
	char tmpl[] = "/tmp/devwl-selector-XXXXXX";

	(void)state;
	tree_make(tmpl);
	/* The root hub, an FTDI adapter on it, and its tty below its interface. */
	device(USB1, "char", "189:0", "usb");
	put("sys/" USB1 "/idVendor", "1d6b\n");
	put("sys/" USB1 "/idProduct", "0002\n");
	device(USB1 "/1-1", "char", "189:1", "usb");
	put("sys/" USB1 "/1-1/idVendor", "0403\n");
	put("sys/" USB1 "/1-1/idProduct", "6001\n");
	put("sys/" USB1 "/1-1/serial", "A12345\n");
	device(USB1 "/1-1/1-1:1.0/ttyUSB0/tty/ttyUSB0", "char", "188:0", "tty");
	/* A Logitech receiver with a hidraw node. */
	device(USB1 "/1-2", "char", "189:2", "usb");
	put("sys/" USB1 "/1-2/idVendor", "046d\n");
	put("sys/" USB1 "/1-2/idProduct", "c52b\n");
	device(USB1 "/1-2/1-2:1.0/0003:046D:C52B.0001/hidraw/hidraw0", "char", "240:0", "hidraw");
	/* loop0 says it is backed by a file that exists, with a partition; loop1 unbound. Its
	 * nodes are a file and a link to a character device: no loop device to ask. */
	put("disk.img", "");
	{
		char text[PATH_MAX + 16];

		snprintf(text, sizeof(text), "%s/disk.img\n", root);
		device("devices/virtual/block/loop0", "block", "7:0", "block");
		put("sys/devices/virtual/block/loop0/loop/backing_file", text);
	}
	put("dev/loop0", "");
	link_to("dev/block/7:0", "!/dev/null");
	/* What udev or a rule could say of loop0: no identity of a loop device's. */
	put("sys/devices/virtual/block/loop0/wwid", "loop.wwid\n");
	put("udev/b7:0", "E:ID_SERIAL=LOOP0_SERIAL\n");
	device("devices/virtual/block/loop0/loop0p1", "block", "259:0", "block");
	put("sys/devices/virtual/block/loop0/loop0p1/partition", "1\n");
	device("devices/virtual/block/loop1", "block", "7:1", "block");
	/* A SCSI disk: its wwid on the SCSI device, a partition, udev's serial. */
	put("sys/devices/pci0000:00/host0/target0:0:0/0:0:0:0/wwid", "naa.5000c500a1b2c3d4\n");
	device("devices/pci0000:00/host0/target0:0:0/0:0:0:0/block/sda", "block", "8:0", "block");
	link_to("sys/devices/pci0000:00/host0/target0:0:0/0:0:0:0/block/sda/device",
		"sys/devices/pci0000:00/host0/target0:0:0/0:0:0:0");
	device("devices/pci0000:00/host0/target0:0:0/0:0:0:0/block/sda/sda1", "block", "8:1",
	       "block");
	put("sys/devices/pci0000:00/host0/target0:0:0/0:0:0:0/block/sda/sda1/partition", "1\n");
	put("udev/b8:0", "S:disk/by-id/ata-ST1000_Z1234\nE:ID_SERIAL=ST1000_Z1234\n"
			 "E:ID_SERIAL_SHORT=Z1234\n");
	/* A virtio disk whose serial is its own attribute. */
	device("devices/pci0000:00/virtio1/block/vda", "block", "254:0", "block");
	put("sys/devices/pci0000:00/virtio1/block/vda/serial", "VIRT123\n");
	/* FIFOs where a file is expected are read as nothing, never waited on. */
	{
		char fifo[PATH_MAX * 2];

		snprintf(fifo, sizeof(fifo), "%s/sys/" USB1 "/1-2/serial", root);
		assert_int_equal(mkfifo(fifo, 0600), 0);
		snprintf(fifo, sizeof(fifo), "%s/udev/b8:1", root);
		assert_int_equal(mkfifo(fifo, 0600), 0);
	}
	/* Out of the tree: never followed. */
	link_to("sys/dev/char/1:3", "!/sys/devices/virtual/mem/null");
	put("sys/class/mem/.keep", "");
	/* udev's links, to real nodes of the host so that stat finds a device. */
	link_to("dev/serial/by-id/usb-FTDI_FT232R_A12345-if00-port0", "!/dev/null");
	link_to("dev/disk/by-path/pci-0000:00:1f.2-ata-1", "!/dev/zero");
	link_to("dev/disk/by-id/not-a-device", "!/tmp");
	return 0;
}

static void note(void *userdata, const char *msg)
{
	(void)userdata;
	strncat(warned, msg, sizeof(warned) - strlen(warned) - 2);
	strcat(warned, "\n");
}

static struct selector_env env(void)
{
	return (struct selector_env){.sysfs = sysfs, .udev = udev, .dev = dev, .warn = note};
}

/* Resolve text and compare the rules, formatted, one per line, with want. */
static void expect(const char *text, const char *want)
{
	struct selector_env e = env();
	struct devwl_rule *rules = NULL;
	struct devwl_error err = {0};
	char got[1024] = "";
	size_t n = 0;
	int r = selector_resolve(&e, text, strlen(text), &rules, &n, &err);

	if (r < 0)
		fail_msg("%s: %s", text, err.msg);
	for (size_t i = 0; i < n; i++) {
		char s[DEVWL_RULE_STR_MAX];

		devwl_rule_format(&rules[i], s, sizeof(s));
		strcat(got, s);
		strcat(got, "\n");
	}
	if (strcmp(got, want))
		fail_msg("%s: got\n%swant\n%s", text, got, want);
	free(rules);
}

static void expect_error(const char *text, int code, const char *msg_part)
{
	struct selector_env e = env();
	struct devwl_rule *rules = NULL;
	struct devwl_error err = {0};
	size_t n = 0;
	int r = selector_resolve(&e, text, strlen(text), &rules, &n, &err);

	if (r != code || !strstr(err.msg, msg_part))
		fail_msg("%s: %d \"%s\", want %d and \"%s\"", text, r, err.msg, code, msg_part);
	assert_null(rules);
}

static void test_selector_resolve_usb(void **state)
{
	(void)state;
	/* The adapter itself (its /dev/bus/usb node) and its tty; not the hub's. */
	expect("usb:0403:6001 rw", "c 188:0 rw\nc 189:1 rw\n");
	expect("usb:0403:6001:A12345", "c 188:0 rwm\nc 189:1 rwm\n");
	expect("usb:0403:6001:B99999 rw", "");
	/* Hex in either case; the ids are the nearest USB device's, never a hub above. */
	expect("usb:046D:C52B r", "c 189:2 r\nc 240:0 r\n");
	expect("usb:1d6b:0002 r", "c 189:0 r\n");
	/* 1-2's serial is a FIFO: no serial, and no hang. */
	expect("usb:046d:c52b:X r", "");
}

static void test_selector_resolve_subsystem(void **state)
{
	(void)state;
	expect("subsystem:tty rw", "c 188:0 rw\n");
	expect("subsystem:hidraw r", "c 240:0 r\n");
	expect("subsystem:block r", "b 7:0 r\nb 7:1 r\nb 8:0 r\nb 8:1 r\nb 254:0 r\nb 259:0 r\n");
	/* 1:3's link leaves the tree: not a device of it. */
	expect("subsystem:mem rw", "");
	expect("subsystem:nothing rw", "");
}

static void test_selector_resolve_block_identities(void **state)
{
	(void)state;
	/* The attribute says loop0 is backed by disk.img, but no node of DEV answers
	 * LOOP_GET_STATUS64 for it: a string is no loop device's identity (the live and oci
	 * tests attach real ones). */
	{
		char sel[PATH_MAX + 32];

		snprintf(sel, sizeof(sel), "loop:%s/disk.img r", root);
		expect(sel, "");
	}
	expect("loop:/var/lib/images/other.img r", "");
	expect("wwid:naa.5000c500a1b2c3d4 rw", "b 8:0 rw\nb 8:1 rw\n");
	expect("wwid:naa.0000 rw", "");
	expect("serial:Z1234 r", "b 8:0 r\n");
	expect("serial:ST1000_Z1234 r", "b 8:0 r\n");
	expect("serial:VIRT123 rw", "b 254:0 rw\n");
	/* A USB serial number is no block disk's. */
	expect("serial:A12345 rw", "");
	/* A loop device is named by its backing file alone: what it holds is its writer's. */
	expect("wwid:loop.wwid r", "");
	expect("serial:LOOP0_SERIAL r", "");
}

static void test_selector_resolve_links(void **state)
{
	(void)state;
	expect("by-id:usb-FTDI_FT232R_A12345-if00-port0 rw", "c 1:3 rw\n");
	expect("by-path:pci-0000:00:1f.2-ata-1 r", "c 1:5 r\n");
	expect("by-id:not-a-device r", "");
	expect("by-id:missing r", "");
	expect_error("by-id:../../etc/passwd r", -EINVAL, "a link's name");
	/* A link to a loop device (udev names one by what it holds: lvm-pv-uuid-...), where
	 * this host has one to link to. */
	{
		struct stat st;

		if (stat("/dev/loop0", &st) == 0 && S_ISBLK(st.st_mode)) {
			link_to("dev/disk/by-id/lvm-pv-uuid-0000", "!/dev/loop0");
			expect("by-id:lvm-pv-uuid-0000 r", "");
		}
	}
	/* A device node where udev's links are is none of udev's (devtmpfs puts a CUSE
	 * device named "serial!by-id!NAME" there), where this test may make one. */
	{
		char node[PATH_MAX * 2];

		snprintf(node, sizeof(node), "%s/dev/serial/by-id/usb-squatter", root);
		if (mknod(node, S_IFCHR | 0600, makedev(1, 3)) == 0)
			expect("by-id:usb-squatter rw", "");
	}
	expect_error("by-path: r", -EINVAL, "by-path:NAME");
}

static void test_selector_resolve_grammar(void **state)
{
	(void)state;
	/* Blanks around, several between, and a path with a blank: the access is last. */
	expect("  usb:0403:6001\t r  ", "c 188:0 r\nc 189:1 r\n");
	expect("subsystem:tty", "c 188:0 rwm\n");
	expect_error("usb:403:6001 rw", -EINVAL, "usb:VID:PID[:SERIAL]");
	expect_error("usb:0403:6001: rw", -EINVAL, "usb:0403:6001:");
	expect_error("usb:0403 rw", -EINVAL, "four hex digits");
	expect_error("usb:0403:6001 rx", -EINVAL, "bad access \"rx\"");
	expect_error("usb:0403:6001 rr", -EINVAL, "bad access");
	expect_error("subsystem: rw", -EINVAL, "nothing after the ':'");
	expect_error("subsystem:a/b rw", -EINVAL, "no '/'");
	expect_error("loop:disk.img r", -EINVAL, "loop:/PATH");
	expect_error("wwid: r", -EINVAL, "nothing after");
	expect_error("cdi:example.com r", -EINVAL, "cdi:VENDOR/CLASS=NAME");
	expect_error("cdi:example.com/gpu= r", -EINVAL, "cdi:VENDOR/CLASS=NAME");
	expect_error("cdi:-x.com/gpu=0 r", -EINVAL, "cdi:VENDOR/CLASS=NAME");
	expect_error("nope:x r", -EINVAL, "not a selector");
	{
		struct selector_env e = env();
		struct devwl_rule *rules = NULL;
		struct devwl_error err = {0};
		size_t n = 0;

		assert_int_equal(selector_resolve(&e, "usb:0403:6001\0 r", 16, &rules, &n, &err),
				 -EINVAL);
		assert_non_null(strstr(err.msg, "NUL"));
	}
	assert_true(selector_is(" usb:1", 6));
	assert_true(selector_is("cdi:", 4));
	assert_false(selector_is("c 1:3 rwm", 9));
	assert_false(selector_is("/dev/null", 9));
	assert_false(selector_is("usb", 3));
}

static void test_selector_resolve_warns_when_nothing_matches(void **state)
{
	(void)state;
	warned[0] = '\0';
	expect("usb:0403:6001 rw", "c 188:0 rw\nc 189:1 rw\n");
	assert_string_equal(warned, "");
	expect("usb:dead:beef rw", "");
	assert_string_equal(warned, "usb:dead:beef: matches no device now\n");
}

/* Every kind of the table, and its prefix in every message and manual that lists them. */
static void test_selector_kinds_listed(void **state)
{
	static const char *const docs[] = {"doc/devwl-policy.5", "doc/devwlctl.1", "doc/DESIGN.md"};
	struct devwl_error err = {0};
	struct devwl_rule *rules = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(selector_resolve(NULL, "nope:x", 6, &rules, &n, &err), -EINVAL);
	for (size_t i = 0; i < SELECTOR_KIND_MAX; i++) {
		const char *p = selector_kinds[i].prefix;

		assert_int_equal(selector_kind_of(p, strlen(p)), (int)i);
		if (!strstr(err.msg, p) || !strstr(selector_prefixes(), p))
			fail_msg("%s missing from \"%s\"", p, err.msg);
	}
	for (size_t d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
		char *text = doc_page(docs[d]);

		for (size_t i = 0; i < SELECTOR_KIND_MAX; i++)
			if (!strstr(text, selector_kinds[i].prefix))
				fail_msg("%s does not name the selector kind %s", docs[d],
					 selector_kinds[i].prefix);
		free(text);
	}
}

static void test_selector_resolve_rule_any_text(void **state)
{
	struct selector_env e = env();
	struct devwl_rule *rules = NULL;
	struct devwl_error err = {0};
	size_t n = 0;

	(void)state;
	assert_int_equal(selector_resolve_rule(&e, "c 1:3 r", 7, &rules, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rules[0].major, 1);
	assert_int_equal(rules[0].minor, 3);
	free(rules);
	assert_int_equal(selector_resolve_rule(&e, "/dev/zero r", 11, &rules, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rules[0].minor, 5);
	free(rules);
	assert_int_equal(selector_resolve_rule(&e, "subsystem:tty w", 15, &rules, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rules[0].major, 188);
	assert_int_equal(rules[0].access, DEVWL_ACC_WRITE);
	free(rules);
	rules = NULL;
	assert_int_equal(selector_resolve_rule(&e, "q 1:3 r", 7, &rules, &n, &err), -EINVAL);
	assert_null(rules);
}

static void test_batch_exec_env_selectors(void **state)
{
	struct selector_env e = env();
	struct devwl_policy *p = devwl_policy_new();
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	static const char *lines[] = {"mkdir /a",
				      "deny /a a",
				      "allow /a usb:0403:6001 rw",
				      "allow /a loop:/var/lib/images/disk.img r",
				      "allow /a usb:0403 rw",
				      "check /a c 188 0 rw",
				      "check /a c 188 1 r",
				      "check /a b 259 0 w",
				      "deny /a subsystem:tty w",
				      "list /a"};
	struct devwl_rule rule;

	(void)state;
	assert_non_null(p);
	assert_non_null(out);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		batch_exec_env(p, &e, lines[i], strlen(lines[i]), out);
	fclose(out);
	assert_string_equal(buf, "ok\nok\nok\nok\n"
				 "error EINVAL: allow \"usb:0403 rw\" on /a: usb:0403: expected "
				 "usb:VID:PID[:SERIAL], VID and PID four hex digits\n"
				 "allow\ndeny\ndeny\nok\n"
				 "c 188:0 r\nc 189:1 rw\n.\n");
	free(buf);
	devwl_policy_free(p);
	/* A selector is no one rule for the edits devwld folds. */
	assert_int_equal(batch_plain_rule("usb:0403:6001 rw", 16, &rule), -EINVAL);
	assert_int_equal(batch_plain_rule("c 1:3 rw", 8, &rule), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_selector_resolve_usb),
		cmocka_unit_test(test_selector_resolve_subsystem),
		cmocka_unit_test(test_selector_resolve_block_identities),
		cmocka_unit_test(test_selector_resolve_links),
		cmocka_unit_test(test_selector_resolve_grammar),
		cmocka_unit_test(test_selector_resolve_warns_when_nothing_matches),
		cmocka_unit_test(test_selector_kinds_listed),
		cmocka_unit_test(test_selector_resolve_rule_any_text),
		cmocka_unit_test(test_batch_exec_env_selectors),
	};

	return cmocka_run_group_tests(tests, build_tree, remove_tree);
}
