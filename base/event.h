/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The record of one decision (struct devwl_event, include/devwl.h), begun one way
 * wherever a decision is made (event.c): libdevwl's handler, devwld's deny-only turn and
 * its watchdog, a denial a kernel-mode device program recorded. A field of the record is
 * given its starting value here and nowhere else.
 */
#ifndef DEVWL_EVENT_H
#define DEVWL_EVENT_H

#include <stdint.h>
#include <sys/types.h>

#include "devwl.h"

/*
 * The record of call id of thread tid, syscall_nr as the kernel numbered it (-1: the
 * kernel decided and does not say which call) and its name (NULL: "unknown" for a
 * number, none for -1). It starts out denied (EPERM), as an undecided call is answered;
 * the path is "" until read (none for -1); everything else is zero, to be set by whoever
 * learns it.
 */
void devwl_event_init(struct devwl_event *ret, uint64_t id, pid_t tid, int syscall_nr,
		      const char *syscall);

#endif
