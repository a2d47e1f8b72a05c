/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libdevwl's own internal helpers, on top of the ones every part of devwl shares. */
#ifndef DEVWL_UTIL_H
#define DEVWL_UTIL_H

#include "../base/util.h"

/* The one export macro: everything else stays hidden (-fvisibility=hidden). */
#define DEVWL_EXPORT __attribute__((visibility("default")))

/* Diagnostics through the embedder's log callback (devwl_set_log). */
void lib_logf(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
