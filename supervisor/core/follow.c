/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Devices followed by identity. A binding (format/bindings.h) holds what its selector
 * resolved to when it was last written; when the devices change (a uevent, a CDI spec
 * rewritten: front/uevents.c), every binding is resolved again and only the difference
 * is written, as `devwlctl allow`/`deny` writes would: a number that vanished from an
 * allow binding is denied, a new one allowed, a new one of a deny binding denied. The
 * hierarchy's own semantics then hold (children lose what parents lose; a grant the
 * parent refuses is logged and skipped). Writing only the difference leaves alone what
 * an operator changed by hand since on the devices that did not change.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "attachment.h"
#include "audit-line.h"
#include "batch.h"
#include "cdi.h"
#include "devwld.h"
#include "events.h"
#include "follow.h"
#include "log.h"
#include "selector.h"
#include "util.h"
#include "work.h"

static void log_warning(void *userdata, const char *msg)
{
	log_msg("selector %s: %s", (const char *)userdata, msg);
}

void follow_env(const struct devwld *d, struct selector_env *env)
{
	*env = (struct selector_env){
		.cdi_dirs = d->cfg.n_cdi_dirs ? d->cfg.cdi_dirs : NULL,
		.n_cdi_dirs = d->cfg.n_cdi_dirs,
		.cdi = d->cdi_now,
	};
}

bool follow_cdi_needed(const struct devwld *d, bool attached_cdi)
{
	bool any = attached_cdi;

	for (size_t i = 0; !any && i < d->bindings.n; i++)
		any = !strncmp(d->bindings.v[i].selector, "cdi:", 4);
	return any;
}

int follow_cdi_load(const struct devwld *d, struct cdi_registry **ret)
{
	if (d->cfg.n_cdi_dirs)
		return cdi_load(d->cfg.cdi_dirs, d->cfg.n_cdi_dirs, ret);
	return cdi_load(cdi_default_dirs, ARRAY_SIZE(cdi_default_dirs), ret);
}

void follow_cdi_report(const struct cdi_registry *reg)
{
	/* A spec refused (unreadable, untrusted, past a parser limit) grants nothing: said
	 * here, where the specs are read, since the selectors resolved from them do not. */
	for (size_t i = 0; reg && i < cdi_n_errors(reg); i++)
		log_msg("CDI: %s", cdi_error(reg, i));
}

unsigned int follow_cdi_deadline_ms(void)
{
#ifdef DEVWL_TEST_HOOKS
	/* tests/oci/174 and 189 reach the deadline in seconds, not tens of them. */
	const char *ms = secure_getenv("DEVWLD_TEST_CDI_DEADLINE_MS");

	if (ms && *ms)
		return (unsigned int)strtoul(ms, NULL, 10);
#endif
	return FOLLOW_CDI_DEADLINE_MS;
}

/* A read of the specs for follow_with_specs(): run() touches d's configuration only. */
struct specs_wait {
	struct work w;
	const struct devwld *d;
	struct cdi_registry *reg;
	follow_specs_fn *fn;
	void (*ctx_free)(void *ctx);
	void *ctx;
};

static void specs_wait_run(struct work *w)
{
	struct specs_wait *sw = container_of(w, struct specs_wait, w);

	(void)follow_cdi_load(sw->d, &sw->reg);
}

static void specs_wait_free(struct work *w)
{
	struct specs_wait *sw = container_of(w, struct specs_wait, w);

	cdi_free(sw->reg);
	if (sw->ctx_free)
		sw->ctx_free(sw->ctx);
	free(sw);
}

/* fn with reg as the specs every selector resolves against (NULL: none at all, so that
 * nothing reads them on the loop meanwhile); what was followed before is back after. */
static void with_specs(struct devwld *d, struct cdi_registry *reg, follow_specs_fn *fn, void *ctx,
		       int r)
{
	struct cdi_registry *none = NULL, *was = d->cdi_now;

	if (!reg && cdi_load(NULL, 0, &none) >= 0)
		reg = none;
	d->cdi_now = reg;
	fn(d, ctx, r);
	d->cdi_now = was;
	cdi_free(none);
}

static void specs_wait_done(struct devwld *d, struct work *w, int r)
{
	struct specs_wait *sw = container_of(w, struct specs_wait, w);

	/* Past the deadline run() may still be writing sw->reg: not ours to read. */
	if (r == 0 && sw->reg)
		follow_cdi_report(sw->reg);
	else
		log_msg("CDI: the specs were not read within %d s (%s): what waited for them "
			"goes on without",
			follow_cdi_deadline_ms() / 1000,
			r == 0 ? "out of memory" : "a spec too slow to read or parse");
	with_specs(d, r == 0 ? sw->reg : NULL, sw->fn, sw->ctx, r == 0 && !sw->reg ? -ENOMEM : r);
	/* Freed here, on the loop: free_fn may run on the thread, once it ends. */
	if (sw->ctx_free)
		sw->ctx_free(sw->ctx);
	sw->ctx_free = NULL;
}

int follow_with_specs(struct devwld *d, follow_specs_fn *fn, void (*ctx_free)(void *ctx), void *ctx)
{
	struct specs_wait *sw = NULL;
	int r;

	/* Even where they are followed: a spec written just before the container started
	 * may not have reached d->cdi_now yet (its inotify event still queued), and the
	 * container's first call must find it. Unchanged specs come from the cache. */
	sw = calloc(1, sizeof(*sw));
	if (!sw)
		return -ENOMEM;
	*sw = (struct specs_wait){
		.w = {.run = specs_wait_run, .done = specs_wait_done, .free_fn = specs_wait_free},
		.d = d,
		.fn = fn,
		.ctx_free = ctx_free,
		.ctx = ctx};
	r = work_submit(&d->loop, &sw->w, follow_cdi_deadline_ms());
	if (r < 0)
		free(sw);
	return r;
}

/*
 * What b's selector names now, into rv (sorted). A CDI device no spec defines (yet)
 * names nothing: it is followed until one does. warn: log what selector_resolve() notes.
 */
static int resolve(const struct devwld *d, const struct binding *b, bool warn, struct rulevec *rv,
		   struct devwl_error *err)
{
	struct selector_env env;
	struct devwl_rule *rules = NULL;
	size_t n = 0;
	int r;

	follow_env(d, &env);
	if (warn) {
		env.warn = log_warning;
		env.userdata = b->selector;
	}
	r = selector_resolve(&env, b->selector, strlen(b->selector), &rules, &n, err);
	if (r == -ENOENT && !strncmp(b->selector, "cdi:", 4))
		r = 0;
	if (r < 0)
		return r;
	*rv = (struct rulevec){.v = rules, .n = n};
	rulevec_sort(rv);
	return 0;
}

static const char *verb(bool allow)
{
	return allow ? "allow" : "deny";
}

/* Write rule; an allow the parent refuses is logged and false. */
static bool write_rule(struct devwl_node *node, bool allow, const struct devwl_rule *rule,
		       const char *selector)
{
	char s[DEVWL_RULE_STR_MAX] = "?";
	int r = devwl_node_update(node, allow ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY, rule);

	if (r >= 0)
		return true;
	(void)devwl_rule_format(rule, s, sizeof(s));
	log_msg("selector %s on %s: %s %s: %s", selector, devwl_node_path(node), verb(allow), s,
		r == -EPERM ? "refused by the parent, skipped" : strerror(-r));
	return false;
}

static struct json_object *rule_array(const struct rulevec *rv)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < rv->n; i++) {
		char s[DEVWL_RULE_STR_MAX];

		if (devwl_rule_format(&rv->v[i], s, sizeof(s)) >= 0)
			json_object_array_add(a, json_object_new_string(s));
	}
	return a;
}

/*
 * {"event":"selector", ...} to the audit and `devwlctl events`, as attach.c's records.
 * reason: a refusal's (nothing granted), else NULL.
 */
static void record_event(struct devwld *d, const struct binding *b, const struct rulevec *granted,
			 const struct rulevec *revoked, const char *cause, const char *reason)
{
	struct json_object *o = json_object_new_object();
	char now[AUDIT_TIME_MAX];

	if (!o)
		return;
	audit_time(now);
	json_object_object_add(o, "time", json_object_new_string(now));
	json_object_object_add(o, "event", json_object_new_string("selector"));
	if (b->container)
		json_object_object_add(o, "container", json_object_new_string(b->container));
	json_object_object_add(o, "node", json_object_new_string(b->node));
	json_object_object_add(o, "binding", json_object_new_string(verb(b->allow)));
	json_object_object_add(o, "selector", json_object_new_string(b->selector));
	json_object_object_add(o, "granted", rule_array(granted));
	json_object_object_add(o, "revoked", rule_array(revoked));
	if (reason) {
		json_object_object_add(o, "result", json_object_new_string("refused"));
		json_object_object_add(o, "reason", json_object_new_string(reason));
	}
	json_object_object_add(o, "cause", json_object_new_string(cause));
	/* A binding of no container's: only subscribers of every container see it. */
	/* A binding knows its container by id alone (bindings.h). */
	audit_record(&d->audit, o, EVENTS_ANY_OWNER, b->container ? b->container : "");
	json_object_put(o);
}

static void record(struct devwld *d, const struct binding *b, const struct rulevec *granted,
		   const struct rulevec *revoked, const char *cause)
{
	record_event(d, b, granted, revoked, cause, NULL);
}

static void log_rules(const struct binding *b, const char *what)
{
	char list[512] = "";
	size_t at = 0;

	for (size_t i = 0; i < b->rules.n && at < sizeof(list) - DEVWL_RULE_STR_MAX - 8; i++) {
		char s[DEVWL_RULE_STR_MAX];

		if (devwl_rule_format(&b->rules.v[i], s, sizeof(s)) >= 0)
			at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s", i ? ", " : "",
					       s);
	}
	log_msg("selector %s %s on %s %s: %s", verb(b->allow), b->selector, b->node, what,
		b->rules.n ? list : "nothing");
}

int follow_load(struct devwld *d, struct devwl_policy *policy, struct bindings *bs, size_t from,
		struct devwl_error *err)
{
	for (size_t i = from; i < bs->n; i++) {
		struct binding *b = &bs->v[i];
		struct devwl_node *node = devwl_policy_find(policy, b->node);
		struct devwl_error e = {0};
		int r;

		if (!node)
			return devwl_error_set(err, -ENOENT, 0,
					       "\"selectors\": %s %s: no node %s in the policy",
					       verb(b->allow), b->selector, b->node);
		free(b->rules.v);
		b->rules = (struct rulevec){0};
		r = resolve(d, b, true, &b->rules, &e);
		if (r < 0 && b->where)
			return devwl_error_set(err, r, 0, "%s: %s %s: %s", b->where, verb(b->allow),
					       b->selector, e.msg[0] ? e.msg : strerror(-r));
		if (r < 0)
			return devwl_error_set(err, r, 0, "\"selectors\": %s on %s: %s",
					       verb(b->allow), b->node,
					       e.msg[0] ? e.msg : strerror(-r));
		for (size_t k = 0; k < b->rules.n; k++)
			write_rule(node, b->allow, &b->rules.v[k], b->selector);
		log_rules(b, "names");
	}
	return 0;
}

/*
 * Bind selector to the node at path of policy, as bs's last binding (container: made for
 * its annotations, or NULL), and write what it names now. All or nothing: an allow the
 * parent refuses takes back what it wrote and keeps nothing (-EPERM). 0 or -errno with
 * err saying why.
 */
static int bind_one(struct devwld *d, struct devwl_policy *policy, struct bindings *bs,
		    const char *path, bool allow, const char *selector, const char *container,
		    struct devwl_error *err)
{
	struct devwl_node *node = devwl_policy_find(policy, path);
	_cleanup_free_ uint8_t *added = NULL;
	struct binding *b;
	int r;

	if (!node)
		return devwl_error_set(err, -ENOENT, 0, "no node %s", path);
	r = bindings_add(bs, path, allow, selector, false);
	if (r == -ENOSPC)
		return devwl_error_set(err, r, 0,
				       "%d selector bindings already: put them in the policy "
				       "file's \"selectors\"",
				       BINDINGS_MAX);
	if (r < 0)
		return devwl_error_set(err, r, 0, "out of memory");
	if (container && binding_set_container(bs, container) < 0) {
		binding_free(&bs->v[--bs->n]);
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	}
	b = &bs->v[bs->n - 1];
	r = resolve(d, b, true, &b->rules, err);
	added = calloc(b->rules.n ? b->rules.n : 1, sizeof(*added));
	if (r >= 0 && !added)
		r = devwl_error_set(err, -ENOMEM, 0, "out of memory");
	for (size_t k = 0; r >= 0 && k < b->rules.n; k++) {
		const struct devwl_rule *rule = &b->rules.v[k];
		uint8_t before = attachment_access(node, rule->type, rule->major, rule->minor);
		char s[DEVWL_RULE_STR_MAX] = "?";

		if (write_rule(node, allow, rule, selector)) {
			added[k] = rule->access & ~before;
			continue;
		}
		/* All or nothing: what this call granted goes again, and only that: what the
		 * node had already (another binding's, a plain rule's) stays. */
		binding_undo(node, &b->rules, added, k);
		(void)devwl_rule_format(rule, s, sizeof(s));
		r = devwl_error_set(err, -EPERM, 0, "%s: allow %s on %s: refused by the parent",
				    selector, s, path);
	}
	if (r < 0) {
		if (!err->msg[0])
			devwl_error_set(err, r, 0, "%s", strerror(-r));
		binding_free(b);
		bs->n--;
		return r;
	}
	return 0;
}

int follow_bind(struct devwld *d, struct devwl_policy *policy, struct bindings *bs,
		const char *path, bool allow, const char *selector, bool record_it, FILE *out)
{
	struct devwl_error e = {0};
	struct rulevec none = {0};
	struct binding *b;
	int r = bind_one(d, policy, bs, path, allow, selector, NULL, &e);

	if (r == -ENOENT && !devwl_policy_find(policy, path))
		return batch_reply_error(out, r, "no node %s", path);
	if (r == -ENOSPC)
		return batch_reply_error(out, r, "%s", e.msg);
	if (r < 0)
		return batch_reply_error(out, r, "%s %s on %s: %s", verb(allow), selector, path,
					 e.msg);
	b = &bs->v[bs->n - 1];
	log_rules(b, record_it ? "bound by devwlctl, names" : "names");
	if (record_it)
		record(d, b, allow ? &b->rules : &none, allow ? &none : &b->rules, "devwlctl");
	fputs("ok\n", out);
	return 0;
}

int follow_unbind(struct devwld *d, struct devwl_policy *policy, struct bindings *bs,
		  const char *path, bool allow, const char *selector, bool record_it, FILE *out)
{
	struct devwl_node *node = devwl_policy_find(policy, path);
	long i = bindings_find(bs, path, allow, selector);
	struct rulevec none = {0};
	struct binding *b;

	if (!node)
		return batch_reply_error(out, -ENOENT, "no node %s", path);
	if (i < 0) {
		_cleanup_free_ char *has = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&has, &size);

		/* Say what the node has: a selector written another way is another binding. */
		for (size_t k = 0; f && k < bs->n; k++)
			if (!strcmp(bs->v[k].node, path))
				fprintf(f, "%s%s %s%s", ftell(f) > 0 ? ", " : "",
					verb(bs->v[k].allow), bs->v[k].selector,
					bs->v[k].container ? " (a container's annotation)" : "");
		if (f && fclose(f) != 0)
			has = NULL;
		return batch_reply_error(out, -ENOENT, "node %s has no binding %s %s (%s%s)", path,
					 verb(allow), selector, has && has[0] ? "it has: " : "",
					 has && has[0] ? has : "it has none: devwlctl selectors");
	}
	b = &bs->v[i];
	for (size_t k = 0; allow && k < b->rules.n; k++)
		write_rule(node, false, &b->rules.v[k], b->selector);
	if (record_it) {
		log_rules(b, "unbound by devwlctl, named");
		record(d, b, &none, allow ? &b->rules : &none, "devwlctl");
	}
	bindings_remove(bs, (size_t)i);
	/* What the others name is theirs again, later bindings winning as when first written. */
	for (size_t k = 0; k < bs->n; k++)
		for (size_t j = 0; !strcmp(bs->v[k].node, path) && j < bs->v[k].rules.n; j++)
			write_rule(node, bs->v[k].allow, &bs->v[k].rules.v[j], bs->v[k].selector);
	fputs("ok\n", out);
	return 0;
}

int follow_grant(struct devwld *d, const char *container, const char *path, const char *selector,
		 const char *cause, struct devwl_error *err)
{
	struct rulevec none = {0};
	struct binding *b;
	int r = bind_one(d, d->policy, &d->bindings, path, true, selector, container, err);

	if (r < 0) {
		struct binding x = {.node = (char *)path,
				    .allow = true,
				    .selector = (char *)selector,
				    .container = (char *)container};

		log_msg("container %s: selector allow %s on %s (%s): refused: %s", container,
			selector, path, cause, err->msg);
		record_event(d, &x, &none, &none, cause, err->msg);
		return r;
	}
	b = &d->bindings.v[d->bindings.n - 1];
	log_rules(b, "bound for its container, names");
	record(d, b, &b->rules, &none, cause);
	return 0;
}

void follow_refused(struct devwld *d, const char *container, const char *path, const char *selector,
		    const char *cause, const char *reason)
{
	struct rulevec none = {0};
	struct binding x = {.node = (char *)path,
			    .allow = true,
			    .selector = (char *)selector,
			    .container = (char *)container};

	record_event(d, &x, &none, &none, cause, reason);
}

void follow_carry(struct devwld *d, struct devwl_policy *policy, struct bindings *to,
		  const struct bindings *from)
{
	for (size_t i = 0; i < from->n; i++) {
		const struct binding *b = &from->v[i];
		struct devwl_error e = {0};

		if (!b->container)
			continue;
		if (bind_one(d, policy, to, b->node, b->allow, b->selector, b->container, &e) < 0)
			log_msg("container %s: selector %s %s on %s no longer applies (%s): "
				"dropped",
				b->container, verb(b->allow), b->selector, b->node, e.msg);
	}
}

void follow_forget_container(struct devwld *d, const char *container, const char *node_path)
{
	for (size_t i = 0; i < d->bindings.n;) {
		struct binding *b = &d->bindings.v[i];
		struct devwl_node *node;

		/* Ids are per owner: another owner's container of the same id binds elsewhere. */
		if (!b->container || strcmp(b->container, container) ||
		    strcmp(b->node, node_path)) {
			i++;
			continue;
		}
		/* Its node outlived it (another node below, say): what it granted goes. */
		node = devwl_policy_find(d->policy, b->node);
		for (size_t k = 0; node && b->allow && k < b->rules.n; k++)
			(void)devwl_node_update(node, DEVWL_FILE_DENY, &b->rules.v[k]);
		log_msg("selector %s %s on %s: its container %s is gone, and the binding with it",
			verb(b->allow), b->selector, b->node, container);
		binding_free(b);
		memmove(b, b + 1, (d->bindings.n - i - 1) * sizeof(*b));
		d->bindings.n--;
	}
}

static void drop_binding(struct devwld *d, size_t i)
{
	struct binding *b = &d->bindings.v[i];

	log_msg("selector %s %s: node %s is gone, and the binding with it", verb(b->allow),
		b->selector, b->node);
	binding_free(b);
	memmove(b, b + 1, (d->bindings.n - i - 1) * sizeof(*b));
	d->bindings.n--;
}

/*
 * What binding i has resolved to now (or skip: left alone) into now[i]. An allow binding
 * that cannot say what it names names nothing: when in doubt, deny.
 */
static void resolve_again(struct devwld *d, size_t i, bool cdi_only, struct rulevec *now,
			  bool *skip)
{
	struct binding *b = &d->bindings.v[i];
	struct devwl_error e = {0};
	int r;

	if (cdi_only && strncmp(b->selector, "cdi:", 4)) {
		*skip = true;
		return;
	}
	r = resolve(d, b, false, now, &e);
	if (r >= 0)
		return;
	if (!b->allow) {
		/* A denial stays as it was rather than lapse. */
		log_msg("selector deny %s on %s: %s; left as it was", b->selector, b->node,
			e.msg[0] ? e.msg : strerror(-r));
		*skip = true;
		return;
	}
	log_msg("selector allow %s on %s: %s; what it granted is taken back", b->selector, b->node,
		e.msg[0] ? e.msg : strerror(-r));
}

/* Out of memory for a plan: every allow binding resolved again takes back all it gave. */
static bool revoke_all(struct devwld *d, const bool *skip)
{
	bool any = false;

	log_msg("selectors: out of memory: what allow bindings granted is taken back");
	for (size_t i = 0; i < d->bindings.n; i++) {
		struct binding *b = &d->bindings.v[i];

		if (skip[i] || !b->allow)
			continue;
		for (size_t k = 0; k < b->rules.n; k++, any = true)
			write_rule(devwl_policy_find(d->policy, b->node), false, &b->rules.v[k],
				   b->selector);
		free(b->rules.v);
		b->rules = (struct rulevec){0};
	}
	return any;
}

bool follow_refresh(struct devwld *d, bool cdi_only, const char *cause)
{
	struct bindings *bs = &d->bindings;
	struct binding_plan plan = {0};
	struct rulevec *now;
	bool *skip, *ok = NULL, any;

	for (size_t i = 0; i < bs->n;)
		if (!devwl_policy_find(d->policy, bs->v[i].node))
			drop_binding(d, i);
		else
			i++;
	if (!bs->n)
		return false;
	now = calloc(bs->n, sizeof(*now));
	skip = calloc(bs->n, sizeof(*skip));
	if (!now || !skip) {
		free(now);
		free(skip);
		log_msg("selectors: out of memory: not followed this time");
		return false;
	}
	for (size_t i = 0; i < bs->n; i++)
		resolve_again(d, i, cdi_only, &now[i], &skip[i]);
	if (bindings_plan(bs, now, skip, &plan) < 0 ||
	    !(ok = calloc(plan.n ? plan.n : 1, sizeof(*ok)))) {
		any = revoke_all(d, skip);
		goto out;
	}
	any = false;
	for (size_t k = 0; k < plan.n; k++) {
		const struct binding *b = &bs->v[plan.v[k].binding];

		ok[k] = write_rule(devwl_policy_find(d->policy, b->node), plan.v[k].allow,
				   &plan.v[k].rule, b->selector);
		/* A grant refused changed nothing; a denial is made, or the node is gone. */
		any |= ok[k] || !plan.v[k].allow;
	}
	for (size_t i = 0; i < bs->n; i++) {
		struct binding *b = &bs->v[i];
		struct rulevec granted = {0}, revoked = {0};

		if (skip[i])
			continue;
		/* What took: a refused grant is not said to be granted. */
		for (size_t k = 0; k < plan.n; k++)
			if (plan.v[k].binding == i && (ok[k] || !plan.v[k].allow))
				(void)rulevec_add(plan.v[k].allow ? &granted : &revoked,
						  &plan.v[k].rule);
		rulevec_sort(&granted);
		rulevec_sort(&revoked);
		free(b->rules.v);
		b->rules = now[i];
		now[i] = (struct rulevec){0};
		/* Same devices; a changed order of the same is not worth a line. */
		if (granted.n || revoked.n) {
			record(d, b, &granted, &revoked, cause);
			log_rules(b, "now names");
		}
		free(granted.v);
		free(revoked.v);
	}
out:
	for (size_t i = 0; i < bs->n; i++)
		free(now[i].v);
	free(now);
	free(skip);
	free(ok);
	binding_plan_free(&plan);
	return any;
}

/* What b resolves to now: " b 7:3 r, b 7:4 r", " -" for nothing, " (why)" when it cannot
 * be resolved. */
static void print_resolved(struct devwld *d, const struct binding *b, FILE *out)
{
	struct devwl_error e = {0};
	struct rulevec rv = {0};
	int r = resolve(d, b, false, &rv, &e);

	if (r < 0)
		fprintf(out, " (%s)", e.msg[0] ? e.msg : strerror(-r));
	else if (!rv.n)
		fputs(" -", out);
	for (size_t k = 0; k < rv.n; k++) {
		char s[DEVWL_RULE_STR_MAX];

		if (devwl_rule_format(&rv.v[k], s, sizeof(s)) >= 0)
			fprintf(out, "%s %s", k ? "," : "", s);
	}
	free(rv.v);
}

void follow_list(struct devwld *d, FILE *out)
{
	for (size_t i = 0; i < d->bindings.n; i++) {
		const struct binding *b = &d->bindings.v[i];

		fprintf(out, "%s %s %s [%s]:", b->node, verb(b->allow), b->selector,
			b->container   ? "annotation"
			: b->from_file ? "file"
				       : "devwlctl");
		print_resolved(d, b, out);
		fputc('\n', out);
	}
	fputs(".\n", out);
}

void follow_show(struct devwld *d, const char *path, FILE *out)
{
	for (size_t i = 0; i < d->bindings.n; i++) {
		const struct binding *b = &d->bindings.v[i];

		if (strcmp(b->node, path))
			continue;
		fprintf(out, "  %s %s ->", verb(b->allow), b->selector);
		print_resolved(d, b, out);
		fputc('\n', out);
	}
}
