/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The name a container runtime gave a container (rtname.c): what `podman ps` or
 * `nerdctl ps` shows, for devwlctl to name it by (core/resolve.c).
 */
#ifndef DEVWLD_RTNAME_H
#define DEVWLD_RTNAME_H

#include <stddef.h>

struct oci_state;

/* The longest runtime name taken; a longer one is no name. */
#define RTNAME_MAX 253

/*
 * The runtime's name of the container of st (heap), or NULL (none, or out of memory):
 *   - nerdctl: its "nerdctl/name" annotation (nerdctl passes its labels as annotations);
 *   - podman: the "names" of the container's entry in containers/storage's
 *     containers.json, two directories above the bundle (GRAPHROOT/DRIVER-containers/ID/
 *     userdata): podman passes no name in the state or the annotations.
 * Only for root's runtimes (store.c): it reads a file below the bundle the state names.
 * A name must be a plain word: [A-Za-z0-9][A-Za-z0-9_.-]*, at most RTNAME_MAX bytes.
 */
char *rtname_of(const struct oci_state *st);

/* podman's part: the first name of the container id in the containers.json at path
 * (heap), or NULL. */
char *rtname_from_storage(const char *path, const char *id);

#endif
