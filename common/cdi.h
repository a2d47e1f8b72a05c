/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CDI devices of a list of spec directories (/etc/cdi, /var/run/cdi), with the CDI
 * specification's precedence: a device of a later directory replaces one of the same
 * VENDOR/CLASS=NAME in an earlier one; the same device in two files of one directory is
 * a conflict, reported, and the device is then ignored altogether, whatever another
 * directory defines. A spec file that cannot be read is reported and skipped; the others
 * load.
 */
#ifndef DEVWL_CDI_H
#define DEVWL_CDI_H

#include <stddef.h>
#include <stdint.h>

#include "cdi-spec.h"
#include "devwl.h"
#include "rulevec.h"

struct cdi_registry;

/* The CDI specification's spec directories, where none are configured (devwld
 * --cdi-dir, devwlctl's environment): later ones win. The one list of them. */
extern const char *const cdi_default_dirs[2];

/* Read every *.json and *.yaml file directly in dirs[0..n) (a missing directory has
 * none), in name order. 0, or -ENOMEM; what went wrong with a file is in its errors. */
int cdi_load(const char *const *dirs, size_t n, struct cdi_registry **ret);
void cdi_free(struct cdi_registry *reg);
/* Spec files read and parsed so far: an unchanged one (the same device, inode, size,
 * modification and change time) is parsed once and its answer kept, refusals too. */
unsigned long cdi_parses(void);

/* The problems found while loading ("FILE: FIELD: why", conflicts), in order. */
size_t cdi_n_errors(const struct cdi_registry *reg);
const char *cdi_error(const struct cdi_registry *reg, size_t i);

/*
 * Add the rules of device kind=name (name "*": every device of kind) to rv: each device
 * node, its own and its spec's, with type and numbers from the spec or, where the spec
 * leaves them out, from stat(2) of its host path; access is its permissions and access
 * both. -ENOENT for a device no spec defines (or only in conflict), -EINVAL for a node
 * that is no device; ret_err says which and where.
 */
int cdi_resolve(const struct cdi_registry *reg, const char *kind, const char *name, uint8_t access,
		struct rulevec *rv, struct devwl_error *ret_err);

/*
 * The name, "VENDOR/CLASS=NAME" into buf, of the first device (in load order) that is
 * the one device type major:minor and nothing else: every node it and its spec's common
 * edits name is that device. What names it and more would grant more than it. 0,
 * -ENOENT (none), -ENOMEM, -ENAMETOOLONG (size).
 */
int cdi_name_of(const struct cdi_registry *reg, uint8_t type, uint32_t major, uint32_t minor,
		char *buf, size_t size);

#endif
