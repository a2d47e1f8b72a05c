/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The verbs of the control protocol (devwlctl(1); devwld's control socket), one row
 * each in ctl_verbs[]: the word on the socket, devwlctl's word for it, what it takes
 * and what kind of command it is. devwld's dispatch (front/control.c) is a switch over
 * enum ctl_verb, so a verb without its case is a compiler warning; which commands only
 * look, which a reload replays (format/edits.c) and which batch answers
 * (batch_exec()) are the rows' flags; devwlctl's plain commands are the rows with a
 * word. unit-ctlmsg checks that devwlctl --help and devwlctl(1) name every word.
 */
#ifndef DEVWL_CTLVERB_H
#define DEVWL_CTLVERB_H

#include <stdbool.h>
#include <stddef.h>

enum ctl_verb {
	/* batch's, and devwld's too (batch_exec()) */
	CTL_MKDIR,
	CTL_RMDIR,
	CTL_ALLOW,
	CTL_DENY,
	CTL_LIST,
	CTL_SHOW,
	CTL_CHECK,
	/* devwld's own */
	CTL_MKNOD_CAP,
	CTL_LEARN,
	CTL_ADVISE,
	CTL_UNBIND,
	CTL_CONTAINERS,
	CTL_DEVICES,
	CTL_SELECTORS,
	CTL_STATS,
	CTL_METRICS,
	CTL_RELOAD,
	CTL_RESET,
	CTL_RESTART,
	CTL_EVENTS,
	CTL_ATTACH,
	CTL_DETACH,
	CTL_HOOK_CREATE,
	CTL_HOOK_DELETE,
	CTL_VERB_COUNT, /* also: no verb */
};

enum {
	CTLV_BATCH = 1 << 0, /* batch_exec() answers it, in devwlctl batch as in devwld */
	CTLV_LOOKS = 1 << 1, /* only looks: devwld does not write its state file for it */
	CTLV_EDIT = 1 << 2,  /* a change a reload applies again (format/edits.c) */
	CTLV_BARE = 1 << 3,  /* takes no arguments (else it needs some) */
	CTLV_RULE = 1 << 4,  /* devwlctl escapes its last argument, a rule (batch_escape()) */
	CTLV_ALONE = 1 << 5, /* the first and only line of its connection */
	CTLV_OPT = 1 << 6,   /* its arguments are optional */
};

struct ctl_verb_row {
	const char *wire; /* the word on the socket */
	const char *word; /* devwlctl's command; NULL: none of its own (the hook's, devices) */
	int nargs;	  /* devwlctl's arguments in its plain form; -1: a cmd_ of its own */
	unsigned flags;
};

extern const struct ctl_verb_row ctl_verbs[CTL_VERB_COUNT];

/* The verb line[0..len) starts with (its word, then a space or the end), its arguments
 * from *ret_args (len for none); CTL_VERB_COUNT when it starts with none. */
enum ctl_verb ctl_verb_of(const char *line, size_t len, size_t *ret_args);

/* Does a line of verb v, its arguments from args, have the arguments v takes: none for a
 * bare verb, some for the others, either where they are optional? */
bool ctl_verb_fits(enum ctl_verb v, size_t args, size_t len);

/* The verb devwlctl calls word, or CTL_VERB_COUNT. */
enum ctl_verb ctl_verb_by_word(const char *word);

#endif
