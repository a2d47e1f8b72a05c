/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seccomp listenerMetadata of a container's bundle, for devwl-oci-hook. A runtime
 * sends it to the listener with each process, but hands a hook only the state (no
 * metadata): the hook reads it from BUNDLE/config.json, where the runtime read it, so
 * devwld can choose the node for the hook with the same input as for the listener.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "jsonutil.h"
#include "ocibundle.h"
#include "util.h"

/* obj's member key: 1 and *ret when it is of type, 0 when absent, -EINVAL otherwise. */
static int member(struct json_object *obj, const char *key, enum json_type type,
		  struct json_object **ret, struct devwl_error *err)
{
	if (!json_object_object_get_ex(obj, key, ret) || json_object_is_type(*ret, json_type_null))
		return 0;
	if (!json_object_is_type(*ret, type))
		return devwl_error_set(err, -EINVAL, 0, "\"%s\" is not %s", key,
				       type == json_type_string ? "a string" : "an object");
	return 1;
}

int oci_config_metadata(const char *text, size_t len, char **ret, struct devwl_error *err)
{
	enum json_tokener_error jerr;
	struct json_object *config, *lin = NULL, *seccomp = NULL, *meta = NULL;
	json_tokener *tok;
	int r;

	*ret = NULL;
	if (len > INT_MAX)
		return devwl_error_set(err, -E2BIG, 0, "over %d bytes", INT_MAX);
	tok = json_tokener_new();
	if (!tok)
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	config = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	json_tokener_free(tok);
	if (config && !json_object_is_type(config, json_type_object)) {
		json_object_put(config);
		return devwl_error_set(err, -EINVAL, 0, "not a JSON object");
	}
	if (!config)
		return devwl_error_set(err, -EINVAL, 0, "not JSON: %s",
				       jerr == json_tokener_continue
					       ? "it ends before the object does"
					       : json_tokener_error_desc(jerr));
	r = member(config, "linux", json_type_object, &lin, err);
	if (r > 0)
		r = member(lin, "seccomp", json_type_object, &seccomp, err);
	if (r > 0)
		r = member(seccomp, "listenerMetadata", json_type_string, &meta, err);
	if (r > 0 && json_string_has_nul(meta))
		r = devwl_error_set(err, -EINVAL, 0, "\"listenerMetadata\" holds a NUL byte");
	if (r > 0 && !(*ret = strdup(json_object_get_string(meta))))
		r = devwl_error_set(err, -ENOMEM, 0, "out of memory");
	json_object_put(config);
	return r;
}

int oci_bundle_metadata(const char *bundle, char **ret, struct devwl_error *err)
{
	_cleanup_free_ char *file = NULL, *text = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	ssize_t len;
	int r;

	*ret = NULL;
	if (bundle[0] != '/')
		return devwl_error_set(err, -EINVAL, 0, "bundle \"%.256s\" is not an absolute path",
				       bundle);
	if (asprintf(&file, "%s/config.json", bundle) < 0) {
		file = NULL;
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	}
	/* O_NONBLOCK: a FIFO in its place must not hang the runtime in open(). */
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return devwl_error_set(err, negerrno(), 0, "%.480s: %s", file, strerror(errno));
	if (fstat(fd, &st) < 0)
		return devwl_error_set(err, negerrno(), 0, "%.480s: %s", file, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return devwl_error_set(err, -EINVAL, 0, "%.480s: not a regular file", file);
	len = devwl_read_all(fd, OCI_CONFIG_MAX, &text);
	if (len == -E2BIG)
		return devwl_error_set(err, -E2BIG, 0, "%.480s: over %d bytes", file,
				       OCI_CONFIG_MAX);
	if (len < 0)
		return devwl_error_set(err, (int)len, 0, "%.480s: %s", file, strerror((int)-len));
	r = oci_config_metadata(text, (size_t)len, ret, err);
	if (r < 0 && err) {
		char why[sizeof(err->msg)];

		memcpy(why, err->msg, sizeof(why));
		snprintf(err->msg, sizeof(err->msg), "%.256s: %.240s", file, why);
	}
	return r;
}
