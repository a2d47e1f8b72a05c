/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwlctl events (events.c): a live stream of decisions; safe from any thread. */
#ifndef DEVWLD_EVENTS_H
#define DEVWLD_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "devwl.h"

struct audit_why;

/* A decision, to every subscriber that wants it; never blocks, never fails. */
void events_publish(const struct devwl_event *ev, const char *container, const char *node,
		    const struct audit_why *why);
/* A record that is not a decision (one JSON line with its newline: a device attached,
 * say) about container, to every subscriber of it or of all. */
void events_publish_line(const char *line, size_t n, const char *container);
/* Stream decisions (CONTINUE ones too if all; one container's only if container is not
 * NULL) to fd, taken over on success, after an "ok" line. -EBUSY (too many), -ENOMEM. */
int events_subscribe(int fd, bool all, const char *container);
void events_stats(unsigned int *ret_subscribers, uint64_t *ret_dropped);
/* Close every subscriber and stop the thread. */
void events_fini(void);

#endif
