/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The control protocol's verbs: see ctlverb.h. */
#include <string.h>

#include "ctlverb.h"

#define B CTLV_BATCH
#define L CTLV_LOOKS
#define E CTLV_EDIT

const struct ctl_verb_row ctl_verbs[CTL_VERB_COUNT] = {
	[CTL_MKDIR] = {"mkdir", "mkdir", 1, B | E},
	[CTL_RMDIR] = {"rmdir", "rmdir", 1, B | E},
	[CTL_ALLOW] = {"allow", "allow", 2, B | E | CTLV_RULE},
	[CTL_DENY] = {"deny", "deny", 2, B | E | CTLV_RULE},
	[CTL_LIST] = {"list", "list", 1, B | L},
	[CTL_SHOW] = {"show", "show", 1, B | L},
	[CTL_CHECK] = {"check", "check", 5, B | L},
	[CTL_MKNOD_CAP] = {"mknod_needs_cap", "mknod-cap", 2, E},
	[CTL_LEARN] = {"learn", "learn", 2, E},
	/* advise [owner=UID] NAME: devwlctl's cmd_advise() */
	[CTL_ADVISE] = {"advise", "advise", -1, L},
	[CTL_UNBIND] = {"unbind", "unbind", 3, E | CTLV_RULE},
	[CTL_CONTAINERS] = {"containers", "containers", 0, L | CTLV_BARE},
	/* devwlctl's containers --devices */
	[CTL_DEVICES] = {"devices", NULL, 0, L | CTLV_BARE | CTLV_ALONE},
	[CTL_SELECTORS] = {"selectors", "selectors", 0, L | CTLV_BARE},
	[CTL_STATS] = {"stats", "stats", 0, L | CTLV_BARE},
	[CTL_METRICS] = {"metrics", "metrics", 0, L | CTLV_BARE},
	[CTL_RELOAD] = {"reload", "reload", 0, CTLV_BARE},
	[CTL_RESET] = {"reset", "reset", 0, CTLV_BARE},
	[CTL_RESTART] = {"restart", "restart", 0, CTLV_BARE}, /* waits: cmd_restart() */
	[CTL_EVENTS] = {"events", "events", -1, L | CTLV_ALONE | CTLV_OPT},
	[CTL_ATTACH] = {"attach", "attach", -1, 0},
	[CTL_DETACH] = {"detach", "detach", -1, 0},
	[CTL_HOOK_CREATE] = {"hook-create", NULL, -1, 0},
	[CTL_HOOK_DELETE] = {"hook-delete", NULL, -1, 0},
};

enum ctl_verb ctl_verb_of(const char *line, size_t len, size_t *ret_args)
{
	for (size_t v = 0; v < CTL_VERB_COUNT; v++) {
		size_t n = strlen(ctl_verbs[v].wire);

		if (len < n || memcmp(line, ctl_verbs[v].wire, n) || (len > n && line[n] != ' '))
			continue;
		*ret_args = len > n ? n + 1 : n;
		return (enum ctl_verb)v;
	}
	*ret_args = 0;
	return CTL_VERB_COUNT;
}

bool ctl_verb_fits(enum ctl_verb v, size_t args, size_t len)
{
	if (v >= CTL_VERB_COUNT)
		return false;
	if (ctl_verbs[v].flags & CTLV_OPT)
		return true;
	return ctl_verbs[v].flags & CTLV_BARE ? args == len : args < len;
}

enum ctl_verb ctl_verb_by_word(const char *word)
{
	for (size_t v = 0; v < CTL_VERB_COUNT; v++)
		if (ctl_verbs[v].word && !strcmp(word, ctl_verbs[v].word))
			return (enum ctl_verb)v;
	return CTL_VERB_COUNT;
}
