/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The public API layer: version, error reporting, the log callback. */
#include <stdio.h>
#include <string.h>

#include "devwl.h"
#include "util.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

/* CMakeLists.txt's project(VERSION) is the version (doc/HACKING.md, "ABI and SONAME
 * policy"); the header's macros are a copy an embedder compiles against, so a copy that
 * disagrees does not build. */
_Static_assert(DEVWL_VERSION_MAJOR == DEVWL_PROJECT_VERSION_MAJOR &&
		       DEVWL_VERSION_MINOR == DEVWL_PROJECT_VERSION_MINOR &&
		       DEVWL_VERSION_MICRO == DEVWL_PROJECT_VERSION_PATCH,
	       "include/devwl.h's DEVWL_VERSION_* differ from CMakeLists.txt's project(VERSION)");

DEVWL_EXPORT const char *devwl_version(void)
{
	return STR(DEVWL_PROJECT_VERSION_MAJOR) "." STR(DEVWL_PROJECT_VERSION_MINOR) "." STR(
		DEVWL_PROJECT_VERSION_PATCH);
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
