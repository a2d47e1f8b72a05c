/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwld's log: lines to stderr (systemd's journal captures it), through a sink once
 * log_start() ran, so a stderr that does not keep up drops lines (counted) instead of
 * stalling the loop or a handler thread.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "sink.h"
#include "util.h"

static struct sink *stderr_sink;
static uint64_t stderr_dropped;

void log_msg(const char *fmt, ...)
{
	char buf[1024] = "devwld: ";
	size_t pre = strlen(buf), len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + pre, sizeof(buf) - pre - 1, fmt, ap);
	va_end(ap);
	len = n < 0 ? pre
		    : pre + ((size_t)n < sizeof(buf) - pre - 1 ? (size_t)n : sizeof(buf) - pre - 2);
	buf[len++] = '\n';
	if (stderr_sink) {
		if (!sink_write(stderr_sink, buf, len))
			__atomic_fetch_add(&stderr_dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	(void)devwl_write_all(STDERR_FILENO, buf, len);
}

int log_start(void)
{
	stderr_sink = sink_new(STDERR_FILENO, false, SINK_CAPACITY);
	return stderr_sink ? 0 : negerrno();
}

void log_stop(unsigned int drain_ms)
{
	struct sink *s = stderr_sink;

	stderr_sink = NULL;
	sink_free(s, drain_ms);
}

struct sink *log_sink(void)
{
	return stderr_sink;
}

uint64_t log_dropped(void)
{
	return __atomic_load_n(&stderr_dropped, __ATOMIC_RELAXED);
}
