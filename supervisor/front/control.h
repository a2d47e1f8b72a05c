/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwlctl's socket (control.c). */
#ifndef DEVWLD_CONTROL_H
#define DEVWLD_CONTROL_H

#include <stddef.h>
#include <stdio.h>

struct devwld;

/* Watch the control socket: fd, inherited from the keeper, or -1 to make it. */
int control_open(struct devwld *d, int fd);
/* One control line (no newline) answered on out; exported for tests and the fuzzer. */
void control_exec(struct devwld *d, const char *line, size_t len, FILE *out);
void control_close_all(struct devwld *d);
/* A state write finished: send the answers that waited for it. */
void control_state_written(struct devwld *d);

#endif
