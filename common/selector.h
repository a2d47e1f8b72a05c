/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rules that name devices by what they are: "SELECTOR [ACCESS]", resolved now to the
 * kernel rules (TYPE MAJOR:MINOR ACCESS) of the devices that match, zero or more. The
 * selectors (devwl-policy(5), DEVICE SELECTORS):
 *
 *   usb:VID:PID[:SERIAL]   every device below the USB device with those ids
 *   subsystem:NAME         every device of a class or bus (tty, hidraw, block...)
 *   by-id:NAME, by-path:NAME  the node a udev link names in DEV/{disk,serial,input,snd,
 *                          v4l}/by-id (by-path)
 *   wwid:WWID, serial:SERIAL  a block disk, and its partitions
 *   loop:FILE              the loop devices backed by the file FILE is (its device and
 *                          inode), and their partitions
 *   cdi:VENDOR/CLASS=NAME  a CDI device's nodes (NAME * for every device of the kind)
 *
 * Every root is a parameter, so that a what-if tool and the tests resolve against a
 * tree of their own.
 */
#ifndef DEVWL_SELECTOR_H
#define DEVWL_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "devwl.h"

struct cdi_registry;

struct selector_env {
	const char *sysfs;	     /* NULL: /sys */
	const char *udev;	     /* udev's database; NULL: /run/udev/data */
	const char *dev;	     /* the nodes and by-id/by-path links; NULL: /dev */
	const char *const *cdi_dirs; /* NULL: /etc/cdi, /var/run/cdi, later ones win */
	size_t n_cdi_dirs;
	/* Set: the CDI specs read once already (cdi_load() of cdi_dirs), for a caller that
	 * resolves many selectors at one instant; its errors are not told again. */
	const struct cdi_registry *cdi;
	/* Told what is worth knowing but no failure: a CDI spec refused, no device matched. */
	void (*warn)(void *userdata, const char *msg);
	void *userdata;
};

/* Does text[0..len) start with a selector's prefix (after blanks)? */
bool selector_is(const char *text, size_t len);

/*
 * Resolve "SELECTOR [ACCESS]" (ACCESS: r, w, m, each at most once; rwm when left out; the
 * last word is the access wherever the text holds a blank). env may be NULL (the host's
 * roots). 0 with *ret_rules (caller frees; NULL when none matched) and *ret_n, or a
 * negative errno with ret_err naming the selector: -EINVAL (malformed), -ENOENT (a CDI
 * device no spec defines), -ENOMEM, others from reading sysfs or a node.
 */
int selector_resolve(const struct selector_env *env, const char *text, size_t len,
		     struct devwl_rule **ret_rules, size_t *ret_n, struct devwl_error *ret_err);

/* Any rule text: a kernel rule (one), a device name (devwl_devname_resolve()) or a
 * selector, as selector_resolve(). */
int selector_resolve_rule(const struct selector_env *env, const char *text, size_t len,
			  struct devwl_rule **ret_rules, size_t *ret_n,
			  struct devwl_error *ret_err);

#endif
