/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for CDI spec files (common/cdi-spec.c, common/yamljson.c): the input is
 * read as a JSON spec and as a YAML spec. Each reading is a spec or a refusal with a
 * coherent error naming the file; a spec holds at least one device, every name and kind
 * is one the CDI's rules accept, and every node has a host path and access within rwm.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cdi-spec.h"
#include "devwl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

static void check_nodes(const struct cdi_node *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		check(v[i].path && v[i].path[0] && v[i].field);
		check((v[i].access & ~DEVWL_ACC_MASK) == 0);
		check(v[i].type == 0 || v[i].type == DEVWL_DEV_CHAR ||
		      v[i].type == DEVWL_DEV_BLOCK);
		check(!v[i].has_major || v[i].major != DEVWL_ANY);
		check(!v[i].has_minor || v[i].minor != DEVWL_ANY);
	}
}

static void one(const char *text, size_t len, bool yaml)
{
	struct cdi_spec *spec = NULL;
	struct devwl_error err = {0};
	const char *slash;
	int r = cdi_spec_parse(text, len, yaml, "fuzz.spec", &spec, &err);

	if (r < 0) {
		check(r == -EINVAL || r == -ENOMEM || r == -E2BIG);
		check(err.code == r && !strncmp(err.msg, "fuzz.spec", 9));
		check(!spec);
		return;
	}
	check(spec && spec->n_devs >= 1);
	slash = strchr(spec->kind, '/');
	check(slash && cdi_vendor_valid(spec->kind, (size_t)(slash - spec->kind)) &&
	      cdi_class_valid(slash + 1, strlen(slash + 1)));
	for (size_t i = 0; i < spec->n_devs; i++) {
		check(cdi_name_valid(spec->devs[i].name, strlen(spec->devs[i].name)));
		check_nodes(spec->devs[i].nodes, spec->devs[i].n_nodes);
	}
	check_nodes(spec->common, spec->n_common);
	cdi_spec_free(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	check(text);
	memcpy(text, data, size);
	text[size] = '\0';
	one(text, size, false);
	one(text, size, true);
	free(text);
	return 0;
}
