/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the keeper and its worker share (devwld(8), RESTART): a table of notify fd slots in
 * a MAP_SHARED memfd, and the messages the worker sends over their socketpair.
 *
 * The keeper is the process devwld starts as. It holds the listener and control sockets
 * and a duplicate of every container's notify fd, and runs the worker, which does all the
 * rest. While the keeper holds an fd, a worker that dies leaves every trapped call waiting
 * in the kernel instead of failing it ENOSYS, and the next worker picks the fds up.
 */
#ifndef DEVWLD_KEEPER_H
#define DEVWLD_KEEPER_H

#include <stdint.h>

#define KEEPER_MAGIC   0x6b6c7764u /* "dwlk" */
#define KEEPER_VERSION 1u
/* One slot per container process; the table's pages are only touched up to nslots. */
#define KEEPER_SLOTS_MAX (1u << 20)

/* A worker that stopped for a planned restart, its state written and nothing in flight. */
#define DEVWLD_EXIT_HANDOVER 75

/* Environment: how a worker finds its keeper, and how a re-executed keeper its fds. */
#define DEVWLD_ENV_WORKER "DEVWLD_WORKER"
#define DEVWLD_ENV_KEEPER "DEVWLD_KEEPER"

struct keeper_slot {
	/* Written by the keeper: its fd for this slot (the same number in a worker it started
	 * since), -1 when free, and the tag the worker gave the slot when it added it. */
	int32_t fd;
	uint32_t pad;
	uint64_t tag;
	/* Written by the worker: the last notification it received, and whether it is still
	 * unanswered. The keeper answers it ENOSYS if the worker dies, as the kernel answers
	 * when a listener dies; the id also stays after the answer (seen), because a worker
	 * killed between RECV and writing here leaves a received call behind it. */
	uint64_t inflight_id;
	uint32_t inflight; /* 0 or 1: id is valid; stored after id, cleared after the answer */
	uint32_t seen;	   /* inflight_id holds a received id */
};

struct keeper_table {
	uint32_t magic, version;
	uint32_t nslots; /* high-water mark, kept by the keeper: slots [0, nslots) were used */
	uint32_t pad;
	struct keeper_slot slot[];
};

#define KEEPER_TABLE_SIZE                                                                          \
	(sizeof(struct keeper_table) + KEEPER_SLOTS_MAX * sizeof(struct keeper_slot))

enum keeper_msg_type {
	KMSG_SOCKETS = 1, /* fds: the listener and the control socket */
	KMSG_ADD,	  /* fd: a notify fd for slot, with tag */
	KMSG_DEL,	  /* slot is free again */
	KMSG_READY,	  /* the worker serves */
	KMSG_NOTIFY,	  /* text: an sd_notify message to forward */
};

struct keeper_msg {
	uint32_t type;
	uint32_t slot;
	uint64_t tag;
	char text[256]; /* NUL-terminated */
};

/* Run as the keeper (keeper.c): start workers with argv until one stops for good. */
int keeper_main(char **argv);

#endif
