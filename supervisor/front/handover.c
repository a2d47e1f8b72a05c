/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A planned restart (devwld(8) RESTART): the front stops taking connections, lets the
 * open ones finish for a bounded time, then stops the loop; the worker exits
 * DEVWLD_EXIT_HANDOVER and its keeper starts the next one.
 */
#include <errno.h>

#include "clock.h"
#include "devwld.h"
#include "listener.h"
#include "log.h"

/* How long a planned restart waits for open runtime and devwlctl connections. */
#define HANDOVER_WAIT_MS 2000

int handover_begin(struct devwld *d)
{
	if (!d->keeper.table)
		return -EOPNOTSUPP;
	if (!d->handover) {
		log_msg("restart: handing over to a new devwld");
		d->handover = true;
		d->handover_deadline = now_ms() + HANDOVER_WAIT_MS;
	}
	return 0;
}

void handover_after(struct devwld *d, uint64_t now)
{
	/* A runtime's message half read or a devwlctl batch half answered would be lost
	 * with us: let them finish first, for a bounded time. */
	if (d->handover && ((list_empty(&d->oci_conns) && list_empty(&d->ctl_conns)) ||
			    now >= d->handover_deadline))
		loop_stop(&d->loop);
}
