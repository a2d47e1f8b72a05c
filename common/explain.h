/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Why the hierarchy says no, in words: which node's rule or default refuses, and the
 * topmost ancestor that refuses too (where a grant would have to start). For devwlctl's
 * error answers (batch.c) and the audit's "rule" of a policy denial (audit-line.c).
 * Error paths only: linear scans over the public API, nothing cached.
 */
#ifndef DEVWL_EXPLAIN_H
#define DEVWL_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "devwl.h"

/* Room for any explanation: the rules listed are capped (EXPLAIN_RULES_MAX). */
#define EXPLAIN_MAX	  1024
#define EXPLAIN_RULES_MAX 8

/*
 * Why an allow of rule on node was refused EPERM (devwl_node_update), as a phrase:
 * "the parent /containers does not allow it (its rules: c 1:5 rw)". Writes "" when the
 * hierarchy does not refuse it. Always NUL-terminates buf (size > 0).
 */
void explain_allow_refused(const struct devwl_node *node, const struct devwl_rule *rule, char *buf,
			   size_t size);

/*
 * Why node denies access to the device (devwl_node_check() said 0): "deny c 1:* m" (an
 * ALLOW node's denial) or "no rule allows it (rules: c 1:3 rw)" (a DENY node's default),
 * and, where an ancestor refuses it too, the topmost one: "; so does /containers".
 */
void explain_denial(const struct devwl_node *node, int type, uint32_t major, uint32_t minor,
		    int access, char *buf, size_t size);

/* The node's exceptions as "c 1:3 rw, c 1:5 rw" (at most EXPLAIN_RULES_MAX, then
 * "and N more"), or "none". */
void explain_rules(const struct devwl_node *node, char *buf, size_t size);

#endif
