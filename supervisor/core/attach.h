/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hot-plug (attach.c; devwlctl(1) attach, detach): a device given to a running container
 * = the grant on the container's own node + the node made in its filesystem, taken back
 * together. Loop thread only, but attach_list_write() (and the work threads, loop/work.h,
 * that place and remove nodes).
 */
#ifndef DEVWLD_ATTACH_H
#define DEVWLD_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "attachment.h"
#include "devwl.h"

struct devwld;
struct container;
struct devwl_node;

/* What devwlctl attach asks. Unset: path NULL, access 0, mode 0, uid/gid -1. */
struct attach_req {
	const char *container; /* a name of one of owner's containers (resolve.h) */
	uid_t owner;	       /* its runtimes' uid; root's: RESOLVE_ROOT */
	const char *device;    /* a host path, "c MAJOR:MINOR", "b MAJOR:MINOR", char-NAME,
				* block-NAME, or a selector (followed: attach-follow.c) */
	const char *path;      /* in the container; default: the host node's path (none for
				* a selector) */
	uint8_t access;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	bool mode_set;
	bool parent_grant; /* allow it first on every ancestor that refuses it */
	bool dry_run;	   /* resolve and check everything, change nothing */
};

/* Room for attachment_say()'s line. */
#define ATTACH_SAID_MAX 1024

/*
 * How an attach or detach under way ends, told on the loop: r 0 or a negative errno, err
 * the reason, said what was done (attachment_say()'s line; "" on failure). Placing or
 * removing the node walks the container's root, which may meet a filesystem the
 * workload serves that never answers (FUSE): that walk runs on a work thread
 * (loop/work.h) and its answer comes within HOTPLUG_DEADLINE_MS (-ETIMEDOUT after it,
 * the attach undone, the detach's grant revoked all the same).
 */
typedef void attach_done_fn(struct devwld *d, void *ctx, int r, const struct devwl_error *err,
			    const char *said);
/* Attach: 1 under way (done(ctx) tells how it ended; done may be NULL); 0 for a dry run,
 * what would be done in said[0..ATTACH_SAID_MAX); or a negative errno with the reason in
 * err (nothing half-done). */
int attach_device(struct devwld *d, const struct attach_req *req, char *said, attach_done_fn *done,
		  void *ctx, struct devwl_error *err);
/* Detach what (a device as attach takes it, the selector it was attached by, or the
 * path in the container) from owner's container (resolve.h): 1 under way (as attach), 0
 * done (dry_run: would be; nothing is) with what in said[0..ATTACH_SAID_MAX), or a
 * negative errno with the reason in err. */
int detach_device(struct devwld *d, uid_t owner, const char *container, const char *what,
		  bool dry_run, char *said, attach_done_fn *done, void *ctx,
		  struct devwl_error *err);
/*
 * The devices listing (attach-list.c), in two halves: "ID TYPE MAJOR:MINOR ACCESS PATH
 * OPEN-BY [SELECTOR]" lines (OPEN-BY: the pids of the container that hold the device
 * open, comma-separated, or "-"), then ".". attach_list_copy() runs on the loop and
 * copies what the lines need (NULL: out of memory); attach_list_write() may run on any
 * thread and touches nothing of d: finding the holders stat()s the containers' open
 * files, which may wait on a filesystem a workload serves (FUSE), so it never runs on
 * the loop. The caller frees the copy with attach_listing_free() (NULL is fine).
 */
struct attach_listing;
struct attach_listing *attach_list_copy(struct devwld *d);
void attach_list_write(const struct attach_listing *l, FILE *out);
void attach_listing_free(struct attach_listing *l);
/*
 * Give c a node of its own unless it has one (container_owns_node(): made for it and
 * named for it, which no other container may join): a leaf NODE/ID under the node it maps to, a
 * copy of it, which goes with c. Then a grant on c->node reaches no other container. 0, or a
 * negative errno with err saying why.
 */
int attach_own_node(struct devwld *d, struct container *c, struct devwl_error *err);
/*
 * What placing a's node in c's filesystem asks of devwl_node_place(): the node gate's
 * answer for c's confinement (DEVWL_PLACE_CONFINED, DEVWL_PLACE_TWIN), a's path, owner and
 * mode. Every path that places a node for an attachment (attach, the re-push after a
 * replug) asks it here, on the loop; the placement itself runs on a work thread.
 */
struct devwl_place;
void attach_place_of(const struct container *c, const struct attachment *a,
		     struct devwl_place *ret_place);
/*
 * The re-push after a replug (attach-follow.c), on a work thread like attach's placement:
 * a's node at its path goes if unplace (it had the numbers type major:minor, whose grant
 * is revoked already), then is made with a's numbers now (granted and in force already)
 * if place. c's attachments do not change until it ends (c->hotplug); then repushed is
 * told. pidfd is taken over. 0 under way, or a negative errno with err
 * saying why (nothing done).
 */
struct attach_repush {
	bool unplace;
	int type;
	uint32_t major, minor;
	bool place;
	bool back;	 /* the device back after an absence, not another one */
	char before[32]; /* "c MAJOR:MINOR" it had, for the record */
	char cause[256]; /* what changed (the record's "cause") */
};
/* Its end, on the loop: r the placement's answer (-ETIMEDOUT: at the deadline), or the
 * removal's when it only removed; a is c's attachment still (the work found it). */
typedef void attach_repushed_fn(struct devwld *d, struct container *c, struct attachment *a,
				const struct attach_repush *rp, int r,
				const struct devwl_error *err);
int attach_repush(struct devwld *d, struct container *c, const struct attachment *a, int pidfd,
		  const struct attach_repush *rp, attach_repushed_fn *repushed,
		  struct devwl_error *err);
/* Add a restored attachment to c (the state file; fields are copied). */
int attach_restore(struct container *c, const struct attachment *a);

/*
 * Devices attached by selector, followed (attach-follow.c): resolve each again
 * (cdi_only: the cdi: ones) and move its grant and node where its device went, recording
 * each change with cause. Each change is in force (node copies renewed, cgroups
 * programmed) before the node appears. true when anything changed (the state file's).
 */
bool attach_follow(struct devwld *d, bool cdi_only, const char *cause);
/* Is any device attached by a selector (so that uevents are to be followed)? */
bool attach_following(const struct devwld *d);
/* Does one follow a cdi: selector? */
bool attach_following_cdi(const struct devwld *d);

/* For attach-follow.c: a pidfd of one of c's processes (and its pid), or -ESRCH; a's
 * grant revoked; the handlers and kernel-mode cgroups told that a node changed. */
int attach_pidfd(const struct container *c, pid_t *ret_pid);
void attach_revoke(struct container *c, const struct attachment *a);
void attach_node_changed(struct devwld *d);
#endif
