/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The device set every OCI container gets, shared by devwl-run and devwld (common/defaults.c). */
#ifndef DEVWL_DEFAULTS_H
#define DEVWL_DEFAULTS_H

#include <stddef.h>

#include "devwl.h"

/* The rules, in the kernel's grammar: null, zero, full, random, urandom, tty, ptmx, pts. */
extern const char *const devwl_default_rules[];
extern const size_t devwl_default_nrules;

/*
 * Make node deny by default and allow the default set, except what its parent denies
 * (an allow-by-default parent's deny exceptions still hold). The node must have no
 * children. Errors: -EINVAL (children), -ENOMEM.
 */
int devwl_node_set_defaults(struct devwl_node *node);

#endif
