/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node paths of the allow-list hierarchy, as every part of devwl checks them. */
#ifndef DEVWL_NODEPATH_H
#define DEVWL_NODEPATH_H

/* Longest node path and component we accept (a cgroup name is at most 255 bytes). */
#define DEVWL_NODE_PATH_MAX 4096
#define DEVWL_NODE_NAME_MAX 255

/* Validate a node path: "/" or "/a/b" (no empty, "." or ".." parts, no spaces or
 * control characters, so that every line protocol can carry it). 0 or -EINVAL. */
int devwl_node_path_valid(const char *path);

#endif
