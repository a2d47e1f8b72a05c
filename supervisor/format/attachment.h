/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A device attached to a running container (core/attach.c does the attaching), as the
 * state file keeps it, and what the store does with a container's list (attachment.c).
 */
#ifndef DEVWLD_ATTACHMENT_H
#define DEVWLD_ATTACHMENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

struct devwl_node;

struct attachment {
	int type; /* DEVWL_DEV_CHAR or DEVWL_DEV_BLOCK */
	uint32_t major, minor;
	uint8_t access; /* granted */
	uint8_t added;	/* what the grant added to the node: what detach revokes */
	bool lapsed;	/* a reload's policy refuses it: the node stays, the grant is gone */
	char *path;	/* in the container */
	mode_t mode;
	uid_t uid; /* as the container sees them; (uid_t)-1: its root */
	gid_t gid;
};

/* The access node gives the device now (DEVWL_ACC_* bits), bit by bit. */
uint8_t attachment_access(const struct devwl_node *node, int type, uint32_t major, uint32_t minor);
/* Write the grants of a container's attachments v[0..n) again to node (a reload's copy
 * of its node); one the new hierarchy refuses lapses. Returns how many lapsed now. */
size_t attachments_regrant(struct attachment *v, size_t n, struct devwl_node *node);
/* Free v[0..n) and v itself. */
void attachments_free(struct attachment *v, size_t n);

#endif
