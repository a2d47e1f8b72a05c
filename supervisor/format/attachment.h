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
struct devwl_rule;

struct attachment {
	int type; /* DEVWL_DEV_CHAR or DEVWL_DEV_BLOCK */
	uint32_t major, minor;
	uint8_t access; /* granted */
	uint8_t added;	/* what the grant added to the node: what detach revokes */
	bool lapsed;	/* a reload's policy refuses it: the node stays, the grant is gone */
	bool absent;	/* its selector names no device now: no node, no grant, waiting */
	bool refused;	/* absent since the grant or node of these numbers failed: not tried
			 * again until they change (not in the state file: a restart tries) */
	char *path;	/* in the container */
	char *selector; /* followed by identity (common/selector.h); NULL: fixed numbers */
	mode_t mode;
	uid_t uid; /* as the container sees them; (uid_t)-1: its root */
	gid_t gid;
};

/* The access node gives the device now (DEVWL_ACC_* bits), bit by bit. */
uint8_t attachment_access(const struct devwl_node *node, int type, uint32_t major, uint32_t minor);
/* Write the grants of a container's attachments v[0..n) again to node (a reload's copy
 * of its node); one the new hierarchy refuses lapses. Returns how many lapsed now. */
size_t attachments_regrant(struct attachment *v, size_t n, struct devwl_node *node);
/*
 * What an attachment by selector does when its selector resolves to now[0..n) (after a
 * uevent, a CDI spec changed): keep it, take it away (no device, or several: when in doubt,
 * deny), or move it to now[0]'s numbers (another device, or one back after an absence;
 * not the numbers it was refused at again).
 * *ret_why: for a removal, why, for the log and the record.
 */
enum attachment_step {
	ATTACHMENT_KEEP,  /* the same device, or still none */
	ATTACHMENT_AWAY,  /* was present, names no one device now */
	ATTACHMENT_MOVE,  /* another device than it had */
	ATTACHMENT_RETURN /* a device again after none */
};
enum attachment_step attachment_follow_step(const struct attachment *a,
					    const struct devwl_rule *now, size_t n,
					    const char **ret_why);
/* What attachment_say() reports. */
enum attachment_deed {
	ATTACHMENT_ATTACHED,
	ATTACHMENT_WOULD_ATTACH, /* devwlctl attach --dry-run: checked, nothing changed */
	ATTACHMENT_DETACHED,
	ATTACHMENT_WOULD_DETACH,
	ATTACHMENT_DETACHED_NODE_LEFT, /* revoked, but no process left to remove the node by */
};
/*
 * The line devwlctl attach and detach print: what was done to which container (its full
 * id, and name when it has one), the device (numbers, host path, selector), the path in
 * the container, access, owner and mode, and the node that holds the grant. host_path and
 * name may be NULL. Always terminates buf (size > 0); truncates.
 */
void attachment_say(char *buf, size_t size, enum attachment_deed deed, const struct attachment *a,
		    const char *host_path, const char *id, const char *name, const char *node);
/* Free what a holds (not a itself). */
void attachment_clear(struct attachment *a);
/* Free v[0..n) and v itself. */
void attachments_free(struct attachment *v, size_t n);

#endif
