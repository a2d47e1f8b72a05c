/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OCI state of a container, out of its JSON (ocistate.c). */
#ifndef DEVWLD_OCISTATE_H
#define DEVWLD_OCISTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "devwl.h"

struct annotation {
	char *key, *value;
};

/* The OCI state a runtime or hook sent, converted out of JSON at once. */
struct oci_state {
	char *id;		  /* state.id: the container; required */
	pid_t pid;		  /* top-level pid (0 from crun exec) */
	char *metadata;		  /* listenerMetadata, or NULL */
	char *bundle;		  /* state.bundle, or NULL: where a runtime's name may be */
	struct annotation *annos; /* the string-valued annotations */
	size_t nannos;
};

/*
 * Is id a container id we take? Ids become node path components and log words: runc's
 * alphabet, 1 to 1024 bytes, not "." or "..". (One read out of JSON is checked for a NUL
 * byte first: json_string_has_nul().)
 */
bool oci_id_valid(const char *id);

/* The value of annotation key, or NULL. */
const char *oci_annotation(const struct oci_state *st, const char *key);

void oci_state_clear(struct oci_state *st);
/*
 * Convert a parsed OCI state (the object json_tokener produced) into st. For a listener
 * message (listener true) the top-level object carries "state"; for a hook it is the
 * state itself. "metadata" (listenerMetadata) is read from the top-level object in both.
 * Errors: -EINVAL with a reason in err.
 */
struct json_object;
int oci_state_from_json(struct json_object *obj, bool listener, struct oci_state *st,
			struct devwl_error *err);

#endif
