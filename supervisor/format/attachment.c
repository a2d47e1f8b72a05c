/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A container's attached devices as the store keeps them (attachment.h). */
#include <stdlib.h>

#include "attachment.h"
#include "devwl.h"
#include "util.h"

uint8_t attachment_access(const struct devwl_node *node, int type, uint32_t major, uint32_t minor)
{
	static const uint8_t bits[] = {DEVWL_ACC_READ, DEVWL_ACC_WRITE, DEVWL_ACC_MKNOD};
	uint8_t have = 0;

	for (size_t i = 0; i < ARRAY_SIZE(bits); i++)
		if (devwl_node_check(node, type, major, minor, bits[i]) == 1)
			have |= bits[i];
	return have;
}

size_t attachments_regrant(struct attachment *v, size_t n, struct devwl_node *node)
{
	size_t lapsed = 0;

	for (size_t i = 0; i < n; i++) {
		struct attachment *a = &v[i];
		struct devwl_rule rule = {.type = (uint8_t)a->type,
					  .access = a->access,
					  .major = a->major,
					  .minor = a->minor};
		uint8_t before = attachment_access(node, a->type, a->major, a->minor);

		/* An exact allow cannot lift a wider denial of an allow-all node: checked. */
		if (devwl_node_update(node, DEVWL_FILE_ALLOW, &rule) < 0 ||
		    (attachment_access(node, a->type, a->major, a->minor) & a->access) !=
			    a->access) {
			lapsed += !a->lapsed;
			a->lapsed = true;
			continue;
		}
		a->lapsed = false;
		a->added = a->access & ~before;
	}
	return lapsed;
}

void attachments_free(struct attachment *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}
