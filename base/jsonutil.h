/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-c helpers for the files that read or build JSON (policy files, OCI and devwld state). */
#ifndef DEVWL_JSONUTIL_H
#define DEVWL_JSONUTIL_H

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <string.h>

/*
 * json-c leaves val with the caller when adding fails, and a failed constructor gives
 * NULL: these take val in every case, so a chain of them leaks nothing. 0 or -ENOMEM.
 */
static inline int json_add(struct json_object *obj, const char *key, struct json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

/*
 * A JSON string may hold a NUL byte ("\u0000"); read as a C string it would be a shorter
 * string, another id, path or value than was written. Is v (a string) such a one?
 */
static inline bool json_string_has_nul(struct json_object *v)
{
	return strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v);
}

static inline int json_push(struct json_object *arr, struct json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_array_add(arr, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

#endif
