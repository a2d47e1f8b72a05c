/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwlctl events (events.c): a live stream of decisions; safe from any thread. */
#ifndef DEVWLD_EVENTS_H
#define DEVWLD_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "devwl.h"

/* A record whose container is known by its id alone (a selector binding's): a subscriber
 * of that id, whatever its owner, takes it. */
#define EVENTS_ANY_OWNER ((uid_t)-1)

/* Whether anyone may take a record: when nobody does, a decision is not formatted for
 * them. Any thread; a hint (a subscriber may come or go). */
bool events_listening(void);
/* One JSON line with its newline (a decision's, formatted once by the audit; or another
 * record: a device attached, say) about owner's container, to every subscriber of it or
 * of all; cont: a CONTINUE decision, for the subscribers of --all only. Never blocks,
 * never fails. */
void events_publish_line(const char *line, size_t n, uid_t owner, const char *container, bool cont);
/* Stream decisions (CONTINUE ones too if all; only those of the container owner, id if
 * container is not NULL: a full id, resolved by the caller, resolve.h) to fd, taken over on
 * success, after an "ok" line. -EBUSY (too many), -ENOMEM. */
int events_subscribe(int fd, bool all, uid_t owner, const char *container);
void events_stats(unsigned int *ret_subscribers, uint64_t *ret_dropped);
/* Close every subscriber and stop the thread. */
void events_fini(void);

#endif
