/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A line sink that never blocks its callers (devwld(8) AUDIT): lines go into a bounded
 * ring buffer, and a thread of the sink's own writes them to the fd, blocking as long as
 * the fd likes (a pipe nobody reads, a slow journald). A line that does not fit is
 * dropped whole, and the caller counts it. Safe to call from any thread.
 */
#ifndef DEVWLD_SINK_H
#define DEVWLD_SINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The buffer of one sink: about 3000 audit records. */
#define SINK_CAPACITY (1u << 20)
/* At exit, what a sink cannot write this fast is lost: a reader that is stuck must not
 * hold up a restart. */
#define SINK_DRAIN_MS 250

struct sink;

/*
 * Start writing to fd (owned: closed by sink_free when own_fd). Returns NULL with errno
 * set (ENOMEM, or what pthread_create fails with). The thread blocks every signal.
 */
struct sink *sink_new(int fd, bool own_fd, size_t capacity);
/* Queue len bytes (a whole line or nothing): false when they do not fit (dropped). */
bool sink_write(struct sink *s, const char *buf, size_t len);
/* Writes the fd refused so far (their bytes lost), and the last one's errno in
 * *ret_errno (may be NULL). NULL is fine: 0. */
uint64_t sink_errors(struct sink *s, int *ret_errno);
/* Write out what is queued for at most drain_ms, then stop the thread (cancelled if the
 * fd still blocks it) and free everything. NULL is fine. */
void sink_free(struct sink *s, unsigned int drain_ms);

#endif
