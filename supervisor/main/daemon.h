/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon (daemon.c): parse the command line, run, clean up; main() calls it. */
#ifndef DEVWLD_DAEMON_H
#define DEVWLD_DAEMON_H

int devwld_main(int argc, char **argv);

#endif
