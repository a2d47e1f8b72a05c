/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Counts the opens of a /proc/TID/status: the test links with -Wl,--wrap=openat
 * (tests/unit/CMakeLists.txt), so that a test can prove a decision reads it once.
 * Included by one test file each.
 */
#ifndef DEVWL_TEST_STATUSWRAP_H
#define DEVWL_TEST_STATUSWRAP_H

#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/types.h>

static int status_opens;

int __real_openat(int dirfd, const char *path, int flags, ...);
int __wrap_openat(int dirfd, const char *path, int flags, ...);
int __wrap_openat(int dirfd, const char *path, int flags, ...)
{
	size_t n = strlen(path);
	mode_t mode = 0;
	va_list ap;

	if (n >= 7 && !strcmp(path + n - 7, "/status"))
		status_opens++;
	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	return __real_openat(dirfd, path, flags, mode);
}

#endif
