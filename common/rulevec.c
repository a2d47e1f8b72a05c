/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "access.h"
#include "rulevec.h"

int rulevec_add(struct rulevec *rv, const struct devwl_rule *rule)
{
	struct devwl_rule *nv;

	for (size_t i = 0; i < rv->n; i++) {
		struct devwl_rule *o = &rv->v[i];

		if (o->type == rule->type && o->major == rule->major && o->minor == rule->minor) {
			o->access |= rule->access;
			return 0;
		}
	}
	nv = realloc(rv->v, (rv->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	nv[rv->n++] = *rule;
	rv->v = nv;
	return 0;
}

void rulevec_sort(struct rulevec *rv)
{
	if (rv->n > 1)
		qsort(rv->v, rv->n, sizeof(*rv->v), devwl_rule_key_cmp);
}
