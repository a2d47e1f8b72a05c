/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The keeper process (keeper.c); what it shares with its workers: keeper_table.h. */
#ifndef DEVWLD_KEEPER_H
#define DEVWLD_KEEPER_H

/* Run as the keeper (keeper.c): start workers with argv until one stops for good.
 * lock_fds: the locks on the listener's and the control socket's paths (trust.h), held
 * until the keeper exits, or -1 (a re-executed keeper finds its own in the environment). */
int keeper_main(char **argv, const int lock_fds[2]);

#endif
