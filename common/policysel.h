/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Selector rules in a policy file node's "rules" ("allow usb:0403:6001 rw"): libdevwl's
 * loader knows the kernel's grammar and device names only, so its callers (devwld,
 * devwl-run --policy, devwlctl batch --policy) take them out of the text first and apply
 * them themselves: devwld as bindings it follows, the tools resolved once.
 *
 * They are applied after the node's plain rules, and so a node must list them last: a
 * plain rule after a selector rule is refused, since it would not act in the order it
 * is written (devwl-policy(5), DEVICE SELECTORS).
 */
#ifndef DEVWL_POLICYSEL_H
#define DEVWL_POLICYSEL_H

#include <stdbool.h>
#include <stddef.h>

#include "devwl.h"

struct policysel_rule {
	char *node;	/* the node's path */
	bool allow;	/* else deny */
	char *selector; /* "SELECTOR [ACCESS]" */
	char *where;	/* "FILE: node PATH: rule N", for messages */
};

struct policysel {
	struct policysel_rule *v;
	size_t n, size;
};

void policysel_clear(struct policysel *ps);

/*
 * Take the selector rules out of text (a policy file's, NUL-terminated; name: the file
 * in messages): *ret_text (caller frees) is text with them blanked out, as long and with
 * the same lines, so that the loader's LINE:COL and rule numbers still point into the
 * file; *ret holds them in the order of the nodes and of their rules. Text that is no
 * JSON object, or whose "nodes" are malformed, is returned as it is: the loader tells
 * what is wrong. 0, or -EINVAL with err naming the file, the node and the rule (a plain
 * rule after a selector rule; a selector rule the text does not let us find), -ENOMEM.
 */
int policysel_extract(const char *text, const char *name, char **ret_text, struct policysel *ret,
		      struct devwl_error *err);

/* Read file and load it as devwl_policy_load_file() does, the selector rules taken out
 * into *ret_sel (not applied), followed by the file's "selectors" bindings (devwld's;
 * a tool resolves them once). 0 or a negative errno with err (*ret_policy NULL). */
int policysel_load_file(const char *file, struct devwl_policy **ret_policy,
			struct policysel *ret_sel, struct devwl_error *err);

#endif
