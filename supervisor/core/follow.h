/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Devices followed by identity (follow.c): the selector bindings of d->bindings written
 * to their nodes, and written again, as a difference, whenever what they name changes
 * (front/uevents.c tells). Loop thread only.
 */
#ifndef DEVWLD_FOLLOW_H
#define DEVWLD_FOLLOW_H

#include <stdbool.h>
#include <stdio.h>

#include "bindings.h"
#include "devwl.h"

struct devwld;
struct selector_env;

/* The roots this devwld resolves selectors against (--cdi-dir; the host's otherwise). */
void follow_env(const struct devwld *d, struct selector_env *env);

/*
 * The CDI specs, for the refreshes (front/uevents.c): needed when a binding follows a cdi:
 * selector or attached_cdi (an attachment does). follow_cdi_load() reads and parses them
 * and touches nothing of d but its configuration, so that it runs on a work thread (a
 * spec at the size and depth limits takes its time to parse; common/cdi.c parses an
 * unchanged one once); follow_cdi_report() logs on the loop each spec it refused. Held in
 * d->cdi_now, every selector resolved meanwhile sees the same specs.
 */
bool follow_cdi_needed(const struct devwld *d, bool attached_cdi);
struct cdi_registry;
int follow_cdi_load(const struct devwld *d, struct cdi_registry **ret);
void follow_cdi_report(const struct cdi_registry *reg);

/* How long a read of the CDI specs on a work thread may take: past it, what waited for
 * it goes on without them (a cdi: selector names nothing: when in doubt, deny). */
#define FOLLOW_CDI_DEADLINE_MS 10000
/* FOLLOW_CDI_DEADLINE_MS, or in a test build DEVWLD_TEST_CDI_DEADLINE_MS (whole seconds). */
unsigned int follow_cdi_deadline_ms(void);

/*
 * Call fn(d, ctx, r) on the loop with the CDI specs read, and every selector it resolves
 * resolved against them as a work thread has just read them (followed or not: what is
 * followed may lag a spec just written), so that no spec (a file on a mount that does
 * not answer, one at the parser's limits) is read on the loop. r: 0; or -ETIMEDOUT (not read within
 * follow_cdi_deadline_ms()) or -ENOMEM, fn then resolving against no spec at all. ctx_free
 * (may be NULL) frees ctx after fn, on the loop; or, when fn is never called (devwld
 * exits first), on whichever thread lets go last: ctx holds nothing of the loop's.
 * 0, or a negative errno (-EBUSY: every work thread taken) with fn not called and ctx
 * still the caller's.
 */
typedef void follow_specs_fn(struct devwld *d, void *ctx, int r);
int follow_with_specs(struct devwld *d, follow_specs_fn *fn, void (*ctx_free)(void *ctx),
		      void *ctx);

/*
 * A policy just loaded: write every binding of b to policy, in order, each resolved now
 * (its rules: what it resolved to). A binding whose node policy lacks, or whose selector
 * does not resolve (malformed, sysfs unreadable), fails it: -errno with err naming it. An
 * allow the node's parent refuses is logged and skipped, as "container_rules" are.
 */
int follow_load(struct devwld *d, struct devwl_policy *policy, struct bindings *b, size_t from,
		struct devwl_error *err);

/*
 * devwlctl allow|deny NODE SELECTOR on policy: resolved, written, and kept in b as a
 * binding; answered on out as the batch protocol answers. An allow the parent refuses
 * takes back what it wrote and is refused (EPERM), keeping nothing. record: say it in
 * the audit and `devwlctl events` (not when a reload replays it). 0 or a negative errno
 * (-ENOENT: no such node).
 */
int follow_bind(struct devwld *d, struct devwl_policy *policy, struct bindings *b, const char *node,
		bool allow, const char *selector, bool record, FILE *out);

/*
 * devwlctl unbind: drop the one binding of bs that bindings_find() names (devwlctl's or
 * the policy file's; a container's CDI bindings go with it). What an allow binding
 * granted is revoked, then the node's other bindings are written again in their order,
 * so what another still names stays granted or denied as if the dropped one had never
 * been. A deny binding's denials stay: nothing says what the node had before them. The
 * answer ("ok", or "error ...") goes to out; record_it: a devwlctl change now, not a
 * reload replaying one. 0 or -errno.
 */
int follow_unbind(struct devwld *d, struct devwl_policy *policy, struct bindings *bs,
		  const char *path, bool allow, const char *selector, bool record_it, FILE *out);

/*
 * A container's CDI annotations asked for selector: bound, allowed on the node at path
 * of d->policy (the container's own) as a binding marked as the container's, and
 * recorded with cause and the container. Refused (the parent refuses, the node is
 * missing, too many bindings): logged and recorded as refused, nothing kept; -errno
 * with err saying why. A device no spec defines yet is followed, granted when one does.
 */
int follow_grant(struct devwld *d, const char *container, const char *path, const char *selector,
		 const char *cause, struct devwl_error *err);
/* Record the refusal of what a container asked for (selector: as asked), with reason. */
void follow_refused(struct devwld *d, const char *container, const char *path, const char *selector,
		    const char *cause, const char *reason);
/*
 * A reload: the bindings of from made for containers, bound again in policy (the fresh
 * one) as to's, each resolved now. One that no longer applies is logged and dropped.
 */
void follow_carry(struct devwld *d, struct devwl_policy *policy, struct bindings *to,
		  const struct bindings *from);
/* Container (its id, its node) is gone: the bindings made for it on that node go (another
 * owner's container of the same id has its own), and what they granted on a node that
 * outlived it is taken back. */
void follow_forget_container(struct devwld *d, const char *container, const char *node_path);

/*
 * Resolve d->bindings again (cdi_only: only the cdi: ones) and write to d->policy what
 * changed since each was written, as bindings_plan() orders it: every allow binding's
 * revocations first, then, in the bindings' order, the grants and new denials (a device
 * a write touched here is written again, with all the access it names, by each later
 * binding naming it, so the order of the list decides, as on a load). A binding whose
 * node is gone is dropped. Each change is recorded with cause. true when anything was
 * written: the caller then renews the handlers' copies and the programmed cgroups
 * before anything else runs.
 */
bool follow_refresh(struct devwld *d, bool cdi_only, const char *cause);

/* devwlctl selectors: one line per binding, "NODE allow|deny SELECTOR [file|devwlctl]:
 * RULES" (what it resolves to now, "-" for nothing), then ".". */
void follow_list(struct devwld *d, FILE *out);

/* Under devwlctl show NODE's listing: one line per binding path holds, in their order,
 * "  allow|deny SELECTOR -> RULES" (what it resolves to now, as follow_list()). */
void follow_show(struct devwld *d, const char *path, FILE *out);

#endif
