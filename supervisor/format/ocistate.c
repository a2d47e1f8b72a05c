/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OCI state a runtime sends the seccomp listener (runtime-spec "container process
 * state": the state under "state", the pid and listenerMetadata beside it) or a hook
 * gets on stdin (the state itself, to which devwl-oci-hook adds "metadata"), converted
 * out of JSON at once. Pure: no I/O; the listener (listener.c) and devwlctl's attach
 * (control.c) read the bytes.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "ocistate.h"
#include "util.h"

const char *oci_annotation(const struct oci_state *st, const char *key)
{
	for (size_t i = 0; i < st->nannos; i++)
		if (!strcmp(st->annos[i].key, key))
			return st->annos[i].value;
	return NULL;
}

void oci_state_clear(struct oci_state *st)
{
	free(st->id);
	free(st->metadata);
	free(st->bundle);
	for (size_t i = 0; i < st->nannos; i++) {
		free(st->annos[i].key);
		free(st->annos[i].value);
	}
	free(st->annos);
	*st = (struct oci_state){0};
}

bool oci_id_valid(const char *id)
{
	size_t len = strlen(id);

	if (len == 0 || len > 1024 || !strcmp(id, ".") || !strcmp(id, ".."))
		return false;
	return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+.-") ==
	       len;
}

int oci_state_from_json(struct json_object *obj, bool listener, struct oci_state *st,
			struct devwl_error *err)
{
	struct json_object *state = obj, *v = NULL, *anno = NULL;
	struct oci_state out = {0};
	int r = -ENOMEM;

	if (!json_object_is_type(obj, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "not a JSON object");
	if (listener) {
		if (!json_object_object_get_ex(obj, "state", &state) ||
		    !json_object_is_type(state, json_type_object))
			return devwl_error_set(err, -EINVAL, 0, "no \"state\" object");
		if (json_object_object_get_ex(obj, "pid", &v)) {
			if (!json_object_is_type(v, json_type_int))
				return devwl_error_set(err, -EINVAL, 0, "\"pid\" is not a number");
			int64_t pid = json_object_get_int64(v);
			if (pid < 0 || pid > INT_MAX)
				return devwl_error_set(err, -EINVAL, 0, "\"pid\" out of range");
			out.pid = (pid_t)pid;
		}
	} else if (json_object_object_get_ex(obj, "pid", &v) &&
		   json_object_is_type(v, json_type_int)) {
		out.pid = (pid_t)json_object_get_int(v);
	}
	/* Beside the state from a runtime; in it from devwl-oci-hook, which read it out of
	 * the bundle's config.json (a runtime gives hooks none): one rule for both. */
	if (json_object_object_get_ex(obj, "metadata", &v)) {
		if (!json_object_is_type(v, json_type_string))
			return devwl_error_set(err, -EINVAL, 0, "\"metadata\" is not a string");
		if (json_string_has_nul(v))
			return devwl_error_set(err, -EINVAL, 0, "\"metadata\" holds a NUL byte");
	}
	if (!json_object_object_get_ex(state, "id", &v) ||
	    !json_object_is_type(v, json_type_string) || json_string_has_nul(v) ||
	    !oci_id_valid(json_object_get_string(v)))
		return devwl_error_set(err, -EINVAL, 0,
				       "state \"id\" missing or not a valid container id");
	if (json_object_object_get_ex(state, "annotations", &anno) &&
	    !json_object_is_type(anno, json_type_object))
		return devwl_error_set(err, -EINVAL, 0, "\"annotations\" is not an object");

	out.id = strdup(json_object_get_string(v));
	if (!out.id)
		goto fail;
	if (json_object_object_get_ex(obj, "metadata", &v) &&
	    !(out.metadata = strdup(json_object_get_string(v))))
		goto fail;
	/* Optional, and only a hint (rtname.c): one that is no plain absolute path is left
	 * out rather than refused. */
	if (json_object_object_get_ex(state, "bundle", &v) &&
	    json_object_is_type(v, json_type_string) && !json_string_has_nul(v) &&
	    json_object_get_string(v)[0] == '/' &&
	    !(out.bundle = strdup(json_object_get_string(v))))
		goto fail;
	if (anno) {
		/* All of them: the policy's "match" rules may name any. Values with a NUL
		 * byte would read as another value: left out. */
		out.annos = calloc((size_t)json_object_object_length(anno) + 1, sizeof(*out.annos));
		if (!out.annos)
			goto fail;
		json_object_object_foreach (anno, key, val) {
			struct annotation *a = &out.annos[out.nannos];

			if (!json_object_is_type(val, json_type_string) || json_string_has_nul(val))
				continue;
			a->key = strdup(key);
			a->value = strdup(json_object_get_string(val));
			out.nannos++;
			if (!a->key || !a->value)
				goto fail;
		}
	}
	*st = out;
	return 0;
fail:
	oci_state_clear(&out);
	return r;
}
