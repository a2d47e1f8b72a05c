/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal helpers of every part of devwl (libdevwl, devwld, the tools): cleanup
 * attributes, ownership transfer, errno conversion. Never installed.
 */
#ifndef DEVWL_BASE_UTIL_H
#define DEVWL_BASE_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

#define _cleanup_(f)	__attribute__((cleanup(f)))
#define _cleanup_free_	_cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* Hand ownership on: returns the value and leaves the variable empty. */
#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		__typeof__(p) _p = (p);                                                            \
		(p) = NULL;                                                                        \
		_p;                                                                                \
	})
#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _fd = (fd);                                                                    \
		(fd) = -1;                                                                         \
		_fd;                                                                               \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* libc's -1/errno to our negative errno, in one place. */
static inline int negerrno(void)
{
	return errno > 0 ? -errno : -EIO;
}

struct devwl_error;
/*
 * Fill err (may be NULL) with code, offset and a printf-style message; returns code
 * (base/error.c).
 */
int devwl_error_set(struct devwl_error *err, int code, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
