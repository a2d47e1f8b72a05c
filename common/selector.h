/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rules that name devices by what they are: "SELECTOR [ACCESS]", resolved now to the
 * kernel rules (TYPE MAJOR:MINOR ACCESS) of the devices that match, zero or more. The
 * kinds are the rows of SELECTOR_KINDS below (devwl-policy(5), DEVICE SELECTORS); what
 * each one's identity rests on is doc/DESIGN.md's table of selector kinds.
 *
 * char-NAME and block-NAME (lib/devname.c) are no selectors: they name one device as a
 * kernel rule does, by the numbers the kernel gives a name, and resolve through
 * devwl_devname_resolve() (selector_resolve_rule() takes all three).
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

/*
 * The selector kinds, one row each: X(KIND, prefix, the argument's form). The parser,
 * every error that lists the kinds, devwlctl's usage and the unit test that checks the
 * manual pages come from this list; a kind added here gets its case in selector.c's
 * resolve() (the compiler names a missing one) and its tests. What each names:
 *   usb:       every device below the USB device with those ids
 *   subsystem: every device of a class or bus (tty, hidraw, block...)
 *   by-id:, by-path:  the node udev's link of that name in DEV/{disk,serial,input,snd,
 *              v4l}/by-id (by-path) leads to
 *   wwid:, serial:  a block disk, and its partitions
 *   loop:      the loop devices backed by the file PATH is (its device and inode), and
 *              their partitions
 *   cdi:       a CDI device's nodes (NAME * for every device of the kind)
 */
#define SELECTOR_KINDS(X)                                                                          \
	X(USB, "usb:", "VID:PID[:SERIAL]")                                                         \
	X(SUBSYSTEM, "subsystem:", "NAME")                                                         \
	X(BY_ID, "by-id:", "NAME")                                                                 \
	X(BY_PATH, "by-path:", "NAME")                                                             \
	X(WWID, "wwid:", "WWID")                                                                   \
	X(SERIAL, "serial:", "SERIAL")                                                             \
	X(LOOP, "loop:", "/PATH")                                                                  \
	X(CDI, "cdi:", "VENDOR/CLASS=NAME")

enum selector_kind {
#define SELECTOR_ENUM(k, prefix, arg) SELECTOR_##k,
	SELECTOR_KINDS(SELECTOR_ENUM)
#undef SELECTOR_ENUM
		SELECTOR_KIND_MAX
};

/* The kind whose prefix text[0..len) starts with (after blanks), or -1. */
int selector_kind_of(const char *text, size_t len);

/* Does text[0..len) start with a selector's prefix (after blanks)? */
bool selector_is(const char *text, size_t len);

/* "usb:, subsystem:, ..., cdi:": the prefixes, for a message listing them. */
const char *selector_prefixes(void);

/* A kind's row, for a usage text or a manual's list. */
struct selector_kind_info {
	const char *prefix; /* "usb:" */
	const char *arg;    /* "VID:PID[:SERIAL]" */
};
extern const struct selector_kind_info selector_kinds[SELECTOR_KIND_MAX];

/*
 * Resolve "SELECTOR [ACCESS]" (ACCESS: r, w, m, each at most once; rwm when left out; the
 * last word is the access wherever the text holds a blank). env may be NULL (the host's
 * roots). 0 with *ret_rules (caller frees; NULL when none matched) and *ret_n, or a
 * negative errno with ret_err naming the selector: -EINVAL (malformed), -ENOENT (a CDI
 * device no spec defines), -ENOMEM, others from reading sysfs or a node. ret_err may be
 * NULL.
 */
int selector_resolve(const struct selector_env *env, const char *text, size_t len,
		     struct devwl_rule **ret_rules, size_t *ret_n, struct devwl_error *ret_err);

/* Any rule text: a kernel rule (one), a device name (devwl_devname_resolve()) or a
 * selector, as selector_resolve(). */
int selector_resolve_rule(const struct selector_env *env, const char *text, size_t len,
			  struct devwl_rule **ret_rules, size_t *ret_n,
			  struct devwl_error *ret_err);

#endif
