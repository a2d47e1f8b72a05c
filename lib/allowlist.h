/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal view of the allow-list hierarchy (lib/allowlist.c). */
#ifndef DEVWL_ALLOWLIST_H
#define DEVWL_ALLOWLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "devwl.h"
#include "nodepath.h"

/*
 * Save the state (behavior, exceptions, mknod waiver) of node and its descendants, so
 * that a sequence of updates can be undone as a whole. Restore puts it back and frees
 * the snapshot; it cannot fail, and is valid only while no node was added to or removed
 * from the subtree in between. Errors: -EINVAL, -ENOMEM.
 */
struct devwl_node_snapshot;
int node_snapshot_take(const struct devwl_node *node, struct devwl_node_snapshot **ret);
void node_snapshot_restore(struct devwl_node *node, struct devwl_node_snapshot *snap);
void node_snapshot_free(struct devwl_node_snapshot *snap);

#endif
