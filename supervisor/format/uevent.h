/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A kernel uevent message, as NETLINK_KOBJECT_UEVENT delivers it (uevent.c): pure. */
#ifndef DEVWLD_UEVENT_H
#define DEVWLD_UEVENT_H

#include <stdbool.h>
#include <stddef.h>

struct uevent {
	const char *action;    /* "add", "remove", "change", "move", "bind"... */
	const char *devpath;   /* below /sys */
	const char *subsystem; /* or NULL */
	bool has_devnum;       /* MAJOR= and MINOR=: a device node's event */
};

/*
 * Parse buf[0..n) ("ACTION@DEVPATH\0KEY=VALUE\0..."); the strings point into buf, which
 * must end in a NUL (n counts it). 0, or -EINVAL for what is no kernel uevent (udevd's
 * "libudev" messages among them).
 */
int uevent_parse(const char *buf, size_t n, struct uevent *ret);

/* Can a uevent change what a selector names? A device node's add, remove, change or move. */
bool uevent_matters(const struct uevent *ev);

#endif
