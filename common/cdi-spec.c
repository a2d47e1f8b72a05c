/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON stays in this file: the document is turned into struct cdi_spec and freed here. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdi-spec.h"
#include "jsonutil.h"
#include "util.h"
#include "yamljson.h"

struct ctx {
	const char *file;
	struct devwl_error *err;
};

static int bad(struct ctx *c, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(struct ctx *c, const char *field, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return devwl_error_set(c->err, -EINVAL, 0, "%s: %s: %s", c->file, field, why);
}

/* Alphanumerics at both ends, and between them alphanumerics or one of extra. */
static bool word(const char *s, size_t len, size_t max, const char *extra, bool digit_first)
{
	if (len == 0 || len > max || !isalnum((unsigned char)s[len - 1]))
		return false;
	if (!(digit_first ? isalnum((unsigned char)s[0]) : isalpha((unsigned char)s[0])))
		return false;
	for (size_t i = 1; i + 1 < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr(extra, s[i]))
			return false;
	return true;
}

bool cdi_vendor_valid(const char *s, size_t len)
{
	return word(s, len, 253, "-_.", false);
}

bool cdi_class_valid(const char *s, size_t len)
{
	return word(s, len, 63, "-_.", false);
}

bool cdi_name_valid(const char *s, size_t len)
{
	return word(s, len, 253, "-_.", true);
}

/* The released versions of the CDI specification, with or without a leading v: a newer
 * one may mean what devwl does not know, and is refused as the CDI's own library does. */
static bool version_valid(const char *s)
{
	static const char *const known[] = {"0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0",
					    "0.6.0", "0.7.0", "0.8.0", "1.0.0", "1.1.0"};

	if (*s == 'v')
		s++;
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(s, known[i]))
			return true;
	return false;
}

/* The string member key of obj, or NULL with *r set when it is missing (and required)
 * or no string. */
static const char *string_at(struct ctx *c, struct json_object *obj, const char *key,
			     const char *field, bool required, int *r)
{
	struct json_object *v = NULL;

	*r = 0;
	if (!json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null)) {
		if (required)
			*r = bad(c, field, "missing");
		return NULL;
	}
	/* YAML's plain 0 is an integer that remembers its text (yamljson.h). */
	if (json_object_is_type(v, json_type_int) && json_object_get_userdata(v))
		return json_object_get_userdata(v);
	if (!json_object_is_type(v, json_type_string))
		*r = bad(c, field, "not a string");
	else if (json_string_has_nul(v))
		*r = bad(c, field, "holds a NUL byte");
	return *r < 0 ? NULL : json_object_get_string(v);
}

static int number_at(struct ctx *c, struct json_object *obj, const char *key, const char *field,
		     bool *has, uint32_t *ret)
{
	struct json_object *v = NULL;
	int64_t n;

	*has = false;
	if (!json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return bad(c, field, "not an integer");
	n = json_object_get_int64(v);
	if (n < 0 || n >= (int64_t)DEVWL_ANY)
		return bad(c, field, "%" PRId64 " is out of range", n);
	*has = true;
	*ret = (uint32_t)n;
	return 0;
}

/*
 * CDI's types: c and b get a cgroup rule; u (an unbuffered character device) and p (a
 * FIFO) are valid nodes that the CDI gives none, and so neither does devwl.
 */
static int node_type(struct ctx *c, const char *t, const char *field, struct cdi_node *n)
{
	if (!t || !*t)
		n->type = 0;
	else if (!strcmp(t, "c"))
		n->type = DEVWL_DEV_CHAR;
	else if (!strcmp(t, "b"))
		n->type = DEVWL_DEV_BLOCK;
	else if (!strcmp(t, "u") || !strcmp(t, "p"))
		n->no_rule = true;
	else
		return bad(c, field, "\"%s\" is not c, b, u or p", t);
	return 0;
}

static int node_access(struct ctx *c, const char *p, const char *field, uint8_t *ret)
{
	/* CDI: omitted or empty means rwm, "none" nothing; the letters may repeat. */
	*ret = 0;
	if (!p || !*p) {
		*ret = DEVWL_ACC_MASK;
		return 0;
	}
	if (!strcmp(p, "none"))
		return 0;
	for (const char *q = p; *q; q++) {
		uint8_t bit = *q == 'r'	  ? DEVWL_ACC_READ
			      : *q == 'w' ? DEVWL_ACC_WRITE
			      : *q == 'm' ? DEVWL_ACC_MKNOD
					  : 0;

		if (!bit)
			return bad(c, field, "\"%s\" is not made of r, w and m", p);
		*ret |= bit;
	}
	return 0;
}

/* Does edits change the container at all? A device that does not is refused (the CDI's
 * library refuses it too): any member but null or an empty array or object counts. */
static bool edits_empty(struct json_object *edits)
{
	json_object_object_foreach (edits, key, v) {
		(void)key;
		if (!v || json_object_is_type(v, json_type_null))
			continue;
		if (json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0)
			continue;
		if (json_object_is_type(v, json_type_object) && json_object_object_length(v) == 0)
			continue;
		return false;
	}
	return true;
}

static int parse_node(struct ctx *c, struct json_object *o, const char *at, struct cdi_node *n)
{
	char f[320];
	const char *path, *host, *type, *perm;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return bad(c, at, "not an object");
#define FIELD(name) (snprintf(f, sizeof(f), "%s.%s", at, name), f)
	path = string_at(c, o, "path", FIELD("path"), true, &r);
	if (r < 0)
		return r;
	if (!*path)
		return bad(c, f, "empty");
	host = string_at(c, o, "hostPath", FIELD("hostPath"), false, &r);
	if (r < 0)
		return r;
	type = string_at(c, o, "type", FIELD("type"), false, &r);
	if (r < 0 || (r = node_type(c, type, f, n)) < 0)
		return r;
	perm = string_at(c, o, "permissions", FIELD("permissions"), false, &r);
	if (r < 0 || (r = node_access(c, perm, f, &n->access)) < 0)
		return r;
	r = number_at(c, o, "major", FIELD("major"), &n->has_major, &n->major);
	if (r < 0)
		return r;
	r = number_at(c, o, "minor", FIELD("minor"), &n->has_minor, &n->minor);
	if (r < 0)
		return r;
#undef FIELD
	n->path = strdup(host && *host ? host : path);
	n->field = strdup(at);
	return n->path && n->field ? 0 : devwl_error_set(c->err, -ENOMEM, 0, "out of memory");
}

static void free_nodes(struct cdi_node *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].field);
	}
	free(v);
}

/* The deviceNodes of a containerEdits at field (absent: none). */
static int parse_edits(struct ctx *c, struct json_object *parent, const char *field,
		       struct cdi_node **ret, size_t *ret_n)
{
	struct json_object *edits = NULL, *nodes = NULL;
	struct cdi_node *v = NULL;
	char at[256];
	size_t n;
	int r;

	*ret = NULL;
	*ret_n = 0;
	if (!json_object_object_get_ex(parent, "containerEdits", &edits) ||
	    json_object_is_type(edits, json_type_null))
		return 0;
	snprintf(at, sizeof(at), "%scontainerEdits", field);
	if (!json_object_is_type(edits, json_type_object))
		return bad(c, at, "not an object");
	if (!json_object_object_get_ex(edits, "deviceNodes", &nodes) ||
	    json_object_is_type(nodes, json_type_null))
		return 0;
	snprintf(at, sizeof(at), "%scontainerEdits.deviceNodes", field);
	if (!json_object_is_type(nodes, json_type_array))
		return bad(c, at, "not an array");
	n = json_object_array_length(nodes);
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return devwl_error_set(c->err, -ENOMEM, 0, "out of memory");
	for (size_t i = 0; i < n; i++) {
		snprintf(at, sizeof(at), "%scontainerEdits.deviceNodes[%zu]", field, i);
		r = parse_node(c, json_object_array_get_idx(nodes, i), at, &v[i]);
		if (r < 0) {
			free_nodes(v, n);
			return r;
		}
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static int parse_devices(struct ctx *c, struct json_object *root, struct cdi_spec *s)
{
	struct json_object *devs = NULL;
	size_t n;
	int r;

	if (!json_object_object_get_ex(root, "devices", &devs))
		return bad(c, "devices", "missing");
	if (!json_object_is_type(devs, json_type_array))
		return bad(c, "devices", "not an array");
	n = json_object_array_length(devs);
	if (n == 0)
		return bad(c, "devices", "empty: a spec describes at least one device");
	s->devs = calloc(n, sizeof(*s->devs));
	if (!s->devs)
		return devwl_error_set(c->err, -ENOMEM, 0, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(devs, i), *edits = NULL;
		struct cdi_dev *dev = &s->devs[s->n_devs];
		char at[64], f[80];
		const char *name;

		snprintf(at, sizeof(at), "devices[%zu].", i);
		snprintf(f, sizeof(f), "devices[%zu]", i);
		if (!json_object_is_type(d, json_type_object))
			return bad(c, f, "not an object");
		snprintf(f, sizeof(f), "devices[%zu].name", i);
		name = string_at(c, d, "name", f, true, &r);
		if (r < 0)
			return r;
		if (!cdi_name_valid(name, strlen(name)))
			return bad(c, f,
				   "\"%s\" is not a device name (letters, digits, - _ ., "
				   "alphanumeric at both ends)",
				   name);
		for (size_t k = 0; k < s->n_devs; k++)
			if (!strcmp(s->devs[k].name, name))
				return bad(c, f, "\"%s\" is already devices[%zu]", name, k);
		dev->name = strdup(name);
		if (!dev->name)
			return devwl_error_set(c->err, -ENOMEM, 0, "out of memory");
		s->n_devs++;
		r = parse_edits(c, d, at, &dev->nodes, &dev->n_nodes);
		if (r < 0)
			return r;
		snprintf(f, sizeof(f), "devices[%zu].containerEdits", i);
		if (!json_object_object_get_ex(d, "containerEdits", &edits) || !edits ||
		    edits_empty(edits))
			return bad(c, f, "missing or empty: a device changes the container");
	}
	return 0;
}

static int parse_root(struct ctx *c, struct json_object *root, struct cdi_spec *s)
{
	const char *version, *kind, *slash;
	int r;

	if (!json_object_is_type(root, json_type_object))
		return bad(c, "(top)", "not an object");
	version = string_at(c, root, "cdiVersion", "cdiVersion", true, &r);
	if (r < 0)
		return r;
	if (!version_valid(version))
		return bad(c, "cdiVersion", "\"%s\" is no CDI version devwl knows (0.1.0 to 1.1.0)",
			   version);
	kind = string_at(c, root, "kind", "kind", true, &r);
	if (r < 0)
		return r;
	slash = strchr(kind, '/');
	if (!slash || !cdi_vendor_valid(kind, (size_t)(slash - kind)) ||
	    !cdi_class_valid(slash + 1, strlen(slash + 1)))
		return bad(c, "kind", "\"%s\" is not VENDOR/CLASS (vendor.com/device)", kind);
	s->kind = strdup(kind);
	if (!s->kind)
		return devwl_error_set(c->err, -ENOMEM, 0, "out of memory");
	r = parse_devices(c, root, s);
	if (r < 0)
		return r;
	return parse_edits(c, root, "", &s->common, &s->n_common);
}

static int parse_text(struct ctx *c, const char *text, size_t len, bool yaml,
		      struct json_object **ret)
{
	struct json_tokener *tok = NULL;
	enum json_tokener_error jerr;
	struct json_object *obj;
	size_t end;

	if (yaml)
		return yamljson_parse(text, len, c->file, ret, c->err);
	if (memchr(text, '\0', len))
		return devwl_error_set(c->err, -EINVAL, 0, "%s: a NUL byte in the input", c->file);
	tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	if (!tok)
		return devwl_error_set(c->err, -ENOMEM, 0, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, text, (int)len + 1);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!obj || jerr != json_tokener_success) {
		json_object_put(obj);
		if (jerr == json_tokener_success || jerr == json_tokener_continue)
			jerr = json_tokener_error_parse_eof;
		return devwl_error_set(c->err, -EINVAL, end, "%s: byte %zu: invalid JSON: %s",
				       c->file, end > len ? len : end,
				       json_tokener_error_desc(jerr));
	}
	*ret = obj;
	return 0;
}

int cdi_spec_parse(const char *text, size_t len, bool yaml, const char *file, struct cdi_spec **ret,
		   struct devwl_error *ret_err)
{
	struct ctx c = {.file = file, .err = ret_err};
	struct json_object *root = NULL;
	struct cdi_spec *s;
	int r;

	if (len > CDI_SPEC_SIZE_MAX)
		return devwl_error_set(ret_err, -E2BIG, 0, "%s: %zu bytes, more than the %u read",
				       file, len, CDI_SPEC_SIZE_MAX);
	r = parse_text(&c, text, len, yaml, &root);
	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->file = strdup(file))) {
		free(s);
		json_object_put(root);
		return devwl_error_set(ret_err, -ENOMEM, 0, "out of memory");
	}
	r = parse_root(&c, root, s);
	json_object_put(root);
	if (r < 0) {
		cdi_spec_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void cdi_spec_free(struct cdi_spec *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_devs; i++) {
		free(s->devs[i].name);
		free_nodes(s->devs[i].nodes, s->devs[i].n_nodes);
	}
	free(s->devs);
	free_nodes(s->common, s->n_common);
	free(s->kind);
	free(s->file);
	free(s);
}
