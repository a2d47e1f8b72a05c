/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What tells devwld that the devices its selector bindings name may have changed
 * (uevents.c): the kernel's uevents and the CDI spec directories, watched while there
 * is at least one binding.
 */
#ifndef DEVWLD_UEVENTS_H
#define DEVWLD_UEVENTS_H

#include <stdint.h>

struct devwld;

/* Each loop round: open or close the sources as bindings come and go, watch CDI
 * directories that appeared. ms until it wants to run again, or -1. */
int uevents_tick(struct devwld *d, uint64_t now);
/* At the start, before READY: if a binding or an attached device is to be followed,
 * open the uevent socket (and the CDI watches) now. 0, or why the uevent socket cannot be
 * had (a negative errno): devwld does not start, as it would then serve devices it cannot
 * follow. A failure later is logged as an ERROR, counted (FEATURE_UEVENTS) and retried. */
int uevents_start(struct devwld *d);
/* After the loop: close what is open. */
void uevents_close(struct devwld *d);

#endif
