/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * YAML read event by event (yaml_parser_parse), each json-c object made as its event
 * arrives, so that every limit is checked the moment the document passes it and nothing
 * after that point is read. Loading the whole document first (yaml_parser_load) let a
 * spec of 100000 nested [ cost libyaml's scanner 41 s before a check could run: its work
 * for each token grows with the flow nesting open.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "array.h"
#include "jsonutil.h"
#include "util.h"
#include "yamljson.h"

/* Far more than any device spec holds, far less than a hostile document reaches. */
#define DEPTH_MAX  64
#define NODES_MAX  100000 /* an alias counts the nodes it repeats: a bomb stops here */
#define SCALAR_MAX 65536
/* A document has one or two: %YAML and a %TAG. */
#define DIRECTIVES_MAX 16

struct anchor {
	bool open;		 /* the node it names is still being read */
	struct json_object *obj; /* that node (NULL: a null) */
	char *text;		 /* a scalar's text as written, for an alias as a mapping key */
	size_t nodes;		 /* the nodes an alias of it stands for, aliases within counted */
	int height;		 /* the levels below it */
};

/* A sequence or mapping still open. */
struct frame {
	struct json_object *obj;
	char *key;     /* a mapping's key read, its value still to come */
	size_t anchor; /* 1 + the index of the anchor naming it, or 0 */
	size_t built;  /* the nodes built before it */
	int deepest;   /* the deepest level within it so far */
};

struct conv {
	const char *name;
	struct devwl_error *err;
	struct frame stack[DEPTH_MAX + 1];
	int depth; /* the frames open: the level of the next node */
	size_t built;
	struct anchor *anchors;
	size_t n_anchors, cap_anchors;
	struct json_object *index; /* anchor name: its index in anchors */
	struct json_object *root;
};

static int fail(struct conv *c, const yaml_mark_t *at, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct conv *c, const yaml_mark_t *at, int r, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return devwl_error_set(c->err, r, at->index, "%s:%zu:%zu: %s", c->name, at->line + 1,
			       at->column + 1, why);
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

/* The object of a scalar into *ret: NULL for a null, as json-c has it. 0 or -ENOMEM. */
static int scalar(const yaml_event_t *ev, struct json_object **ret)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	int64_t i;

	*ret = NULL;
	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		if (len == 0 || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
		    !strcmp(s, "NULL"))
			return 0;
		if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
			*ret = json_object_new_boolean(1);
		else if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
			*ret = json_object_new_boolean(0);
		else if (strlen(s) == len && plain_int(s, &i)) {
			struct json_object *o = json_object_new_int64(i);
			char *text = strdup(s);

			/* The scalar as written, for a reader that wants a string there: a
			 * device named 0, or 0x10. */
			if (!o || !text) {
				free(text);
				json_object_put(o);
				return -ENOMEM;
			}
			json_object_set_userdata(o, text, json_object_free_userdata);
			*ret = o;
		}
		if (*ret)
			return 0;
	}
	*ret = json_object_new_string_len(s, (int)len);
	return *ret ? 0 : -ENOMEM;
}

static const char *anchor_of(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return (const char *)ev->data.scalar.anchor;
	case YAML_SEQUENCE_START_EVENT:
		return (const char *)ev->data.sequence_start.anchor;
	case YAML_MAPPING_START_EVENT:
		return (const char *)ev->data.mapping_start.anchor;
	default:
		return NULL;
	}
}

/* The anchor the node of ev defines, if any: 1 + its index into *ret, else 0. */
static int anchor_new(struct conv *c, const yaml_event_t *ev, size_t *ret)
{
	const char *name = anchor_of(ev);

	*ret = 0;
	if (!name)
		return 0;
	/* As libyaml's loader refused it: which node would an alias mean? */
	if (json_object_object_get_ex(c->index, name, NULL))
		return fail(c, &ev->start_mark, -EINVAL, "anchor &%s defined twice", name);
	if (ARRAY_RESERVE(c->anchors, c->cap_anchors, c->n_anchors + 1) < 0 ||
	    json_add(c->index, name, json_object_new_int64((int64_t)c->n_anchors)) < 0)
		return fail(c, &ev->start_mark, -ENOMEM, "out of memory");
	c->anchors[c->n_anchors++] = (struct anchor){.open = true};
	*ret = c->n_anchors;
	return 0;
}

/* A scalar's anchor: v (a reference of its own) and its text, both whole at once. */
static int anchor_scalar(struct conv *c, const yaml_event_t *ev, struct json_object *v)
{
	size_t a = 0;
	int r = anchor_new(c, ev, &a);

	if (r < 0 || !a)
		return r;
	c->anchors[a - 1] = (struct anchor){
		.obj = json_object_get(v),
		.text = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length),
		.nodes = 1,
	};
	return c->anchors[a - 1].text ? 0 : fail(c, &ev->start_mark, -ENOMEM, "out of memory");
}

static const struct anchor *anchor_find(struct conv *c, const yaml_event_t *ev)
{
	struct json_object *i = NULL;

	if (!json_object_object_get_ex(c->index, (const char *)ev->data.alias.anchor, &i))
		return NULL;
	return &c->anchors[json_object_get_int64(i)];
}

static int scalar_fits(struct conv *c, const yaml_event_t *ev)
{
	if (ev->data.scalar.length > SCALAR_MAX)
		return fail(c, &ev->start_mark, -EINVAL, "a scalar of %zu bytes, more than %d",
			    ev->data.scalar.length, SCALAR_MAX);
	return 0;
}

/* v (NULL: a null), a node at level c->depth whose subtree reaches level deepest, into
 * its place; taken in every case. */
static int place(struct conv *c, const yaml_mark_t *at, struct json_object *v, int deepest)
{
	struct frame *up = NULL;
	int r;

	if (!c->depth) {
		c->root = v;
		return 0;
	}
	up = &c->stack[c->depth - 1];
	if (deepest > up->deepest)
		up->deepest = deepest;
	if (json_object_is_type(up->obj, json_type_object)) {
		_cleanup_free_ char *key = TAKE_PTR(up->key);

		r = json_object_object_add(up->obj, key, v);
	} else {
		r = json_object_array_add(up->obj, v);
	}
	if (r < 0) {
		json_object_put(v);
		return fail(c, at, -ENOMEM, "out of memory");
	}
	return 0;
}

/* A mapping's key: a scalar's text, or an alias of one. */
static int key(struct conv *c, struct frame *f, const yaml_event_t *ev)
{
	const struct anchor *a = NULL;
	int r;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if ((r = scalar_fits(c, ev)) < 0)
			return r;
		f->key = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		if (f->key && anchor_of(ev)) {
			struct json_object *v = NULL;

			r = scalar(ev, &v) < 0 ? fail(c, &ev->start_mark, -ENOMEM, "out of memory")
					       : anchor_scalar(c, ev, v);
			json_object_put(v);
			return r;
		}
		break;
	case YAML_ALIAS_EVENT:
		a = anchor_find(c, ev);
		if (!a)
			return fail(c, &ev->start_mark, -EINVAL, "alias *%s of no anchor before it",
				    (const char *)ev->data.alias.anchor);
		if (!a->text)
			return fail(c, &ev->start_mark, -EINVAL, "a mapping key that is no scalar");
		f->key = strdup(a->text);
		break;
	default:
		return fail(c, &ev->start_mark, -EINVAL, "a mapping key that is no scalar");
	}
	return f->key ? 0 : fail(c, &ev->start_mark, -ENOMEM, "out of memory");
}

/* An alias: the node it names again, within the depth and the count left. */
static int alias(struct conv *c, const yaml_event_t *ev)
{
	const struct anchor *a = anchor_find(c, ev);
	const char *name = (const char *)ev->data.alias.anchor;

	if (!a)
		return fail(c, &ev->start_mark, -EINVAL, "alias *%s of no anchor before it", name);
	if (a->open)
		return fail(c, &ev->start_mark, -EINVAL, "alias *%s within the node it names",
			    name);
	if (c->depth + a->height > DEPTH_MAX)
		return fail(c, &ev->start_mark, -EINVAL, "nested deeper than %d levels (alias *%s)",
			    DEPTH_MAX, name);
	if (a->nodes > NODES_MAX - c->built)
		return fail(c, &ev->start_mark, -EINVAL, "more than %d nodes (aliases expanding?)",
			    NODES_MAX);
	c->built += a->nodes;
	/* Shared, not copied: read only, and the count above is what a copy would cost. */
	return place(c, &ev->start_mark, json_object_get(a->obj), c->depth + a->height);
}

static int value(struct conv *c, const yaml_event_t *ev)
{
	const yaml_mark_t *at = &ev->start_mark;
	size_t before = c->built, a = 0;
	struct json_object *v = NULL;
	int r;

	if (c->depth > DEPTH_MAX)
		return fail(c, at, -EINVAL, "nested deeper than %d levels", DEPTH_MAX);
	if (ev->type == YAML_ALIAS_EVENT)
		return alias(c, ev);
	if (++c->built > NODES_MAX)
		return fail(c, at, -EINVAL, "more than %d nodes (aliases expanding?)", NODES_MAX);
	if (ev->type == YAML_SCALAR_EVENT) {
		if ((r = scalar_fits(c, ev)) < 0)
			return r;
		if (scalar(ev, &v) < 0)
			return fail(c, at, -ENOMEM, "out of memory");
		if ((r = anchor_scalar(c, ev, v)) < 0) {
			json_object_put(v);
			return r;
		}
		return place(c, at, v, c->depth);
	}
	v = ev->type == YAML_MAPPING_START_EVENT ? json_object_new_object()
						 : json_object_new_array();
	if (!v)
		return fail(c, at, -ENOMEM, "out of memory");
	if ((r = anchor_new(c, ev, &a)) < 0) {
		json_object_put(v);
		return r;
	}
	c->stack[c->depth] =
		(struct frame){.obj = v, .anchor = a, .built = before, .deepest = c->depth};
	c->depth++;
	return 0;
}

/* A sequence or mapping ends: whole now, it goes into its place and its anchor. */
static int end(struct conv *c, const yaml_event_t *ev)
{
	struct frame f = c->stack[c->depth - 1];

	c->stack[--c->depth] = (struct frame){0};
	free(f.key); /* libyaml gives every key a value; kept from leaking all the same */
	if (f.anchor)
		c->anchors[f.anchor - 1] = (struct anchor){
			.obj = json_object_get(f.obj),
			.nodes = c->built - f.built,
			.height = f.deepest - c->depth,
		};
	return place(c, &ev->start_mark, f.obj, f.deepest);
}

/* One event: 0 to go on, 1 at the end of the first document, or a negative errno. */
static int step(struct conv *c, const yaml_event_t *ev)
{
	struct frame *top = c->depth ? &c->stack[c->depth - 1] : NULL;

	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_START_EVENT:
		return 0;
	case YAML_DOCUMENT_END_EVENT:
		return 1;
	case YAML_STREAM_END_EVENT:
		return devwl_error_set(c->err, -EINVAL, 0, "%s: no YAML document", c->name);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return end(c, ev);
	default:
		if (top && json_object_is_type(top->obj, json_type_object) && !top->key)
			return key(c, top, ev);
		return value(c, ev);
	}
}

static int invalid(struct conv *c, const yaml_parser_t *p)
{
	return devwl_error_set(c->err, p->error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL,
			       p->problem_mark.index, "%s:%zu:%zu: invalid YAML: %s", c->name,
			       p->problem_mark.line + 1, p->problem_mark.column + 1,
			       p->problem ? p->problem : "unreadable");
}

/*
 * libyaml's parser checks each %TAG directive against every one before it, all while it
 * makes the document's first event: a file of directives alone costs the square of
 * their number before any event arrives here. So the scanner counts them first, in
 * whatever encoding the text is; it stops at the first token that is no directive.
 */
static int directives(struct conv *c, const char *text, size_t len)
{
	yaml_parser_t p;
	yaml_token_t tok;
	int n = 0, r = 0;
	bool more = true;

	if (!yaml_parser_initialize(&p))
		return devwl_error_set(c->err, -ENOMEM, 0, "%s: out of memory", c->name);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	/* A text the scanner cannot read is left to the parser, which says why. */
	while (more && r == 0 && yaml_parser_scan(&p, &tok)) {
		more = tok.type == YAML_STREAM_START_TOKEN ||
		       tok.type == YAML_VERSION_DIRECTIVE_TOKEN ||
		       tok.type == YAML_TAG_DIRECTIVE_TOKEN;
		if (more && tok.type != YAML_STREAM_START_TOKEN && ++n > DIRECTIVES_MAX)
			r = fail(c, &tok.start_mark, -EINVAL, "more than %d directives",
				 DIRECTIVES_MAX);
		yaml_token_delete(&tok);
	}
	yaml_parser_delete(&p);
	return r;
}

static void conv_done(struct conv *c)
{
	for (int i = 0; i < c->depth; i++) {
		json_object_put(c->stack[i].obj);
		free(c->stack[i].key);
	}
	for (size_t i = 0; i < c->n_anchors; i++) {
		json_object_put(c->anchors[i].obj);
		free(c->anchors[i].text);
	}
	free(c->anchors);
	json_object_put(c->index);
	json_object_put(c->root);
}

int yamljson_parse(const char *text, size_t len, const char *name, struct json_object **ret,
		   struct devwl_error *ret_err)
{
	struct conv c = {.name = name, .err = ret_err};
	yaml_parser_t parser;
	int r;

	r = directives(&c, text, len);
	if (r < 0)
		return r;
	c.index = json_object_new_object();
	if (!c.index || !yaml_parser_initialize(&parser)) {
		json_object_put(c.index);
		return devwl_error_set(ret_err, -ENOMEM, 0, "%s: out of memory", name);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	do {
		yaml_event_t ev;

		if (!yaml_parser_parse(&parser, &ev)) {
			r = invalid(&c, &parser);
			break;
		}
		r = step(&c, &ev);
		yaml_event_delete(&ev);
	} while (r == 0);
	yaml_parser_delete(&parser);
	if (r > 0) {
		*ret = TAKE_PTR(c.root);
		r = 0;
	}
	conv_done(&c);
	return r;
}
