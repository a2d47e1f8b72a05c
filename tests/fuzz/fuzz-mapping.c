/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: container → node. The input is one JSON object shaped like a listener
 * message plus the policy file's "containers" object and devwld's two command-line
 * templates:
 *
 *   {"containers": {...}, "k8s_template": T, "default_template": T,
 *    "state": {"id": ..., "annotations": {...}}, "metadata": ...}
 *
 * optionally followed by a NUL byte and raw "key=value" lines, added as further
 * annotations without going through JSON, so that the fuzzer reaches odd values
 * quickly. mapping_from_json() converts the mapping, oci_state_from_json() the state,
 * and mapping_node_path() must then give a valid node path or a reason, the same one
 * twice, and honour node_annotation and node_metadata: a node path taken from the
 * container's own annotation or metadata never escapes the subtrees the policy allows,
 * the root only where the policy says true, and a peer other than root (uid 1000 in a
 * second pass) never leaves PEER_SUBTREE/1000.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allowlist.h"
#include "mapping.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A command-line template, if it is a string devwld would accept for it. */
static const char * override(struct json_object *top, const char *key, bool k8s_vars)
{
	struct json_object *v = NULL;
	struct devwl_error err = {0};

	if (!json_object_object_get_ex(top, key, &v) || !json_object_is_type(v, json_type_string) ||
	    (size_t)json_object_get_string_len(v) != strlen(json_object_get_string(v)) ||
	    template_check(json_object_get_string(v), k8s_vars, &err) < 0)
		return NULL;
	return json_object_get_string(v);
}

static void check_mapping(const struct mapping *m)
{
	struct devwl_error err = {0};

	if ((m->k8s_template && template_check(m->k8s_template, true, &err) < 0) ||
	    (m->default_template && template_check(m->default_template, false, &err) < 0))
		abort();
	for (size_t i = 0; i < m->annotation.nunder; i++)
		if (template_check(m->annotation.under[i], true, &err) < 0)
			abort();
	for (size_t i = 0; i < m->metadata.nunder; i++)
		if (template_check(m->metadata.under[i], true, &err) < 0)
			abort();
	for (size_t i = 0; i < m->nrules; i++)
		if (!m->rules[i].annotation || !m->rules[i].annotation[0] || !m->rules[i].node ||
		    template_check(m->rules[i].node, true, &err) < 0)
			abort();
	if ((m->annotation.choice != NODE_CHOICE_UNDER && m->annotation.nunder) ||
	    (m->metadata.choice != NODE_CHOICE_UNDER && m->metadata.nunder))
		abort();
}

/* The raw "key=value" lines after the NUL byte, appended to st's annotations. */
static void add_raw(struct oci_state *st, const char *raw, size_t len)
{
	size_t start = 0;

	while (start < len) {
		const char *nl = memchr(raw + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - raw) : len;
		const char *eq = memchr(raw + start, '=', end - start);
		struct annotation *a;

		if (eq && !memchr(raw + start, '\0', end - start)) {
			a = realloc(st->annos, (st->nannos + 1) * sizeof(*a));
			if (!a)
				abort();
			st->annos = a;
			a = &st->annos[st->nannos++];
			a->key = strndup(raw + start, (size_t)(eq - raw) - start);
			a->value = strndup(eq + 1, end - (size_t)(eq - raw) - 1);
			if (!a->key || !a->value)
				abort();
		}
		start = end + 1;
	}
}

/* Is path at or below the node one of under[] names for this container? Checked the
 * slow way: every template must admit a prefix of path with this container's values.
 * Only the plain (placeholder-free) templates are checked exactly; the rest loosely. */
static bool admitted(const struct node_source *s, const char *path)
{
	if (s->choice == NODE_CHOICE_ANY)
		return true;
	if (s->choice != NODE_CHOICE_UNDER)
		return strcmp(path, "/") != 0;
	for (size_t i = 0; i < s->nunder; i++) {
		const char *t = s->under[i];
		size_t n = strcspn(t, "{");

		if (!strcmp(t, "/"))
			return true;
		if (t[n] == '\0') {
			if (!strncmp(path, t, n) && (path[n] == '\0' || path[n] == '/'))
				return true;
		} else if (!strncmp(path, t, n)) {
			return true;
		}
	}
	return false;
}

/* listenerMetadata is space-separated words: the value of the first that starts with
 * "node=", as a heap copy, or NULL (written here apart from mapping.c's walk). */
static char *meta_node(const char *words)
{
	size_t len = words ? strlen(words) : 0;

	for (size_t i = 0; i < len;) {
		size_t w = strcspn(words + i, " ");

		if (w >= 5 && !strncmp(words + i, "node=", 5)) {
			char *v = strndup(words + i + 5, w - 5);

			if (!v)
				abort();
			return v;
		}
		i += w + 1;
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	const char *nul = memchr(in, '\0', size);
	size_t json_len = nul ? (size_t)(nul - in) : size;
	struct json_object *top, *containers = NULL;
	struct devwl_error err = {0};
	struct mapping m = {0};
	struct oci_state st = {0};
	const char *k8s, *dflt, *src1 = NULL, *src2 = NULL, *anno;
	char *p1 = NULL, *p2 = NULL, *meta = NULL;
	json_tokener *tok;
	int r1, r2;

	if (size > 1 << 16)
		return 0;
	tok = json_tokener_new_ex(32);
	if (!tok)
		abort();
	top = json_tokener_parse_ex(tok, in, (int)json_len);
	json_tokener_free(tok);
	if (!top)
		return 0;
	if (!json_object_is_type(top, json_type_object))
		goto out;

	json_object_object_get_ex(top, "containers", &containers);
	m.annotation.choice = (enum node_choice) - 1; /* written only on success */
	r1 = mapping_from_json(containers, "fuzz.json", &m, &err);
	if (r1 < 0) {
		if (r1 != -EINVAL || !err.msg[0] || m.annotation.choice != (enum node_choice) - 1)
			abort();
		goto out;
	}
	check_mapping(&m);
	k8s = override(top, "k8s_template", true);
	dflt = override(top, "default_template", false);

	if (oci_state_from_json(top, true, &st, &err) < 0)
		goto out;
	if (nul)
		add_raw(&st, nul + 1, size - json_len - 1);

	for (uid_t uid = 0; uid <= 1000; uid += 1000) {
		bool anno_on;

		free(p1);
		free(p2);
		p1 = p2 = NULL;
		r1 = mapping_node_path(&m, k8s, dflt, &st, uid, &p1, &src1, &err);
		r2 = mapping_node_path(&m, k8s, dflt, &st, uid, &p2, &src2, &err);
		if (r1 != r2 || !p1 != !p2 || (p1 && strcmp(p1, p2)))
			abort();
		if (r1 < 0) {
			if (p1 || !err.msg[0] ||
			    (r1 != -EINVAL && r1 != -ENOENT && r1 != -EPERM && r1 != -ENOMEM))
				abort();
			continue;
		}
		if (!src1 || devwl_node_path_valid(p1) < 0)
			abort();
		if (uid && strncmp(p1, PEER_SUBTREE "/1000", strlen(PEER_SUBTREE "/1000")))
			abort();
		anno = oci_annotation(&st, "org.devwl.node");
		free(meta);
		meta = meta_node(st.metadata);
		anno_on = anno && (m.annotation.choice == NODE_CHOICE_ANY ||
				   m.annotation.choice == NODE_CHOICE_UNDER);
		if (!strcmp(src1, "annotation org.devwl.node")) {
			if (!anno_on || strcmp(p1, anno) || !admitted(&m.annotation, p1))
				abort();
		} else if (anno_on) {
			/* A container that names its node gets that node or an error. */
			abort();
		} else if (!strcmp(src1, "listenerMetadata")) {
			if (!meta || m.metadata.choice == NODE_CHOICE_IGNORE || strcmp(p1, meta) ||
			    !admitted(&m.metadata, p1))
				abort();
		} else if (meta && m.metadata.choice != NODE_CHOICE_IGNORE) {
			abort();
		}
	}
out:
	free(meta);
	free(p1);
	free(p2);
	oci_state_clear(&st);
	mapping_clear(&m);
	json_object_put(top);
	return 0;
}
