/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "fileio.h"
#include "jsontext.h"
#include "policysel.h"
#include "selector.h"
#include "util.h"

/* As libdevwl's loader: a policy file is small, anything bigger is a mistake. */
#define POLICY_FILE_MAX (16u << 20)

void policysel_clear(struct policysel *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->v[i].node);
		free(ps->v[i].selector);
		free(ps->v[i].where);
	}
	free(ps->v);
	*ps = (struct policysel){0};
}

/* ---- where the rules are in the text ---------------------------------------------------- */

/*
 * json-c keeps no positions, so a short walk over text it accepted (strictly, so well
 * formed) finds the strings to blank out. Each one found is checked against what json-c
 * read, so that a walk gone wrong (an escaped key, a key given twice) is an error and
 * never a rule silently dropped or kept (base/jsontext.h walks).
 */

/* The value of the object at t[i] ('{') whose key is written exactly key; the last one,
 * as json-c keeps the last. */
static bool member(const char *t, size_t i, const char *key, size_t *ret)
{
	size_t klen = strlen(key);
	bool found = false;

	if (t[i] != '{')
		return false;
	for (i = json_text_ws(t, i + 1); t[i] == '"';) {
		size_t k = i;

		i = json_text_ws(t, json_text_string_end(t, k));
		if (t[i] != ':')
			return false;
		i = json_text_ws(t, i + 1);
		if (!strncmp(t + k + 1, key, klen) && t[k + 1 + klen] == '"') {
			*ret = i;
			found = true;
		}
		i = json_text_ws(t, json_text_value_end(t, i));
		if (t[i] != ',')
			break;
		i = json_text_ws(t, i + 1);
	}
	return found;
}

/* The elements of the array at t[i] ('['): starts[k], ends[k] for the first n. false
 * unless it has exactly n. */
static bool elements(const char *t, size_t i, size_t n, size_t *starts, size_t *ends)
{
	size_t k = 0;

	if (t[i] != '[')
		return false;
	i = json_text_ws(t, i + 1);
	if (t[i] == ']')
		return n == 0;
	for (;; k++) {
		if (k == n)
			return false;
		starts[k] = i;
		ends[k] = json_text_value_end(t, i);
		i = json_text_ws(t, ends[k]);
		if (t[i] == ']')
			return k + 1 == n;
		if (t[i] != ',')
			return false;
		i = json_text_ws(t, i + 1);
	}
}

/* Is t[start..end) the JSON string want? */
static bool same_string(const char *t, size_t start, size_t end, struct json_object *want)
{
	struct json_object *got;
	char *copy = strndup(t + start, end - start);
	bool same;

	if (!copy)
		return false;
	got = json_tokener_parse(copy);
	free(copy);
	same = got && json_object_is_type(got, json_type_string) &&
	       json_object_get_string_len(got) == json_object_get_string_len(want) &&
	       !memcmp(json_object_get_string(got), json_object_get_string(want),
		       (size_t)json_object_get_string_len(want));
	json_object_put(got);
	return same;
}

/* ---- which rules are selector rules ---------------------------------------------------- */

/* The loader's blanks between the verb and the rule (the kernel's isspace()). */
static bool kspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

/* "allow|deny SELECTOR [ACCESS]": *ret_allow and the selector's offset, else 0. */
static size_t selector_rule(const char *s, size_t len, bool *ret_allow)
{
	size_t v;

	if (memchr(s, '\0', len))
		return 0;
	if (len > 6 && !memcmp(s, "allow", 5) && kspace((unsigned char)s[5]))
		v = 6;
	else if (len > 5 && !memcmp(s, "deny", 4) && kspace((unsigned char)s[4]))
		v = 5;
	else
		return 0;
	while (v < len && kspace((unsigned char)s[v]))
		v++;
	if (!selector_is(s + v, len - v))
		return 0;
	*ret_allow = v > 0 && s[0] == 'a';
	return v;
}

static int add(struct policysel *ps, const char *node, bool allow, const char *sel, size_t len,
	       const char *where)
{
	struct policysel_rule x = {.allow = allow};

	if (ARRAY_RESERVE(ps->v, ps->size, ps->n + 1) < 0)
		return -ENOMEM;
	x.node = strdup(node);
	x.selector = strndup(sel, len);
	x.where = strdup(where);
	if (!x.node || !x.selector || !x.where) {
		free(x.node);
		free(x.selector);
		free(x.where);
		return -ENOMEM;
	}
	ps->v[ps->n++] = x;
	return 0;
}

/* s for a message: at most size - 1 bytes, control characters shown as '?'. */
static const char *printable(const char *s, size_t len, char *buf, size_t size)
{
	size_t n = len < size - 1 ? len : size - 1;

	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)s[i] < ' ' || s[i] == 0x7f ? '?' : s[i];
	buf[n] = '\0';
	return buf;
}

/* Blank t[from..to) but its line ends: the lines and columns of the rest stay. */
static void blank(char *t, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (t[i] != '\n' && t[i] != '\r')
			t[i] = ' ';
}

/* A node (obj, at t[at]): its selector rules into ps, blanked in out. */
static int node_rules(const char *t, char *out, size_t at, struct json_object *obj,
		      const char *name, struct policysel *ps, struct devwl_error *err)
{
	struct json_object *path = NULL, *rules = NULL;
	_cleanup_free_ size_t *starts = NULL, *ends = NULL;
	size_t n, first = 0, nsel = 0, rat;
	char where[1024], q[201], qp[257];
	const char *p;

	/* What the loader refuses (no path, rules no array) it reports itself. */
	if (!json_object_object_get_ex(obj, "path", &path) ||
	    !json_object_is_type(path, json_type_string) ||
	    !json_object_object_get_ex(obj, "rules", &rules) ||
	    !json_object_is_type(rules, json_type_array))
		return 0;
	p = json_object_get_string(path);
	printable(p, strlen(p), qp, sizeof(qp));
	n = json_object_array_length(rules);
	for (size_t i = 0; i < n; i++)
		if (!json_object_is_type(json_object_array_get_idx(rules, i), json_type_string))
			return 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(rules, i);
		const char *text;
		size_t len, v;
		bool allow = false;

		text = json_object_get_string(s);
		len = (size_t)json_object_get_string_len(s);
		v = selector_rule(text, len, &allow);
		snprintf(where, sizeof(where), "%s: node %s: rule %zu", name, qp, i + 1);
		if (!v && nsel)
			return devwl_error_set(err, -EINVAL, 0,
					       "%s \"%s\": a plain rule after the selector rule "
					       "%zu: a node's selector rules are applied after its "
					       "plain rules, so they must come last",
					       where, printable(text, len, q, sizeof(q)),
					       first + 1);
		if (!v)
			continue;
		if (!nsel++)
			first = i;
		if (add(ps, p, allow, text + v, len - v, where) < 0)
			return devwl_error_set(err, -ENOMEM, 0, "%s: out of memory", name);
	}
	if (!nsel)
		return 0;
	starts = calloc(n, sizeof(*starts));
	ends = calloc(n, sizeof(*ends));
	if (!starts || !ends)
		return devwl_error_set(err, -ENOMEM, 0, "%s: out of memory", name);
	if (!member(t, at, "rules", &rat) || !elements(t, rat, n, starts, ends))
		goto lost;
	for (size_t i = first; i < n; i++)
		if (!same_string(t, starts[i], ends[i], json_object_array_get_idx(rules, i)))
			goto lost;
	/* From the end of the last plain rule, so that its comma goes too. */
	blank(out, first ? ends[first - 1] : starts[first], ends[n - 1]);
	return 0;
lost:
	return devwl_error_set(err, -EINVAL, 0,
			       "%s: node %s: its selector rules cannot be found in the text "
			       "(write the keys \"nodes\" and \"rules\" once each, unescaped)",
			       name, qp);
}

int policysel_extract(const char *text, const char *name, char **ret_text, struct policysel *ret,
		      struct devwl_error *err)
{
	_cleanup_free_ char *out = NULL;
	struct json_object *top = NULL, *nodes = NULL;
	struct json_tokener *tok;
	struct policysel ps = {0};
	size_t len = strlen(text), at, nat;
	int r = 0;

	if (!name)
		name = "policy";
	out = strdup(text);
	if (!out)
		return devwl_error_set(err, -ENOMEM, 0, "%s: out of memory", name);
	/* Too big for the loader, which says so. */
	if (len > POLICY_FILE_MAX) {
		*ret_text = TAKE_PTR(out);
		*ret = ps;
		return 0;
	}
	tok = json_tokener_new();
	if (!tok)
		return devwl_error_set(err, -ENOMEM, 0, "%s: out of memory", name);
	/* As strict as the loader: what it refuses it reports, from the text as it is. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	top = json_tokener_parse_ex(tok, text, (int)len + 1);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    text[json_text_ws(text, json_tokener_get_parse_end(tok))]) {
		json_object_put(top);
		top = NULL;
	}
	json_tokener_free(tok);
	at = json_text_ws(text, 0);
	if (top && json_object_object_get_ex(top, "nodes", &nodes) &&
	    json_object_is_type(nodes, json_type_array)) {
		size_t n = json_object_array_length(nodes);
		_cleanup_free_ size_t *starts = calloc(n ? n : 1, sizeof(*starts));
		_cleanup_free_ size_t *ends = calloc(n ? n : 1, sizeof(*ends));
		bool found;

		if (!starts || !ends) {
			json_object_put(top);
			return devwl_error_set(err, -ENOMEM, 0, "%s: out of memory", name);
		}
		found = member(text, at, "nodes", &nat) && elements(text, nat, n, starts, ends);
		for (size_t i = 0; r >= 0 && i < n; i++) {
			struct json_object *node = json_object_array_get_idx(nodes, i);

			if (!json_object_is_type(node, json_type_object))
				continue;
			if (found) {
				r = node_rules(text, out, starts[i], node, name, &ps, err);
				continue;
			}
			/* Not found in the text: fine only while no node has a selector. */
			r = node_rules(text, out, len, node, name, &ps, err);
		}
	}
	json_object_put(top);
	if (r < 0) {
		policysel_clear(&ps);
		return r;
	}
	*ret_text = TAKE_PTR(out);
	*ret = ps;
	return 0;
}

/*
 * The file's "selectors" (devwld's bindings, [{"node": PATH, "allow"|"deny": "SELECTOR
 * [ACCESS]"}]), appended to ps after the node rules, as devwld orders them: a tool that
 * left them out would grant what their denials take away. The loader has checked the
 * rest of the file; devwld's own reading (bindings.c) checks the same.
 */
static int top_selectors(const char *text, const char *name, struct devwl_policy *policy,
			 struct policysel *ps, struct devwl_error *err)
{
	struct json_object *top = json_tokener_parse(text), *arr = NULL;
	int r = 0;

	if (!top || !json_object_object_get_ex(top, "selectors", &arr)) {
		json_object_put(top);
		return 0;
	}
	if (!json_object_is_type(arr, json_type_array))
		r = devwl_error_set(err, -EINVAL, 0, "%s: \"selectors\": must be an array", name);
	for (size_t i = 0; r >= 0 && i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i), *node = NULL, *a = NULL,
				   *d = NULL;
		char where[256], q[96];
		bool bad;

		snprintf(where, sizeof(where), "%s: selectors %zu", name, i + 1);
		bad = !json_object_is_type(o, json_type_object) ||
		      !json_object_object_get_ex(o, "node", &node) ||
		      !json_object_is_type(node, json_type_string) ||
		      json_object_object_length(o) != 2 ||
		      json_object_object_get_ex(o, "allow", &a) ==
			      json_object_object_get_ex(o, "deny", &d) ||
		      !json_object_is_type(a ? a : d, json_type_string);
		if (bad) {
			r = devwl_error_set(err, -EINVAL, 0,
					    "%s: must be {\"node\": PATH, \"allow\" or \"deny\": "
					    "\"SELECTOR [ACCESS]\"}",
					    where);
			break;
		}
		printable(json_object_get_string(node), (size_t)json_object_get_string_len(node), q,
			  sizeof(q));
		if (!devwl_policy_find(policy, json_object_get_string(node))) {
			r = devwl_error_set(err, -ENOENT, 0, "%s: no node %s in the policy", where,
					    q);
			break;
		}
		r = add(ps, json_object_get_string(node), a != NULL,
			json_object_get_string(a ? a : d),
			(size_t)json_object_get_string_len(a ? a : d), where);
		if (r < 0)
			r = devwl_error_set(err, r, 0, "%s: out of memory", name);
	}
	json_object_put(top);
	return r;
}

int policysel_load_file(const char *file, struct devwl_policy **ret_policy,
			struct policysel *ret_sel, struct devwl_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *text = NULL, *plain = NULL;
	struct policysel ps = {0};
	ssize_t len;
	int r;

	if (!file || !ret_policy || !ret_sel)
		return devwl_error_set(err, -EINVAL, 0, "no policy file given");
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return devwl_error_set(err, negerrno(), 0, "%s: %s", file, strerror(errno));
	len = devwl_read_all(fd, POLICY_FILE_MAX, &text);
	if (len == -E2BIG)
		return devwl_error_set(err, -E2BIG, 0, "%s: more than the %u bytes allowed", file,
				       POLICY_FILE_MAX);
	if (len < 0)
		return devwl_error_set(err, (int)len, 0, "%s: %s", file, strerror((int)-len));
	if (memchr(text, '\0', (size_t)len))
		return devwl_error_set(err, -EINVAL, 0, "%s: contains a NUL byte", file);
	r = policysel_extract(text, file, &plain, &ps, err);
	if (r < 0)
		return r;
	r = devwl_policy_load_string(plain, file, ret_policy, err);
	if (r >= 0)
		r = top_selectors(text, file, *ret_policy, &ps, err);
	if (r < 0) {
		if (*ret_policy)
			devwl_policy_free(*ret_policy);
		*ret_policy = NULL;
		policysel_clear(&ps);
		return r;
	}
	*ret_sel = ps;
	return 0;
}
