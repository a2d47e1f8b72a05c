/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* struct devwl_error (include/devwl.h), filled the same way by libdevwl and devwld. */
#include <stdarg.h>
#include <stdio.h>

#include "devwl.h"
#include "util.h"

int devwl_error_set(struct devwl_error *err, int code, size_t offset, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	/* Whole, reserved tail included (devwl.h: how the struct grows). */
	*err = (struct devwl_error){.code = code, .offset = offset};
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}
