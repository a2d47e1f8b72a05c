/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "ctlverb.h"
#include "explain.h"
#include "nodepath.h"
#include "selector.h"
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

/* The named escapes, byte and letter: both directions read this one table. */
static const char escapes[][2] = {
	{'\n', 'n'}, {'\t', 't'}, {'\r', 'r'}, {'\v', 'v'}, {'\f', 'f'}, {'\0', '0'}, {'\\', '\\'},
};

int batch_unescape(const char *s, size_t len, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		size_t k = 0;

		if (s[i] != '\\') {
			out[o++] = s[i];
			continue;
		}
		if (++i >= len)
			return -EINVAL;
		if (s[i] == 'x') {
			int hi = i + 1 < len ? hexval(s[i + 1]) : -1;
			int lo = i + 2 < len ? hexval(s[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return -EINVAL;
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
			continue;
		}
		while (k < ARRAY_SIZE(escapes) && escapes[k][1] != s[i])
			k++;
		if (k == ARRAY_SIZE(escapes))
			return -EINVAL;
		out[o++] = escapes[k][0];
	}
	return (int)o;
}

void batch_escape(FILE *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t k = 0;

		while (k < ARRAY_SIZE(escapes) && escapes[k][0] != s[i])
			k++;
		if (k < ARRAY_SIZE(escapes))
			fprintf(out, "\\%c", escapes[k][1]);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
}

/* s[0..len), text of the line, for a message: control bytes and bytes past ASCII escaped
 * as \xHH, cut at QUOTE_MAX bytes of input ("..."), so that it stays on one line. */
#define QUOTE_MAX 96
static const char *quote(const char *s, size_t len, char *buf, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len && i < QUOTE_MAX && o + 5 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	if (len > QUOTE_MAX && o + 4 < size)
		o += (size_t)snprintf(buf + o, size - o, "...");
	buf[o] = '\0';
	return buf;
}

int batch_reply_error(FILE *out, int r, const char *fmt, ...)
{
	const char *name = strerrorname_np(-r);
	char why[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (name)
		fprintf(out, "error %s: ", name);
	else
		fprintf(out, "error E%d: ", -r);
	/* One answer, one line: whatever the reason quotes stays on it. */
	for (const char *p = why; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", (unsigned char)*p);
		else
			fputc(*p, out);
	fputc('\n', out);
	return r;
}

int batch_answer_errno(const char *answer)
{
	char name[32];
	size_t n;

	if (strncmp(answer, "error ", 6))
		return 0;
	answer += 6;
	n = strcspn(answer, ":\n");
	if (n == 0 || n >= sizeof(name))
		return -EPROTO;
	memcpy(name, answer, n);
	name[n] = '\0';
	for (int e = 1; e < 134; e++) {
		const char *s = strerrorname_np(e);

		if (s && !strcmp(s, name))
			return -e;
	}
	return -EPROTO;
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

static int do_listing(struct devwl_policy *policy, const char *path, bool full, FILE *out)
{
	const struct devwl_node *node = devwl_policy_find(policy, path);
	_cleanup_free_ char *text = NULL;
	int r;

	if (!node)
		return batch_reply_error(out, -ENOENT, "no node %s", path);
	r = full ? devwl_node_show(node, &text) : devwl_node_list(node, &text);
	if (r < 0)
		return batch_reply_error(out, r, "%s: out of memory", path);
	fprintf(out, "%s.\n", text);
	return 0;
}

static int do_check(struct devwl_policy *policy, const char *path, const char *line, size_t len,
		    size_t pos, FILE *out)
{
	char type[4], maj[16], min[16], acc[8];
	const struct devwl_node *node;
	const size_t args = pos;
	uint32_t major, minor;
	int access, r;

	if (!next_word(line, len, &pos, type, sizeof(type)) || pos++ >= len ||
	    !next_word(line, len, &pos, maj, sizeof(maj)) || pos++ >= len ||
	    !next_word(line, len, &pos, min, sizeof(min)) || pos++ >= len ||
	    !next_word(line, len, &pos, acc, sizeof(acc)) || pos != len ||
	    (strcmp(type, "c") && strcmp(type, "b")) || !parse_u32(maj, &major) ||
	    !parse_u32(min, &minor) || (access = parse_access(acc)) < 0) {
		char q[QUOTE_MAX * 4 + 8];

		return batch_reply_error(
			out, -EINVAL,
			"check %s: \"%s\" is not TYPE MAJOR MINOR ACCESS (c or b, numbers from 0 "
			"to 4294967295, ACCESS of r, w and m, or - for none)",
			path, quote(line + args, len - args, q, sizeof(q)));
	}
	node = devwl_policy_find(policy, path);
	if (!node)
		return batch_reply_error(out, -ENOENT, "no node %s", path);
	r = devwl_node_check(node, type[0] == 'c' ? DEVWL_DEV_CHAR : DEVWL_DEV_BLOCK, major, minor,
			     access);
	if (r < 0)
		return batch_reply_error(out, r, "check %s: refused by libdevwl", path);
	fputs(r ? "allow\n" : "deny\n", out);
	return 0;
}

/*
 * One parsed rule written to node: on failure the answer names the verb, the rule as
 * parsed, the node and why (for EPERM the ancestor that refuses it and its rules).
 * from names the device name the rule came from, or is NULL.
 */
static int write_rule(struct devwl_node *node, enum devwl_file file, const struct devwl_rule *rule,
		      const char *from, FILE *out)
{
	const char *verb = file == DEVWL_FILE_ALLOW ? "allow" : "deny",
		   *path = devwl_node_path(node);
	char s[DEVWL_RULE_STR_MAX], why[EXPLAIN_MAX];
	int r = devwl_node_update(node, file, rule);

	if (r >= 0)
		return r;
	if (devwl_rule_format(rule, s, sizeof(s)) < 0)
		strcpy(s, "?");
	if (rule->type == DEVWL_DEV_ALL)
		strcpy(s, "a");
	if (r == -EPERM) {
		explain_allow_refused(node, rule, why, sizeof(why));
		if (!why[0])
			strcpy(why, "the hierarchy refuses it");
	} else if (r == -EINVAL && rule->type == DEVWL_DEV_ALL) {
		snprintf(why, sizeof(why), "%s has children, so its default can no longer change",
			 path);
	} else if (r == -ENOMEM) {
		strcpy(why, "out of memory");
	} else {
		strcpy(why, "refused by libdevwl");
	}
	return batch_reply_error(out, r, "%s %s%s%s%s on %s: %s", verb, s, from ? " (from " : "",
				 from ? from : "", from ? ")" : "", path, why);
}

/*
 * A device name (devwl_devname_resolve()) or a selector (selector.h) is the writes of the rules
 * it resolves to, in order, up to the first refused one; one answer for the line, as for a
 * rule. A selector matching no device writes nothing and is answered ok.
 */
static int write_named(const struct selector_env *env, struct devwl_node *node,
		       enum devwl_file file, const char *name, size_t len, FILE *out)
{
	_cleanup_free_ struct devwl_rule *rules = NULL;
	struct devwl_error err = {0};
	char q[QUOTE_MAX * 4 + 8];
	size_t n = 0;
	int r;

	r = selector_resolve_rule(env, name, len, &rules, &n, &err);
	if (r < 0)
		return batch_reply_error(out, r, "%s \"%s\" on %s: %s",
					 file == DEVWL_FILE_ALLOW ? "allow" : "deny",
					 quote(name, len, q, sizeof(q)), devwl_node_path(node),
					 err.msg[0] ? err.msg : strerror(-r));
	for (size_t i = 0; i < n; i++) {
		r = write_rule(node, file, &rules[i], quote(name, len, q, sizeof(q)), out);
		if (r < 0)
			return r;
	}
	fputs("ok\n", out);
	return 0;
}

int batch_plain_rule(const char *s, size_t len, struct devwl_rule *ret_rule)
{
	_cleanup_free_ char *text = malloc(len + 1);
	int n;

	if (!text)
		return -ENOMEM;
	n = batch_unescape(s, len, text);
	if (n < 0 || devwl_devname_is_name(text, (size_t)n) || selector_is(text, (size_t)n))
		return -EINVAL;
	return devwl_rule_parse(text, (size_t)n, ret_rule, NULL);
}

/* allow|deny NODE RULE, RULE at line[pos..len). */
static int do_write(struct devwl_policy *policy, const struct selector_env *env,
		    enum devwl_file file, const char *path, const char *line, size_t len,
		    size_t pos, FILE *out)
{
	const char *verb = file == DEVWL_FILE_ALLOW ? "allow" : "deny";
	_cleanup_free_ char *rule = malloc(len - pos + 1);
	struct devwl_node *node = devwl_policy_find(policy, path);
	struct devwl_error err = {0};
	struct devwl_rule parsed;
	char q[QUOTE_MAX * 4 + 8];
	int n, r;

	if (!rule)
		return batch_reply_error(out, -ENOMEM, "out of memory");
	n = batch_unescape(line + pos, len - pos, rule);
	if (n < 0)
		return batch_reply_error(out, n,
					 "%s %s: bad escape in \"%s\" (\\n \\t \\r \\v \\f \\0 "
					 "\\\\ \\xHH)",
					 verb, path, quote(line + pos, len - pos, q, sizeof(q)));
	if (!node)
		return batch_reply_error(out, -ENOENT, "no node %s", path);
	if (devwl_devname_is_name(rule, (size_t)n) || selector_is(rule, (size_t)n))
		return write_named(env, node, file, rule, (size_t)n, out);
	/* A zero-length write changes nothing and succeeds, as the kernel's does. */
	if (n == 0) {
		fputs("ok\n", out);
		return 0;
	}
	r = devwl_rule_parse(rule, (size_t)n, &parsed, &err);
	if (r < 0)
		return batch_reply_error(out, r, "%s \"%s\" on %s: %s", verb,
					 quote(line + pos, len - pos, q, sizeof(q)), path,
					 err.msg[0] ? err.msg : strerror(-r));
	r = write_rule(node, file, &parsed, NULL, out);
	if (r < 0)
		return r;
	fputs("ok\n", out);
	return 0;
}

struct child_look {
	const struct devwl_node *node;
	bool found;
};

static int visit_child(struct devwl_node *n, void *userdata)
{
	struct child_look *look = userdata;

	if (devwl_node_parent(n) == look->node) {
		look->found = true;
		return -1; /* enough */
	}
	return 0;
}

static bool has_children(struct devwl_policy *policy, const struct devwl_node *node)
{
	struct child_look look = {node, false};

	devwl_policy_foreach(policy, visit_child, &look);
	return look.found;
}

static int do_mkdir_rmdir(struct devwl_policy *policy, bool mk, const char *path, FILE *out)
{
	const char *slash = strrchr(path, '/');
	int r = mk ? devwl_policy_mkdir(policy, path) : devwl_policy_rmdir(policy, path);

	if (r >= 0) {
		fputs("ok\n", out);
		return 0;
	}
	switch (r) {
	case -EEXIST:
		return batch_reply_error(out, r, "node %s exists", path);
	case -ENOENT:
		if (!mk)
			return batch_reply_error(out, r, "no node %s", path);
		return batch_reply_error(out, r, "no parent %.*s: make it first",
					 slash == path ? 1 : (int)(slash - path), path);
	case -EBUSY: {
		const struct devwl_node *node = devwl_policy_find(policy, path);

		if (!strcmp(path, "/"))
			return batch_reply_error(out, r, "/ is the root, which always stays");
		if (node && has_children(policy, node))
			return batch_reply_error(out, r, "%s has children: remove them first",
						 path);
		return batch_reply_error(out, r, "%s is in use by a container", path);
	}
	case -ENOMEM:
		return batch_reply_error(out, r, "out of memory");
	}
	return batch_reply_error(out, r, "%s %s: refused by libdevwl", mk ? "mkdir" : "rmdir",
				 path);
}

/* A command batch answers: a row of ctl_verbs[] flagged CTLV_BATCH. */
static bool is_command(const char *word, size_t n)
{
	for (size_t v = 0; v < CTL_VERB_COUNT; v++)
		if (ctl_verbs[v].flags & CTLV_BATCH && strlen(ctl_verbs[v].wire) == n &&
		    !memcmp(word, ctl_verbs[v].wire, n))
			return true;
	return false;
}

/* Why a line that is no command is malformed, for its answer. */
static int malformed(const char *line, size_t len, FILE *out)
{
	char q[QUOTE_MAX * 4 + 8], known[128] = "";
	size_t n = 0;

	if (len == 0)
		return batch_reply_error(out, -EINVAL, "an empty line");
	if (line[0] == ' ')
		return batch_reply_error(out, -EINVAL, "a line starting with a space");
	while (n < len && line[n] != ' ')
		n++;
	if (is_command(line, n))
		return batch_reply_error(out, -EINVAL,
					 "%.*s: expects a NODE (one space, then a path like /a/b)",
					 (int)n, line);
	for (size_t v = 0; v < CTL_VERB_COUNT; v++)
		if (ctl_verbs[v].flags & CTLV_BATCH)
			snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
				 *known ? ", " : "", ctl_verbs[v].wire);
	return batch_reply_error(out, -EINVAL, "unknown command \"%s\" (%s)",
				 quote(line, n, q, sizeof(q)), known);
}

int batch_exec(struct devwl_policy *policy, const char *line, size_t len, FILE *out)
{
	return batch_exec_env(policy, NULL, line, len, out);
}

int batch_exec_env(struct devwl_policy *policy, const struct selector_env *env, const char *line,
		   size_t len, FILE *out)
{
	char cmd[16], path[4096], q[QUOTE_MAX * 4 + 8];
	size_t pos = 0, start;
	int r;

	if (!next_word(line, len, &pos, cmd, sizeof(cmd)) || pos++ >= len) {
		r = malformed(line, len, out);
		goto out;
	}
	if (!is_command(cmd, strlen(cmd))) {
		r = malformed(line, len, out);
		goto out;
	}
	start = pos;
	if (!next_word(line, len, &pos, path, sizeof(path)) || devwl_node_path_valid(path) < 0) {
		/* A malformed node path is EINVAL for every command, as for mkdir. */
		while (pos < len && line[pos] != ' ')
			pos++;
		r = batch_reply_error(out, -EINVAL, "%s: \"%s\" is not a node path like /a/b", cmd,
				      quote(line + start, pos - start, q, sizeof(q)));
		goto out;
	}
	if (!strcmp(cmd, "mkdir") || !strcmp(cmd, "rmdir")) {
		if (pos != len)
			r = batch_reply_error(out, -EINVAL, "%s %s: nothing may follow the node",
					      cmd, path);
		else
			r = do_mkdir_rmdir(policy, cmd[0] == 'm', path, out);
	} else if (!strcmp(cmd, "allow") || !strcmp(cmd, "deny")) {
		/* RULE is everything after the one space that follows NODE. */
		if (pos >= len)
			r = batch_reply_error(out, -EINVAL, "%s %s: expects a RULE after the node",
					      cmd, path);
		else
			r = do_write(policy, env,
				     cmd[0] == 'a' ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY, path, line,
				     len, pos + 1, out);
	} else if (!strcmp(cmd, "list") || !strcmp(cmd, "show")) {
		if (pos != len)
			r = batch_reply_error(out, -EINVAL, "%s %s: nothing may follow the node",
					      cmd, path);
		else
			r = do_listing(policy, path, cmd[0] == 's', out);
	} else if (!strcmp(cmd, "check") && pos < len) {
		r = do_check(policy, path, line, len, pos + 1, out);
	} else if (!strcmp(cmd, "check")) {
		r = batch_reply_error(out, -EINVAL, "check %s: expects TYPE MAJOR MINOR ACCESS",
				      path);
	} else {
		r = malformed(line, len, out);
	}
out:
	fflush(out);
	return r < 0 ? r : 0;
}
