/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* YAML read into json-c objects, so that one reader checks a document in either form. */
#ifndef DEVWL_YAMLJSON_H
#define DEVWL_YAMLJSON_H

#include <json-c/json.h>
#include <stddef.h>

#include "devwl.h"

/*
 * Parse the first YAML document of text[0..len): mappings become objects (keys must be
 * scalars), sequences arrays, plain scalars null (a NULL object, as json-c has it),
 * booleans or integers where they read as such and strings otherwise, quoted scalars
 * strings. An integer keeps its text as written in its userdata
 * (json_object_get_userdata()), for a field that is a string. Read event by event, each
 * limit refused as soon as the text passes it, whatever follows: nesting deeper than 64
 * levels, more than 100000 nodes (an alias counts the nodes it repeats, so that no
 * document expands without limit), a scalar over 64 KiB, more than 16 directives. An
 * alias shares its anchor's objects (read only); an anchor defined twice, an alias of
 * none before it and one within the node it names are refused. The text's own size is
 * the caller's to bound, before reading it. name prefixes the messages
 * ("FILE:LINE:COL: ..."). 0 and *ret (caller puts it), or -EINVAL/-ENOMEM with ret_err.
 */
int yamljson_parse(const char *text, size_t len, const char *name, struct json_object **ret,
		   struct devwl_error *ret_err);

#endif
