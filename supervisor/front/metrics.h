/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Metrics in the Prometheus text format, and the HTTP endpoint that serves them (metrics.c). */
#ifndef DEVWLD_METRICS_H
#define DEVWLD_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "devwl.h"

struct devwld;

/* What the command line may ask for that can break after the start: a failure then is
 * logged as an ERROR by whoever sees it, and counted here (devwlctl stats, the metrics). */
enum feature { FEATURE_METRICS, FEATURE_AUDIT, FEATURE_UEVENTS, FEATURE_N };
void feature_failed(enum feature f);
/* Failures of f in this worker so far (the audit file's failed writes included). */
uint64_t feature_failures(struct devwld *d, enum feature f);
const char *feature_name(enum feature f);

/* The exposition of d's counters to f. 0 or -ENOMEM/-EIO. */
int metrics_write(struct devwld *d, FILE *f);
/* Is where (--metrics) unix:/ABSOLUTE or a numeric HOST:PORT? 0 or -EINVAL with err. */
int metrics_check(const char *where, struct devwl_error *err);
/* Listen where d->cfg.metrics says (nothing without it), and say where in the log. 0 or a
 * negative errno with err (the address and why). */
int metrics_open(struct devwld *d, struct devwl_error *err);
/* The loop's after-hook: close connections past their deadline. */
void metrics_expire(struct devwld *d, uint64_t now);
/* After the loop: close everything; unlink a unix socket that is still ours. */
void metrics_close(struct devwld *d);

#endif
