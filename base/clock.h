/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The monotonic clock every deadline and duration of devwl is measured on (libdevwl's
 * handling times, devwld's timeouts and watchdog, the keeper's restart backoff). Header
 * only, so libdevwl and the programs share it without a link dependency.
 */
#ifndef DEVWL_CLOCK_H
#define DEVWL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t now_ms(void)
{
	return now_ns() / 1000000;
}

#endif
