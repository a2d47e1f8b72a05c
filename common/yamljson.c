/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "jsonutil.h"
#include "util.h"
#include "yamljson.h"

/* More than any device spec holds; an alias bomb reaches it quickly. */
#define NODES_MAX 100000
#define DEPTH_MAX 64

struct conv {
	yaml_document_t *doc;
	const char *name;
	size_t built;
	struct devwl_error *err;
};

static int fail(struct conv *c, const yaml_node_t *node, int r, const char *why)
{
	return devwl_error_set(c->err, r, node ? node->start_mark.index : 0, "%s:%zu:%zu: %s",
			       c->name, node ? node->start_mark.line + 1 : 0,
			       node ? node->start_mark.column + 1 : 0, why);
}

/* An integer in YAML's plain decimal or 0x form, within int64. */
static bool plain_int(const char *s, int64_t *ret)
{
	char *end = NULL;
	bool hex = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'));
	long long v;

	if (!*s || (!hex && !strchr("+-0123456789", s[0])))
		return false;
	errno = 0;
	v = strtoll(s, &end, hex ? 16 : 10);
	if (errno || end == s || *end)
		return false;
	*ret = v;
	return true;
}

static struct json_object *scalar(const yaml_node_t *node)
{
	const char *s = (const char *)node->data.scalar.value;
	size_t len = node->data.scalar.length;
	int64_t i;

	if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		if (len == 0 || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
		    !strcmp(s, "NULL"))
			return json_object_new_null();
		if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
			return json_object_new_boolean(1);
		if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
			return json_object_new_boolean(0);
		if (strlen(s) == len && plain_int(s, &i)) {
			struct json_object *o = json_object_new_int64(i);
			char *text = strdup(s);

			/* The scalar as written, for a reader that wants a string there: a
			 * device named 0, or 0x10. */
			if (!o || !text) {
				free(text);
				json_object_put(o);
				return NULL;
			}
			json_object_set_userdata(o, text, json_object_free_userdata);
			return o;
		}
	}
	return json_object_new_string_len(s, (int)len);
}

static int convert(struct conv *c, yaml_node_t *node, int depth, struct json_object **ret);

static int mapping(struct conv *c, yaml_node_t *node, int depth, struct json_object **ret)
{
	struct json_object *obj = json_object_new_object();
	int r;

	if (!obj)
		return fail(c, node, -ENOMEM, "out of memory");
	for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		struct json_object *val = NULL;
		_cleanup_free_ char *key = NULL;

		if (!k || !v || k->type != YAML_SCALAR_NODE) {
			json_object_put(obj);
			return fail(c, k ? k : node, -EINVAL, "a mapping key that is no scalar");
		}
		key = strndup((const char *)k->data.scalar.value, k->data.scalar.length);
		r = key ? convert(c, v, depth + 1, &val) : fail(c, k, -ENOMEM, "out of memory");
		if (r >= 0 && json_add(obj, key, val) < 0)
			r = fail(c, k, -ENOMEM, "out of memory");
		if (r < 0) {
			json_object_put(obj);
			return r;
		}
	}
	*ret = obj;
	return 0;
}

static int sequence(struct conv *c, yaml_node_t *node, int depth, struct json_object **ret)
{
	struct json_object *arr = json_object_new_array();
	int r;

	if (!arr)
		return fail(c, node, -ENOMEM, "out of memory");
	for (yaml_node_item_t *it = node->data.sequence.items.start;
	     it < node->data.sequence.items.top; it++) {
		yaml_node_t *v = yaml_document_get_node(c->doc, *it);
		struct json_object *val = NULL;

		r = v ? convert(c, v, depth + 1, &val) : fail(c, node, -EINVAL, "a missing item");
		if (r >= 0 && json_push(arr, val) < 0)
			r = fail(c, v, -ENOMEM, "out of memory");
		if (r < 0) {
			json_object_put(arr);
			return r;
		}
	}
	*ret = arr;
	return 0;
}

static int convert(struct conv *c, yaml_node_t *node, int depth, struct json_object **ret)
{
	if (depth > DEPTH_MAX)
		return fail(c, node, -EINVAL, "nested deeper than 64 levels");
	if (++c->built > NODES_MAX)
		return fail(c, node, -EINVAL, "more than 100000 nodes (aliases expanding?)");
	switch (node->type) {
	case YAML_SCALAR_NODE:
		*ret = scalar(node);
		return *ret ? 0 : fail(c, node, -ENOMEM, "out of memory");
	case YAML_MAPPING_NODE:
		return mapping(c, node, depth, ret);
	case YAML_SEQUENCE_NODE:
		return sequence(c, node, depth, ret);
	default:
		return fail(c, node, -EINVAL, "an empty node");
	}
}

int yamljson_parse(const char *text, size_t len, const char *name, struct json_object **ret,
		   struct devwl_error *ret_err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	struct conv c = {.doc = &doc, .name = name, .err = ret_err};
	int r;

	if (!yaml_parser_initialize(&parser))
		return devwl_error_set(ret_err, -ENOMEM, 0, "%s: out of memory", name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		r = devwl_error_set(ret_err, parser.error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL,
				    parser.problem_mark.index, "%s:%zu:%zu: invalid YAML: %s", name,
				    parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				    parser.problem ? parser.problem : "unreadable");
		yaml_parser_delete(&parser);
		return r;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root)
		r = devwl_error_set(ret_err, -EINVAL, 0, "%s: no YAML document", name);
	else
		r = convert(&c, root, 0, ret);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}
