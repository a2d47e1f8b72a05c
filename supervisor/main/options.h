/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwld's command line (options.c). */
#ifndef DEVWLD_OPTIONS_H
#define DEVWLD_OPTIONS_H

#include <stdbool.h>
#include <sys/types.h>

#include "devwld.h"

struct options {
	struct devwld_config cfg;
	bool no_audit;
	uid_t *uids; /* cfg.listen_uids' memory */
	size_t uids_cap;
	const char **cdi_dirs; /* cfg.cdi_dirs' memory */
	size_t cdi_cap;
	char *state_file; /* cfg.state_file's, when it is the default beside the control socket */
};

/* Parse argv into o (options_free() frees it either way): -1 to go on, else the exit
 * status (0 after --help or --version, 2 for a bad option, having said why). */
int options_parse(int argc, char **argv, struct options *o);
void options_free(struct options *o);

#endif
