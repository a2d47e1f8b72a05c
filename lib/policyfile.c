/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policy files (devwl-policy(5)) and OCI linux.resources.devices arrays.
 *
 * JSON stays in this file: every function that parses turns the json-c objects into
 * devwl nodes or rules at once and frees them before it returns. A policy is built by
 * replaying its rules through the same writes the kernel would see, so a file means
 * exactly what the same writes to devices.allow/deny would mean.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "allowlist.h"
#include "array.h"
#include "access.h"
#include "devwl.h"
#include "fileio.h"
#include "jsontext.h"
#include "jsonutil.h"
#include "rules.h"
#include "util.h"

/* Larger inputs are refused before parsing: a policy is rules, not data. */
#define POLICY_SIZE_MAX (16u << 20)
#define POLICY_VERSION	1
/* Longest piece of user input quoted in a message. */
#define QUOTE_MAX 48

/* One write to replay: a rule to devices.allow or devices.deny. */
struct op {
	enum devwl_file file;
	struct devwl_rule rule;
};

struct ops {
	struct op *v;
	size_t n, cap;
};

static int ops_push(struct ops *o, enum devwl_file file, const struct devwl_rule *rule)
{
	if (ARRAY_RESERVE(o->v, o->cap, o->n + 1) < 0)
		return -ENOMEM;
	o->v[o->n++] = (struct op){.file = file, .rule = *rule};
	return 0;
}

/* ---- messages ------------------------------------------------------------------------ */

/* Quote untrusted text for a message: printable ASCII as is, the rest escaped, cut short. */
static const char *quote(const char *s, size_t len, char *buf, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[5];
		size_t n;

		if (c == '\n')
			n = (size_t)snprintf(esc, sizeof(esc), "\\n");
		else if (c == '\t')
			n = (size_t)snprintf(esc, sizeof(esc), "\\t");
		else if (c == '"' || c == '\\')
			n = (size_t)snprintf(esc, sizeof(esc), "\\%c", c);
		else if (c < ' ' || c >= 0x7f)
			n = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
		else
			n = (size_t)snprintf(esc, sizeof(esc), "%c", c);
		if (o + n + 4 > size || o + n > QUOTE_MAX) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(buf + o, esc, n);
		o += n;
	}
	buf[o] = '\0';
	return buf;
}

static const char *errname(int code, char *buf, size_t size)
{
	return strerror_r(-code, buf, size);
}

/* "1:3" style line and column of a byte offset, both counted from 1. */
static void line_col(const char *text, size_t off, size_t *ret_line, size_t *ret_col)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	*ret_line = line;
	*ret_col = col;
}

/* ---- parsing JSON ---------------------------------------------------------------------- */

/*
 * Parse text[0..len) (text[len] must be NUL) as one JSON value with nothing but
 * whitespace after it. name prefixes the messages.
 */
static int parse_json(const char *text, size_t len, const char *name, struct json_object **ret_obj,
		      struct devwl_error *err)
{
	struct json_tokener *tok = NULL;
	struct json_object *obj = NULL;
	enum json_tokener_error jerr;
	size_t end, line, col;
	const char *nul;

	if (len > POLICY_SIZE_MAX)
		return devwl_error_set(err, -E2BIG, 0, "%s: %zu bytes, more than the %u allowed",
				       name, len, POLICY_SIZE_MAX);
	nul = memchr(text, '\0', len);
	if (nul) {
		line_col(text, (size_t)(nul - text), &line, &col);
		return devwl_error_set(err, -EINVAL, (size_t)(nul - text),
				       "%s:%zu:%zu: NUL byte in the input", name, line, col);
	}
	tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	if (!tok)
		return devwl_error_set(err, -ENOMEM, 0, "%s: out of memory", name);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	/* The terminating NUL is passed too: it tells json-c the input ends there. */
	obj = json_tokener_parse_ex(tok, text, (int)len + 1);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (end > len)
		end = len;
	if (!obj || jerr != json_tokener_success) {
		json_object_put(obj);
		if (jerr == json_tokener_success || jerr == json_tokener_continue)
			jerr = json_tokener_error_parse_eof;
		/* The input ran out: point past its end, not at the last token. */
		if (jerr == json_tokener_error_parse_eof)
			end = len;
		line_col(text, end, &line, &col);
		return devwl_error_set(err, -EINVAL, end, "%s:%zu:%zu: invalid JSON: %s", name,
				       line, col, json_tokener_error_desc(jerr));
	}
	/* Strict json-c stops at trailing garbage with an error; make sure of it. */
	for (; end < len; end++)
		if (!strchr(" \t\r\n", text[end])) {
			json_object_put(obj);
			line_col(text, end, &line, &col);
			return devwl_error_set(err, -EINVAL, end,
					       "%s:%zu:%zu: invalid JSON: text after the value",
					       name, line, col);
		}
	*ret_obj = obj;
	return 0;
}

static const char *json_type_word(const struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
		return "a fraction";
	case json_type_int:
		return "an integer";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	}
	return "something else";
}

/*
 * The keys each kind of object in the file may have, in the order the message naming
 * an unknown one lists them: the parser takes values by these tables (take_keys()), so
 * what it reads and what it says it knows cannot disagree.
 */
enum { T_VERSION, T_NODES, T_CONTAINERS, T_SELECTORS, T_COUNT };
/* "containers" and "selectors" are devwld's: libdevwl checks the first, devwld reads both */
static const char *const top_keys[T_COUNT] = {"version", "nodes", "containers", "selectors"};
enum { N_PATH, N_RULES, N_DEVICES, N_MKNOD_NEEDS_CAP, N_CDI_ANNOTATIONS, N_WHY, N_LEARN, N_COUNT };
/* "cdi_annotations" and "learn" are devwld's (it reads them itself), "why" words for
 * people: all are checked here, none applied */
static const char *const node_keys[N_COUNT] = {
	"path", "rules", "devices", "mknod_needs_cap", "cdi_annotations", "why", "learn",
};
enum { D_ALLOW, D_TYPE, D_MAJOR, D_MINOR, D_ACCESS, D_COUNT };
static const char *const device_keys[D_COUNT] = {"allow", "type", "major", "minor", "access"};

/* Each of obj's keys into its slot of vals; the first key not in keys, or NULL. */
static const char *take_keys(struct json_object *obj, const char *const *keys, size_t n,
			     struct json_object **vals)
{
	const char *unknown = NULL;

	json_object_object_foreach (obj, key, val) {
		size_t i = 0;

		while (i < n && strcmp(key, keys[i]))
			i++;
		if (i < n)
			vals[i] = val;
		else if (!unknown)
			unknown = key;
	}
	return unknown;
}

static int unknown_key(struct devwl_error *err, const char *where, const char *key,
		       const char *const *keys, size_t n)
{
	char q[QUOTE_MAX + 8], known[128] = "";

	for (size_t i = 0; i < n; i++)
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
			 i ? ", " : "", keys[i]);
	return devwl_error_set(err, -EINVAL, 0, "%s: unknown key \"%s\" (known: %s)", where,
			       quote(key, strlen(key), q, sizeof(q)), known);
}

/* A major or minor of an OCI entry: absent, null, -1 or 4294967295 mean "*". */
static int oci_number(struct json_object *v, uint32_t *ret, const char *prefix, const char *field,
		      struct devwl_error *err)
{
	int64_t n;

	if (!v || json_object_is_type(v, json_type_null)) {
		*ret = DEVWL_ANY;
		return 0;
	}
	if (!json_object_is_type(v, json_type_int))
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: \"%s\": must be an integer or null, not %s", prefix,
				       field, json_type_word(v));
	/* json-c clamps what does not fit in 64 bits, which stays out of range here. */
	n = json_object_get_int64(v);
	if (n == -1) {
		*ret = DEVWL_ANY;
		return 0;
	}
	if (n < 0 || n > (int64_t)UINT32_MAX) {
		char buf[QUOTE_MAX + 8];
		const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: \"%s\": %s is out of range (0 to 4294967295, or -1 "
				       "for any)",
				       prefix, field, quote(s, strlen(s), buf, sizeof(buf)));
	}
	*ret = (uint32_t)n;
	return 0;
}

/*
 * One OCI linux.resources.devices entry: {"allow": bool, "type": "a"|"b"|"c",
 * "major": int|null, "minor": int|null, "access": "rwm"}. prefix names the entry.
 */
static int oci_entry(struct json_object *e, const char *prefix, struct op *ret,
		     struct devwl_error *err)
{
	struct json_object *v[D_COUNT] = {0}, *allow, *type, *major, *minor, *access;
	struct devwl_rule rule = {.access = DEVWL_ACC_MASK};
	const char *unknown;
	char buf[QUOTE_MAX + 8];
	int r;

	if (!json_object_is_type(e, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "%s: must be an object, not %s", prefix,
				       json_type_word(e));
	unknown = take_keys(e, device_keys, D_COUNT, v);
	if (unknown)
		return unknown_key(err, prefix, unknown, device_keys, D_COUNT);
	allow = v[D_ALLOW], type = v[D_TYPE], major = v[D_MAJOR], minor = v[D_MINOR];
	access = v[D_ACCESS];
	if (!allow)
		return devwl_error_set(err, -EINVAL, 0, "%s: \"allow\" is missing", prefix);
	if (!json_object_is_type(allow, json_type_boolean))
		return devwl_error_set(err, -EINVAL, 0, "%s: \"allow\": must be a boolean, not %s",
				       prefix, json_type_word(allow));

	if (!type || json_object_is_type(type, json_type_null)) {
		rule.type = DEVWL_DEV_ALL;
	} else if (!json_object_is_type(type, json_type_string)) {
		return devwl_error_set(err, -EINVAL, 0, "%s: \"type\": must be a string, not %s",
				       prefix, json_type_word(type));
	} else {
		const char *s = json_object_get_string(type);
		size_t len = (size_t)json_object_get_string_len(type);
		if (len == 1 && s[0] == 'a')
			rule.type = DEVWL_DEV_ALL;
		else if (len == 1 && s[0] == 'b')
			rule.type = DEVWL_DEV_BLOCK;
		else if (len == 1 && s[0] == 'c')
			rule.type = DEVWL_DEV_CHAR;
		else
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: \"type\": \"%s\" is not \"a\", \"b\" or \"c\"",
					       prefix, quote(s, len, buf, sizeof(buf)));
	}
	r = oci_number(major, &rule.major, prefix, "major", err);
	if (r < 0)
		return r;
	r = oci_number(minor, &rule.minor, prefix, "minor", err);
	if (r < 0)
		return r;

	if (access && !json_object_is_type(access, json_type_null)) {
		const char *s;
		size_t len;

		if (!json_object_is_type(access, json_type_string))
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: \"access\": must be a string, not %s", prefix,
					       json_type_word(access));
		s = json_object_get_string(access);
		len = (size_t)json_object_get_string_len(access);
		/* The kernel looks at 3 characters only; longer would not mean what it says. */
		rule.access = 0;
		for (size_t i = 0; i < len; i++) {
			if (i >= 3 || !s[i] || !strchr("rwm", s[i]))
				return devwl_error_set(err, -EINVAL, 0,
						       "%s: \"access\": \"%s\" is not up to three "
						       "of 'r', 'w' and 'm'",
						       prefix, quote(s, len, buf, sizeof(buf)));
			rule.access |= s[i] == 'r'   ? DEVWL_ACC_READ
				       : s[i] == 'w' ? DEVWL_ACC_WRITE
						     : DEVWL_ACC_MKNOD;
		}
	}
	if (rule.type == DEVWL_DEV_ALL) {
		/* As in the kernel, "a" ignores what follows it. */
		rule.major = rule.minor = DEVWL_ANY;
		rule.access = DEVWL_ACC_MASK;
	}
	ret->file = json_object_get_boolean(allow) ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY;
	ret->rule = rule;
	return 0;
}

/* ---- applying writes ------------------------------------------------------------------ */

/* Apply one write; on failure say why after prefix, which names the rule. */
static int apply(struct devwl_node *node, const struct op *op, const char *prefix,
		 struct devwl_error *err)
{
	const struct devwl_node *parent = devwl_node_parent(node);
	const char *ppath = parent ? devwl_node_path(parent) : "(none)";
	char s[DEVWL_RULE_STR_MAX], e[64];
	int r;

	r = devwl_node_update(node, op->file, &op->rule);
	if (r >= 0)
		return 0;
	if (devwl_rule_format(&op->rule, s, sizeof(s)) < 0)
		strcpy(s, "?");
	if (op->rule.type == DEVWL_DEV_ALL) {
		if (r == -EINVAL)
			return devwl_error_set(err, r, 0,
					       "%s: node %s has children, so its default can no "
					       "longer change (define a node before its children)",
					       prefix, devwl_node_path(node));
		if (r == -EPERM)
			return devwl_error_set(err, r, 0,
					       "%s: refused by parent %s: it denies by default, so "
					       "its children cannot allow all",
					       prefix, ppath);
	} else if (r == -EPERM) {
		if (devwl_node_behavior(node) == DEVWL_BEHAVIOR_ALLOW)
			return devwl_error_set(err, r, 0,
					       "%s: refused by parent %s: it denies (part of) %s",
					       prefix, ppath, s);
		return devwl_error_set(err, r, 0, "%s: refused by parent %s: it does not allow %s",
				       prefix, ppath, s);
	}
	return devwl_error_set(err, r, 0, "%s: %s", prefix, errname(r, e, sizeof(e)));
}

/*
 * A device name (devwl.h) stands for the rules it resolves to when the file is loaded,
 * written in order; an error names the name and the rule it resolved to.
 */
static int apply_named(struct devwl_node *node, enum devwl_file file, const char *text, size_t len,
		       const char *prefix, struct devwl_error *err)
{
	_cleanup_free_ struct devwl_rule *rules = NULL;
	struct devwl_error perr = {0};
	size_t n = 0;
	int r;

	r = devwl_devname_resolve(text, len, NULL, &rules, &n, &perr);
	if (r < 0)
		return devwl_error_set(err, r, 0, "%s: %s", prefix, perr.msg);
	for (size_t i = 0; i < n; i++) {
		char s[DEVWL_RULE_STR_MAX], where[1100];
		struct op op = {.file = file, .rule = rules[i]};

		if (devwl_rule_format(&rules[i], s, sizeof(s)) < 0)
			return devwl_error_set(err, -EINVAL, 0, "%s: bad resolution", prefix);
		snprintf(where, sizeof(where), "%s (resolved to %s)", prefix, s);
		r = apply(node, &op, where, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * A "rules" string: "allow RULE" or "deny RULE", RULE in the kernel's grammar or a
 * device name (devwl.h).
 */
static int apply_rule_string(struct devwl_node *node, const char *text, size_t len,
			     const char *prefix, struct devwl_error *err)
{
	struct devwl_error perr = {0};
	struct op op = {0};
	size_t verb;
	int r;

	if (len >= 6 && !memcmp(text, "allow", 5) && rules_kspace((unsigned char)text[5])) {
		op.file = DEVWL_FILE_ALLOW;
		verb = 6;
	} else if (len >= 5 && !memcmp(text, "deny", 4) && rules_kspace((unsigned char)text[4])) {
		op.file = DEVWL_FILE_DENY;
		verb = 5;
	} else {
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: must be \"allow RULE\" or \"deny RULE\"", prefix);
	}
	if (devwl_devname_is_name(text + verb, len - verb))
		return apply_named(node, op.file, text + verb, len - verb, prefix, err);
	r = devwl_rule_parse(text + verb, len - verb, &op.rule, &perr);
	if (r < 0)
		return devwl_error_set(err, r, 0, "%s: %s", prefix, perr.msg);
	return apply(node, &op, prefix, err);
}

/* ---- policy files ---------------------------------------------------------------------- */

static int load_rules(struct devwl_node *node, struct json_object *rules, const char *where,
		      struct devwl_error *err)
{
	char prefix[1024], q[QUOTE_MAX + 8];
	size_t n;

	if (!json_object_is_type(rules, json_type_array))
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: \"rules\": must be an array of strings, not %s", where,
				       json_type_word(rules));
	n = json_object_array_length(rules);
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(rules, i);
		const char *text;
		size_t len;
		int r;

		if (!json_object_is_type(s, json_type_string))
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: rule %zu: must be a string, not %s", where,
					       i + 1, json_type_word(s));
		text = json_object_get_string(s);
		len = (size_t)json_object_get_string_len(s);
		snprintf(prefix, sizeof(prefix), "%s: rule %zu \"%s\"", where, i + 1,
			 quote(text, len, q, sizeof(q)));
		r = apply_rule_string(node, text, len, prefix, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_devices(struct devwl_node *node, struct json_object *devices, const char *where,
			struct devwl_error *err)
{
	char prefix[1024];
	size_t n;

	if (!json_object_is_type(devices, json_type_array))
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: \"devices\": must be an array of objects, not %s",
				       where, json_type_word(devices));
	n = json_object_array_length(devices);
	for (size_t i = 0; i < n; i++) {
		struct op op;
		int r;

		snprintf(prefix, sizeof(prefix), "%s: device %zu", where, i + 1);
		r = oci_entry(json_object_array_get_idx(devices, i), prefix, &op, err);
		if (r < 0)
			return r;
		r = apply(node, &op, prefix, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A node's "why": an object of strings, a rule's reason under its text. A malformed one
 * is refused as any malformed key is, though it grants nothing. */
static int check_why(struct json_object *why, const char *where, struct devwl_error *err)
{
	if (!why)
		return 0;
	if (!json_object_is_type(why, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "%s: \"why\": must be an object, not %s",
				       where, json_type_word(why));
	json_object_object_foreach (why, key, val) {
		char q[QUOTE_MAX + 8];

		if (!json_object_is_type(val, json_type_string))
			return devwl_error_set(
				err, -EINVAL, 0, "%s: \"why\": \"%s\": must be a string, not %s",
				where, quote(key, strlen(key), q, sizeof(q)), json_type_word(val));
	}
	return 0;
}

/* One element of "nodes": create it (or take "/") and replay its rules. */
static int load_node(struct devwl_policy *policy, struct json_object *obj, size_t index,
		     const char *name, bool *root_seen, struct devwl_error *err)
{
	struct json_object *v[N_COUNT] = {0}, *path, *rules, *devices, *cap, *cdi, *why, *learn;
	char where[512], q[QUOTE_MAX + 8];
	const char *p, *unknown;
	struct devwl_node *node;
	int r;

	snprintf(where, sizeof(where), "%s: node %zu", name, index + 1);
	if (!json_object_is_type(obj, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "%s: must be an object, not %s", where,
				       json_type_word(obj));
	unknown = take_keys(obj, node_keys, N_COUNT, v);
	path = v[N_PATH], rules = v[N_RULES], devices = v[N_DEVICES], cap = v[N_MKNOD_NEEDS_CAP];
	cdi = v[N_CDI_ANNOTATIONS], why = v[N_WHY], learn = v[N_LEARN];
	if (!path && unknown)
		return unknown_key(err, where, unknown, node_keys, N_COUNT);
	if (!path)
		return devwl_error_set(err, -EINVAL, 0, "%s: \"path\" is missing", where);
	if (!json_object_is_type(path, json_type_string))
		return devwl_error_set(err, -EINVAL, 0, "%s: \"path\": must be a string, not %s",
				       where, json_type_word(path));
	p = json_object_get_string(path);
	if (json_string_has_nul(path) || devwl_node_path_valid(p) < 0)
		return devwl_error_set(
			err, -EINVAL, 0, "%s: \"path\": \"%s\" is not a node path like /a/b", where,
			quote(p, (size_t)json_object_get_string_len(path), q, sizeof(q)));
	snprintf(where, sizeof(where), "%s: node %s", name, p);
	/* Reported once the node has a name to go by. */
	if (unknown)
		return unknown_key(err, where, unknown, node_keys, N_COUNT);

	if (!strcmp(p, "/")) {
		if (*root_seen)
			return devwl_error_set(err, -EINVAL, 0, "%s: defined twice", where);
		*root_seen = true;
		node = devwl_policy_find(policy, "/");
	} else {
		r = devwl_policy_mkdir(policy, p);
		if (r == -EEXIST)
			return devwl_error_set(err, -EINVAL, 0, "%s: defined twice", where);
		if (r == -ENOENT) {
			size_t plen = (size_t)(strrchr(p, '/') - p);
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: parent %.*s must be defined before it", where,
					       (int)plen, p);
		}
		if (r < 0)
			return devwl_error_set(err, r, 0, "%s: %s", where,
					       errname(r, q, sizeof(q)));
		node = devwl_policy_find(policy, p);
	}
	if (!node)
		return devwl_error_set(err, -ENOMEM, 0, "%s: lost", where);

	if (cdi && !json_object_is_type(cdi, json_type_boolean))
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: \"cdi_annotations\": must be a boolean, not %s", where,
				       json_type_word(cdi));
	r = check_why(why, where, err);
	if (r < 0)
		return r;
	if (cap) {
		if (!json_object_is_type(cap, json_type_boolean))
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: \"mknod_needs_cap\": must be a boolean, not %s",
					       where, json_type_word(cap));
		devwl_node_set_mknod_needs_cap(node, json_object_get_boolean(cap));
	}
	if (learn && !json_object_is_type(learn, json_type_boolean))
		return devwl_error_set(err, -EINVAL, 0, "%s: \"learn\": must be a boolean, not %s",
				       where, json_type_word(learn));
	if (rules) {
		r = load_rules(node, rules, where, err);
		if (r < 0)
			return r;
	}
	if (devices) {
		r = load_devices(node, devices, where, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Where "nodes"[index] starts in text: json-c keeps no positions, so a short walk over
 * the text it accepted (strict, so well formed) finds it, for the line of a node's error.
 */
static bool node_offset(const char *t, size_t index, size_t *ret)
{
	size_t i = json_text_ws(t, 0);

	if (t[i++] != '{')
		return false;
	for (;;) {
		size_t key = json_text_ws(t, i);

		if (t[key] != '"')
			return false;
		i = json_text_ws(t, json_text_string_end(t, key));
		if (t[i] != ':')
			return false;
		i = json_text_ws(t, i + 1);
		if (!strncmp(t + key, "\"nodes\"", 7) && t[i] == '[') {
			i++;
			for (size_t n = 0;; n++) {
				i = json_text_ws(t, i);
				if (!t[i] || t[i] == ']')
					return false;
				if (n == index) {
					*ret = i;
					return true;
				}
				i = json_text_ws(t, json_text_value_end(t, i));
				if (t[i++] != ',')
					return false;
			}
		}
		i = json_text_ws(t, json_text_value_end(t, i));
		if (t[i++] != ',')
			return false;
	}
}

/* "NAME: node ...: why" becomes "NAME:LINE:COL: node ...: why", LINE:COL where the node
 * starts in text, so that an error names the place in the file to look at. */
static void at_node(const char *text, size_t index, const char *name, struct devwl_error *err)
{
	size_t off = 0, line = 0, col = 0, n = strlen(name), len;
	char place[48];
	int k;

	if (!err || !node_offset(text, index, &off) || strncmp(err->msg, name, n) ||
	    strncmp(err->msg + n, ": ", 2))
		return;
	line_col(text, off, &line, &col);
	k = snprintf(place, sizeof(place), ":%zu:%zu", line, col);
	if (k <= 0 || n + (size_t)k + 2 >= sizeof(err->msg))
		return;
	/* Inserted after the name; what no longer fits is cut, as devwl_error_set() cuts. */
	len = strlen(err->msg);
	if (len + (size_t)k >= sizeof(err->msg))
		len = sizeof(err->msg) - 1 - (size_t)k;
	memmove(err->msg + n + k, err->msg + n, len - n);
	memcpy(err->msg + n, place, (size_t)k);
	err->msg[len + (size_t)k] = '\0';
	err->offset = off;
}

static int load_policy(struct devwl_policy *policy, const char *text, struct json_object *top,
		       const char *name, struct devwl_error *err)
{
	struct json_object *v[T_COUNT] = {0}, *version, *nodes, *containers;
	bool root_seen = false;
	const char *unknown;

	if (!json_object_is_type(top, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "%s: must be a JSON object, not %s", name,
				       json_type_word(top));
	unknown = take_keys(top, top_keys, T_COUNT, v);
	if (unknown)
		return unknown_key(err, name, unknown, top_keys, T_COUNT);
	version = v[T_VERSION], nodes = v[T_NODES], containers = v[T_CONTAINERS];
	if (!version)
		return devwl_error_set(err, -EINVAL, 0, "%s: \"version\" is missing (use 1)", name);
	if (!json_object_is_type(version, json_type_int) ||
	    json_object_get_int64(version) != POLICY_VERSION)
		return devwl_error_set(err, -EINVAL, 0, "%s: \"version\": only 1 is supported",
				       name);
	/* The daemon reads container matching itself; here it only has to be well formed. */
	if (containers && !json_object_is_type(containers, json_type_object))
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: \"containers\": must be an object, not %s", name,
				       json_type_word(containers));
	if (!nodes)
		return 0;
	if (!json_object_is_type(nodes, json_type_array))
		return devwl_error_set(err, -EINVAL, 0, "%s: \"nodes\": must be an array, not %s",
				       name, json_type_word(nodes));
	for (size_t i = 0, n = json_object_array_length(nodes); i < n; i++) {
		int r = load_node(policy, json_object_array_get_idx(nodes, i), i, name, &root_seen,
				  err);
		if (r < 0) {
			at_node(text, i, name, err);
			return r;
		}
	}
	return 0;
}

static int load_text(const char *text, size_t len, const char *name,
		     struct devwl_policy **ret_policy, struct devwl_error *err)
{
	struct json_object *top = NULL;
	struct devwl_policy *policy;
	int r;

	r = parse_json(text, len, name, &top, err);
	if (r < 0)
		return r;
	policy = devwl_policy_new();
	if (!policy) {
		json_object_put(top);
		return devwl_error_set(err, -ENOMEM, 0, "%s: out of memory", name);
	}
	r = load_policy(policy, text, top, name, err);
	json_object_put(top);
	if (r < 0) {
		devwl_policy_free(policy);
		return r;
	}
	*ret_policy = policy;
	return 0;
}

DEVWL_EXPORT int devwl_policy_load_string(const char *text, const char *name,
					  struct devwl_policy **ret_policy, struct devwl_error *err)
{
	if (!name)
		name = "policy";
	if (!text || !ret_policy)
		return devwl_error_set(err, -EINVAL, 0, "%s: no text given", name);
	return load_text(text, strnlen(text, (size_t)POLICY_SIZE_MAX + 1), name, ret_policy, err);
}

DEVWL_EXPORT int devwl_policy_load_file(const char *file, struct devwl_policy **ret_policy,
					struct devwl_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	ssize_t len;
	char e[64];
	struct stat st;

	if (!file || !ret_policy)
		return devwl_error_set(err, -EINVAL, 0, "no policy file given");
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int r = negerrno();
		return devwl_error_set(err, r, 0, "%s: %s", file, errname(r, e, sizeof(e)));
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > POLICY_SIZE_MAX)
		return devwl_error_set(err, -E2BIG, 0, "%s: %lld bytes, more than the %u allowed",
				       file, (long long)st.st_size, POLICY_SIZE_MAX);
	/* Read to EOF rather than trusting st_size: pipes and /proc files have none. */
	len = devwl_read_all(fd, POLICY_SIZE_MAX, &buf);
	if (len == -E2BIG)
		return devwl_error_set(err, -E2BIG, 0, "%s: more than the %u bytes allowed", file,
				       POLICY_SIZE_MAX);
	if (len < 0)
		return devwl_error_set(err, (int)len, 0, "%s: %s", file,
				       errname((int)len, e, sizeof(e)));
	return load_text(buf, (size_t)len, file, ret_policy, err);
}

/* ---- writing policies back --------------------------------------------------------------- */

static bool rule_eq(const struct devwl_rule *a, const struct devwl_rule *b)
{
	return a->type == b->type && a->major == b->major && a->minor == b->minor &&
	       a->access == b->access;
}

/* The node's exceptions sorted by key, for has_key(). */
static int sorted_keys(const struct devwl_node *node, struct devwl_rule **ret, size_t *ret_n)
{
	size_t n = devwl_node_exception_count(node);
	struct devwl_rule *v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		devwl_node_exception(node, i, &v[i]);
	qsort(v, n, sizeof(*v), devwl_rule_key_cmp);
	*ret = v;
	*ret_n = n;
	return 0;
}

static bool has_key(const struct devwl_rule *sorted, size_t n, const struct devwl_rule *k)
{
	return n && bsearch(k, sorted, n, sizeof(*sorted), devwl_rule_key_cmp);
}

/* Is the node what a fresh child of its parent (or a fresh root) would be? */
static bool node_is_fresh(const struct devwl_node *node)
{
	const struct devwl_node *parent = devwl_node_parent(node);
	struct devwl_rule a, b;
	size_t n = devwl_node_exception_count(node);

	if (!parent)
		return devwl_node_behavior(node) == DEVWL_BEHAVIOR_ALLOW && n == 0;
	if (devwl_node_behavior(node) != devwl_node_behavior(parent) ||
	    n != devwl_node_exception_count(parent))
		return false;
	for (size_t i = 0; i < n; i++)
		if (devwl_node_exception(node, i, &a) < 0 ||
		    devwl_node_exception(parent, i, &b) < 0 || !rule_eq(&a, &b))
			return false;
	return true;
}

/*
 * Does one exception of a DENY parent cover e's key (the kernel's match_exception
 * without the access test)? Exceptions are never type "a", so types must be equal.
 */
static bool covers_key(const struct devwl_rule *p, const struct devwl_rule *e)
{
	return p->type == e->type && (p->major == DEVWL_ANY || p->major == e->major) &&
	       (p->minor == DEVWL_ANY || p->minor == e->minor);
}

/*
 * The grants of a DENY node under a DENY parent. An exception can hold access that no
 * single parent exception covers (its bits were granted one at a time, under different
 * parent exceptions); the kernel checks each write whole, so such an exception is
 * replayed bit group by bit group, each under a parent exception that covers it.
 */
static int push_grant(struct ops *o, const struct devwl_node *parent, const struct devwl_rule *e)
{
	struct devwl_rule p, part = *e;
	unsigned left = e->access;
	bool first = true;
	int r;

	/* On a DENY parent the check is exactly "one exception covers it whole". */
	if (!parent || devwl_node_behavior(parent) != DEVWL_BEHAVIOR_DENY ||
	    devwl_node_check(parent, e->type, e->major, e->minor, e->access) == 1)
		return ops_push(o, DEVWL_FILE_ALLOW, e);
	for (size_t i = 0; left && devwl_node_exception(parent, i, &p) == 0; i++) {
		if (!covers_key(&p, e) || !(left & p.access))
			continue;
		part.access = (uint8_t)(left & p.access);
		left &= ~part.access;
		r = ops_push(o, DEVWL_FILE_ALLOW, &part);
		if (r < 0)
			return r;
		first = false;
	}
	/* Not reachable through the kernel's writes; keep it whole so a load says so. */
	if (first || left)
		return ops_push(o, DEVWL_FILE_ALLOW, e);
	return 0;
}

/*
 * The writes that turn a fresh child of the node's parent (or a fresh root) into the
 * node. minimal: none at all when the node is just that fresh copy.
 */
static int node_ops(const struct devwl_node *node, bool minimal, struct ops *o)
{
	const struct devwl_node *parent = devwl_node_parent(node);
	const struct devwl_rule all = {
		.type = DEVWL_DEV_ALL,
		.access = DEVWL_ACC_MASK,
		.major = DEVWL_ANY,
		.minor = DEVWL_ANY,
	};
	struct devwl_rule e;
	int r;

	if (minimal && node_is_fresh(node))
		return 0;
	if (devwl_node_behavior(node) == DEVWL_BEHAVIOR_DENY) {
		r = ops_push(o, DEVWL_FILE_DENY, &all);
		for (size_t i = 0; r >= 0 && devwl_node_exception(node, i, &e) == 0; i++)
			r = push_grant(o, parent, &e);
		return r;
	}
	/*
	 * "allow a" copies the parent's exceptions: drop the ones the node no longer has
	 * (only an empty-access one can be dropped below a parent that holds it), then add
	 * the node's own; existing keys keep the parent's order.
	 */
	r = ops_push(o, DEVWL_FILE_ALLOW, &all);
	if (r >= 0 && parent) {
		struct devwl_rule *keys = NULL;
		size_t nkeys = 0;

		r = sorted_keys(node, &keys, &nkeys);
		for (size_t i = 0; r >= 0 && devwl_node_exception(parent, i, &e) == 0; i++)
			if (!has_key(keys, nkeys, &e))
				r = ops_push(o, DEVWL_FILE_ALLOW, &e);
		free(keys);
	}
	for (size_t i = 0; r >= 0 && devwl_node_exception(node, i, &e) == 0; i++)
		r = ops_push(o, DEVWL_FILE_DENY, &e);
	return r;
}

static struct json_object *oci_entry_new(const struct op *op)
{
	struct json_object *e = json_object_new_object();
	char type[2] = {rules_type_char(op->rule.type), '\0'}, acc[4];
	int r;

	if (!e)
		return NULL;
	devwl_access_text(op->rule.access, acc);
	r = json_add(e, "allow", json_object_new_boolean(op->file == DEVWL_FILE_ALLOW));
	if (r >= 0)
		r = json_add(e, "type", json_object_new_string(type));
	if (r >= 0 && op->rule.type != DEVWL_DEV_ALL && op->rule.major != DEVWL_ANY)
		r = json_add(e, "major", json_object_new_int64(op->rule.major));
	if (r >= 0 && op->rule.type != DEVWL_DEV_ALL && op->rule.minor != DEVWL_ANY)
		r = json_add(e, "minor", json_object_new_int64(op->rule.minor));
	if (r >= 0)
		r = json_add(e, "access", json_object_new_string(acc));
	if (r < 0) {
		json_object_put(e);
		return NULL;
	}
	return e;
}

static struct json_object *rule_string_new(const struct op *op)
{
	char s[DEVWL_RULE_STR_MAX + 8], rule[DEVWL_RULE_STR_MAX];

	if (op->rule.type == DEVWL_DEV_ALL)
		snprintf(rule, sizeof(rule), "a");
	else if (devwl_rule_format(&op->rule, rule, sizeof(rule)) < 0)
		return NULL;
	snprintf(s, sizeof(s), "%s %s", op->file == DEVWL_FILE_ALLOW ? "allow" : "deny", rule);
	return json_object_new_string(s);
}

/* The ops as an OCI devices array. */
static struct json_object *oci_array_new(const struct ops *o)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr && i < o->n; i++)
		if (json_push(arr, oci_entry_new(&o->v[i])) < 0) {
			json_object_put(arr);
			return NULL;
		}
	return arr;
}

struct dump {
	struct json_object *nodes;
	int error;
};

static int dump_node(struct devwl_node *node, void *userdata)
{
	struct dump *d = userdata;
	const struct devwl_node *parent = devwl_node_parent(node);
	bool cap = devwl_node_mknod_needs_cap(node);
	bool inherited = parent ? devwl_node_mknod_needs_cap(parent) : true;
	struct json_object *obj = NULL, *arr = NULL;
	struct ops o = {0};
	bool empty_access = false;
	int r;

	r = node_ops(node, true, &o);
	if (r < 0)
		goto out;
	if (!parent && o.n == 0 && cap == inherited)
		goto out;
	r = -ENOMEM;
	obj = json_object_new_object();
	if (!obj || json_add(obj, "path", json_object_new_string(devwl_node_path(node))) < 0)
		goto out;
	/*
	 * An exception with no access bits has no rule text that reads plainly (the kernel
	 * only makes one from a multi-line write), so such a node is written as a devices
	 * array, where "access": "" says it.
	 */
	for (size_t i = 0; i < o.n; i++)
		if (o.v[i].rule.type != DEVWL_DEV_ALL && !o.v[i].rule.access)
			empty_access = true;
	if (o.n && empty_access) {
		if (json_add(obj, "devices", oci_array_new(&o)) < 0)
			goto out;
	} else if (o.n) {
		arr = json_object_new_array();
		for (size_t i = 0; arr && i < o.n; i++)
			if (json_push(arr, rule_string_new(&o.v[i])) < 0)
				goto out;
		if (json_add(obj, "rules", TAKE_PTR(arr)) < 0)
			goto out;
	}
	if (cap != inherited && json_add(obj, "mknod_needs_cap", json_object_new_boolean(cap)) < 0)
		goto out;
	r = json_push(d->nodes, TAKE_PTR(obj));
out:
	json_object_put(arr);
	json_object_put(obj);
	free(o.v);
	return r;
}

DEVWL_EXPORT int devwl_policy_to_string(const struct devwl_policy *policy, char **ret_text)
{
	struct json_object *top = NULL;
	struct dump d = {0};
	const char *s;
	char *text;
	size_t len;
	int r = -ENOMEM;

	if (!policy || !ret_text)
		return -EINVAL;
	top = json_object_new_object();
	if (!top || json_add(top, "version", json_object_new_int(POLICY_VERSION)) < 0)
		goto out;
	d.nodes = json_object_new_array();
	if (!d.nodes)
		goto out;
	if (json_object_object_add(top, "nodes", d.nodes) < 0) {
		json_object_put(d.nodes);
		goto out;
	}
	/* foreach only reads here; it takes a mutable policy for the callers that write. */
	r = devwl_policy_foreach((struct devwl_policy *)policy, dump_node, &d);
	if (r < 0)
		goto out;
	r = -ENOMEM;
	s = json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY |
							JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s)
		goto out;
	len = strlen(s);
	text = malloc(len + 2);
	if (!text)
		goto out;
	memcpy(text, s, len);
	memcpy(text + len, "\n", 2);
	*ret_text = text;
	r = 0;
out:
	json_object_put(top);
	return r;
}

DEVWL_EXPORT int devwl_policy_save_file(const struct devwl_policy *policy, const char *file)
{
	_cleanup_free_ char *text = NULL;
	int r;

	if (!policy || !file || !*file)
		return -EINVAL;
	r = devwl_policy_to_string(policy, &text);
	if (r < 0)
		return r;
	/* Replacing a file keeps its permissions; a new one gets the usual 0644. */
	return devwl_write_file_atomic(file, text, -1);
}

/* ---- OCI devices arrays --------------------------------------------------------------- */

DEVWL_EXPORT int devwl_node_import_oci(struct devwl_node *node, const char *json_array,
				       struct devwl_error *err)
{
	const char *name = "OCI devices";
	struct devwl_node_snapshot *snap = NULL;
	struct json_object *arr = NULL;
	struct ops o = {0};
	char prefix[128];
	size_t n;
	int r;

	if (!node || !json_array)
		return devwl_error_set(err, -EINVAL, 0, "%s: no node or no text given", name);
	r = parse_json(json_array, strnlen(json_array, (size_t)POLICY_SIZE_MAX + 1), name, &arr,
		       err);
	if (r < 0)
		return r;
	if (!json_object_is_type(arr, json_type_array)) {
		r = devwl_error_set(err, -EINVAL, 0, "%s: must be a JSON array, not %s", name,
				    json_type_word(arr));
		goto out;
	}
	/* Every entry is checked before the first write. */
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		struct op op;

		snprintf(prefix, sizeof(prefix), "%s: entry %zu", name, i + 1);
		r = oci_entry(json_object_array_get_idx(arr, i), prefix, &op, err);
		if (r >= 0)
			r = ops_push(&o, op.file, &op.rule);
		if (r == -ENOMEM)
			r = devwl_error_set(err, r, 0, "%s: out of memory", name);
		if (r < 0)
			goto out;
	}
	json_object_put(TAKE_PTR(arr));

	/* A write can still be refused half-way (or propagate half-way): undo all then. */
	r = node_snapshot_take(node, &snap);
	if (r < 0) {
		r = devwl_error_set(err, r, 0, "%s: out of memory", name);
		goto out;
	}
	for (size_t i = 0; i < o.n; i++) {
		snprintf(prefix, sizeof(prefix), "%s: node %s: entry %zu", name,
			 devwl_node_path(node), i + 1);
		r = apply(node, &o.v[i], prefix, err);
		if (r < 0) {
			node_snapshot_restore(node, TAKE_PTR(snap));
			goto out;
		}
	}
	r = 0;
out:
	node_snapshot_free(snap);
	json_object_put(arr);
	free(o.v);
	return r;
}

DEVWL_EXPORT int devwl_node_export_oci(const struct devwl_node *node, char **ret_json)
{
	struct json_object *arr = NULL;
	struct ops o = {0};
	const char *s;
	char *text;
	int r;

	if (!node || !ret_json)
		return -EINVAL;
	r = node_ops(node, false, &o);
	if (r < 0)
		goto out;
	r = -ENOMEM;
	arr = oci_array_new(&o);
	if (!arr)
		goto out;
	s = json_object_to_json_string_ext(arr,
					   JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s)
		goto out;
	text = strdup(s);
	if (!text)
		goto out;
	*ret_json = text;
	r = 0;
out:
	json_object_put(arr);
	free(o.v);
	return r;
}
