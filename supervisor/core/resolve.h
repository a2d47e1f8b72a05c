/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A container named by an operator (resolve.c): devwlctl attach, detach and events
 * --container, each through resolve_owned_container(). Loop thread only.
 */
#ifndef DEVWLD_RESOLVE_H
#define DEVWLD_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "devwl.h"

struct devwld;
struct container;

/* No owner given: the name means one of root's containers (runtime uid 0). */
#define RESOLVE_ROOT ((uid_t)0)

/*
 * The one container of runtime uid owner that name means: its full id, a prefix of
 * exactly one of its ids, its Kubernetes name NAMESPACE/POD/CONTAINER or its runtime's
 * name (podman's, nerdctl's: rtname.h) (root's containers only have those: store.c). Another
 * owner's containers are never candidates. 0 and *ret_c, or -EINVAL (no name), -ENOENT (none:
 * err lists up to three of owner's containers near it, resolve_nearness()), -EINVAL (more
 * than one: err lists a few, each with its owner), with err saying so.
 */
int resolve_owned_container(struct devwld *d, uid_t owner, const char *name,
			    struct container **ret_c, struct devwl_error *err);

/* The longest names resolve_distance() compares (a runtime name's bound, rtname.h, and
 * more). */
#define RESOLVE_NEAR_MAX 256

/*
 * How near a name that names nothing is to c, for the operator's "did you mean": 0 not
 * near, else 1 (nearest) to 3. Near: c's id starts with name but for case (1), or name is
 * one edit from the id's start (2, from 4 characters); c's runtime or Kubernetes name is
 * name but for case (1), one edit away (2), two (3, for a name of 6 characters or more),
 * or starts with name (3, from 3 characters). Says nothing of whose c is: the caller
 * asks it of owner's containers alone.
 */
unsigned int resolve_nearness(const struct container *c, const char *name);

/* The edit distance between a[0..na) and b[0..nb), ASCII case ignored, a transposition
 * one edit, if at most max; else max + 1 (found in O(na * max) steps, as the loop thread
 * asks it of every container). UINT_MAX for a string longer than RESOLVE_NEAR_MAX or a
 * max that large. */
unsigned int resolve_distance(const char *a, size_t na, const char *b, size_t nb, unsigned int max);

/* The name c is shown by beside its id (its runtime's, else its Kubernetes name), or
 * NULL. */
const char *resolve_shown_name(const struct container *c);

/* name could be a container's full id before it runs (64 hex digits, as Docker,
 * containerd, podman and CRI make them): what events --container may wait for. */
bool resolve_full_id(const char *name);

#endif
