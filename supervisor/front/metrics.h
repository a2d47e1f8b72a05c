/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Metrics in the Prometheus text format, and the HTTP endpoint that serves them (metrics.c). */
#ifndef DEVWLD_METRICS_H
#define DEVWLD_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "devwl.h"

struct devwld;

/* The exposition of d's counters to f. 0 or -ENOMEM/-EIO. */
int metrics_write(struct devwld *d, FILE *f);
/* Is where (--metrics) unix:/ABSOLUTE or a numeric HOST:PORT? 0 or -EINVAL with err. */
int metrics_check(const char *where, struct devwl_error *err);
/* Listen where d->cfg.metrics says (nothing without it). 0 or a negative errno with err. */
int metrics_open(struct devwld *d, struct devwl_error *err);
/* The loop's after-hook: close connections past their deadline. */
void metrics_expire(struct devwld *d, uint64_t now);
/* After the loop: close everything; unlink a unix socket that is still ours. */
void metrics_close(struct devwld *d);

#endif
