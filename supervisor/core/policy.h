/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The policy store (policy.c): the policy file's hierarchy, mapping and bindings, nodes
 * made on demand, devwlctl's changes, reload. */
#ifndef DEVWLD_POLICY_H
#define DEVWLD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "devwld.h"
#include "ocistate.h"

/* Read a whole regular file of at most max bytes (NUL-terminated; none inside). */
int read_text(const char *file, size_t max, char **ret_text, size_t *ret_len,
	      struct devwl_error *err);
/* The same from an open fd (file: its name in messages). */
int read_text_fd(int fd, const char *file, size_t max, char **ret_text, size_t *ret_len,
		 struct devwl_error *err);
/* Parse a policy file's text into its hierarchy (ret_policy may be NULL: only checked),
 * its container mapping and its selector bindings (ret_bindings may be NULL): those of
 * the nodes' "rules" first, in the nodes' order, then "selectors". */
int policy_parse_text(const char *file, const char *text, struct devwl_policy **ret_policy,
		      struct mapping *ret_mapping, struct bindings *ret_bindings,
		      struct devwl_error *err);
/* A devwlctl change line (edit_is_change()) carried out on the live hierarchy, answered
 * on out; an allow or deny of a selector becomes a binding (follow.c). 0 or -errno. */
int policy_change(struct devwld *d, const char *line, size_t len, FILE *out);
int policy_load(struct devwld *d);
/* Reload the policy file (SIGHUP, devwlctl reload): everything or nothing; err (may be
 * NULL) says why not, as the log does. */
int policy_reload(struct devwld *d, struct devwl_error *err);
/* Read the policy file (logs why not). */
int policy_read(struct devwld *d, char **ret_text, size_t *ret_len);
/* Reload from text read from the policy file (taken over): everything or nothing; the
 * devwlctl changes since the last load are applied again on top. */
int policy_apply_text(struct devwld *d, char *text, size_t len);
/* Reload the policy file without the devwlctl changes, which are then forgotten. */
int policy_reset(struct devwld *d, struct devwl_error *err);
/* Remove a node made on demand, and its made-on-demand ancestors, once unused;
 * true when no node is left at path. */
bool policy_forget_node(struct devwld *d, const char *path);
/* The node path for a container, from its annotations/metadata/templates (heap); peer_uid
 * is the uid of the runtime that sent st. */
int policy_node_path(struct devwld *d, const struct oci_state *st, uid_t peer_uid, char **ret_path,
		     struct devwl_error *ret_err);
/* Find or create (with ancestors) the node at path. */
int policy_ensure_node(struct devwld *d, const char *path, struct devwl_node **ret_node,
		       bool *ret_created);
/* Free the hierarchy, the mapping, the bindings and the changes (after store_fini()). */
void policy_fini(struct devwld *d);

#endif
