/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The directories of devwld's sockets and state (devwld(8) SECURITY). Whoever can write
 * there can plant a state file that grants every device, or put a socket of their own in
 * place of the listener and be handed the runtimes' notify fds: so devwld uses only
 * directories that root (or its own uid) alone can change.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "trust.h"
#include "util.h"

/* One directory on the way: last is the one devwld uses, the others are above it. */
static int check_dir(const char *path, bool last, uid_t uid, struct devwl_error *err)
{
	struct stat st;
	mode_t mode;

	if (lstat(path, &st) < 0)
		return devwl_error_set(err, negerrno(), 0, "%s: %s", path, strerror(errno));
	mode = st.st_mode & 07777;
	if (!S_ISDIR(st.st_mode))
		return devwl_error_set(err, -ENOTDIR, 0, "%s: not a directory", path);
	if (st.st_uid != 0 && st.st_uid != uid)
		return devwl_error_set(
			err, -EPERM, 0,
			"%s is owned by uid %u (mode %04o): devwld keeps its sockets "
			"and state only in and below directories of root%s",
			path, (unsigned int)st.st_uid, (unsigned int)mode,
			uid ? " or of its own uid" : "");
	/* A sticky directory lets others add names, not rename or remove ours: fine above
	 * ours, as /tmp is, but not as ours, where they could plant the names we use. */
	if ((mode & 022) && (last || !(mode & S_ISVTX)))
		return devwl_error_set(
			err, -EPERM, 0,
			"%s is writable by %s (mode %04o, owner uid %u): devwld keeps "
			"its sockets and state only in a directory no one else can "
			"write%s",
			path, (mode & 002) ? "everyone" : "its group", (unsigned int)mode,
			(unsigned int)st.st_uid,
			last ? "" : ", below ones that are sticky if others can");
	return 0;
}

static int check_path(const char *real, uid_t uid, struct devwl_error *err)
{
	const char *end = real;
	int r = 0;

	/* "/" first, unless it is all there is (the loop's only round then). */
	if (strcmp(real, "/"))
		r = check_dir("/", false, uid, err);
	while (r >= 0 && end) {
		_cleanup_free_ char *prefix = NULL;
		size_t n;

		end = strchr(end + 1, '/');
		n = end ? (size_t)(end - real) : strlen(real);
		prefix = strndup(real, n ? n : 1);
		if (!prefix)
			return -ENOMEM;
		r = check_dir(prefix, !end, uid, err);
	}
	return r;
}

int trust_dir_of(const char *file, uid_t uid, struct devwl_error *err)
{
	_cleanup_free_ char *dir = NULL, *real = NULL;
	const char *slash = strrchr(file, '/');
	int r;

	dir = slash ? strndup(file, slash == file ? 1 : (size_t)(slash - file)) : strdup(".");
	if (!dir)
		return -ENOMEM;
	r = devwl_mkdir_parents(file);
	if (r < 0)
		return devwl_error_set(err, r, 0, "cannot make %s: %s", dir, strerror(-r));
	/* Symlinks resolved: the walk below checks the directories actually used. */
	real = realpath(dir, NULL);
	if (!real)
		return devwl_error_set(err, negerrno(), 0, "%s: %s", dir, strerror(errno));
	return check_path(real, uid, err);
}
