/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* YAML read into json-c objects, so that one reader checks a document in either form. */
#ifndef DEVWL_YAMLJSON_H
#define DEVWL_YAMLJSON_H

#include <json-c/json.h>
#include <stddef.h>

#include "devwl.h"

/*
 * Parse the first YAML document of text[0..len): mappings become objects (keys must be
 * scalars), sequences arrays, plain scalars null, booleans or integers where they read
 * as such and strings otherwise, quoted scalars strings. An integer keeps its text as
 * written in its userdata (json_object_get_userdata()), for a field that is a string.
 * Aliases are followed, within a bound on the nodes built and on the depth, so that no
 * document expands without limit. name prefixes the messages ("FILE:LINE:COL: ...").
 * 0 and *ret (caller puts it), or -EINVAL/-ENOMEM with ret_err.
 */
int yamljson_parse(const char *text, size_t len, const char *name, struct json_object **ret,
		   struct devwl_error *ret_err);

#endif
