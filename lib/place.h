/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure part of lib/place.c, apart so that the unit tests reach it. */
#ifndef DEVWL_PLACE_H
#define DEVWL_PLACE_H

#include <stdint.h>
#include <sys/stat.h>

/*
 * Translate id of a user namespace into the reader's through the text of its
 * /proc/PID/uid_map or gid_map (lines "FIRST LOWER COUNT"). 0 and *ret_id, -ENOENT no
 * line maps id, -EINVAL a line that is not three numbers or whose range overflows.
 */
int place_idmap_lookup(const char *map, uint32_t id, uint32_t *ret_id);

/* placebind.c: bind a twin of the node node (an O_PATH fd, named name) over it, in the
 * mount namespace of the process proc (/proc/PID) names; and unmount it again. 0 or
 * -errno. */
int place_bind_twin(int proc, int node, const char *name);
int place_unbind(int proc, int node);
/* The node st described (through its twin) is gone from the target of proc: its twin's
 * name goes, freeing its slot (caller_twin_forget()). */
void place_twin_forget(int proc, const struct stat *st);

#endif
