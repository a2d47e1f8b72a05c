/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwlctl's parts (devwlctl.c, devwlctl-attach.c). */
#ifndef DEVWLCTL_H
#define DEVWLCTL_H

#include <stddef.h>

/* devwld's control socket (--socket). */
extern const char *socket_path;

/* Send one control line (with its newline) and print the answer: a listing without its
 * "." to stdout, an error to stderr. Returns the exit status: 0, or 1. */
int ctl_request(const char *line, size_t len);

/* devwlctl attach|detach ARGS (argv[0]: the command). Returns the exit status. */
int cmd_attach(int argc, char **argv);

#endif
