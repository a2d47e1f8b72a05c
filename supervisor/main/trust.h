/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwld's own trust boundaries on the host (devwld(8) SECURITY): the directories that
 * hold its sockets and its state must be devwld's alone, and one daemon serves a socket,
 * holding a lock beside it (trust.c).
 */
#ifndef DEVWLD_TRUST_H
#define DEVWLD_TRUST_H

#include <stdbool.h>
#include <sys/types.h>

#include "devwl.h"

/*
 * Make the directory that holds file (and its parents) if it is missing, then check that
 * nobody but root and uid can change what is in it: it and every directory above it
 * owned by root or uid, the directory itself writable by its owner only, one above it
 * writable by others only if sticky (as /tmp: others may add names there, not move
 * ours). 0; -EPERM with the directory, its owner and its mode in err; or -errno.
 */
int trust_dir_of(const char *file, uid_t uid, struct devwl_error *err);

/*
 * Lock the socket at path against other devwlds: flock(2) on PATH.lock, which then holds
 * our pid. The lock fd (O_CLOEXEC); -EBUSY while another process holds it (its pid in
 * *ret_holder, 0 if unknown), -EADDRINUSE when something listens on path without the
 * lock (a devwld of a version before locks), or -errno.
 */
int trust_lock(const char *sock_path, pid_t *ret_holder);

/* A start that failed (devwld(8) SECURITY): unlink sock_path's lock file if it is still
 * the one lock_fd holds, before the lock goes. A devwld locking it meanwhile locks the
 * file at the path again (trust_lock()), so there is never more than one holder. */
void trust_lock_remove(int lock_fd, const char *sock_path);

/* Note in the lock which socket file at sock_path we bound (its device and inode). */
int trust_lock_note(int lock_fd, const char *sock_path);

/* Unlink sock_path if it is still the socket the lock noted: true; false when it is not
 * (or nothing is noted, lock_fd < 0): someone else's now, it stays. */
bool trust_unlink_own(int lock_fd, const char *sock_path);

#endif
