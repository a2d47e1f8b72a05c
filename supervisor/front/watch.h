/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reload when the policy file changes, a ConfigMap's "..data" swap included (watch.c). */
#ifndef DEVWLD_WATCH_H
#define DEVWLD_WATCH_H

#include <stdint.h>

struct devwld;

int watch_open(struct devwld *d);
/* Called each loop round: runs a due check; returns ms until the next one, or -1. */
int watch_tick(struct devwld *d, uint64_t now);
void watch_close(struct devwld *d);

#endif
