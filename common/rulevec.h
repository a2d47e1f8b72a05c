/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A growing list of kernel rules, what a selector resolves to (selector.c, sysfsid.c, cdi.c). */
#ifndef DEVWL_RULEVEC_H
#define DEVWL_RULEVEC_H

#include <stddef.h>
#include <stdint.h>

#include "devwl.h"

struct rulevec {
	struct devwl_rule *v;
	size_t n;
};

/* Add rule, or merge its access into an equal device already there. 0 or -ENOMEM. */
int rulevec_add(struct rulevec *rv, const struct devwl_rule *rule);

/* Sort by type, major, minor: a selector's rules come out in one order whatever order the
 * directories were read in. */
void rulevec_sort(struct rulevec *rv);

#endif
