/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwld's learn mode (learning.c, devwld(8) LEARN MODE): a node that learns (the policy
 * file's "learn", devwlctl learn NODE on|off, the later one winning; a node that says
 * nothing is as its parent) has the containers at or below it served with its ceiling, every device
 * they touch recorded (common/learn.h), per container and per learning node, and devwlctl advise
 * draws the minimal policy from a record. Loop thread only, but learning_served(), which the
 * handler views copy.
 */
#ifndef DEVWLD_LEARNING_H
#define DEVWLD_LEARNING_H

#include <stdio.h>
#include <sys/types.h>

#include "devwl.h"

struct devwld;
struct container;
struct learn_program;

/* The node at or above node whose learn mode it has, if that is on; else NULL. */
struct devwl_node *learning_node(const struct devwld *d, const struct devwl_node *node);

/*
 * The ceiling of learner, which never gives more: its parent; the root's, which has
 * none, the default OCI set (common/defaults.c), as devwl-run runs without a policy.
 * NULL only when out of memory.
 */
struct devwl_node *learning_ceiling(struct devwl_node *learner);

/* The node c's calls are decided by now: its learning node's ceiling while it learns
 * (NULL when out of memory: served as it would be without learning), else its node. */
const struct devwl_node *learning_served(const struct devwld *d, const struct container *c);

/* An event a handler decided for c while it learnt, made by prog. */
void learning_record(struct devwld *d, struct container *c, const struct devwl_event *ev,
		     const struct learn_program *prog);

/* Node path was told to learn (devwlctl learn PATH on) while it did not: it starts a new
 * record. */
void learning_restart(struct devwld *d, const char *path);

/*
 * devwlctl advise [owner=UID] NAME: the advice (learn_advise()) from the record of NAME, a
 * node path (starting with "/") or a container as resolve_owned_container() takes it
 * among owner's (a container's advice is for the node it learnt under), into out. 0, or
 * a negative errno with err saying why: -ENOENT (no such node or container, nothing
 * learnt), -ENOMEM.
 */
int learning_advise(struct devwld *d, uid_t owner, const char *name, FILE *out,
		    struct devwl_error *err);

/* c is freed: its record goes with it. */
void learning_container_gone(struct container *c);
/* Every record, at the end. */
void learning_fini(struct devwld *d);

#endif
