/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rule grammar of the device cgroup: what a write to devices.allow/deny means.
 * Pure: no syscalls. The kernel (security/device_cgroup.c, devcgroup_update_access)
 * is the specification, corners included; tests/oracle compares us against it.
 */
#include <stdio.h>
#include <string.h>

#include "access.h"
#include "devwl.h"
#include "rules.h"
#include "util.h"

/* The kernel's isspace(): its _ctype table also marks Latin-1 NBSP (0xa0) as space. */
bool rules_kspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

static bool kdigit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/*
 * A major or minor: "*" or up to 11 digits read into a u32. The kernel copies at most
 * 11 digits and leaves b on whatever follows; a 12th digit then fails the ':' or space
 * test of the caller, which is where we fail it too.
 */
static int parse_number(const unsigned char *s, size_t *pos, uint32_t *ret, const char *what,
			size_t base, struct devwl_error *err)
{
	size_t p = *pos;
	uint64_t v = 0;
	size_t n;

	if (s[p] == '*') {
		*ret = DEVWL_ANY;
		*pos = p + 1;
		return 0;
	}
	if (!kdigit(s[p]))
		return devwl_error_set(err, -EINVAL, base + p, "%s must be '*' or a decimal number",
				       what);
	for (n = 0; n < 11 && kdigit(s[p]); n++, p++)
		v = v * 10 + (uint64_t)(s[p] - '0');
	if (v > UINT32_MAX)
		return devwl_error_set(err, -EINVAL, base + *pos, "%s is larger than 4294967295",
				       what);
	*ret = (uint32_t)v;
	*pos = p;
	return 0;
}

DEVWL_EXPORT int devwl_rule_parse(const char *buf, size_t len, struct devwl_rule *ret_rule,
				  struct devwl_error *err)
{
	char tmp[DEVWL_RULE_WRITE_MAX + 1];
	const unsigned char *s = (const unsigned char *)tmp;
	struct devwl_rule rule = {0};
	size_t start = 0, end, p, count;
	int r;

	if (!buf && len > 0)
		return devwl_error_set(err, -EINVAL, 0, "no rule given");
	if (len > DEVWL_RULE_WRITE_MAX)
		return devwl_error_set(err, -E2BIG, DEVWL_RULE_WRITE_MAX,
				       "rule is %zu bytes, longer than %d", len,
				       DEVWL_RULE_WRITE_MAX);
	/* The kernel sees a C string: the first NUL ends the write. */
	end = len ? strnlen(buf, len) : 0;
	memcpy(tmp, buf ? buf : "", end);
	tmp[end] = '\0';
	/* strstrip(): trailing then leading whitespace. */
	while (end > 0 && rules_kspace(s[end - 1]))
		tmp[--end] = '\0';
	while (start < end && rules_kspace(s[start]))
		start++;
	s += start;

	switch (s[0]) {
	case 'a':
		/* Anything after "a" is ignored, as in the kernel. */
		rule.type = DEVWL_DEV_ALL;
		rule.major = rule.minor = DEVWL_ANY;
		rule.access = DEVWL_ACC_MASK;
		*ret_rule = rule;
		return 0;
	case 'b':
		rule.type = DEVWL_DEV_BLOCK;
		break;
	case 'c':
		rule.type = DEVWL_DEV_CHAR;
		break;
	case '\0':
		return devwl_error_set(err, -EINVAL, start, "empty rule");
	default:
		return devwl_error_set(err, -EINVAL, start, "type must be 'a', 'b' or 'c'");
	}
	if (!rules_kspace(s[1]))
		return devwl_error_set(err, -EINVAL, start + 1,
				       "expected one space after the type");
	p = 2;
	r = parse_number(s, &p, &rule.major, "major", start, err);
	if (r < 0)
		return r;
	if (s[p] != ':')
		return devwl_error_set(err, -EINVAL, start + p, "expected ':' after the major");
	p++;
	r = parse_number(s, &p, &rule.minor, "minor", start, err);
	if (r < 0)
		return r;
	if (!rules_kspace(s[p]))
		return devwl_error_set(err, -EINVAL, start + p,
				       s[p] ? "expected one space after the minor"
					    : "missing access (a subset of \"rwm\")");
	/* Up to three characters are examined; a newline or NUL ends the field early. */
	for (p++, count = 0; count < 3; count++, p++) {
		switch (s[p]) {
		case 'r':
			rule.access |= DEVWL_ACC_READ;
			break;
		case 'w':
			rule.access |= DEVWL_ACC_WRITE;
			break;
		case 'm':
			rule.access |= DEVWL_ACC_MKNOD;
			break;
		case '\n':
		case '\0':
			count = 3;
			break;
		default:
			return devwl_error_set(err, -EINVAL, start + p,
					       "access must be made of 'r', 'w' and 'm'");
		}
	}
	*ret_rule = rule;
	return 0;
}

static void format_number(char *buf, size_t size, uint32_t v)
{
	if (v == DEVWL_ANY)
		snprintf(buf, size, "*");
	else
		snprintf(buf, size, "%u", v);
}

char rules_type_char(unsigned type)
{
	switch (type) {
	case DEVWL_DEV_BLOCK:
		return 'b';
	case DEVWL_DEV_CHAR:
		return 'c';
	default:
		return 'a';
	}
}

DEVWL_EXPORT int devwl_rule_format(const struct devwl_rule *rule, char *buf, size_t size)
{
	char maj[12], min[12], acc[4];
	int n;

	if (!rule || !buf ||
	    (rule->type != DEVWL_DEV_BLOCK && rule->type != DEVWL_DEV_CHAR &&
	     rule->type != DEVWL_DEV_ALL) ||
	    (rule->access & ~DEVWL_ACC_MASK))
		return -EINVAL;
	format_number(maj, sizeof(maj), rule->major);
	format_number(min, sizeof(min), rule->minor);
	devwl_access_text(rule->access, acc);
	n = snprintf(buf, size, "%c %s:%s %s", rules_type_char(rule->type), maj, min, acc);
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}
