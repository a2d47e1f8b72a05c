/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What devwl-oci-hook reads of a container's bundle (common/ocibundle.c). */
#ifndef DEVWL_OCIBUNDLE_H
#define DEVWL_OCIBUNDLE_H

#include <stddef.h>

#include "devwl.h"

/* A bundle's config.json is read up to this size; a larger one is refused. */
#define OCI_CONFIG_MAX (4 * 1024 * 1024)

/*
 * The linux.seccomp.listenerMetadata string of the config.json text[0..len): 1 and a heap
 * copy in *ret (caller frees), 0 when the config has none, -EINVAL (not a JSON object, a
 * member of the wrong type, a NUL byte in the string), -E2BIG (len over INT_MAX) or
 * -ENOMEM, with the reason in err.
 */
int oci_config_metadata(const char *text, size_t len, char **ret, struct devwl_error *err);

/*
 * The same of the file BUNDLE/config.json, bundle an absolute path. Errors as above, and
 * -E2BIG (over OCI_CONFIG_MAX) or the -errno of open or read, with the file named in err.
 */
int oci_bundle_metadata(const char *bundle, char **ret, struct devwl_error *err);

#endif
