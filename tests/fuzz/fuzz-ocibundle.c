/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: a bundle's config.json as devwl-oci-hook reads its listenerMetadata
 * (common/ocibundle.c). Any bytes give the string, none, or an error with a reason; a
 * string found, written back into a config by json-c, reads back the same.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ocibundle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

/* {"linux":{"seccomp":{"listenerMetadata":meta}}}, as json-c writes it (caller frees). */
static char *config_of(const char *meta)
{
	struct json_object *config = json_object_new_object(), *lin = json_object_new_object(),
			   *sc = json_object_new_object();
	char *text;

	check(config && lin && sc);
	check(!json_object_object_add(sc, "listenerMetadata", json_object_new_string(meta)));
	check(!json_object_object_add(lin, "seccomp", sc));
	check(!json_object_object_add(config, "linux", lin));
	text = strdup(json_object_to_json_string_ext(config, JSON_C_TO_STRING_PLAIN));
	check(text);
	json_object_put(config);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct devwl_error err = {0};
	char *meta = (char *)1, *again = NULL, *text;
	int r;

	memset(err.msg, 'x', sizeof(err.msg));
	r = oci_config_metadata((const char *)data, size, &meta, &err);
	if (r <= 0) {
		check(!meta);
		check(r == 0 || r == -EINVAL || r == -ENOMEM);
		check(r == 0 ||
		      (err.code == r && memchr(err.msg, '\0', sizeof(err.msg)) && err.msg[0]));
		return 0;
	}
	check(r == 1 && meta);
	text = config_of(meta);
	check(oci_config_metadata(text, strlen(text), &again, NULL) == 1);
	check(!strcmp(meta, again));
	free(again);
	free(text);
	free(meta);
	return 0;
}
