/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwl-run --audit: one JSON line per decision (format in devwl-run(1), "AUDIT"). */
#ifndef DEVWL_RUN_AUDIT_H
#define DEVWL_RUN_AUDIT_H

#include <stddef.h>

#include "devwl.h"

/*
 * Format ev as one JSON object and a newline into buf (NUL-terminated). Returns the
 * length, or -ENOSPC if size is too small (AUDIT_LINE_MAX always suffices).
 */
int audit_format(const struct devwl_event *ev, char *buf, size_t size);

/* Escaped path (6 bytes per input byte at worst) + hex copy + the fixed fields. */
#define AUDIT_LINE_MAX (4096 * 8 + 1024)

/* Write ev to fd as one line, in one write(2) so lines of concurrent writers do not mix. */
int audit_write(int fd, const struct devwl_event *ev);

#endif
