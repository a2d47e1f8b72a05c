/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The worker's side of the keeper (keeper_link.c; the keeper itself: keeper.h): the
 * sockets and notify fds it inherited, the slots it gives the keeper, the in-flight marks
 * of the handler threads. A link with table NULL: no keeper.
 */
#ifndef DEVWLD_KEEPER_LINK_H
#define DEVWLD_KEEPER_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct keeper_table;
struct slot_owner;

struct keeper_link {
	int sock;
	struct keeper_table *table;
	int listen_fd, control_fd; /* inherited; -1: make them */
	int lock_fd[2];		   /* the keeper's locks on the two socket paths (trust.h) */
	unsigned int gen;	   /* 1 for the first worker, then one more per restart */
	uint64_t *used;		   /* slots in use (bitmap) */
	uint64_t *claimed;	   /* slots restored from the state (until that is done) */
	uint32_t hint;		   /* no free slot below */
};

/* From the environment: 1 linked, 0 not started by a keeper, <0 broken. */
int keeper_link_open(struct keeper_link *l);
void keeper_link_close(struct keeper_link *l);
/* Give the keeper a duplicate of a new notify fd with the record of whose it is: its
 * slot and tag. -ENOSPC, -EIO, -ENAMETOOLONG (no record fits), or the send's error. */
int keeper_link_add(struct keeper_link *l, int fd, const struct slot_owner *owner,
		    uint32_t *ret_slot, uint64_t *ret_tag);
void keeper_link_del(struct keeper_link *l, uint32_t slot);
/* The inherited fd of slot if its tag matches (once per slot), else -ENOENT. */
int keeper_link_claim(struct keeper_link *l, uint32_t slot, uint64_t tag);
/* Until the claims are done: the slots inherited are below this (0 after). */
uint32_t keeper_link_nslots(const struct keeper_link *l);
/* An inherited, unclaimed slot's record copied into buf (KEEPER_REC_MAX bytes), not yet
 * checked, and its tag: its length (0: it has none), -ENOENT (no fd there or claimed),
 * -EBADMSG (its length is out of bounds). */
ssize_t keeper_link_record(struct keeper_link *l, uint32_t slot, void *buf, uint64_t *ret_tag);
/* Close and give back every inherited slot nobody claimed. */
void keeper_link_release_unclaimed(struct keeper_link *l);
/* Hand the keeper the two sockets the worker serves, for the next worker. */
int keeper_link_sockets(struct keeper_link *l, int listen_fd, int control_fd);
void keeper_link_ready(struct keeper_link *l);
/* Send an sd_notify message through the keeper; false when there is none. */
bool keeper_link_notify(const char *text);
void keeper_link_inflight(struct keeper_link *l, uint32_t slot, uint64_t id);
void keeper_link_answered(struct keeper_link *l, uint32_t slot);

#endif
