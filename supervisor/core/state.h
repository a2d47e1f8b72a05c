/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state file (state.c; devwld(8) STATE): when it is written and read back. */
#ifndef DEVWLD_STATE_H
#define DEVWLD_STATE_H

#include <stdbool.h>
#include <stdint.h>

struct devwld;
struct state_writer;

/* The state's own part of the daemon's context; only state.c reads it. */
struct state {
	bool dirty, frozen;
	bool urgent;		/* write as soon as the writer is idle */
	uint64_t seq;		/* changes so far (state_changed) */
	uint64_t tried_seq;	/* the changes the last finished write covered */
	uint64_t retry_ms;	/* after a failed write: not before then */
	uint64_t last_start_ms; /* when the last write was handed on */
	uint64_t writes;	/* finished writes (stats) */
	struct state_writer *writer;
	bool no_thread; /* the writer thread could not start: writes on the loop */
	char *last;	/* the text last written */
};

/* Load the state file if there is one: 1 restored (every inherited slot is served again
 * or let go), 0 none or set aside as corrupt. */
int state_restore(struct devwld *d);
void state_changed(struct devwld *d);
/* Each loop round: collect a finished write; if something changed, serialise it and hand
 * it to the writer thread once the interval is over. Returns ms until it is due, or -1. */
int state_flush(struct devwld *d);
/* Write at once what changed and wait for it (start, planned restart, stop). */
void state_sync(struct devwld *d);
/* Do not wait for the interval: someone waits for the write (a control answer). */
void state_urgent(struct devwld *d);
/* Has a write covering the changes up to seq finished (or failed, logged)? */
bool state_written(const struct devwld *d, uint64_t seq);
void state_fini(struct devwld *d);
/* The state file text of d (statefile.h), for tests and fuzzers. */
int state_text(struct devwld *d, char **ret_text);
/* For devwlctl stats: changes so far and finished writes. */
uint64_t state_seq(const struct devwld *d);
uint64_t state_writes(const struct devwld *d);
/* Write nothing more (the worker is handing over or stopping). */
void state_freeze(struct devwld *d);

#endif
