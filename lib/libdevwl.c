/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The public API layer: version, error reporting, the log callback. */
#include <stdio.h>
#include <string.h>

#include "devwl.h"
#include "util.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

DEVWL_EXPORT const char *devwl_version(void)
{
	return STR(DEVWL_VERSION_MAJOR) "." STR(DEVWL_VERSION_MINOR) "." STR(DEVWL_VERSION_MICRO);
}

static devwl_log_fn log_fn;
static void *log_userdata;

DEVWL_EXPORT void devwl_set_log(devwl_log_fn fn, void *userdata)
{
	log_fn = fn;
	log_userdata = userdata;
}

void lib_logf(int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn((enum devwl_log_level)level, msg, log_userdata);
}
