/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state file's text (devwld(8) STATE) to and from devwld's structs: no I/O, no
 * locks. state.c decides when it is written and what is done with what is read.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "jsonutil.h"
#include "keeper_table.h"
#include "nodepath.h"
#include "ocistate.h"
#include "selector.h"
#include "statefile.h"
#include "util.h"

#define STATE_VERSION 1

void saved_clear(struct saved *s)
{
	devwl_policy_free(s->policy);
	free(s->policy_text);
	strset_clear(&s->ondemand);
	strset_clear(&s->ruled);
	edits_clear(&s->edits);
	bindings_clear(&s->bindings);
	for (size_t i = 0; i < s->ncontainers; i++) {
		free(s->containers[i].id);
		free(s->containers[i].node);
		free(s->containers[i].k8s_name);
		free(s->containers[i].rt_name);
		free(s->containers[i].procs);
		for (size_t j = 0; j < s->containers[i].nattached; j++)
			attachment_clear(&s->containers[i].attached[j]);
		free(s->containers[i].attached);
		free(s->containers[i].nodev);
	}
	free(s->containers);
	*s = (struct saved){0};
}

/* ---- writing ------------------------------------------------------------------------ */

/* json-c's null is the NULL object, which json_add() takes for a failed constructor. */
static int add_string_or_null(struct json_object *obj, const char *key, const char *s)
{
	if (s)
		return json_add(obj, key, json_object_new_string(s));
	return json_object_object_add(obj, key, NULL) < 0 ? -ENOMEM : 0;
}

static struct json_object *proc_json(const struct saved_proc *p)
{
	struct json_object *po = json_object_new_object();
	char tag[17];
	int r = po ? 0 : -ENOMEM;

	snprintf(tag, sizeof(tag), "%016" PRIx64, p->tag);
	if (r >= 0)
		r = json_add(po, "slot", json_object_new_int64(p->slot));
	if (r >= 0)
		r = json_add(po, "tag", json_object_new_string(tag));
	if (r >= 0)
		r = json_add(po, "pid", json_object_new_int64(p->pid));
	if (r >= 0)
		r = json_add(po, "peer_uid", json_object_new_int64(p->peer_uid));
	if (r >= 0)
		r = json_add(po, "peer_pid", json_object_new_int64(p->peer_pid));
	if (r < 0) {
		json_object_put(po);
		return NULL;
	}
	return po;
}

static struct json_object *attachment_json(const struct attachment *a)
{
	struct json_object *o = json_object_new_object();
	char acc[4], added[4];
	int r = o ? 0 : -ENOMEM;

	if (r >= 0)
		r = json_add(o, "type",
			     json_object_new_string(a->type == DEVWL_DEV_BLOCK ? "b" : "c"));
	if (r >= 0)
		r = json_add(o, "major", json_object_new_int64(a->major));
	if (r >= 0)
		r = json_add(o, "minor", json_object_new_int64(a->minor));
	if (r >= 0)
		r = json_add(o, "access",
			     json_object_new_string(devwl_access_text(a->access, acc)));
	if (r >= 0)
		r = json_add(o, "added",
			     json_object_new_string(devwl_access_text(a->added, added)));
	if (r >= 0 && a->lapsed)
		r = json_add(o, "lapsed", json_object_new_boolean(true));
	if (r >= 0 && a->absent)
		r = json_add(o, "absent", json_object_new_boolean(true));
	if (r >= 0)
		r = json_add(o, "path", json_object_new_string(a->path));
	if (r >= 0 && a->selector)
		r = json_add(o, "selector", json_object_new_string(a->selector));
	if (r >= 0)
		r = json_add(o, "mode", json_object_new_int64(a->mode));
	/* (uid_t)-1, the container's root, as -1. */
	if (r >= 0)
		r = json_add(o, "uid",
			     json_object_new_int64(a->uid == (uid_t)-1 ? -1 : (int64_t)a->uid));
	if (r >= 0)
		r = json_add(o, "gid",
			     json_object_new_int64(a->gid == (gid_t)-1 ? -1 : (int64_t)a->gid));
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *container_json(const struct saved_container *c)
{
	struct json_object *obj = json_object_new_object(), *procs = json_object_new_array();
	int r = obj && procs ? 0 : -ENOMEM;

	if (r >= 0)
		r = json_add(obj, "id", json_object_new_string(c->id));
	if (r >= 0)
		r = json_add(obj, "node", json_object_new_string(c->node));
	if (r >= 0 && c->k8s_name)
		r = json_add(obj, "k8s_name", json_object_new_string(c->k8s_name));
	if (r >= 0 && c->rt_name)
		r = json_add(obj, "name", json_object_new_string(c->rt_name));
	if (r >= 0)
		r = json_add(obj, "owner_uid", json_object_new_int64(c->owner));
	if (r >= 0)
		r = json_add(obj, "created_node", json_object_new_boolean(c->created));
	/* Absent means false: state files of earlier versions read the same. */
	if (r >= 0 && c->kernel)
		r = json_add(obj, "kernel", json_object_new_boolean(true));
	for (size_t i = 0; r >= 0 && i < c->nprocs; i++)
		r = json_push(procs, proc_json(&c->procs[i]));
	if (r >= 0)
		r = json_add(obj, "procs", procs);
	else
		json_object_put(procs);
	/* Absent means none, as for "kernel". */
	if (r >= 0 && c->nattached) {
		struct json_object *att = json_object_new_array();

		r = att ? 0 : -ENOMEM;
		for (size_t i = 0; r >= 0 && i < c->nattached; i++)
			r = json_push(att, attachment_json(&c->attached[i]));
		if (r >= 0)
			r = json_add(obj, "attached", att);
		else
			json_object_put(att);
	}
	/* Absent means none, as for "kernel": [[dev, ino]...]. */
	if (r >= 0 && c->nnodev) {
		struct json_object *nodes = json_object_new_array();

		r = nodes ? 0 : -ENOMEM;
		for (size_t i = 0; r >= 0 && i < c->nnodev; i++) {
			struct json_object *pair = json_object_new_array();

			r = pair ? 0 : -ENOMEM;
			if (r >= 0)
				r = json_push(pair,
					      json_object_new_int64((int64_t)c->nodev[i].dev));
			if (r >= 0)
				r = json_push(pair,
					      json_object_new_int64((int64_t)c->nodev[i].ino));
			if (r >= 0)
				r = json_push(nodes, pair);
			else
				json_object_put(pair);
		}
		if (r >= 0)
			r = json_add(obj, "nodev_nodes", nodes);
		else
			json_object_put(nodes);
	}
	if (r < 0) {
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

/* {"node", "allow", "selector", "file", "rules": ["b 7:0 rw"...]} */
static struct json_object *binding_json(const struct binding *b)
{
	struct json_object *obj = json_object_new_object(), *rules = json_object_new_array();
	int r = obj && rules ? 0 : -ENOMEM;

	if (r >= 0)
		r = json_add(obj, "node", json_object_new_string(b->node));
	if (r >= 0)
		r = json_add(obj, "allow", json_object_new_boolean(b->allow));
	if (r >= 0)
		r = json_add(obj, "selector", json_object_new_string(b->selector));
	if (r >= 0)
		r = json_add(obj, "file", json_object_new_boolean(b->from_file));
	if (r >= 0 && b->container)
		r = json_add(obj, "container", json_object_new_string(b->container));
	for (size_t i = 0; r >= 0 && i < b->rules.n; i++) {
		char s[DEVWL_RULE_STR_MAX];

		r = devwl_rule_format(&b->rules.v[i], s, sizeof(s));
		if (r >= 0)
			r = json_push(rules, json_object_new_string(s));
	}
	if (r >= 0) {
		r = json_add(obj, "rules", rules);
		rules = NULL;
	}
	json_object_put(rules);
	if (r < 0) {
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

/* A set of node paths, as an array. */
static int add_paths(struct json_object *top, const char *key, const struct strset *set)
{
	struct json_object *arr = json_object_new_array();
	int r = arr ? 0 : -ENOMEM;

	for (size_t i = 0; r >= 0 && i < set->n; i++)
		r = json_push(arr, json_object_new_string(set->v[i]));
	return r >= 0 ? json_add(top, key, arr) : (json_object_put(arr), r);
}

int statefile_text(const struct saved *s, const char *policy_file, char **ret_text)
{
	_cleanup_free_ char *hier_text = NULL;
	struct json_object *top = NULL, *hier = NULL, *arr = NULL;
	const char *t;
	int r;

	r = devwl_policy_to_string(s->policy, &hier_text);
	if (r < 0)
		return r;
	hier = json_tokener_parse(hier_text);
	top = json_object_new_object();
	r = hier && top ? 0 : -ENOMEM;
	if (r >= 0)
		r = json_add(top, "devwld_state", json_object_new_int(STATE_VERSION));
	if (r >= 0)
		r = add_string_or_null(top, "policy_file", policy_file);
	if (r >= 0)
		r = add_string_or_null(top, "policy_text", s->policy_text);
	if (r >= 0) {
		r = json_add(top, "hierarchy", hier);
		hier = NULL;
	}
	if (r >= 0)
		r = add_paths(top, "ondemand", &s->ondemand);
	if (r >= 0)
		r = add_paths(top, "ruled", &s->ruled);
	if (r >= 0) {
		arr = json_object_new_array();
		for (size_t i = 0; arr && r >= 0 && i < s->edits.n; i++)
			r = json_push(arr, json_object_new_string_len(s->edits.v[i].line,
								      (int)s->edits.v[i].len));
		r = r >= 0 ? json_add(top, "edits", arr) : (json_object_put(arr), r);
	}
	if (r >= 0) {
		arr = json_object_new_array();
		for (size_t i = 0; arr && r >= 0 && i < s->bindings.n; i++)
			r = json_push(arr, binding_json(&s->bindings.v[i]));
		r = r >= 0 ? json_add(top, "bindings", arr) : (json_object_put(arr), r);
	}
	if (r >= 0) {
		arr = json_object_new_array();
		for (size_t i = 0; arr && r >= 0 && i < s->ncontainers; i++)
			r = json_push(arr, container_json(&s->containers[i]));
		r = r >= 0 ? json_add(top, "containers", arr) : (json_object_put(arr), r);
	}
	if (r >= 0) {
		t = json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY |
								JSON_C_TO_STRING_NOSLASHESCAPE);
		*ret_text = t ? strdup(t) : NULL;
		r = *ret_text ? 0 : -ENOMEM;
	}
	json_object_put(hier);
	json_object_put(top);
	return r;
}

/* ---- reading ------------------------------------------------------------------------ */

static int get(struct json_object *obj, const char *key, enum json_type type,
	       struct json_object **ret, bool nullable, struct devwl_error *err)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(obj, key, &v))
		return devwl_error_set(err, -EINVAL, 0, "\"%s\" missing", key);
	if (nullable && json_object_is_type(v, json_type_null)) {
		*ret = NULL;
		return 0;
	}
	if (!json_object_is_type(v, type))
		return devwl_error_set(err, -EINVAL, 0, "\"%s\" has the wrong type", key);
	*ret = v;
	return 0;
}

static int get_uint(struct json_object *obj, const char *key, uint64_t max, uint64_t *ret,
		    struct devwl_error *err)
{
	struct json_object *v = NULL;
	int64_t n;
	int r = get(obj, key, json_type_int, &v, false, err);

	if (r < 0)
		return r;
	n = json_object_get_int64(v);
	if (n < 0 || (uint64_t)n > max)
		return devwl_error_set(err, -EINVAL, 0, "\"%s\" out of range", key);
	*ret = (uint64_t)n;
	return 0;
}

static int get_paths(struct json_object *top, const char *key, struct strset *set,
		     struct devwl_error *err)
{
	struct json_object *arr;
	int r = get(top, key, json_type_array, &arr, false, err);

	for (size_t i = 0; r >= 0 && i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		if (!json_object_is_type(e, json_type_string) ||
		    devwl_node_path_valid(json_object_get_string(e)) < 0)
			r = devwl_error_set(err, -EINVAL, 0, "\"%s\"[%zu] is not a node path", key,
					    i);
		else
			r = strset_add(set, json_object_get_string(e));
	}
	return r;
}

static int parse_proc(struct json_object *po, struct saved_proc *p, struct devwl_error *err)
{
	struct json_object *tag = NULL;
	uint64_t v = 0;
	char *end = NULL;
	int r;

	if (!json_object_is_type(po, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "a process is not an object");
	r = get_uint(po, "slot", KEEPER_SLOTS_MAX - 1, &v, err);
	p->slot = (uint32_t)v;
	if (r >= 0)
		r = get_uint(po, "pid", INT32_MAX, &v, err);
	p->pid = (pid_t)v;
	if (r >= 0)
		r = get_uint(po, "peer_pid", INT32_MAX, &v, err);
	p->peer_pid = (pid_t)v;
	if (r >= 0)
		r = get_uint(po, "peer_uid", UINT32_MAX, &v, err);
	p->peer_uid = (uid_t)v;
	if (r >= 0)
		r = get(po, "tag", json_type_string, &tag, false, err);
	if (r < 0)
		return r;
	/* As written: 16 hex digits (strtoull alone would take a sign or spaces too). */
	if (json_object_get_string_len(tag) != 16 ||
	    strspn(json_object_get_string(tag), "0123456789abcdefABCDEF") != 16)
		return devwl_error_set(err, -EINVAL, 0, "bad process \"tag\"");
	errno = 0;
	p->tag = strtoull(json_object_get_string(tag), &end, 16);
	if (errno || *end)
		return devwl_error_set(err, -EINVAL, 0, "bad process \"tag\"");
	return 0;
}

/*
 * Whose the container is. States written before containers were keyed by uid too have no
 * owner_uid: theirs is the uid its processes recorded (every one the same, as only the
 * first runtime's uid could join), or root's.
 */
static int parse_owner(struct json_object *co, struct saved_container *c, struct devwl_error *err)
{
	uint64_t v = 0;
	int r;

	c->owner = c->nprocs ? c->procs[0].peer_uid : 0;
	if (json_object_object_get_ex(co, "owner_uid", NULL)) {
		r = get_uint(co, "owner_uid", UINT32_MAX, &v, err);
		if (r < 0)
			return r;
		c->owner = (uid_t)v;
	}
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].peer_uid != c->owner)
			return devwl_error_set(err, -EINVAL, 0,
					       "container \"%.64s\": a process of uid %u in a "
					       "container of uid %u",
					       c->id, (unsigned int)c->procs[i].peer_uid,
					       (unsigned int)c->owner);
	return 0;
}

static int parse_access(struct json_object *ao, const char *key, uint8_t *ret,
			struct devwl_error *err)
{
	struct json_object *v = NULL;
	int r = get(ao, key, json_type_string, &v, false, err);

	if (r < 0)
		return r;
	/* "added" may be none: the container had the access before. */
	*ret = 0;
	if (json_object_get_string_len(v) &&
	    devwl_access_parse(json_object_get_string(v), (size_t)json_object_get_string_len(v),
			       ret) < 0)
		return devwl_error_set(err, -EINVAL, 0, "an attachment's \"%s\" is no access", key);
	return 0;
}

/* uid or gid: -1 (the container's root) or an id. */
static int parse_id(struct json_object *ao, const char *key, uint32_t *ret, struct devwl_error *err)
{
	struct json_object *v = NULL;
	int64_t n;
	int r = get(ao, key, json_type_int, &v, false, err);

	if (r < 0)
		return r;
	n = json_object_get_int64(v);
	if (n < -1 || n >= (int64_t)UINT32_MAX)
		return devwl_error_set(err, -EINVAL, 0, "an attachment's \"%s\" is out of range",
				       key);
	*ret = n == -1 ? UINT32_MAX : (uint32_t)n;
	return 0;
}

static int parse_attachment(struct json_object *ao, struct attachment *a, struct devwl_error *err)
{
	struct json_object *v = NULL;
	uint64_t n = 0;
	const char *t;
	int r;

	if (!json_object_is_type(ao, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "an attachment is not an object");
	r = get(ao, "type", json_type_string, &v, false, err);
	if (r < 0)
		return r;
	t = json_object_get_string(v);
	if (strcmp(t, "c") && strcmp(t, "b"))
		return devwl_error_set(err, -EINVAL, 0, "an attachment's \"type\" is not c or b");
	a->type = t[0] == 'b' ? DEVWL_DEV_BLOCK : DEVWL_DEV_CHAR;
	/* The kernel's dev_t: 12-bit majors, 20-bit minors. */
	if ((r = get_uint(ao, "major", 4095, &n, err)) < 0)
		return r;
	a->major = (uint32_t)n;
	if ((r = get_uint(ao, "minor", (1u << 20) - 1, &n, err)) < 0)
		return r;
	a->minor = (uint32_t)n;
	if ((r = parse_access(ao, "access", &a->access, err)) < 0 ||
	    (r = parse_access(ao, "added", &a->added, err)) < 0)
		return r;
	if (!a->access || (a->added & ~a->access))
		return devwl_error_set(err, -EINVAL, 0, "an attachment's access is inconsistent");
	if (json_object_object_get_ex(ao, "lapsed", NULL)) {
		if ((r = get(ao, "lapsed", json_type_boolean, &v, false, err)) < 0)
			return r;
		a->lapsed = json_object_get_boolean(v);
	}
	/* Both since attach by selector: a state file from before has neither. */
	if (json_object_object_get_ex(ao, "absent", NULL)) {
		if ((r = get(ao, "absent", json_type_boolean, &v, false, err)) < 0)
			return r;
		a->absent = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(ao, "selector", NULL)) {
		if ((r = get(ao, "selector", json_type_string, &v, false, err)) < 0)
			return r;
		t = json_object_get_string(v);
		if (json_string_has_nul(v) || !selector_is(t, strlen(t)) || strlen(t) >= 4096)
			return devwl_error_set(err, -EINVAL, 0,
					       "an attachment's \"selector\" is no selector");
		a->selector = strdup(t);
		if (!a->selector)
			return -ENOMEM;
	} else if (a->absent) {
		return devwl_error_set(err, -EINVAL, 0,
				       "an attachment absent (waiting for its device) has no "
				       "\"selector\" to wait by");
	}
	if ((r = get(ao, "path", json_type_string, &v, false, err)) < 0)
		return r;
	t = json_object_get_string(v);
	if (json_string_has_nul(v) || t[0] != '/' || strlen(t) >= 4096)
		return devwl_error_set(err, -EINVAL, 0, "an attachment's \"path\" is no path");
	if ((r = get_uint(ao, "mode", 07777, &n, err)) < 0)
		return r;
	a->mode = (mode_t)n;
	if ((r = parse_id(ao, "uid", &a->uid, err)) < 0 ||
	    (r = parse_id(ao, "gid", &a->gid, err)) < 0)
		return r;
	a->path = strdup(t);
	return a->path ? 0 : -ENOMEM;
}

/* "nodev_nodes": [[dev, ino]...], each a number of 0 or more (ino never 0). */
static int parse_nodev(struct json_object *co, struct saved_container *c, struct devwl_error *err)
{
	struct json_object *nodes = NULL;
	size_t n = 0;
	int r = get(co, "nodev_nodes", json_type_array, &nodes, false, err);

	if (r < 0)
		return r;
	n = json_object_array_length(nodes);
	if (n > 4096)
		return devwl_error_set(err, -EINVAL, 0,
				       "container \"%.64s\": \"nodev_nodes\" has %zu entries",
				       c->id, n);
	c->nodev = calloc(n + 1, sizeof(*c->nodev));
	if (!c->nodev)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *pair = json_object_array_get_idx(nodes, i), *a, *b;

		if (!json_object_is_type(pair, json_type_array) ||
		    json_object_array_length(pair) != 2 ||
		    !json_object_is_type((a = json_object_array_get_idx(pair, 0)), json_type_int) ||
		    !json_object_is_type((b = json_object_array_get_idx(pair, 1)), json_type_int) ||
		    json_object_get_int64(a) < 0 || json_object_get_int64(b) <= 0)
			return devwl_error_set(err, -EINVAL, 0,
					       "container \"%.64s\": \"nodev_nodes\"[%zu] is no "
					       "[dev, inode]",
					       c->id, i);
		c->nodev[c->nnodev++] =
			(struct saved_nodev){.dev = (uint64_t)json_object_get_int64(a),
					     .ino = (uint64_t)json_object_get_int64(b)};
	}
	return 0;
}

static int parse_container(struct json_object *co, struct saved_container *c,
			   struct devwl_error *err)
{
	struct json_object *v = NULL, *procs = NULL;
	int r;

	if (!json_object_is_type(co, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "a container is not an object");
	r = get(co, "id", json_type_string, &v, false, err);
	if (r < 0)
		return r;
	if (json_string_has_nul(v) || !oci_id_valid(json_object_get_string(v)))
		return devwl_error_set(err, -EINVAL, 0, "a container \"id\" is not a container id");
	c->id = strdup(json_object_get_string(v));
	r = get(co, "node", json_type_string, &v, false, err);
	if (r < 0)
		return r;
	c->node = strdup(json_object_get_string(v));
	if (!c->id || !c->node)
		return -ENOMEM;
	if (json_string_has_nul(v) || devwl_node_path_valid(c->node) < 0)
		return devwl_error_set(err, -EINVAL, 0, "container \"%.64s\": bad node", c->id);
	if (json_object_object_get_ex(co, "k8s_name", NULL)) {
		r = get(co, "k8s_name", json_type_string, &v, false, err);
		if (r < 0)
			return r;
		if (json_string_has_nul(v) || strlen(json_object_get_string(v)) > 1024)
			return devwl_error_set(err, -EINVAL, 0,
					       "container \"%.64s\": \"k8s_name\" is no name",
					       c->id);
		c->k8s_name = strdup(json_object_get_string(v));
		if (!c->k8s_name)
			return -ENOMEM;
	}
	if (json_object_object_get_ex(co, "name", NULL)) {
		r = get(co, "name", json_type_string, &v, false, err);
		if (r < 0)
			return r;
		if (json_string_has_nul(v) || strlen(json_object_get_string(v)) > 1024)
			return devwl_error_set(err, -EINVAL, 0,
					       "container \"%.64s\": \"name\" is no name", c->id);
		c->rt_name = strdup(json_object_get_string(v));
		if (!c->rt_name)
			return -ENOMEM;
	}
	r = get(co, "created_node", json_type_boolean, &v, false, err);
	if (r < 0)
		return r;
	c->created = json_object_get_boolean(v);
	if (json_object_object_get_ex(co, "kernel", NULL)) {
		r = get(co, "kernel", json_type_boolean, &v, false, err);
		if (r < 0)
			return r;
		c->kernel = json_object_get_boolean(v);
	}
	r = get(co, "procs", json_type_array, &procs, false, err);
	if (r < 0)
		return r;
	c->procs = calloc(json_object_array_length(procs) + 1, sizeof(*c->procs));
	if (!c->procs)
		return -ENOMEM;
	for (size_t i = 0; i < json_object_array_length(procs); i++) {
		r = parse_proc(json_object_array_get_idx(procs, i), &c->procs[c->nprocs], err);
		if (r < 0)
			return r;
		c->nprocs++;
	}
	if (json_object_object_get_ex(co, "attached", NULL)) {
		struct json_object *att = NULL;

		r = get(co, "attached", json_type_array, &att, false, err);
		if (r < 0)
			return r;
		c->attached = calloc(json_object_array_length(att) + 1, sizeof(*c->attached));
		if (!c->attached)
			return -ENOMEM;
		for (size_t i = 0; i < json_object_array_length(att); i++) {
			r = parse_attachment(json_object_array_get_idx(att, i),
					     &c->attached[c->nattached], err);
			if (r < 0) {
				attachment_clear(&c->attached[c->nattached]);
				return r;
			}
			c->nattached++;
		}
	}
	if (json_object_object_get_ex(co, "nodev_nodes", NULL)) {
		r = parse_nodev(co, c, err);
		if (r < 0)
			return r;
	}
	return parse_owner(co, c, err);
}

/* One of "bindings": checked as the policy file's are, its rules as kernel rules. */
static int parse_binding(struct json_object *o, size_t i, struct bindings *bs,
			 struct devwl_error *err)
{
	struct json_object *node = NULL, *allow = NULL, *sel = NULL, *file = NULL, *rules = NULL,
			   *container = NULL;
	struct binding *b;
	int r;

	if (!json_object_is_type(o, json_type_object) ||
	    get(o, "node", json_type_string, &node, false, err) < 0 ||
	    get(o, "allow", json_type_boolean, &allow, false, err) < 0 ||
	    get(o, "selector", json_type_string, &sel, false, err) < 0 ||
	    get(o, "file", json_type_boolean, &file, false, err) < 0 ||
	    get(o, "rules", json_type_array, &rules, false, err) < 0 ||
	    devwl_node_path_valid(json_object_get_string(node)) < 0 ||
	    !selector_is(json_object_get_string(sel), strlen(json_object_get_string(sel))))
		return devwl_error_set(err, -EINVAL, 0, "\"bindings\"[%zu] is not a binding", i);
	/* Optional: a binding made for a container's CDI annotations names it. */
	if (json_object_object_get_ex(o, "container", &container) &&
	    (!json_object_is_type(container, json_type_string) || json_string_has_nul(container) ||
	     !oci_id_valid(json_object_get_string(container))))
		return devwl_error_set(err, -EINVAL, 0,
				       "\"bindings\"[%zu]: \"container\" is no container id", i);
	r = bindings_add(bs, json_object_get_string(node), json_object_get_boolean(allow),
			 json_object_get_string(sel), json_object_get_boolean(file));
	if (r >= 0 && container)
		r = binding_set_container(bs, json_object_get_string(container));
	if (r < 0)
		return devwl_error_set(err, r, 0, "\"bindings\"[%zu]: %s", i, strerror(-r));
	b = &bs->v[bs->n - 1];
	for (size_t k = 0; k < json_object_array_length(rules); k++) {
		struct json_object *e = json_object_array_get_idx(rules, k);
		struct devwl_rule rule;

		if (!json_object_is_type(e, json_type_string) ||
		    devwl_rule_parse(json_object_get_string(e),
				     (size_t)json_object_get_string_len(e), &rule, NULL) < 0 ||
		    rule.type == DEVWL_DEV_ALL)
			return devwl_error_set(err, -EINVAL, 0,
					       "\"bindings\"[%zu]: rule %zu is not a device's", i,
					       k);
		if (rulevec_add(&b->rules, &rule) < 0)
			return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	}
	return 0;
}

int parse_state(const char *file, const char *text, struct saved *s, struct devwl_error *err)
{
	enum json_tokener_error jerr = json_tokener_success;
	struct json_object *top = json_tokener_parse_verbose(text, &jerr);
	struct json_object *v = NULL, *arr = NULL;
	int r;

	if (!top)
		return devwl_error_set(err, -EINVAL, 0, "%s", json_tokener_error_desc(jerr));
	r = get(top, "devwld_state", json_type_int, &v, false, err);
	if (r >= 0 && json_object_get_int(v) != STATE_VERSION)
		r = devwl_error_set(err, -EINVAL, 0, "version %d, not %d", json_object_get_int(v),
				    STATE_VERSION);
	if (r >= 0)
		r = get(top, "policy_text", json_type_string, &v, true, err);
	if (r >= 0 && v && !(s->policy_text = strdup(json_object_get_string(v))))
		r = -ENOMEM;
	if (r >= 0)
		r = get(top, "hierarchy", json_type_object, &v, false, err);
	if (r >= 0) {
		struct devwl_error perr = {0};

		r = devwl_policy_load_string(json_object_to_json_string(v), file, &s->policy,
					     &perr);
		if (r < 0)
			devwl_error_set(err, r, 0, "hierarchy: %s", perr.msg);
	}
	if (r >= 0)
		r = get_paths(top, "ondemand", &s->ondemand, err);
	/* Optional: states written before it was kept have none (state.c guesses). */
	if (r >= 0 && json_object_object_get_ex(top, "ruled", NULL)) {
		s->has_ruled = true;
		r = get_paths(top, "ruled", &s->ruled, err);
	}
	/* Optional: states written before edits were kept have none. */
	if (r >= 0 && json_object_object_get_ex(top, "edits", &arr)) {
		if (!json_object_is_type(arr, json_type_array))
			r = devwl_error_set(err, -EINVAL, 0, "\"edits\" has the wrong type");
		for (size_t i = 0; r >= 0 && i < json_object_array_length(arr); i++) {
			struct json_object *e = json_object_array_get_idx(arr, i);
			const char *line = json_object_get_string(e);
			size_t len = (size_t)json_object_get_string_len(e);

			if (!json_object_is_type(e, json_type_string) || !edit_is_change(line, len))
				r = devwl_error_set(err, -EINVAL, 0,
						    "\"edits\"[%zu] is not a devwlctl change", i);
			else
				r = edits_add(&s->edits, line, len);
		}
	}
	/* Optional: states written before selectors were followed have none. */
	if (r >= 0 && json_object_object_get_ex(top, "bindings", &arr)) {
		if (!json_object_is_type(arr, json_type_array))
			r = devwl_error_set(err, -EINVAL, 0, "\"bindings\" has the wrong type");
		for (size_t i = 0; r >= 0 && i < json_object_array_length(arr); i++)
			r = parse_binding(json_object_array_get_idx(arr, i), i, &s->bindings, err);
	}
	if (r >= 0)
		r = get(top, "containers", json_type_array, &arr, false, err);
	if (r >= 0) {
		s->containers = calloc(json_object_array_length(arr) + 1, sizeof(*s->containers));
		if (!s->containers)
			r = -ENOMEM;
	}
	for (size_t i = 0; r >= 0 && i < json_object_array_length(arr); i++) {
		r = parse_container(json_object_array_get_idx(arr, i),
				    &s->containers[s->ncontainers], err);
		s->ncontainers++;
	}
	json_object_put(top);
	return r;
}
