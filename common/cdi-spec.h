/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One CDI spec file (the Container Device Interface's device descriptions, JSON or YAML)
 * read into the device nodes devwl needs: for each device, its own deviceNodes and the
 * spec-level ones every device of the file brings. Everything else (env, mounts, hooks)
 * is the runtime's business and is not read.
 */
#ifndef DEVWL_CDI_SPEC_H
#define DEVWL_CDI_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devwl.h"

struct cdi_node {
	char *path;   /* hostPath, else path: where the node is on the host */
	char *field;  /* where it was written, for messages: devices[0].containerEdits... */
	uint8_t type; /* DEVWL_DEV_CHAR or _BLOCK; 0: read from the node by stat */
	bool no_rule; /* type u or p: a node the CDI gives no cgroup rule */
	bool has_major, has_minor;
	uint32_t major, minor;
	uint8_t access; /* permissions: DEVWL_ACC_* bits; rwm when omitted */
};

struct cdi_dev {
	char *name;
	struct cdi_node *nodes;
	size_t n_nodes;
};

struct cdi_spec {
	char *file;
	char *kind; /* VENDOR/CLASS */
	struct cdi_dev *devs;
	size_t n_devs;
	struct cdi_node *common; /* the spec's own containerEdits, for every device of it */
	size_t n_common;
};

/* Spec files larger than this are refused: far more than any vendor writes. */
#define CDI_SPEC_SIZE_MAX (1u << 20)

/*
 * Read text[0..len) (text[len] must be NUL), YAML if yaml, else JSON, as the spec file
 * file. A spec with a bad field is refused whole: -EINVAL with ret_err naming the file
 * and the field ("FILE: devices[1].name: ..."); -ENOMEM, -E2BIG.
 */
int cdi_spec_parse(const char *text, size_t len, bool yaml, const char *file, struct cdi_spec **ret,
		   struct devwl_error *ret_err);
void cdi_spec_free(struct cdi_spec *spec);

/* CDI's name rules: VENDOR (a DNS-like prefix), CLASS, and a device NAME. */
bool cdi_vendor_valid(const char *s, size_t len);
bool cdi_class_valid(const char *s, size_t len);
bool cdi_name_valid(const char *s, size_t len);

#endif
