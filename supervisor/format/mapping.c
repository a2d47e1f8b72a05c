/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Container → node: the "containers" object of the policy file (devwl-policy(5)) and
 * the precedence of devwld(8): annotation org.devwl.node, then listenerMetadata
 * "node=PATH", then the first matching "match" rule, then the Kubernetes template,
 * then the default template. Pure: no I/O, no logging; errors carry the reason.
 *
 * A node a container names itself is only as trustworthy as whoever wrote it: pod
 * authors write annotations, so org.devwl.node is not looked at unless the policy says
 * where it may point; listenerMetadata is in the seccomp profile (in Kubernetes the
 * admin's), so it may name any node but the root, whose allow-all nobody wrote, unless
 * the policy narrows or widens that. A runtime connecting as a uid other than root
 * (--allow-uid) is confined to PEER_SUBTREE/UID whatever it sends.
 *
 * A node path decides what a container may touch, and parts of it come from the
 * container's own annotations, so nothing here is lenient: a template is checked when
 * it is loaded, and a value that is not a plain name is refused, never rewritten (a
 * rewrite could map two different pods to one node).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "jsonutil.h"
#include "mapping.h"
#include "nodepath.h"
#include "util.h"

#define BUILTIN_K8S_TEMPLATE	 "/k8s/{namespace}/{pod}/{container}"
#define BUILTIN_DEFAULT_TEMPLATE "/containers/{id}"
/* A Kubernetes name is at most 253 bytes (DNS subdomain); a runc id is shorter still. */
#define VALUE_MAX 253
/* The name CRI runtimes give a pod's sandbox (pause) container; Kubernetes container
 * names are lowercase DNS labels, so it cannot clash with a real one. */
#define SANDBOX_CONTAINER "POD"

enum var { VAR_ID, VAR_NAMESPACE, VAR_POD, VAR_CONTAINER, VAR_COUNT };
static const char *const var_names[VAR_COUNT] = {"{id}", "{namespace}", "{pod}", "{container}"};

/* CRI-O's names first, then containerd's (pkg/cri/annotations). */
static const char *const ns_keys[] = {"io.kubernetes.pod.namespace",
				      "io.kubernetes.cri.sandbox-namespace"};
static const char *const pod_keys[] = {"io.kubernetes.pod.name", "io.kubernetes.cri.sandbox-name"};
static const char *const ctr_keys[] = {"io.kubernetes.container.name",
				       "io.kubernetes.cri.container-name"};
static const char *const type_keys[] = {"io.kubernetes.cri.container-type",
					"io.kubernetes.cri-o.ContainerType"};

static const char *first_annotation(const struct oci_state *st, const char *const *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = oci_annotation(st, keys[i]);

		if (v)
			return v;
	}
	return NULL;
}

/* The placeholder starting at p, or -1. */
static int var_at(const char *p)
{
	for (int i = 0; i < VAR_COUNT; i++)
		if (!strncmp(p, var_names[i], strlen(var_names[i])))
			return i;
	return -1;
}

/* A substituted value: a plain name (runc's id alphabet covers Kubernetes names). */
static bool value_ok(const char *v)
{
	size_t len = v ? strlen(v) : 0;

	return len > 0 && len <= VALUE_MAX && strcmp(v, ".") && strcmp(v, "..") &&
	       strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+.-") ==
		       len;
}

/* For messages: v cut short and with anything unprintable shown as '?'. */
static void printable(const char *v, char *buf, size_t size)
{
	size_t i = 0;

	for (; v[i] && i + 1 < size; i++)
		buf[i] = (v[i] >= ' ' && v[i] < 0x7f && v[i] != '"') ? v[i] : '?';
	buf[i] = '\0';
	if (v[i] && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

/*
 * Expand tmpl with vals (NULL: this container has no such value). Checks what a
 * template may contain too, so that template_check() is this with sample values.
 */
static int expand(const char *tmpl, const char *const vals[VAR_COUNT], unsigned int allowed,
		  char **ret, struct devwl_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	bool var_in_component = false;
	char q[64];
	FILE *f;

	if (tmpl[0] != '/')
		return devwl_error_set(err, -EINVAL, 0, "\"%s\" does not start with \"/\"", tmpl);
	f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	for (const char *p = tmpl; *p;) {
		int v = *p == '{' ? var_at(p) : -1;

		if (*p == '/')
			var_in_component = false;
		if (v < 0 && (*p == '{' || *p == '}')) {
			fclose(f);
			return devwl_error_set(err, -EINVAL, (size_t)(p - tmpl),
					       "unknown placeholder at \"%.24s\" (known: {id} "
					       "{namespace} {pod} {container})",
					       p);
		}
		if (v < 0) {
			fputc(*p++, f);
			continue;
		}
		if (!(allowed & (1u << v))) {
			fclose(f);
			return devwl_error_set(err, -EINVAL, (size_t)(p - tmpl),
					       "%s cannot be used here (only {id}: this template "
					       "serves containers without Kubernetes annotations)",
					       var_names[v]);
		}
		/* Two values in one component are ambiguous: "a-b"+"c" = "a"+"b-c". */
		if (var_in_component) {
			fclose(f);
			return devwl_error_set(err, -EINVAL, (size_t)(p - tmpl),
					       "two placeholders in one path component");
		}
		var_in_component = true;
		if (!vals[v]) {
			fclose(f);
			return devwl_error_set(
				err, -ENOENT, (size_t)(p - tmpl),
				"\"%s\" needs %s, which this container does not have", tmpl,
				var_names[v]);
		}
		if (!value_ok(vals[v])) {
			printable(vals[v], q, sizeof(q));
			fclose(f);
			return devwl_error_set(err, -EINVAL, (size_t)(p - tmpl),
					       "%s is \"%s\", not a plain name (letters, digits, "
					       "\"_+.-\", at most %d bytes, not \".\" or \"..\")",
					       var_names[v], q, VALUE_MAX);
		}
		fputs(vals[v], f);
		p += strlen(var_names[v]);
	}
	if (fclose(f) != 0)
		return -ENOMEM;
	if (devwl_node_path_valid(buf) < 0) {
		char t[64];

		printable(tmpl, t, sizeof(t));
		printable(buf, q, sizeof(q));
		return devwl_error_set(
			err, -EINVAL, 0,
			"\"%s\" gives \"%s\", not a node path (absolute, no empty, "
			"\".\" or \"..\" components, no spaces or control characters)",
			t, q);
	}
	*ret = TAKE_PTR(buf);
	return 0;
}

#define ALL_VARS ((1u << VAR_COUNT) - 1)

int template_check(const char *tmpl, bool k8s_vars, struct devwl_error *err)
{
	static const char *const sample[VAR_COUNT] = {"id", "namespace", "pod", "container"};
	_cleanup_free_ char *out = NULL;

	return expand(tmpl, sample, k8s_vars ? ALL_VARS : 1u << VAR_ID, &out, err);
}

static void rule_clear(struct map_rule *r)
{
	free(r->annotation);
	free(r->value);
	free(r->node);
}

static void source_clear(struct node_source *s)
{
	for (size_t i = 0; i < s->nunder; i++)
		free(s->under[i]);
	free(s->under);
}

void mapping_clear(struct mapping *m)
{
	free(m->k8s_template);
	free(m->default_template);
	source_clear(&m->annotation);
	source_clear(&m->metadata);
	for (size_t i = 0; i < m->nrules; i++)
		rule_clear(&m->rules[i]);
	free(m->rules);
	free(m->start);
	cdi_optins_clear(&m->cdi);
	cdi_optins_clear(&m->learn);
	*m = (struct mapping){0};
}

static const char *type_word(struct json_object *v)
{
	return json_type_to_name(json_object_get_type(v));
}

/* A string member that is a template; where names it in messages. */
static int take_template(struct json_object *v, bool k8s_vars, const char *file, const char *where,
			 char **ret, struct devwl_error *err)
{
	struct devwl_error e = {0};
	int r;

	if (!json_object_is_type(v, json_type_string))
		return devwl_error_set(err, -EINVAL, 0, "%s: %s: must be a string, not %s", file,
				       where, type_word(v));
	if (json_string_has_nul(v))
		return devwl_error_set(err, -EINVAL, 0, "%s: %s: contains a NUL byte", file, where);
	r = template_check(json_object_get_string(v), k8s_vars, &e);
	if (r < 0)
		return devwl_error_set(err, -EINVAL, 0, "%s: %s: %s", file, where, e.msg);
	*ret = strdup(json_object_get_string(v));
	return *ret ? 0 : -ENOMEM;
}

static int take_string(struct json_object *v, const char *file, const char *where, char **ret,
		       struct devwl_error *err)
{
	const char *s = json_object_get_string(v);

	if (!json_object_is_type(v, json_type_string))
		return devwl_error_set(err, -EINVAL, 0, "%s: %s: must be a string, not %s", file,
				       where, type_word(v));
	if (json_string_has_nul(v) || !s[0])
		return devwl_error_set(err, -EINVAL, 0, "%s: %s: empty or contains a NUL byte",
				       file, where);
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

static int parse_rule(struct json_object *obj, size_t i, const char *file, struct map_rule *ret,
		      struct devwl_error *err)
{
	char where[96];
	int r;

	snprintf(where, sizeof(where), "\"containers\".\"match\"[%zu]", i);
	if (!json_object_is_type(obj, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "%s: %s: must be an object, not %s", file,
				       where, type_word(obj));
	json_object_object_foreach (obj, key, val) {
		char w[128];

		snprintf(w, sizeof(w), "%s.\"%.16s\"", where, key);
		if (!strcmp(key, "annotation"))
			r = take_string(val, file, w, &ret->annotation, err);
		else if (!strcmp(key, "value"))
			r = json_object_is_type(val, json_type_string)
				    ? ((ret->value = strdup(json_object_get_string(val))) ? 0
											  : -ENOMEM)
				    : devwl_error_set(err, -EINVAL, 0,
						      "%s: %s: must be a string, not %s", file, w,
						      type_word(val));
		else if (!strcmp(key, "node"))
			r = take_template(val, true, file, w, &ret->node, err);
		else
			r = devwl_error_set(err, -EINVAL, 0,
					    "%s: %s: unknown key \"%.32s\" (known: annotation, "
					    "value, node)",
					    file, where, key);
		if (r < 0)
			return r;
	}
	if (!ret->annotation || !ret->node)
		return devwl_error_set(err, -EINVAL, 0, "%s: %s: needs \"annotation\" and \"node\"",
				       file, where);
	return 0;
}

/* "container_rules": ["deny c 188:* rwm", ...], each "allow RULE" or "deny RULE". */
static int parse_start_rules(struct json_object *val, const char *file, const char *where,
			     struct mapping *m, struct devwl_error *err)
{
	size_t n;

	if (!json_object_is_type(val, json_type_array))
		return devwl_error_set(err, -EINVAL, 0, "%s: %s: must be an array, not %s", file,
				       where, type_word(val));
	n = json_object_array_length(val);
	m->start = calloc(n + 1, sizeof(*m->start));
	if (!m->start)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(val, i);
		struct start_rule *s = &m->start[i];
		struct devwl_error e = {0};
		const char *text, *rule;
		int r;

		if (!json_object_is_type(v, json_type_string))
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: %s[%zu]: must be a string, not %s", file, where,
					       i, type_word(v));
		text = json_object_get_string(v);
		if (!strncmp(text, "allow ", 6))
			s->file = DEVWL_FILE_ALLOW;
		else if (!strncmp(text, "deny ", 5))
			s->file = DEVWL_FILE_DENY;
		else
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: %s[%zu]: \"%.64s\": must be \"allow RULE\" or "
					       "\"deny RULE\"",
					       file, where, i, text);
		rule = text + (s->file == DEVWL_FILE_ALLOW ? 6 : 5);
		r = devwl_rule_parse(rule, strlen(rule), &s->rule, &e);
		if (r < 0)
			return devwl_error_set(err, r, 0, "%s: %s[%zu]: \"%.64s\": %s", file, where,
					       i, text, e.msg);
		m->nstart++;
	}
	return 0;
}

int mapping_start_node(const struct mapping *m, struct devwl_node *node, struct devwl_error *err)
{
	for (size_t i = 0; i < m->nstart; i++) {
		const struct start_rule *s = &m->start[i];
		int r = devwl_node_update(node, s->file, &s->rule);

		if (r < 0) {
			char text[64] = "";

			(void)devwl_rule_format(&s->rule, text, sizeof(text));
			return devwl_error_set(err, r, 0, "container_rules: %s %s at %s: %s",
					       s->file == DEVWL_FILE_ALLOW ? "allow" : "deny", text,
					       devwl_node_path(node), strerror(-r));
		}
	}
	return 0;
}

/* "node_annotation" or "node_metadata" (where names it): true, false or templates. */
static int parse_node_source(struct json_object *v, const char *file, const char *where,
			     struct node_source *s, struct devwl_error *err)
{
	size_t n;

	if (json_object_is_type(v, json_type_boolean)) {
		s->choice = json_object_get_boolean(v) ? NODE_CHOICE_ANY : NODE_CHOICE_IGNORE;
		return 0;
	}
	if (!json_object_is_type(v, json_type_array))
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: %s: must be true, false or an array of node path "
				       "templates, not %s",
				       file, where, type_word(v));
	n = json_object_array_length(v);
	s->under = calloc(n + 1, sizeof(*s->under));
	if (!s->under)
		return -ENOMEM;
	s->choice = NODE_CHOICE_UNDER;
	for (size_t i = 0; i < n; i++) {
		char w[128];
		int r;

		snprintf(w, sizeof(w), "%s[%zu]", where, i);
		r = take_template(json_object_array_get_idx(v, i), true, file, w,
				  &s->under[s->nunder], err);
		if (r < 0)
			return r;
		s->nunder++;
	}
	return 0;
}

int mapping_from_json(struct json_object *obj, const char *file, struct mapping *ret,
		      struct devwl_error *err)
{
	struct mapping m = {0};
	int r = 0;

	if (!obj) {
		*ret = m;
		return 0;
	}
	if (!json_object_is_type(obj, json_type_object))
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: \"containers\": must be an object, not %s", file,
				       type_word(obj));
	json_object_object_foreach (obj, key, val) {
		char w[64];

		snprintf(w, sizeof(w), "\"containers\".\"%.24s\"", key);
		if (!strcmp(key, "k8s_template")) {
			r = take_template(val, true, file, w, &m.k8s_template, err);
		} else if (!strcmp(key, "default_template")) {
			r = take_template(val, false, file, w, &m.default_template, err);
		} else if (!strcmp(key, "node_annotation") || !strcmp(key, "node_metadata")) {
			r = parse_node_source(val, file, w,
					      key[5] == 'a' ? &m.annotation : &m.metadata, err);
		} else if (!strcmp(key, "container_rules")) {
			r = parse_start_rules(val, file, w, &m, err);
		} else if (!strcmp(key, "match")) {
			size_t n;

			if (!json_object_is_type(val, json_type_array)) {
				r = devwl_error_set(err, -EINVAL, 0,
						    "%s: %s: must be an array, not %s", file, w,
						    type_word(val));
				break;
			}
			n = json_object_array_length(val);
			m.rules = calloc(n + 1, sizeof(*m.rules));
			if (!m.rules) {
				r = -ENOMEM;
				break;
			}
			for (size_t i = 0; i < n && r >= 0; i++) {
				r = parse_rule(json_object_array_get_idx(val, i), i, file,
					       &m.rules[i], err);
				m.nrules++;
			}
		} else {
			r = devwl_error_set(
				err, -EINVAL, 0,
				"%s: \"containers\": unknown key \"%.32s\" (known: "
				"k8s_template, default_template, node_annotation, node_metadata, "
				"match, container_rules)",
				file, key);
		}
		if (r < 0)
			break;
	}
	if (r < 0) {
		mapping_clear(&m);
		return r == -ENOMEM ? devwl_error_set(err, r, 0, "%s: out of memory", file) : r;
	}
	*ret = m;
	return 0;
}

/* path is node or one of its descendants. */
static bool path_under(const char *path, const char *node)
{
	size_t n = strlen(node);

	if (!strcmp(node, "/"))
		return true;
	return !strncmp(path, node, n) && (path[n] == '\0' || path[n] == '/');
}

/*
 * May a container name node through source s (what names the source in messages)?
 * 0, or -EPERM with the reason. A root whose placeholders this container lacks admits
 * nothing.
 */
static int admitted(const struct node_source *s, bool metadata, const char *what, const char *node,
		    const char *const vals[VAR_COUNT], struct devwl_error *err)
{
	const char *key = metadata ? "node_metadata" : "node_annotation";

	switch (s->choice) {
	case NODE_CHOICE_ANY:
		return 0;
	case NODE_CHOICE_DEFAULT:
	case NODE_CHOICE_IGNORE: /* not asked: an ignored source decides nothing */
		if (strcmp(node, "/"))
			return 0;
		return devwl_error_set(err, -EPERM, 0,
				       "%s \"/\": the root is not a container's node (the "
				       "policy's \"%s\" can allow it)",
				       what, key);
	case NODE_CHOICE_UNDER:
		for (size_t i = 0; i < s->nunder; i++) {
			_cleanup_free_ char *root = NULL;

			if (expand(s->under[i], vals, ALL_VARS, &root, NULL) >= 0 &&
			    path_under(node, root))
				return 0;
		}
		break;
	}
	return devwl_error_set(err, -EPERM, 0, "%s \"%s\" is outside the policy's \"%s\" subtrees",
			       what, node, key);
}

/* The value of the word key (with its "=") in space-separated words: 1 and a heap copy,
 * 0 none, -ENOMEM. */
static int metadata_word(const char *words, const char *key, char **ret)
{
	size_t n = strlen(key);

	*ret = NULL;
	for (const char *p = words; p && *p;) {
		const char *end = strchrnul(p, ' ');

		if ((size_t)(end - p) >= n && !memcmp(p, key, n)) {
			*ret = strndup(p + n, (size_t)(end - p) - n);
			return *ret ? 1 : -ENOMEM;
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* A node a container names (annotation or metadata): valid, admitted, copied. */
static int named_node(const struct node_source *s, bool metadata, const char *node,
		      const char *const vals[VAR_COUNT], char **ret, struct devwl_error *err)
{
	const char *what = metadata ? "listenerMetadata node" : "annotation org.devwl.node";
	char q[64];
	int r;

	if (devwl_node_path_valid(node) < 0) {
		printable(node, q, sizeof(q));
		return devwl_error_set(err, -EINVAL, 0, "%s \"%s\" is not a node path", what, q);
	}
	r = admitted(s, metadata, what, node, vals, err);
	if (r < 0)
		return r;
	*ret = strdup(node);
	return *ret ? 0 : devwl_error_set(err, -ENOMEM, 0, "out of memory");
}

int mapping_node_path(const struct mapping *m, const char *k8s_override,
		      const char *default_override, const struct oci_state *st, uid_t peer_uid,
		      char **ret_path, const char **ret_source, struct devwl_error *err)
{
	const char *vals[VAR_COUNT] = {st->id, NULL, NULL, NULL};
	const char *node = oci_annotation(st, "org.devwl.node");
	/* listenerMetadata is words: node=PATH, and mode=kernel for kernelmode.c. */
	_cleanup_free_ char *meta_node = NULL;
	const char *meta = NULL;
	const char *type = first_annotation(st, type_keys, ARRAY_SIZE(type_keys));
	struct devwl_error e = {0};
	_cleanup_free_ char *path = NULL;
	char peer_root[sizeof(PEER_SUBTREE) + 16];
	int r;

	if (metadata_word(st->metadata, "node=", &meta_node) < 0)
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	meta = meta_node;
	vals[VAR_NAMESPACE] = first_annotation(st, ns_keys, ARRAY_SIZE(ns_keys));
	vals[VAR_POD] = first_annotation(st, pod_keys, ARRAY_SIZE(pod_keys));
	vals[VAR_CONTAINER] = first_annotation(st, ctr_keys, ARRAY_SIZE(ctr_keys));
	if (!vals[VAR_CONTAINER] && type && !strcmp(type, "sandbox") &&
	    (vals[VAR_NAMESPACE] || vals[VAR_POD]))
		vals[VAR_CONTAINER] = SANDBOX_CONTAINER;
	snprintf(peer_root, sizeof(peer_root), PEER_SUBTREE "/%u", (unsigned int)peer_uid);

	if (node && m->annotation.choice != NODE_CHOICE_IGNORE &&
	    m->annotation.choice != NODE_CHOICE_DEFAULT) {
		*ret_source = "annotation org.devwl.node";
		r = named_node(&m->annotation, false, node, vals, &path, err);
	} else if (meta && m->metadata.choice != NODE_CHOICE_IGNORE) {
		*ret_source = "listenerMetadata";
		r = named_node(&m->metadata, true, meta, vals, &path, err);
	} else if (peer_uid != 0) {
		/* Its annotations are its own: no "match" rule or template applies. */
		*ret_source = "the subtree of its uid";
		r = asprintf(&path, "%s/%s", peer_root, st->id) < 0 ? -ENOMEM : 0;
		if (r < 0)
			path = NULL;
	} else {
		const struct map_rule *rule = NULL;
		const char *tmpl;

		for (size_t i = 0; i < m->nrules && !rule; i++) {
			const char *v = oci_annotation(st, m->rules[i].annotation);

			if (v && (!m->rules[i].value || !strcmp(v, m->rules[i].value)))
				rule = &m->rules[i];
		}
		if (rule) {
			*ret_source = "a \"match\" rule";
			tmpl = rule->node;
		} else if (vals[VAR_NAMESPACE] || vals[VAR_POD] || vals[VAR_CONTAINER]) {
			*ret_source = "the Kubernetes template";
			if (!vals[VAR_NAMESPACE] || !vals[VAR_POD] || !vals[VAR_CONTAINER])
				return devwl_error_set(err, -EINVAL, 0,
						       "incomplete Kubernetes annotations (need "
						       "the namespace, the pod and the container "
						       "name)");
			tmpl = k8s_override ?: m->k8s_template ?: BUILTIN_K8S_TEMPLATE;
		} else {
			*ret_source = "the default template";
			tmpl = default_override ?: m->default_template ?: BUILTIN_DEFAULT_TEMPLATE;
		}
		r = expand(tmpl, vals, ALL_VARS, &path, &e);
		if (r < 0)
			return devwl_error_set(err, r, 0, "%s: %s", *ret_source, e.msg);
	}
	if (r < 0)
		return r == -ENOMEM ? devwl_error_set(err, r, 0, "out of memory") : r;
	if (devwl_node_path_valid(path) < 0)
		return devwl_error_set(err, -EINVAL, 0, "container id \"%.64s\" makes no node path",
				       st->id);
	if (peer_uid != 0 && !path_under(path, peer_root))
		return devwl_error_set(err, -EPERM, 0,
				       "%s: \"%s\" is outside %s, the only subtree a runtime "
				       "running as uid %u may use",
				       *ret_source, path, peer_root, (unsigned int)peer_uid);
	*ret_path = TAKE_PTR(path);
	return 0;
}

char *mapping_k8s_name(const struct oci_state *st)
{
	const char *ns = first_annotation(st, ns_keys, ARRAY_SIZE(ns_keys));
	const char *pod = first_annotation(st, pod_keys, ARRAY_SIZE(pod_keys));
	const char *ctr = first_annotation(st, ctr_keys, ARRAY_SIZE(ctr_keys));
	char *name = NULL;

	if (!ns || !pod || !ctr || asprintf(&name, "%s/%s/%s", ns, pod, ctr) < 0)
		return NULL;
	return name;
}
