/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwld's own trust boundaries on the host (devwld(8) SECURITY): the directories that
 * hold its sockets and its state must be devwld's alone (trust.c).
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

#endif
