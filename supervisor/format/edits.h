/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The devwlctl changes devwld keeps since the policy file was loaded (edits.c), so that a
 * reload or a restart applies them again; pure: lines in, a hierarchy changed.
 */
#ifndef DEVWLD_EDITS_H
#define DEVWLD_EDITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "devwl.h"

/* The devwlctl changes since the policy file was loaded (edits.c). */
struct edit {
	char *line; /* the control line, NUL-terminated (a rule may hold a NUL too) */
	size_t len;
};
struct edits {
	struct edit *v;
	size_t n, size;
	size_t learns; /* how many of them are learn lines: none, and no node learns here */
};
/* Beyond this a change is refused (ENOSPC): fold them into the policy file and reset. */
#define EDITS_MAX 10000

/* Is line a change that a reload replays (mkdir, rmdir, allow, deny, mknod_needs_cap,
 * learn)? */
bool edit_is_change(const char *line, size_t len);
/* The NODE word of a change line into buf. 0 or -EINVAL. */
int edit_target(const char *line, size_t len, char *buf, size_t size);
/* Append a change (copied), dropping an earlier copy that the new one makes moot.
 * -ENOSPC past EDITS_MAX, -ENOMEM. */
int edits_add(struct edits *e, const char *line, size_t len);
void edits_clear(struct edits *e);
/* Drop the changes to path and its descendants (a node made on demand is gone). */
void edits_forget(struct edits *e, const char *path);
/* What the devwlctl changes say of node path's learn mode (devwlctl learn PATH on|off):
 * 1 on, 0 off, -1 nothing (the policy file's "learn" holds). */
int edits_learn(const struct edits *e, const char *path);
/* Carry out a change line on policy, its answer on out: 0, -ENOENT (no such node) or
 * another negative errno. */
int edit_exec(struct devwl_policy *policy, const char *line, size_t len, FILE *out);

#endif
