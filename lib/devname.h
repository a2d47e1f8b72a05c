/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Device names as people write them, turned into the kernel's rules (lib/devname.c):
 *   /dev/fuse rwm        a device node's path: stat() says its type and number
 *   char-pts rw          every character major /proc/devices lists under "pts"
 *   block-loop r         the same for block majors (systemd's DeviceAllow= syntax)
 * The rule grammar itself (lib/rules.c) stays exactly the kernel's; this layer sits in
 * front of it for policy files and devwlctl and only takes what the kernel refuses.
 */
#ifndef DEVWL_DEVNAME_H
#define DEVWL_DEVNAME_H

#include <stdbool.h>
#include <stddef.h>

#include "devwl.h"

/* A name is longer than any kernel rule needs to be, but not unbounded. */
#define DEVWL_DEVNAME_MAX 4096

/*
 * Is text[0..len) (leading whitespace skipped) a device name rather than a rule in the
 * kernel's grammar? True when it starts with '/', "char-" or "block-": the kernel
 * refuses all of those, so a rule it accepts never reaches this layer.
 */
bool devwl_devname_is_name(const char *text, size_t len);

/*
 * Resolve "NAME [ACCESS]" (ACCESS: r, w, m in any order; default rwm, as systemd's
 * DeviceAllow=) into kernel rules: a path gives one rule for the node it names (symlinks
 * followed), char-NAME/block-NAME one rule "TYPE MAJOR:* ACCESS" per major whose name in
 * proc_devices matches NAME (an fnmatch(3) pattern, as systemd takes it), in the order
 * listed. proc_devices is the text of /proc/devices, or NULL to read the real one.
 * On success *ret_rules (caller frees) holds *ret_n >= 1 rules.
 * Errors: -EINVAL malformed, or the path is not a device node; -ENOENT no such path,
 * or no major of that name; -ENOMEM; others from stat(2) or reading /proc/devices.
 * ret_err (may be NULL) names the name that did not resolve.
 */
int devwl_devname_resolve(const char *text, size_t len, const char *proc_devices,
			  struct devwl_rule **ret_rules, size_t *ret_n,
			  struct devwl_error *ret_err);

#endif
