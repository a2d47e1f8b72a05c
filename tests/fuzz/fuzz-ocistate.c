/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: the OCI state a runtime sends on the seccomp listener socket (and an OCI
 * hook on stdin), through the parsing devwld really does: leading blanks skipped, a
 * '{' required, json_tokener fed what arrives, then oci_state_from_json() as a listener
 * message and as a hook state. The bytes are fed whole and again in small pieces, as
 * several sendmsg calls deliver them: both must give the same state, since the end of
 * a message is the end of its JSON, wherever the reads happen to stop.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allowlist.h"
#include "mapping.h"
#include "ocistate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* As listener.c: a container's message nests only a few levels. */
#define DEPTH 32

/* The object the listener would complete on, fed in pieces of chunk bytes; NULL if
 * the bytes end first or are not JSON. */
static struct json_object *tokenize(const char *buf, size_t size, size_t chunk)
{
	json_tokener *tok = json_tokener_new_ex(DEPTH);
	struct json_object *obj = NULL;
	size_t off = 0;

	if (!tok)
		abort();
	while (off < size && strchr(" \t\r\n", buf[off]))
		off++;
	if (off == size || buf[off] != '{') {
		json_tokener_free(tok);
		return NULL;
	}
	while (off < size) {
		size_t n = size - off < chunk ? size - off : chunk;

		obj = json_tokener_parse_ex(tok, buf + off, (int)n);
		if (obj || json_tokener_get_error(tok) != json_tokener_continue)
			break;
		off += n;
	}
	json_tokener_free(tok);
	return obj;
}

static bool plain_id(const char *id)
{
	size_t len = strlen(id);

	return len > 0 && len <= 1024 && strcmp(id, ".") && strcmp(id, "..") &&
	       strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+.-") ==
		       len;
}

/* A hook's "pid" is taken as json-c gives it (devwld does not use it); a listener's
 * is range-checked. */
static void check_state(const struct oci_state *st, bool listener)
{
	if (!st->id || !plain_id(st->id) || (listener && st->pid < 0))
		abort();
	for (size_t i = 0; i < st->nannos; i++) {
		const char *v;

		if (!st->annos[i].key || !st->annos[i].value)
			abort();
		/* Keys are unique in a json-c object: the lookup finds this very one. */
		v = oci_annotation(st, st->annos[i].key);
		if (!v || strcmp(v, st->annos[i].value))
			abort();
	}
}

static bool same_state(const struct oci_state *a, const struct oci_state *b)
{
	if (strcmp(a->id, b->id) || a->pid != b->pid || a->nannos != b->nannos ||
	    !a->metadata != !b->metadata || (a->metadata && strcmp(a->metadata, b->metadata)))
		return false;
	for (size_t i = 0; i < a->nannos; i++)
		if (strcmp(a->annos[i].key, b->annos[i].key) ||
		    strcmp(a->annos[i].value, b->annos[i].value))
			return false;
	return true;
}

/* Convert obj both ways; for a listener message also the node the default mapping
 * gives, which must be a valid node path whenever there is one. */
static void convert(struct json_object *obj, bool listener, struct oci_state *ret)
{
	static const struct mapping none;
	struct devwl_error err = {0};
	struct oci_state st = {0};
	const char *source = NULL;
	char *path = NULL;
	int r;

	r = oci_state_from_json(obj, listener, &st, &err);
	if (r < 0) {
		if (r != -EINVAL || !err.msg[0] || st.id)
			abort();
		*ret = (struct oci_state){0};
		return;
	}
	check_state(&st, listener);
	r = mapping_node_path(&none, NULL, NULL, &st, 0, &path, &source, &err);
	if (r >= 0 && (devwl_node_path_valid(path) < 0 || !source))
		abort();
	if (r < 0 && (path || !err.msg[0]))
		abort();
	free(path);
	*ret = st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct json_object *whole, *pieces;
	struct oci_state a = {0}, b = {0};

	if (size > 1 << 20)
		return 0;
	whole = tokenize(buf, size, size ? size : 1);
	pieces = tokenize(buf, size, 7);
	/*
	 * json-c 0.16's incremental parse of a malformed number depends on where the pieces
	 * end, both ways: {"pid":6-01} fed as "...6" then "-01}" parses as pid 6 while the
	 * whole text is refused (corpus json-c-split-number.json), and {"id": 4.+} is taken
	 * whole but refused in pieces (json-c-split-sloppy-number.json). So which malformed
	 * messages the listener refuses depends on how they arrive (reported; the fix is in
	 * listener.c). What must hold is ours: bytes that parse both ways give one state.
	 */
	if (!whole || !pieces) {
		if (whole)
			json_object_put(whole);
		if (pieces)
			json_object_put(pieces);
		return 0;
	}

	for (int listener = 0; listener < 2; listener++) {
		convert(whole, listener, &a);
		convert(pieces, listener, &b);
		if (!a.id != !b.id || (a.id && !same_state(&a, &b)))
			abort();
		oci_state_clear(&a);
		oci_state_clear(&b);
	}
	json_object_put(whole);
	json_object_put(pieces);
	return 0;
}
