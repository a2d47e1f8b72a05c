/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A keeper slot's record (slotrec.c): whose the slot's notify fd is, as the worker that
 * added it wrote it. The keeper stores it without reading it (keeper.h); a new worker
 * decodes it to restore a process the state file does not name (devwld(8), STATE).
 * Pure: no syscalls, no allocation.
 */
#ifndef DEVWLD_SLOTREC_H
#define DEVWLD_SLOTREC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The longest container id the listener accepts, and the longest node path. */
#define SLOTREC_ID_MAX	 1024
#define SLOTREC_NODE_MAX 4095
/* The header, then the id and the node path, neither NUL-terminated. */
#define SLOTREC_HEAD 24
#define SLOTREC_MAX  (SLOTREC_HEAD + SLOTREC_ID_MAX + SLOTREC_NODE_MAX)

/* What container_restore() needs to serve the process again. */
struct slot_owner {
	const char *id;	  /* the container */
	const char *node; /* the container's node path */
	bool created;	  /* the node was made on demand for it */
	bool kernel;	  /* in kernel mode: its device cgroup follows the node */
	pid_t pid;	  /* as the runtime said (0 from crun exec) */
	uid_t peer_uid;	  /* the runtime that handed the fd over */
	pid_t peer_pid;
};

/* A decoded record: owner's strings point into id and node. */
struct slot_owner_buf {
	struct slot_owner owner;
	char id[SLOTREC_ID_MAX + 1];
	char node[SLOTREC_NODE_MAX + 1];
};

/* Encode o into buf (size bytes): the record's length, or -ENAMETOOLONG (the id or the
 * node is longer than the bounds above, or buf too small), -EINVAL (empty or NULL). */
ssize_t slotrec_encode(const struct slot_owner *o, void *buf, size_t size);
/*
 * Decode len bytes of rec, untrusted: every length, bound and field is checked, the id
 * against the listener's alphabet (oci_id_valid) and the node as a node path. 0, or
 * -EINVAL with a static reason in ret_why.
 */
int slotrec_decode(const void *rec, size_t len, struct slot_owner_buf *ret, const char **ret_why);

#endif
