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
 *
 * The specs are files others write (one on a mount that does not answer, one at the
 * parser's limits), so they are read on a work thread (follow_with_specs(): even where
 * they are followed, which may lag a spec written just before the container), and the
 * container's calls wait for the grant: its notify fds are watched only once the grant
 * is in force (c->waits, container_serve()), so its first call finds what its
 * annotations name, as it would had the specs been read at once. Past the deadline it
 * is served without them (when in doubt, deny).
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
#include "store.h"

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

/* What c waits for: the names of its annotations, granted once the specs are read. */
struct cdi_wait {
	uint64_t token;
	uid_t owner;
	char *id;
	struct cdi_names n;
};

static void cdi_wait_free(void *ctx)
{
	struct cdi_wait *w = ctx;

	cdi_names_clear(&w->n);
	free(w->id);
	free(w);
}

static void refuse_all(struct devwld *d, const struct container *c, const struct cdi_names *n,
		       const char *why)
{
	for (size_t i = 0; i < n->n; i++) {
		char sel[640];

		snprintf(sel, sizeof(sel), "cdi:%s", n->names[i]);
		follow_refused(d, c->id, c->node_path, sel, CAUSE, why);
	}
	log_msg("container %s: its CDI annotations name %zu devices, none granted: %s", c->id, n->n,
		why);
}

/* Bind each name on c's own node, against the specs as read (follow_with_specs()), and put
 * what they grant in force before any call of c is answered. */
static void grant_names(struct devwld *d, struct container *c, const struct cdi_names *n)
{
	size_t granted = 0;

	for (size_t i = 0; i < n->n; i++) {
		char sel[640];
		struct devwl_error e = {0};

		snprintf(sel, sizeof(sel), "cdi:%s", n->names[i]);
		if (follow_grant(d, c->id, c->node_path, sel, CAUSE, &e) >= 0)
			granted++;
	}
	/* The handlers' copies and a kernel-mode cgroup follow the node as it is now. */
	if (d->store_hooks.policy_changed)
		d->store_hooks.policy_changed(d);
	kernelmode_policy_changed(d);
	if (d->store_hooks.changed)
		d->store_hooks.changed(d);
	log_msg("container %s: %zu of the %zu CDI devices its annotations name bound on %s", c->id,
		granted, n->n, c->node_path);
}

/* On the loop, the specs read (r 0) or not (r < 0): grant, then serve c. */
static void cdi_wait_done(struct devwld *d, void *ctx, int r)
{
	struct cdi_wait *w = ctx;
	struct container *c = container_find(d, w->owner, w->id);
	char why[160];

	if (!c || c->waits != w->token)
		return; /* gone meanwhile, and whatever it asked for with it */
	if (r < 0) {
		snprintf(why, sizeof(why), "the CDI specs were not read within %d s (%s)",
			 follow_cdi_deadline_ms() / 1000,
			 r == -ETIMEDOUT ? "a spec that does not answer, or too slow to parse"
					 : strerror(-r));
		refuse_all(d, c, &w->n, why);
	} else {
		grant_names(d, c, &w->n);
	}
	container_serve(d, c);
}

void cdigrant_container(struct devwld *d, struct container *c, const struct oci_state *st)
{
	static uint64_t tokens;
	struct cdi_wait *w = NULL;
	struct devwl_error err = {0};
	int r;

	w = calloc(1, sizeof(*w));
	if (!w || cdi_names_of(st, &w->n) < 0) {
		log_msg("container %s: out of memory reading its CDI annotations: nothing granted",
			c->id);
		if (w)
			cdi_wait_free(w);
		return;
	}
	if (!w->n.nannos) {
		cdi_wait_free(w);
		return;
	}
	if (!cdi_optin(&d->mapping.cdi, c->node_path)) {
		log_msg("container %s: %zu cdi.k8s.io/ annotations ignored: node %s does not say "
			"\"cdi_annotations\"",
			c->id, w->n.nannos, c->node_path);
		cdi_wait_free(w);
		return;
	}
	refuse_bad(d, c, &w->n);
	if (w->n.n && attach_own_node(d, c, &err) < 0) {
		refuse_all(d, c, &w->n, err.msg);
		cdi_wait_free(w);
		return;
	}
	if (!w->n.n) {
		cdi_wait_free(w);
		return;
	}
	w->token = ++tokens;
	w->owner = c->owner_uid;
	w->id = strdup(c->id);
	if (!w->id) {
		refuse_all(d, c, &w->n, "out of memory");
		cdi_wait_free(w);
		return;
	}
	c->waits = w->token;
	r = follow_with_specs(d, cdi_wait_done, cdi_wait_free, w);
	if (r < 0) {
		c->waits = 0;
		refuse_all(d, c, &w->n,
			   r == -EBUSY ? "devwld's work threads are all busy: the CDI specs "
					 "could not be read"
				       : strerror(-r));
		cdi_wait_free(w);
		return;
	}
	if (c->waits)
		log_msg("container %s: its calls wait while the CDI specs its annotations need "
			"are read (at most %d s)",
			c->id, follow_cdi_deadline_ms() / 1000);
}
