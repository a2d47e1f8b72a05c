/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the rule grammar and the updates it drives.
 *
 * 1. The whole input is one write: devwl_rule_parse must accept it or refuse it with
 *    -EINVAL/-E2BIG and a coherent error; an accepted rule must print and parse back
 *    to itself (an empty access prints as nothing, which must then be refused).
 * 2. The input split at '|' is a sequence of operations on a small tree: the first
 *    byte of a segment picks the node and the operation (allow write, deny write,
 *    rmdir/mkdir, check), the rest is the rule. After each one, invariants that hold
 *    in the kernel must hold here: an ALLOW node's parent is ALLOW, listings parse
 *    back to the exceptions, and no node allows what its parent denies.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devwl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS	     64
#define MAX_PROBE_EX 12

static const char *const tree[] = {"/", "/a", "/a/b", "/c", "/c/d"};
#define NTREE (sizeof(tree) / sizeof(tree[0]))

#define check(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

/* Field by field: the struct has padding that no one initialises. */
static bool rule_eq(const struct devwl_rule *a, const struct devwl_rule *b)
{
	return a->type == b->type && a->access == b->access && a->major == b->major &&
	       a->minor == b->minor;
}

static void check_parse(const uint8_t *data, size_t size)
{
	struct devwl_rule rule = {0}, again = {0};
	struct devwl_error err = {0};
	char buf[DEVWL_RULE_STR_MAX];
	int r, n;

	memset(err.msg, 'x', sizeof(err.msg));
	r = devwl_rule_parse((const char *)data, size, &rule, &err);
	if (r < 0) {
		check(r == -EINVAL || r == -E2BIG);
		check(r != -E2BIG || size > DEVWL_RULE_WRITE_MAX);
		check(err.code == r);
		check(err.offset <= DEVWL_RULE_WRITE_MAX && (size == 0 || err.offset <= size));
		check(memchr(err.msg, '\0', sizeof(err.msg)) && err.msg[0]);
		return;
	}
	check(size <= DEVWL_RULE_WRITE_MAX);
	check(rule.type == DEVWL_DEV_BLOCK || rule.type == DEVWL_DEV_CHAR ||
	      rule.type == DEVWL_DEV_ALL);
	check(!(rule.access & ~DEVWL_ACC_MASK));
	n = devwl_rule_format(&rule, buf, sizeof(buf));
	check(n > 0 && (size_t)n == strlen(buf));
	r = devwl_rule_parse(buf, (size_t)n, &again, NULL);
	if (rule.access == 0) {
		check(r == -EINVAL);
		return;
	}
	check(r == 0);
	check(rule_eq(&rule, &again));
}

/* Every line of devices.list is the next exception, printed. */
static void check_listing(const struct devwl_node *node)
{
	char *text = NULL, *line, *save = NULL;
	size_t i = 0;

	check(devwl_node_list(node, &text) == 0);
	if (devwl_node_behavior(node) == DEVWL_BEHAVIOR_ALLOW) {
		check(strcmp(text, "a *:* rwm\n") == 0);
		free(text);
		return;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
		struct devwl_rule want = {0}, got = {0};
		char buf[DEVWL_RULE_STR_MAX];

		check(devwl_node_exception(node, i, &want) == 0);
		check(devwl_rule_format(&want, buf, sizeof(buf)) > 0);
		check(strcmp(line, buf) == 0);
		if (want.access == 0)
			continue;
		check(devwl_rule_parse(line, strlen(line), &got, NULL) == 0);
		check(rule_eq(&want, &got));
	}
	check(i == devwl_node_exception_count(node));
	free(text);
	check(devwl_node_show(node, &text) == 0);
	free(text);
}

static void probe(const struct devwl_node *child, const struct devwl_node *parent, int type,
		  uint32_t major, uint32_t minor)
{
	if (major == DEVWL_ANY || minor == DEVWL_ANY)
		return;
	for (int acc = 0; acc <= DEVWL_ACC_MASK; acc++) {
		int c = devwl_node_check(child, type, major, minor, acc);
		int p = devwl_node_check(parent, type, major, minor, acc);
		check(c == 0 || c == 1);
		check(p == 0 || p == 1);
		/* The hierarchy never grants below what it denies above. */
		check(!c || p);
	}
}

static void check_node(const struct devwl_node *node)
{
	const struct devwl_node *parent = devwl_node_parent(node);
	const uint32_t fixed[] = {1, 3};

	check_listing(node);
	if (!parent)
		return;
	if (devwl_node_behavior(node) == DEVWL_BEHAVIOR_ALLOW)
		check(devwl_node_behavior(parent) == DEVWL_BEHAVIOR_ALLOW);
	for (int t = DEVWL_DEV_BLOCK; t <= DEVWL_DEV_CHAR; t++)
		for (size_t a = 0; a < 2; a++)
			for (size_t b = 0; b < 2; b++)
				probe(node, parent, t, fixed[a], fixed[b]);
	/* Probe where the exceptions of both are, wildcards replaced by a fixed value. */
	for (int side = 0; side < 2; side++) {
		const struct devwl_node *n = side ? parent : node;
		size_t count = devwl_node_exception_count(n);
		for (size_t i = 0; i < count && i < MAX_PROBE_EX; i++) {
			struct devwl_rule e = {0};
			check(devwl_node_exception(n, i, &e) == 0);
			check(e.type == DEVWL_DEV_BLOCK || e.type == DEVWL_DEV_CHAR);
			probe(node, parent, e.type, e.major == DEVWL_ANY ? 7 : e.major,
			      e.minor == DEVWL_ANY ? 7 : e.minor);
		}
	}
}

static void check_tree(struct devwl_policy *p)
{
	size_t present = 0;

	for (size_t i = 0; i < NTREE; i++) {
		const struct devwl_node *n = devwl_policy_find(p, tree[i]);
		if (n) {
			check(strcmp(devwl_node_path(n), tree[i]) == 0);
			check_node(n);
			present++;
		}
	}
	check(devwl_policy_count(p) == present);
}

static void run_ops(const uint8_t *data, size_t size)
{
	struct devwl_policy *p = devwl_policy_new();
	size_t pos = 0;

	if (!p)
		return;
	for (size_t i = 1; i < NTREE; i++)
		check(devwl_policy_mkdir(p, tree[i]) == 0);
	for (int ops = 0; ops < MAX_OPS && pos < size; ops++) {
		const uint8_t *seg = data + pos, *bar = memchr(seg, '|', size - pos);
		size_t len = bar ? (size_t)(bar - seg) : size - pos;
		uint8_t sel = len ? seg[0] : 0;
		const char *path = tree[sel % NTREE];
		const char *rule = (const char *)seg + 1;
		size_t rlen = len ? len - 1 : 0;
		struct devwl_node *node = devwl_policy_find(p, path);
		struct devwl_error err = {0};
		struct devwl_rule r = {0};
		int ret;

		pos += len + 1;
		switch ((sel / NTREE) % 4) {
		case 0:
		case 1:
			ret = devwl_policy_write(
				p, path, (sel / NTREE) % 4 ? DEVWL_FILE_DENY : DEVWL_FILE_ALLOW,
				rule, rlen, &err);
			check(ret == 0 || ret == -EINVAL || ret == -E2BIG || ret == -EPERM ||
			      ret == -ENOENT);
			check(ret == 0 || err.code == ret);
			check(node || ret == -ENOENT);
			break;
		case 2:
			if (node) {
				ret = devwl_policy_rmdir(p, path);
				check(ret == 0 || ret == -EBUSY);
			} else {
				ret = devwl_policy_mkdir(p, path);
				check(ret == 0 || ret == -ENOENT);
			}
			break;
		default:
			if (node && devwl_rule_parse(rule, rlen, &r, NULL) == 0 &&
			    r.type != DEVWL_DEV_ALL) {
				ret = devwl_node_check(node, r.type, r.major, r.minor, r.access);
				check(ret == 0 || ret == 1);
			}
			break;
		}
		check_tree(p);
	}
	devwl_policy_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_parse(data, size);
	run_ops(data, size);
	return 0;
}
