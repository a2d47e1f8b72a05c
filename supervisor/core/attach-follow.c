/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Devices attached by selector, followed by identity (attach.c makes the attachment).
 * When the devices change (front/uevents.c: a uevent burst, a CDI spec rewritten), the
 * selector of each such attachment is resolved again:
 *
 * - the same device: nothing;
 * - none, or several (when in doubt, deny): the node goes from the container and the
 *   grant is revoked, as a detach does, but the attachment stays, absent, waiting;
 * - another device, or one back: the old numbers' grant is revoked first, so that a
 *   device that takes the old minor never inherits it; then the new numbers are granted
 *   and in force (the handlers' node copies renewed, a kernel-mode cgroup programmed),
 *   and only then is the node made again at the same path, with the same mode and owner.
 *
 * A grant the node's parents refuse, or a node that cannot be made, leaves it absent
 * until its numbers change again (or a detach): retrying on every uevent would only
 * repeat the refusal.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "attach.h"
#include "audit-line.h"
#include "devwld.h"
#include "explain.h"
#include "follow.h"
#include "kernelmode.h"
#include "log.h"
#include "selector.h"
#include "util.h"

static void numbers(const struct attachment *a, char *buf, size_t size)
{
	snprintf(buf, size, "%c %u:%u", a->type == DEVWL_DEV_BLOCK ? 'b' : 'c', a->major, a->minor);
}

/* {"event":"attach","cause":...}: what a change of the devices did to an attachment. */
static void record(struct devwld *d, const struct container *c, const struct attachment *a,
		   const char *old, const char *result, const char *reason, const char *cause)
{
	struct json_object *o = json_object_new_object();
	char acc[4], dev[32], now[AUDIT_TIME_MAX];

	if (!o)
		return;
	audit_time(now);
	json_object_object_add(o, "time", json_object_new_string(now));
	json_object_object_add(o, "event", json_object_new_string("attach"));
	json_object_object_add(o, "container", json_object_new_string(c->id));
	json_object_object_add(o, "node", json_object_new_string(c->node_path));
	if (!a->absent) {
		numbers(a, dev, sizeof(dev));
		json_object_object_add(o, "device", json_object_new_string(dev));
	}
	if (old[0])
		json_object_object_add(o, "old_device", json_object_new_string(old));
	json_object_object_add(o, "access",
			       json_object_new_string(devwl_access_text(a->access, acc)));
	json_object_object_add(o, "path", json_object_new_string(a->path));
	json_object_object_add(o, "selector", json_object_new_string(a->selector));
	json_object_object_add(o, "result", json_object_new_string(result));
	if (reason)
		json_object_object_add(o, "reason", json_object_new_string(reason));
	json_object_object_add(o, "cause", json_object_new_string(cause));
	audit_record(&d->audit, o, c->owner_uid, c->id);
	json_object_put(o);
}

/* The grant out: as a detach, the attachment kept (its node goes on a work thread). */
static void take_away(struct container *c, struct attachment *a)
{
	attach_revoke(c, a);
	a->added = 0;
	a->lapsed = false;
}

/* Another attachment of c has those numbers (the same device under two selectors). */
static const struct attachment *holder(const struct container *c, const struct attachment *a,
				       const struct devwl_rule *rule)
{
	for (size_t i = 0; i < c->nattached; i++) {
		const struct attachment *o = &c->attached[i];

		if (o != a && !o->absent && o->type == rule->type && o->major == rule->major &&
		    o->minor == rule->minor)
			return o;
	}
	return NULL;
}

/* Grant a's new numbers, in force (its node is made on a work thread, attach_repush()):
 * 0, or -errno with why. */
static int grant_new(struct devwld *d, struct container *c, struct attachment *a, int pidfd,
		     char *why, size_t size)
{
	struct devwl_rule rule = {.type = (uint8_t)a->type,
				  .access = a->access,
				  .major = a->major,
				  .minor = a->minor};
	uint8_t before = attachment_access(c->node, a->type, a->major, a->minor);
	int r;

	if (pidfd < 0) {
		snprintf(why, size, "no process left to reach its filesystem");
		return pidfd;
	}
	r = devwl_node_update(c->node, DEVWL_FILE_ALLOW, &rule);
	if (r >= 0 &&
	    (attachment_access(c->node, a->type, a->major, a->minor) & a->access) != a->access)
		r = -EPERM; /* an allow-all node whose wider denial an exact allow cannot lift */
	if (r < 0) {
		char ex[EXPLAIN_MAX];

		explain_allow_refused(c->node, &rule, ex, sizeof(ex));
		snprintf(why, size, "refused at node %.200s: %.300s", c->node_path,
			 ex[0] ? ex : strerror(-r));
		return r;
	}
	a->added = a->access & ~before;
	a->absent = false;
	attach_node_changed(d);
	return 0;
}

/* a's new numbers refused (their grant, or their node): absent until they change. */
static void refused(struct devwld *d, struct container *c, struct attachment *a, const char *old,
		    const char *why, const char *cause)
{
	a->absent = a->refused = true;
	attach_node_changed(d);
	log_msg("container %s: %s at %s: its device is %c %u:%u now, but %s; waiting for "
		"other numbers or a detach",
		c->id, a->selector, a->path, a->type == DEVWL_DEV_BLOCK ? 'b' : 'c', a->major,
		a->minor, why);
	a->absent = false; /* the record names the numbers refused */
	record(d, c, a, old, "refused", why, cause);
	a->absent = true;
}

/* The end of a re-push (attach_repush()). */
static void repushed(struct devwld *d, struct container *c, struct attachment *a,
		     const struct attach_repush *rp, int r, const struct devwl_error *err)
{
	char why[sizeof(err->msg) + 64];

	if (!rp->place) /* only the node out: attach_repush() said why if it stayed */
		return;
	if (r < 0) {
		snprintf(why, sizeof(why), "%.500s", err->msg);
		attach_revoke(c, a);
		a->added = 0;
		refused(d, c, a, rp->before, why, rp->cause);
	} else {
		a->refused = false;
		log_msg("container %s: %s at %s: %s %c %u:%u, was %s (%s)", c->id, a->selector,
			a->path, rp->back ? "back, on" : "moved to",
			a->type == DEVWL_DEV_BLOCK ? 'b' : 'c', a->major, a->minor, rp->before,
			rp->cause);
		record(d, c, a, rp->before, rp->back ? "back" : "replugged", NULL, rp->cause);
	}
	if (d->store_hooks.changed)
		d->store_hooks.changed(d);
}

static bool follow_one(struct devwld *d, struct container *c, struct attachment *a,
		       const char *cause)
{
	_cleanup_free_ struct devwl_rule *rules = NULL;
	_cleanup_close_ int pidfd = -1;
	struct selector_env env;
	struct devwl_error e = {0};
	enum attachment_step step;
	const struct attachment *other;
	struct attach_repush rp = {0};
	char why[sizeof(e.msg) + 64];
	const char *reason;
	size_t n = 0;
	pid_t pid = 0;
	int r;

	snprintf(rp.cause, sizeof(rp.cause), "%s", cause);
	follow_env(d, &env);
	r = selector_resolve(&env, a->selector, strlen(a->selector), &rules, &n, &e);
	if (r < 0)
		n = 0; /* when in doubt, deny: one that cannot say what it names has none */
	step = attachment_follow_step(a, rules, n, &reason);
	if (r < 0)
		reason = e.msg[0] ? e.msg : strerror(-r);
	if (step == ATTACHMENT_KEEP)
		return false;
	if (step != ATTACHMENT_AWAY && (other = holder(c, a, &rules[0]))) {
		if (a->absent)
			return false;
		snprintf(why, sizeof(why), "its device is attached at %.256s already", other->path);
		reason = why;
		step = ATTACHMENT_AWAY;
	}
	pidfd = attach_pidfd(c, &pid);
	/* Absent, it still has the numbers it last had: the record says them too. The old
	 * grant goes at once; its node goes on a work thread (attach_repush()), before the
	 * new one is made there. */
	numbers(a, rp.before, sizeof(rp.before));
	rp.unplace = !a->absent && pidfd >= 0;
	rp.type = a->type;
	rp.major = a->major;
	rp.minor = a->minor;
	if (!a->absent)
		take_away(c, a);
	if (step == ATTACHMENT_AWAY) {
		a->absent = true;
		a->refused = false;
		attach_node_changed(d);
		log_msg("container %s: %s at %s: %s: node removed, %s revoked; waiting for its "
			"device again",
			c->id, a->selector, a->path, reason, rp.before);
		record(d, c, a, rp.before, "waiting", reason, cause);
		if (rp.unplace && attach_repush(d, c, a, TAKE_FD(pidfd), &rp, repushed, &e) < 0)
			log_msg("%s; the node stays, its grant revoked", e.msg);
		return true;
	}
	/* The old grant is gone from the node before the new one is written: both are in
	 * force together, before the node appears. */
	a->type = rules[0].type;
	a->major = rules[0].major;
	a->minor = rules[0].minor;
	rp.place = true;
	rp.back = step != ATTACHMENT_MOVE;
	r = grant_new(d, c, a, pidfd, why, sizeof(why));
	if (r >= 0) {
		r = attach_repush(d, c, a, TAKE_FD(pidfd), &rp, repushed, &e);
		if (r < 0) {
			snprintf(why, sizeof(why), "%.500s", e.msg);
			attach_revoke(c, a);
			a->added = 0;
		}
	} else if (rp.unplace) {
		/* The old node goes all the same. */
		rp.place = false;
		if (attach_repush(d, c, a, TAKE_FD(pidfd), &rp, repushed, &e) < 0)
			log_msg("%s; the node stays, its grant revoked", e.msg);
	}
	if (r < 0)
		refused(d, c, a, rp.before, why, cause);
	return true;
}

bool attach_follow(struct devwld *d, bool cdi_only, const char *cause)
{
	bool any = false;

	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		struct container *c = container_of(l, struct container, link);

		/* An attach, detach or re-push under way: followed once it ends (refollow). */
		if (c->hotplug) {
			for (size_t i = 0; i < c->nattached; i++)
				d->refollow |= c->attached[i].selector != NULL;
			continue;
		}
		for (size_t i = 0; i < c->nattached && !c->hotplug; i++) {
			struct attachment *a = &c->attached[i];

			if (!a->selector || (cdi_only && strncmp(a->selector, "cdi:", 4)))
				continue;
			any |= follow_one(d, c, a, cause);
		}
	}
	if (any && d->store_hooks.changed)
		d->store_hooks.changed(d);
	return any;
}

bool attach_following_cdi(const struct devwld *d)
{
	for (const struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		const struct container *c = container_of(l, const struct container, link);

		for (size_t i = 0; i < c->nattached; i++)
			if (c->attached[i].selector && !strncmp(c->attached[i].selector, "cdi:", 4))
				return true;
	}
	return false;
}

bool attach_following(const struct devwld *d)
{
	for (const struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		const struct container *c = container_of(l, const struct container, link);

		for (size_t i = 0; i < c->nattached; i++)
			if (c->attached[i].selector)
				return true;
	}
	return false;
}
