/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The default device set: what the OCI runtime specification (config-linux.md, "Default
 * Devices") has a runtime supply in every container, and what runc and crun allow in its
 * device cgroup for them: /dev/null, zero, full, random, urandom, tty, ptmx (c 5:2, what
 * /dev/ptmx and /dev/pts/ptmx are) and the pseudo-terminals (c 136:*, which also covers a
 * /dev/console bind-mounted from one). A container given this set gets nothing that its
 * runtime's own device rules would not give it.
 */
#include <errno.h>
#include <string.h>

#include "defaults.h"
#include "util.h"

const char *const devwl_default_rules[] = {
	"c 1:3 rwm",   /* null */
	"c 1:5 rwm",   /* zero */
	"c 1:7 rwm",   /* full */
	"c 1:8 rwm",   /* random */
	"c 1:9 rwm",   /* urandom */
	"c 5:0 rwm",   /* tty */
	"c 5:2 rwm",   /* ptmx */
	"c 136:* rwm", /* pts */
};
const size_t devwl_default_nrules = ARRAY_SIZE(devwl_default_rules);

int devwl_node_set_defaults(struct devwl_node *node)
{
	int r = devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL);

	for (size_t i = 0; r >= 0 && i < devwl_default_nrules; i++) {
		r = devwl_node_write(node, DEVWL_FILE_ALLOW, devwl_default_rules[i],
				     strlen(devwl_default_rules[i]), NULL);
		/* Refused: the parent denies (part of) it, and a child never has more. */
		if (r == -EPERM)
			r = 0;
	}
	return r;
}
