/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-c helpers for the files that build JSON (policy files, OCI state, devwld state). */
#ifndef DEVWL_JSONUTIL_H
#define DEVWL_JSONUTIL_H

#include <errno.h>
#include <json-c/json.h>

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
