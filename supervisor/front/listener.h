/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OCI seccomp listener socket: runtime messages in (listener.c). */
#ifndef DEVWLD_LISTENER_H
#define DEVWLD_LISTENER_H

#include <stdbool.h>
#include <stdint.h>

struct devwld;

/* Watch the OCI listener socket: fd, inherited from the keeper, or -1 to make it. */
int listener_open(struct devwld *d, int fd);
/* Drop the runtime connections whose message is overdue at now (UINT64_MAX: all). */
void oci_conn_expire(struct devwld *d, uint64_t now_ms);

/* A planned restart (handover.c; devwld(8) RESTART): refuse new connections, quit once
 * the open ones are done. -EOPNOTSUPP without a keeper. */
int handover_begin(struct devwld *d);
/* The loop's after-hook: stop the loop once the handover may end. */
void handover_after(struct devwld *d, uint64_t now);

#endif
