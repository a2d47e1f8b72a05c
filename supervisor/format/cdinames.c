/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CDI devices a container's annotations ask for, as containerd and CRI-O pass a
 * device plugin's or a DRA driver's choice on: "cdi.k8s.io/KEY" annotations whose value
 * is a comma-separated list of fully qualified names, VENDOR/CLASS=NAME. Whoever writes
 * a pod's annotations writes these, so every name is checked against the CDI grammar and
 * anything else is refused by name, never repaired: an item with blanks, an empty one, a
 * wildcard (which would name every device of a kind) gets nothing, and the other names
 * of the same value are judged on their own. Pure; core/cdigrant.c grants what is left.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cdi-spec.h"
#include "cdinames.h"
#include "nodepath.h"
#include "util.h"

/* VENDOR/CLASS=NAME at its longest, as cdi-spec.c bounds the three. */
#define NAME_MAX_LEN (253 + 1 + 63 + 1 + 253)
/* What of a refused key or item goes into a message. */
#define SHOWN_MAX 96

/* A copy of s[0..len) for a message: cut, and every byte no plain ASCII made '?'. */
static char *shown(const char *s, size_t len)
{
	size_t n = len > SHOWN_MAX ? SHOWN_MAX : len;
	char *t = malloc(n + 4);

	if (!t)
		return NULL;
	for (size_t i = 0; i < n; i++)
		t[i] = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f ? s[i] : '?';
	if (n < len) {
		memcpy(t + n, "...", 3);
		n += 3;
	}
	t[n] = '\0';
	return t;
}

static int refuse(struct cdi_names *out, const char *key, const char *item, size_t len,
		  const char *why)
{
	struct cdi_bad *v, *b;

	if (out->nbad >= CDI_BAD_MAX) {
		out->nbad_more++;
		return 0;
	}
	v = realloc(out->bad, (out->nbad + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	out->bad = v;
	b = &v[out->nbad];
	*b = (struct cdi_bad){.key = shown(key, strlen(key)), .item = shown(item, len), .why = why};
	if (!b->key || !b->item) {
		free(b->key);
		free(b->item);
		return -ENOMEM;
	}
	out->nbad++;
	return 0;
}

/* Why item[0..len) is no fully qualified CDI device name, or NULL when it is one. */
static const char *name_invalid(const char *item, size_t len)
{
	const char *slash = memchr(item, '/', len), *eq = memchr(item, '=', len);

	if (len == 0)
		return "empty name";
	if (len > NAME_MAX_LEN)
		return "name too long";
	if (!slash || !eq || eq < slash)
		return "not VENDOR/CLASS=NAME";
	if (!cdi_vendor_valid(item, (size_t)(slash - item)))
		return "not a CDI vendor before '/'";
	if (!cdi_class_valid(slash + 1, (size_t)(eq - slash - 1)))
		return "not a CDI class between '/' and '='";
	if (len - (size_t)(eq + 1 - item) == 1 && eq[1] == '*')
		return "a wildcard names every device of the kind: an annotation names devices";
	if (!cdi_name_valid(eq + 1, len - (size_t)(eq + 1 - item)))
		return "not a CDI device name after '='";
	return NULL;
}

static bool known(const struct cdi_names *out, const char *item, size_t len)
{
	for (size_t i = 0; i < out->n; i++)
		if (strlen(out->names[i]) == len && !memcmp(out->names[i], item, len))
			return true;
	return false;
}

static int add_item(struct cdi_names *out, const char *key, const char *item, size_t len)
{
	const char *why = name_invalid(item, len);
	char **v;

	if (why)
		return refuse(out, key, item, len, why);
	if (known(out, item, len))
		return 0;
	if (out->n >= CDI_NAMES_MAX)
		return refuse(out, key, item, len,
			      "more CDI devices than devwld grants a container");
	v = realloc(out->names, (out->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	out->names = v;
	v[out->n] = strndup(item, len);
	if (!v[out->n])
		return -ENOMEM;
	out->n++;
	return 0;
}

int cdi_names_add(const char *key, const char *value, struct cdi_names *out)
{
	const char *p = value;
	int r;

	out->nannos++;
	if (strlen(key) <= strlen(CDI_ANNOTATION_PREFIX))
		return refuse(out, key, value, strlen(value), "annotation key names nothing");
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		r = add_item(out, key, p, len);
		if (r < 0 || !comma)
			return r;
		p = comma + 1;
	}
}

int cdi_names_of(const struct oci_state *st, struct cdi_names *out)
{
	*out = (struct cdi_names){0};
	for (size_t i = 0; i < st->nannos; i++) {
		const struct annotation *a = &st->annos[i];
		int r;

		if (strncmp(a->key, CDI_ANNOTATION_PREFIX, strlen(CDI_ANNOTATION_PREFIX)))
			continue;
		r = cdi_names_add(a->key, a->value, out);
		if (r < 0) {
			cdi_names_clear(out);
			return r;
		}
	}
	return 0;
}

void cdi_names_clear(struct cdi_names *n)
{
	for (size_t i = 0; i < n->n; i++)
		free(n->names[i]);
	free(n->names);
	for (size_t i = 0; i < n->nbad; i++) {
		free(n->bad[i].key);
		free(n->bad[i].item);
	}
	free(n->bad);
	*n = (struct cdi_names){0};
}

int node_flags_from_json(struct json_object *nodes, const char *file, const char *key,
			 struct cdi_optins *ret, struct devwl_error *err)
{
	struct cdi_optins o = {0};

	*ret = o;
	/* libdevwl's loader checked the shape and the type; only the values matter here. */
	if (!nodes || !json_object_is_type(nodes, json_type_array))
		return 0;
	for (size_t i = 0, n = json_object_array_length(nodes); i < n; i++) {
		struct json_object *node = json_object_array_get_idx(nodes, i), *path = NULL,
				   *v = NULL;
		struct cdi_optin *grown;

		if (!json_object_object_get_ex(node, key, &v))
			continue;
		if (!json_object_object_get_ex(node, "path", &path) ||
		    !json_object_is_type(path, json_type_string) ||
		    devwl_node_path_valid(json_object_get_string(path)) < 0 ||
		    !json_object_is_type(v, json_type_boolean)) {
			cdi_optins_clear(&o);
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: node %zu: \"%s\": must be a boolean, on a node "
					       "with a path",
					       file, i + 1, key);
		}
		grown = realloc(o.v, (o.n + 1) * sizeof(*grown));
		if (!grown) {
			cdi_optins_clear(&o);
			return devwl_error_set(err, -ENOMEM, 0, "out of memory");
		}
		o.v = grown;
		o.v[o.n].on = json_object_get_boolean(v);
		o.v[o.n].path = strdup(json_object_get_string(path));
		if (!o.v[o.n].path) {
			cdi_optins_clear(&o);
			return devwl_error_set(err, -ENOMEM, 0, "out of memory");
		}
		o.n++;
	}
	*ret = o;
	return 0;
}

void cdi_optins_clear(struct cdi_optins *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->v[i].path);
	free(o->v);
	*o = (struct cdi_optins){0};
}

int cdi_optins_from_json(struct json_object *nodes, const char *file, struct cdi_optins *ret,
			 struct devwl_error *err)
{
	return node_flags_from_json(nodes, file, "cdi_annotations", ret, err);
}

bool cdi_optin(const struct cdi_optins *o, const char *path)
{
	size_t best = 0;
	bool on = false, found = false;

	/* The longest path at or above path decides: the nearest ancestor that says. */
	for (size_t i = 0; i < o->n; i++) {
		const char *p = o->v[i].path;
		size_t n = strlen(p);
		bool above = !strcmp(p, "/") ||
			     (!strncmp(path, p, n) && (path[n] == '\0' || path[n] == '/'));

		if (above && (!found || n > best)) {
			best = n;
			on = o->v[i].on;
			found = true;
		}
	}
	return on;
}
