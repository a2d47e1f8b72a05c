/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Audit records of devwl-run --audit and devwld --audit: one JSON line per decision
 * (format in devwl-run(1), AUDIT; devwld adds the container and its node).
 */
#ifndef DEVWL_AUDIT_LINE_H
#define DEVWL_AUDIT_LINE_H

#include <stddef.h>

#include "devwl.h"

/*
 * Format ev as one JSON object and a newline into buf (NUL-terminated), with
 * "container" and "node" when container is not NULL. Returns the length, or -ENOSPC if
 * size is too small (AUDIT_LINE_MAX always suffices for ids and nodes of sane length).
 */
int audit_format(const struct devwl_event *ev, const char *container, const char *node, char *buf,
		 size_t size);

/* Escaped path (6 bytes per input byte at worst) + hex copy + the other fields. */
#define AUDIT_LINE_MAX (4096 * 8 + 8192)

/*
 * Format ev into small, or into a heap buffer (*ret_big, caller frees) when the line is
 * longer than a typical one; *ret_line is where it is. Returns the length or -ENOMEM.
 */
#define AUDIT_LINE_SMALL 4096
int audit_line(const struct devwl_event *ev, const char *container, const char *node,
	       char small[static AUDIT_LINE_SMALL], char **ret_big, const char **ret_line);

/* Write ev to fd as one line, in one write(2) so lines of concurrent writers do not mix. */
int audit_write(int fd, const struct devwl_event *ev, const char *container, const char *node);

#endif
