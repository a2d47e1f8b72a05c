/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which runtimes say a container's name, and where (documented in devwlctl(1), CONTAINER
 * NAMES): nerdctl in its "nerdctl/name" annotation; podman only in its storage's
 * containers.json, beside the bundle (podman 4.3.1's state carries io.container.manager,
 * io.podman.annotations.* and io.kubernetes.cri-o.{Created,TTY}, no name); Docker, ctr
 * and CRI-O in neither (Docker 28.2 passes no annotation unless `docker run --annotation`
 * adds one; ctr's id is the name its user chose; CRI-O's and containerd's CRI containers
 * have their Kubernetes names, mapping.c). podman and Docker checked as they run here. The
 * JSON is read here and converted at once (devwl's edges).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "jsonutil.h"
#include "ocistate.h"
#include "rtname.h"
#include "util.h"

/* containers.json of a host with thousands of containers stays well below this. */
#define STORAGE_JSON_MAX (16u << 20)

/* A name as devwlctl takes one: a word that is no path, no id form of its own. */
static bool plain_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > RTNAME_MAX ||
	    !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	      (s[0] >= '0' && s[0] <= '9')))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static bool regular(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

char *rtname_from_storage(const char *path, const char *id)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct json_object *arr = NULL;
	char *name = NULL;

	/* A regular file only: a FIFO or a device there is no storage of podman's. */
	if (fd < 0 || !regular(fd) || devwl_read_all(fd, STORAGE_JSON_MAX, &text) < 0)
		return NULL;
	arr = json_tokener_parse(text);
	if (!arr || !json_object_is_type(arr, json_type_array)) {
		json_object_put(arr);
		return NULL;
	}
	for (size_t i = 0; i < json_object_array_length(arr) && !name; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i), *v = NULL, *names = NULL;

		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "id", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    strcmp(json_object_get_string(v), id) ||
		    !json_object_object_get_ex(e, "names", &names) ||
		    !json_object_is_type(names, json_type_array) ||
		    !json_object_array_length(names))
			continue;
		v = json_object_array_get_idx(names, 0);
		if (json_object_is_type(v, json_type_string) && !json_string_has_nul(v) &&
		    plain_name(json_object_get_string(v)))
			name = strdup(json_object_get_string(v));
		break;
	}
	json_object_put(arr);
	return name;
}

/* podman's bundle: GRAPHROOT/DRIVER-containers/ID/userdata; its storage's containers.json
 * is GRAPHROOT/DRIVER-containers/containers.json. NULL for any other bundle. */
static char *storage_json_of(const char *bundle, const char *id)
{
	size_t n = strlen(bundle), idn = strlen(id);
	char *path = NULL;

	while (n > 1 && bundle[n - 1] == '/')
		n--;
	/* ".../-containers/ID/userdata" */
	if (n < 9 + idn + 1 || memcmp(bundle + n - 9, "/userdata", 9) ||
	    memcmp(bundle + n - 9 - idn, id, idn) || bundle[n - 9 - idn - 1] != '/')
		return NULL;
	n -= 9 + idn + 1;
	if (n < 11 || memcmp(bundle + n - 11, "-containers", 11))
		return NULL;
	if (asprintf(&path, "%.*s/containers.json", (int)n, bundle) < 0)
		return NULL;
	return path;
}

char *rtname_of(const struct oci_state *st)
{
	const char *v = oci_annotation(st, "nerdctl/name");
	_cleanup_free_ char *storage = NULL;

	if (v)
		return plain_name(v) ? strdup(v) : NULL;
	if (!st->bundle || !oci_annotation(st, "io.container.manager") ||
	    strcmp(oci_annotation(st, "io.container.manager"), "libpod"))
		return NULL;
	storage = storage_json_of(st->bundle, st->id);
	return storage ? rtname_from_storage(storage, st->id) : NULL;
}
