/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libdevwl's own internal helpers, on top of the ones every part of devwl shares. */
#ifndef DEVWL_UTIL_H
#define DEVWL_UTIL_H

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../base/util.h"

/* The one export macro: everything else stays hidden (-fvisibility=hidden). */
#define DEVWL_EXPORT __attribute__((visibility("default")))

/* Diagnostics through the embedder's log callback (devwl_set_log). */
void lib_logf(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The calling thread's capabilities only: the raw system calls, not libcap's or glibc's
 * process-wide ones, since handler threads take on callers' privileges one at a time. */
static inline int thread_capget(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};

	return syscall(SYS_capget, &hdr, data) < 0 ? negerrno() : 0;
}

static inline int thread_capset(const struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};

	return syscall(SYS_capset, &hdr, data) < 0 ? negerrno() : 0;
}

#endif
