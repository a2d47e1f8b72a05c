/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A container's attached devices as the store keeps them (attachment.h). */
#include <stdio.h>
#include <stdlib.h>

#include "access.h"
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

/* An owner id as the container sees it: (uid_t)-1 is its root, whatever that maps to. */
static void say_id(char *buf, size_t size, unsigned int id)
{
	if (id == (unsigned int)-1)
		snprintf(buf, size, "its root");
	else
		snprintf(buf, size, "%u", id);
}

void attachment_say(char *buf, size_t size, enum attachment_deed deed, const struct attachment *a,
		    const char *host_path, const char *id, const char *name, const char *node)
{
	static const char *const verbs[] = {
		[ATTACHMENT_ATTACHED] = "attached",
		[ATTACHMENT_WOULD_ATTACH] = "would attach",
		[ATTACHMENT_DETACHED] = "detached",
		[ATTACHMENT_WOULD_DETACH] = "would detach",
		[ATTACHMENT_DETACHED_NODE_LEFT] = "detached",
	};
	bool attach = deed == ATTACHMENT_ATTACHED || deed == ATTACHMENT_WOULD_ATTACH;
	char acc[4], uid[16], gid[16], dev[320] = "";
	size_t n;

	if (host_path || a->selector)
		snprintf(dev, sizeof(dev), " (%s%s%s%s)", host_path ? host_path : "",
			 host_path && a->selector ? ", " : "", a->selector ? "by " : "",
			 a->selector ? a->selector : "");
	n = (size_t)snprintf(buf, size, "%s %c %u:%u%s %s %s container %s%s%s%s", verbs[deed],
			     a->type == DEVWL_DEV_BLOCK ? 'b' : 'c', a->major, a->minor, dev,
			     devwl_access_text(a->access, acc), attach ? "to" : "from", id,
			     name ? " (" : "", name ? name : "", name ? ")" : "");
	if (n >= size)
		return;
	say_id(uid, sizeof(uid), (unsigned int)a->uid);
	say_id(gid, sizeof(gid), (unsigned int)a->gid);
	if (attach)
		snprintf(buf + n, size - n, " at %s, mode %04o, owner %s:%s; granted on node %s%s",
			 a->path, (unsigned int)a->mode, uid, gid, node,
			 deed == ATTACHMENT_WOULD_ATTACH ? " (dry run: nothing changed)" : "");
	else if (deed == ATTACHMENT_WOULD_DETACH)
		snprintf(buf + n, size - n,
			 ": %s would be removed and the grant revoked on node %s (dry run: nothing"
			 " changed)",
			 a->path, node);
	else
		snprintf(buf + n, size - n, ": %s %s, grant revoked on node %s", a->path,
			 deed == ATTACHMENT_DETACHED_NODE_LEFT
				 ? "left (no process of it to reach it by)"
				 : "removed",
			 node);
}
