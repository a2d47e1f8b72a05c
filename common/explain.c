/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hierarchy's refusals in words (explain.h). The decisions themselves are
 * allowlist.c's; this only finds, after the fact, which rule or default made them, with
 * the kernel's matching: a DENY node grants what one exception covers completely, an
 * ALLOW node refuses what any exception overlaps at all (DESIGN.md section 2).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "explain.h"

struct text {
	char *buf;
	size_t size, len;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len >= t->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n < t->size - t->len ? (size_t)n : t->size - t->len - 1;
}

static bool same_or_any(uint32_t have, uint32_t want)
{
	return have == DEVWL_ANY || have == want;
}

/* e grants all of r: what a DENY node needs of one exception. */
static bool covers(const struct devwl_rule *e, const struct devwl_rule *r)
{
	return e->type == r->type && same_or_any(e->major, r->major) &&
	       same_or_any(e->minor, r->minor) && !(r->access & ~e->access);
}

/* e touches r at all: what makes an ALLOW node refuse. A "*" on either side meets any. */
static bool overlaps(const struct devwl_rule *e, const struct devwl_rule *r)
{
	return e->type == r->type &&
	       (e->major == DEVWL_ANY || r->major == DEVWL_ANY || e->major == r->major) &&
	       (e->minor == DEVWL_ANY || r->minor == DEVWL_ANY || e->minor == r->minor) &&
	       (e->access & r->access);
}

/* The first exception of node that overlaps r, or false. */
static bool first_overlap(const struct devwl_node *node, const struct devwl_rule *r,
			  struct devwl_rule *ret)
{
	size_t n = devwl_node_exception_count(node);

	for (size_t i = 0; i < n; i++)
		if (devwl_node_exception(node, i, ret) >= 0 && overlaps(ret, r))
			return true;
	return false;
}

static bool any_covers(const struct devwl_node *node, const struct devwl_rule *r)
{
	size_t n = devwl_node_exception_count(node);
	struct devwl_rule e;

	for (size_t i = 0; i < n; i++)
		if (devwl_node_exception(node, i, &e) >= 0 && covers(&e, r))
			return true;
	return false;
}

/* Would node, as a parent, refuse a child's grant of r (allowlist.c: verify_new_ex)? */
static bool refuses(const struct devwl_node *node, const struct devwl_rule *r)
{
	struct devwl_rule e;

	if (r->type == DEVWL_DEV_ALL)
		return devwl_node_behavior(node) == DEVWL_BEHAVIOR_DENY;
	if (devwl_node_behavior(node) == DEVWL_BEHAVIOR_ALLOW)
		return first_overlap(node, r, &e);
	return !any_covers(node, r);
}

static void format_rule(const struct devwl_rule *r, char *buf, size_t size)
{
	if (devwl_rule_format(r, buf, size) < 0)
		snprintf(buf, size, "?");
}

void explain_rules(const struct devwl_node *node, char *buf, size_t size)
{
	struct text t = {.buf = buf, .size = size};
	size_t n = devwl_node_exception_count(node);

	buf[0] = '\0';
	if (n == 0)
		add(&t, "none");
	for (size_t i = 0; i < n && i < EXPLAIN_RULES_MAX; i++) {
		char s[DEVWL_RULE_STR_MAX];
		struct devwl_rule e;

		if (devwl_node_exception(node, i, &e) < 0)
			break;
		format_rule(&e, s, sizeof(s));
		add(&t, "%s%s", i ? ", " : "", s);
	}
	if (n > EXPLAIN_RULES_MAX)
		add(&t, " and %zu more", n - EXPLAIN_RULES_MAX);
}

/* What the parent, refusing r, refuses it with: its denial, or its default and rules. */
static void add_refusal(struct text *t, const struct devwl_node *node, const struct devwl_rule *r)
{
	char rules[EXPLAIN_MAX / 2], s[DEVWL_RULE_STR_MAX];
	struct devwl_rule e;

	if (devwl_node_behavior(node) == DEVWL_BEHAVIOR_ALLOW && first_overlap(node, r, &e)) {
		format_rule(&e, s, sizeof(s));
		add(t, "the parent %s denies %s", devwl_node_path(node), s);
		return;
	}
	explain_rules(node, rules, sizeof(rules));
	if (r->type == DEVWL_DEV_ALL)
		add(t,
		    "the parent %s denies by default, so no node below it can allow all (its "
		    "rules: %s)",
		    devwl_node_path(node), rules);
	else
		add(t, "the parent %s does not allow it (its rules: %s)", devwl_node_path(node),
		    rules);
}

/* The same of an ancestor further up, where the grant would have to start. */
static void add_top(struct text *t, const struct devwl_node *top, const struct devwl_rule *r)
{
	char rules[EXPLAIN_MAX / 2], s[DEVWL_RULE_STR_MAX];
	struct devwl_rule e;

	if (devwl_node_behavior(top) == DEVWL_BEHAVIOR_ALLOW && first_overlap(top, r, &e)) {
		format_rule(&e, s, sizeof(s));
		add(t, "; %s above it denies %s too", devwl_node_path(top), s);
	} else if (r->type == DEVWL_DEV_ALL) {
		explain_rules(top, rules, sizeof(rules));
		add(t, "; %s above it denies by default too (its rules: %s)", devwl_node_path(top),
		    rules);
	} else {
		explain_rules(top, rules, sizeof(rules));
		add(t, "; neither does %s above it (its rules: %s)", devwl_node_path(top), rules);
	}
	add(t, ": it would have to be allowed there first");
}

void explain_allow_refused(const struct devwl_node *node, const struct devwl_rule *rule, char *buf,
			   size_t size)
{
	struct text t = {.buf = buf, .size = size};
	const struct devwl_node *parent = devwl_node_parent(node), *top = NULL;

	buf[0] = '\0';
	if (!parent || !refuses(parent, rule))
		return;
	/* The grant has to start at the topmost ancestor that refuses it too. */
	for (const struct devwl_node *a = devwl_node_parent(parent); a; a = devwl_node_parent(a))
		if (refuses(a, rule))
			top = a;
	add_refusal(&t, parent, rule);
	if (top)
		add_top(&t, top, rule);
}

void explain_denial(const struct devwl_node *node, int type, uint32_t major, uint32_t minor,
		    int access, char *buf, size_t size)
{
	const struct devwl_rule r = {
		.type = (uint8_t)type, .access = (uint8_t)access, .major = major, .minor = minor};
	struct text t = {.buf = buf, .size = size};
	const struct devwl_node *top = NULL;
	char s[DEVWL_RULE_STR_MAX], rules[EXPLAIN_MAX / 2];
	struct devwl_rule e;

	buf[0] = '\0';
	if (devwl_node_behavior(node) == DEVWL_BEHAVIOR_ALLOW && first_overlap(node, &r, &e)) {
		format_rule(&e, s, sizeof(s));
		add(&t, "deny %s", s);
	} else {
		explain_rules(node, rules, sizeof(rules));
		add(&t, "no rule allows it (rules: %s)", rules);
	}
	for (const struct devwl_node *a = devwl_node_parent(node); a; a = devwl_node_parent(a))
		if (devwl_node_check(a, type, major, minor, access) == 0)
			top = a;
	if (top)
		add(&t, "; so does %s", devwl_node_path(top));
}
