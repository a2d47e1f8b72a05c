/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Devices found by what they are, read from sysfs (and udev's database where present,
 * never udevd itself): every character and block device /sys/dev lists whose sysfs
 * directory passes a query. The roots are parameters, so that tests run on a fake tree.
 */
#ifndef DEVWL_SYSFSID_H
#define DEVWL_SYSFSID_H

#include <stdbool.h>
#include <stdint.h>

#include "devwl.h"
#include "rulevec.h"

enum sysfsid_kind {
	SYSFSID_USB,	   /* vid, pid, serial (NULL: any) of the nearest USB device above */
	SYSFSID_SUBSYSTEM, /* value: the subsystem (class or bus) the device is of */
	SYSFSID_WWID,	   /* value: a block disk's wwid; its partitions too */
	SYSFSID_SERIAL,	   /* value: a block disk's serial, or udev's ID_SERIAL(_SHORT) */
	SYSFSID_LOOP,	   /* value: a loop device's backing file; its partitions too */
};

struct sysfsid_query {
	enum sysfsid_kind kind;
	const char *value;
	const char *vid, *pid, *serial;
};

/*
 * Add a rule with access for every device under sysfs (e.g. "/sys") that matches q; udev
 * is udev's database directory ("/run/udev/data"; a missing one is no error); dev is where
 * the nodes are ("/dev"): a loop device is asked for its backing file through its node
 * there, and matches nothing without one. Devices whose link leaves sysfs, and files that
 * cannot be read, are skipped. 0, or a negative errno with ret_err saying why (sysfs
 * unreadable, out of memory).
 */
int sysfsid_find(const char *sysfs, const char *udev, const char *dev,
		 const struct sysfsid_query *q, uint8_t access, struct rulevec *rv,
		 struct devwl_error *ret_err);

/*
 * Is block device major:minor a loop device, or a partition of one (its disk's, under
 * sysfs)? Such a device is named by loop:FILE alone: what it holds, and every name udev
 * derives from that, is whoever writes its backing file's.
 */
bool sysfsid_is_loop(const char *sysfs, unsigned int major, unsigned int minor);

#endif
