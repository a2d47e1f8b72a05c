/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Logging to stderr, which systemd captures (log.c). */
#ifndef DEVWLD_LOG_H
#define DEVWLD_LOG_H

#include <stdint.h>

struct sink;

/* Through a sink once log_start() ran, so a stderr that does not keep up drops lines
 * instead of stalling us. */
void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int log_start(void);
/* Write out what is queued (at most drain_ms) and log directly again. */
void log_stop(unsigned int drain_ms);
struct sink *log_sink(void);
uint64_t log_dropped(void);

#endif
