/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "devname.h"
#include "nodepath.h"
#include "util.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int batch_unescape(const char *s, size_t len, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\') {
			out[o++] = s[i];
			continue;
		}
		if (++i >= len)
			return -EINVAL;
		switch (s[i]) {
		case 'n':
			out[o++] = '\n';
			break;
		case 't':
			out[o++] = '\t';
			break;
		case 'r':
			out[o++] = '\r';
			break;
		case 'v':
			out[o++] = '\v';
			break;
		case 'f':
			out[o++] = '\f';
			break;
		case '0':
			out[o++] = '\0';
			break;
		case '\\':
			out[o++] = '\\';
			break;
		case 'x': {
			int hi = i + 1 < len ? hexval(s[i + 1]) : -1;
			int lo = i + 2 < len ? hexval(s[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return -EINVAL;
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
			break;
		}
		default:
			return -EINVAL;
		}
	}
	return (int)o;
}

void batch_reply_errno(FILE *out, int r)
{
	const char *name = strerrorname_np(-r);

	if (name)
		fprintf(out, "error %s\n", name);
	else
		fprintf(out, "error E%d\n", -r);
}

/* Next space-separated word of line[*pos..len); NUL-terminated copy into buf. */
static bool next_word(const char *line, size_t len, size_t *pos, char *buf, size_t size)
{
	size_t start = *pos, n;

	while (*pos < len && line[*pos] != ' ')
		(*pos)++;
	n = *pos - start;
	if (n == 0 || n >= size || memchr(line + start, '\0', n))
		return false;
	memcpy(buf, line + start, n);
	buf[n] = '\0';
	return true;
}

static bool parse_u32(const char *s, uint32_t *ret)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return false;
	*ret = (uint32_t)v;
	return true;
}

static int parse_access(const char *s)
{
	int acc = 0;

	if (strcmp(s, "-") == 0)
		return 0;
	for (; *s; s++) {
		switch (*s) {
		case 'r':
			acc |= DEVWL_ACC_READ;
			break;
		case 'w':
			acc |= DEVWL_ACC_WRITE;
			break;
		case 'm':
			acc |= DEVWL_ACC_MKNOD;
			break;
		default:
			return -EINVAL;
		}
	}
	return acc ? acc : -EINVAL;
}

static void do_listing(struct devwl_policy *policy, const char *path, bool full, FILE *out)
{
	const struct devwl_node *node = devwl_policy_find(policy, path);
	_cleanup_free_ char *text = NULL;
	int r;

	if (!node) {
		batch_reply_errno(out, -ENOENT);
		return;
	}
	r = full ? devwl_node_show(node, &text) : devwl_node_list(node, &text);
	if (r < 0) {
		batch_reply_errno(out, r);
		return;
	}
	fprintf(out, "%s.\n", text);
}

static void do_check(struct devwl_policy *policy, const char *path, const char *line, size_t len,
		     size_t pos, FILE *out)
{
	char type[4], maj[16], min[16], acc[8];
	const struct devwl_node *node;
	uint32_t major, minor;
	int access, r;

	if (!next_word(line, len, &pos, type, sizeof(type)) || pos++ >= len ||
	    !next_word(line, len, &pos, maj, sizeof(maj)) || pos++ >= len ||
	    !next_word(line, len, &pos, min, sizeof(min)) || pos++ >= len ||
	    !next_word(line, len, &pos, acc, sizeof(acc)) || pos != len ||
	    (strcmp(type, "c") && strcmp(type, "b")) || !parse_u32(maj, &major) ||
	    !parse_u32(min, &minor) || (access = parse_access(acc)) < 0) {
		batch_reply_errno(out, -EINVAL);
		return;
	}
	node = devwl_policy_find(policy, path);
	if (!node) {
		batch_reply_errno(out, -ENOENT);
		return;
	}
	r = devwl_node_check(node, type[0] == 'c' ? DEVWL_DEV_CHAR : DEVWL_DEV_BLOCK, major, minor,
			     access);
	if (r < 0)
		batch_reply_errno(out, r);
	else
		fputs(r ? "allow\n" : "deny\n", out);
}

/*
 * A device name (devname.h) is the writes of the rules it resolves to, in order, up to
 * the first refused one; one answer for the line, as for a rule.
 */
static int write_named(struct devwl_policy *policy, const char *path, enum devwl_file file,
		       const char *name, size_t len)
{
	_cleanup_free_ struct devwl_rule *rules = NULL;
	struct devwl_node *node = devwl_policy_find(policy, path);
	size_t n = 0;
	int r;

	if (!node)
		return -ENOENT;
	r = devwl_devname_resolve(name, len, NULL, &rules, &n, NULL);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = devwl_node_update(node, file, &rules[i]);
	return r;
}

int batch_plain_rule(const char *s, size_t len, struct devwl_rule *ret_rule)
{
	_cleanup_free_ char *text = malloc(len + 1);
	int n;

	if (!text)
		return -ENOMEM;
	n = batch_unescape(s, len, text);
	if (n < 0 || devwl_devname_is_name(text, (size_t)n))
		return -EINVAL;
	return devwl_rule_parse(text, (size_t)n, ret_rule, NULL);
}

void batch_exec(struct devwl_policy *policy, const char *line, size_t len, FILE *out)
{
	char cmd[16], path[4096];
	size_t pos = 0;
	int r;

	if (!next_word(line, len, &pos, cmd, sizeof(cmd)) || pos++ >= len ||
	    !next_word(line, len, &pos, path, sizeof(path)) || devwl_node_path_valid(path) < 0) {
		/* A malformed node path is EINVAL for every command, as for mkdir. */
		batch_reply_errno(out, -EINVAL);
		goto out;
	}
	if (!strcmp(cmd, "mkdir") || !strcmp(cmd, "rmdir")) {
		if (pos != len)
			r = -EINVAL;
		else
			r = cmd[0] == 'm' ? devwl_policy_mkdir(policy, path)
					  : devwl_policy_rmdir(policy, path);
		if (r < 0)
			batch_reply_errno(out, r);
		else
			fputs("ok\n", out);
	} else if (!strcmp(cmd, "allow") || !strcmp(cmd, "deny")) {
		_cleanup_free_ char *rule = NULL;
		int n;

		/* RULE is everything after the one space that follows NODE. */
		if (pos >= len) {
			batch_reply_errno(out, -EINVAL);
			goto out;
		}
		pos++;
		rule = malloc(len - pos + 1);
		if (!rule) {
			batch_reply_errno(out, -ENOMEM);
			goto out;
		}
		n = batch_unescape(line + pos, len - pos, rule);
		if (n < 0)
			r = n;
		else if (devwl_devname_is_name(rule, (size_t)n))
			r = write_named(policy, path, cmd[0] == 'a' ? DEVWL_ALLOW : DEVWL_DENY,
					rule, (size_t)n);
		else
			r = devwl_policy_write(policy, path,
					       cmd[0] == 'a' ? DEVWL_ALLOW : DEVWL_DENY, rule,
					       (size_t)n, NULL);
		if (r < 0)
			batch_reply_errno(out, r);
		else
			fputs("ok\n", out);
	} else if (!strcmp(cmd, "list") || !strcmp(cmd, "show")) {
		if (pos != len)
			batch_reply_errno(out, -EINVAL);
		else
			do_listing(policy, path, cmd[0] == 's', out);
	} else if (!strcmp(cmd, "check") && pos < len) {
		do_check(policy, path, line, len, pos + 1, out);
	} else {
		batch_reply_errno(out, -EINVAL);
	}
out:
	fflush(out);
}
