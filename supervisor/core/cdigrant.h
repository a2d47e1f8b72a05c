/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CDI devices a container's annotations name, granted where the policy lets them
 * (cdigrant.c; devwl-policy(5) "cdi_annotations"). Loop thread only.
 */
#ifndef DEVWLD_CDIGRANT_H
#define DEVWLD_CDIGRANT_H

#include "ocistate.h"

struct devwld;
struct container;

/*
 * c was just registered with state st: if its node, or the nearest ancestor that says
 * so, has "cdi_annotations" true, each CDI device its "cdi.k8s.io/" annotations name is
 * bound as cdi:VENDOR/CLASS=NAME on a node of c's own, followed, and gone with c. A
 * malformed name is logged and recorded as refused; c is served whatever happens here.
 * Unless the specs are followed already, they are read on a work thread, and c's calls
 * wait (c->waits) until what they grant is in force, or the read's deadline passed.
 */
void cdigrant_container(struct devwld *d, struct container *c, const struct oci_state *st);

#endif
