/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwlctl events (events.c): a live stream of decisions; safe from any thread. */
#ifndef DEVWLD_EVENTS_H
#define DEVWLD_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "devwl.h"

struct audit_why;

/* A record whose container is known by its id alone (a selector binding's): a subscriber
 * of that id, whatever its owner, takes it. */
#define EVENTS_ANY_OWNER ((uid_t)-1)

/* A decision about owner's container, to every subscriber that wants it; never blocks,
 * never fails. */
void events_publish(const struct devwl_event *ev, uid_t owner, const char *container,
		    const char *node, const struct audit_why *why);
/* A record that is not a decision (one JSON line with its newline: a device attached,
 * say) about owner's container, to every subscriber of it or of all. */
void events_publish_line(const char *line, size_t n, uid_t owner, const char *container);
/* Stream decisions (CONTINUE ones too if all; only those of the container owner, id if
 * container is not NULL: a full id, resolved by the caller, resolve.h) to fd, taken over on
 * success, after an "ok" line. -EBUSY (too many), -ENOMEM. */
int events_subscribe(int fd, bool all, uid_t owner, const char *container);
void events_stats(unsigned int *ret_subscribers, uint64_t *ret_dropped);
/* Close every subscriber and stop the thread. */
void events_fini(void);

#endif
