/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CDI devices from the runtime's annotations. Kubernetes' device plugins and DRA drivers
 * hand a container its devices as CDI names, which containerd and CRI-O pass on as
 * "cdi.k8s.io/" annotations and inject as device nodes. Where the policy opts in, devwld
 * grants exactly those devices: each name becomes an allow binding cdi:VENDOR/CLASS=NAME
 * (core/follow.c), so the grant follows the spec as other cdi: bindings do.
 *
 * Pod authors write annotations too, so this is opt-in per subtree, and a grant lands on
 * a node of the container's own (attach.c's leaf), never on one it shares: what one
 * container asks for reaches no neighbour, and goes with the container's node. A name
 * that does not parse gets nothing, said in the log and the audit; the container is
 * served all the same, with what its node gives it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "cdigrant.h"
#include "cdinames.h"
#include "devwld.h"
#include "follow.h"
#include "kernelmode.h"
#include "log.h"

#define CAUSE "cdi annotation"

static void refuse_bad(struct devwld *d, const struct container *c, const struct cdi_names *n)
{
	for (size_t i = 0; i < n->nbad; i++) {
		const struct cdi_bad *b = &n->bad[i];
		char sel[160], why[256];

		snprintf(sel, sizeof(sel), "cdi:%s", b->item);
		snprintf(why, sizeof(why), "annotation %s: \"%s\": %s", b->key, b->item, b->why);
		log_msg("container %s: %s; nothing granted for it", c->id, why);
		follow_refused(d, c->id, c->node_path, sel, CAUSE, why);
	}
	if (n->nbad_more)
		log_msg("container %s: %zu more CDI names of its annotations refused, not listed",
			c->id, n->nbad_more);
}

void cdigrant_container(struct devwld *d, struct container *c, const struct oci_state *st)
{
	struct cdi_names n = {0};
	struct devwl_error err = {0};
	size_t granted = 0;

	if (cdi_names_of(st, &n) < 0) {
		log_msg("container %s: out of memory reading its CDI annotations: nothing granted",
			c->id);
		return;
	}
	if (!n.nannos)
		return;
	if (!cdi_optin(&d->mapping.cdi, c->node_path)) {
		log_msg("container %s: %zu cdi.k8s.io/ annotations ignored: node %s does not say "
			"\"cdi_annotations\"",
			c->id, n.nannos, c->node_path);
		cdi_names_clear(&n);
		return;
	}
	refuse_bad(d, c, &n);
	if (n.n && attach_own_node(d, c, &err) < 0) {
		for (size_t i = 0; i < n.n; i++) {
			char sel[640];

			snprintf(sel, sizeof(sel), "cdi:%s", n.names[i]);
			follow_refused(d, c->id, c->node_path, sel, CAUSE, err.msg);
		}
		log_msg("container %s: its CDI annotations name %zu devices, none granted: %s",
			c->id, n.n, err.msg);
		cdi_names_clear(&n);
	}
	for (size_t i = 0; i < n.n; i++) {
		char sel[640];
		struct devwl_error e = {0};

		snprintf(sel, sizeof(sel), "cdi:%s", n.names[i]);
		if (follow_grant(d, c->id, c->node_path, sel, CAUSE, &e) >= 0)
			granted++;
	}
	if (n.n) {
		/* In force before any call of c is answered: the handlers' copies and a
		 * kernel-mode cgroup follow the node as it is now. */
		if (d->store_hooks.policy_changed)
			d->store_hooks.policy_changed(d);
		kernelmode_policy_changed(d);
		if (d->store_hooks.changed)
			d->store_hooks.changed(d);
		log_msg("container %s: %zu of the %zu CDI devices its annotations name bound on %s",
			c->id, granted, n.n, c->node_path);
	}
	cdi_names_clear(&n);
}
