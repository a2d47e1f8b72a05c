/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the keeper and its worker share (devwld(8), RESTART): a table of notify fd slots in
 * a MAP_SHARED memfd, each with the record of whose its fd is, and the messages the worker
 * sends over their socketpair.
 *
 * The keeper is the process devwld starts as. It holds the listener and control sockets
 * and a duplicate of every container's notify fd, and runs the worker, which does all the
 * rest. While the keeper holds an fd, a worker that dies leaves every trapped call waiting
 * in the kernel instead of failing it ENOSYS, and the next worker picks the fds up.
 *
 * Whose an fd is travels with it: KMSG_ADD carries the fd and the worker's record of its
 * process (container id, node, pids: slotrec.h), and the keeper stores the bytes in the
 * slot's record area without reading them; KMSG_DEL drops them with the fd. So a new
 * worker knows every process the keeper holds, also one attached after the last state
 * write (the state file names the others, and stays the source of the hierarchy).
 */
#ifndef DEVWLD_KEEPER_TABLE_H
#define DEVWLD_KEEPER_TABLE_H

#include <stddef.h>
#include <stdint.h>

#define KEEPER_MAGIC 0x6b6c7764u /* "dwlk" */
/* 2: slots carry records (rec_len, the record area). A version 1 table (no records, its
 * rec_len fields 0) a re-executed keeper grows into version 2 in place. */
#define KEEPER_VERSION 2u
/* flags: the table and every slot's fd are in systemd's file descriptor store (keeper.c),
 * so a re-executed keeper need not hand them over again. */
#define KEEPER_STORED 1u
/* One slot per container process; the table's pages are only touched up to nslots. */
#define KEEPER_SLOTS_MAX (1u << 20)
/*
 * A slot's record is at most this long: enough for the longest container id (1024) and
 * node path (4095) devwld accepts, so every attach has one (slotrec.h checks the sum at
 * compile time). Each slot has this much of the record area, page-aligned, so a typical
 * record of a hundred bytes costs one page of the memfd, given back when the slot is freed.
 */
#define KEEPER_REC_MAX 8192u

/* A worker that stopped for a planned restart, its state written and nothing in flight. */
#define DEVWLD_EXIT_HANDOVER 75

/* Environment: how a worker finds its keeper, and how a re-executed keeper its fds. */
#define DEVWLD_ENV_WORKER "DEVWLD_WORKER"
#define DEVWLD_ENV_KEEPER "DEVWLD_KEEPER"

struct keeper_slot {
	/* Written by the keeper: its fd for this slot (the same number in a worker it started
	 * since), -1 when free, and the tag the worker gave the slot when it added it. */
	int32_t fd;
	uint32_t rec_len; /* bytes of the slot's record in the record area; 0: none */
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
	uint32_t flags;	 /* KEEPER_STORED; 0 in a table of a keeper before it */
	struct keeper_slot slot[];
};

/* The slots (a version 1 table ends there), then the record area: KEEPER_REC_MAX bytes a
 * slot. The memfd is sparse: only pages written take memory. */
#define KEEPER_SLOTS_SIZE                                                                          \
	(sizeof(struct keeper_table) + KEEPER_SLOTS_MAX * sizeof(struct keeper_slot))
#define KEEPER_REC_OFFSET ((KEEPER_SLOTS_SIZE + 65535) & ~(size_t)65535)
#define KEEPER_TABLE_SIZE (KEEPER_REC_OFFSET + (size_t)KEEPER_SLOTS_MAX * KEEPER_REC_MAX)
/* Where slot i's record is: offset in the memfd, address in a mapping of the table. */
#define KEEPER_REC_POS(i)    (KEEPER_REC_OFFSET + (size_t)(i)*KEEPER_REC_MAX)
#define KEEPER_REC(table, i) ((unsigned char *)(table) + KEEPER_REC_POS(i))

enum keeper_msg_type {
	KMSG_SOCKETS = 1, /* fds: the listener and the control socket */
	KMSG_ADD,	  /* fd: a notify fd for slot, with tag; data: its record (opaque) */
	KMSG_DEL,	  /* slot is free again, its record dropped */
	KMSG_READY,	  /* the worker serves */
	KMSG_NOTIFY,	  /* data: an sd_notify message to forward (no NUL) */
};

/* Sent as KEEPER_MSG_HEAD + len bytes: one SOCK_SEQPACKET message, so a record is taken
 * with its fd or not at all. */
struct keeper_msg {
	uint32_t type;
	uint32_t slot;
	uint64_t tag;
	uint32_t len; /* bytes of data */
	uint32_t pad;
	unsigned char data[KEEPER_REC_MAX];
};

#define KEEPER_MSG_HEAD offsetof(struct keeper_msg, data)

#endif
