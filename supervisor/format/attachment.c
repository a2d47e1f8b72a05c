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

		/* Waiting for its device: nothing granted, nothing to grant. */
		if (a->absent)
			continue;
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

enum attachment_step attachment_follow_step(const struct attachment *a,
					    const struct devwl_rule *now, size_t n,
					    const char **ret_why)
{
	bool same;

	*ret_why = NULL;
	if (n == 1 && ((now->type != DEVWL_DEV_CHAR && now->type != DEVWL_DEV_BLOCK) ||
		       now->major == DEVWL_ANY || now->minor == DEVWL_ANY))
		*ret_why = "it names a range of devices now, and the node is one device's";
	else if (n > 1)
		*ret_why = "it names several devices now, and the node is one device's";
	else if (n == 0)
		*ret_why = "it names no device now";
	if (*ret_why)
		return a->absent ? ATTACHMENT_KEEP : ATTACHMENT_AWAY;
	same = now->type == a->type && now->major == a->major && now->minor == a->minor;
	if (a->absent)
		return a->refused && same ? ATTACHMENT_KEEP : ATTACHMENT_RETURN;
	if (same)
		return ATTACHMENT_KEEP;
	return ATTACHMENT_MOVE;
}

void attachment_clear(struct attachment *a)
{
	free(a->path);
	free(a->selector);
	a->path = a->selector = NULL;
}

void attachments_free(struct attachment *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		attachment_clear(&v[i]);
	free(v);
}
