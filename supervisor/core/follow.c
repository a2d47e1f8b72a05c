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

#include "audit-line.h"
#include "batch.h"
#include "devwld.h"
#include "follow.h"
#include "log.h"
#include "selector.h"
#include "util.h"

static void log_warning(void *userdata, const char *msg)
{
	log_msg("selector %s: %s", (const char *)userdata, msg);
}

void follow_env(const struct devwld *d, struct selector_env *env)
{
	*env = (struct selector_env){
		.cdi_dirs = d->cfg.n_cdi_dirs ? d->cfg.cdi_dirs : NULL,
		.n_cdi_dirs = d->cfg.n_cdi_dirs,
	};
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

/* {"event":"selector", ...} to the audit and `devwlctl events`, as attach.c's records. */
static void record(struct devwld *d, const struct binding *b, const struct rulevec *granted,
		   const struct rulevec *revoked, const char *cause)
{
	struct json_object *o = json_object_new_object();
	char now[AUDIT_TIME_MAX];

	if (!o)
		return;
	audit_time(now);
	json_object_object_add(o, "time", json_object_new_string(now));
	json_object_object_add(o, "event", json_object_new_string("selector"));
	json_object_object_add(o, "node", json_object_new_string(b->node));
	json_object_object_add(o, "binding", json_object_new_string(verb(b->allow)));
	json_object_object_add(o, "selector", json_object_new_string(b->selector));
	json_object_object_add(o, "granted", rule_array(granted));
	json_object_object_add(o, "revoked", rule_array(revoked));
	json_object_object_add(o, "cause", json_object_new_string(cause));
	/* No container's: only subscribers of every container see it. */
	audit_record(&d->audit, o, "");
	json_object_put(o);
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

int follow_bind(struct devwld *d, struct devwl_policy *policy, struct bindings *bs,
		const char *path, bool allow, const char *selector, bool record_it, FILE *out)
{
	struct devwl_node *node = devwl_policy_find(policy, path);
	struct devwl_error e = {0};
	struct rulevec none = {0};
	struct binding *b;
	int r;

	if (!node)
		return batch_reply_error(out, -ENOENT, "no node %s", path);
	r = bindings_add(bs, path, allow, selector, false);
	if (r == -ENOSPC)
		return batch_reply_error(out, r,
					 "%d selector bindings already: put them in the policy "
					 "file's \"selectors\"",
					 BINDINGS_MAX);
	if (r < 0)
		return batch_reply_error(out, r, "out of memory");
	b = &bs->v[bs->n - 1];
	r = resolve(d, b, true, &b->rules, &e);
	for (size_t k = 0; r >= 0 && k < b->rules.n; k++) {
		char s[DEVWL_RULE_STR_MAX] = "?";

		if (write_rule(node, allow, &b->rules.v[k], selector))
			continue;
		/* All or nothing: what this call granted goes again. */
		for (size_t j = 0; j < k; j++)
			(void)devwl_node_update(node, DEVWL_FILE_DENY, &b->rules.v[j]);
		(void)devwl_rule_format(&b->rules.v[k], s, sizeof(s));
		r = devwl_error_set(&e, -EPERM, 0, "%s: allow %s on %s: refused by the parent",
				    selector, s, path);
	}
	if (r < 0) {
		binding_free(b);
		bs->n--;
		return batch_reply_error(out, r, "%s %s on %s: %s", verb(allow), selector, path,
					 e.msg[0] ? e.msg : strerror(-r));
	}
	log_rules(b, record_it ? "bound by devwlctl, names" : "names");
	if (record_it)
		record(d, b, allow ? &b->rules : &none, allow ? &none : &b->rules, "devwlctl");
	fputs("ok\n", out);
	return 0;
}

/* A pending change of one binding. */
struct change {
	struct rulevec now, deny, allow;
	bool skip; /* not resolved again: left as it is */
};

static bool in(const struct rulevec *rv, const struct devwl_rule *rule)
{
	for (size_t i = 0; i < rv->n; i++)
		if (rv->v[i].type == rule->type && rv->v[i].major == rule->major &&
		    rv->v[i].minor == rule->minor)
			return true;
	return false;
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

bool follow_refresh(struct devwld *d, bool cdi_only, const char *cause)
{
	struct bindings *bs = &d->bindings;
	struct change *ch;
	struct rulevec touched = {0};
	bool any = false;

	for (size_t i = 0; i < bs->n;)
		if (!devwl_policy_find(d->policy, bs->v[i].node))
			drop_binding(d, i);
		else
			i++;
	if (!bs->n)
		return false;
	ch = calloc(bs->n, sizeof(*ch));
	if (!ch) {
		log_msg("selectors: out of memory: not followed this time");
		return false;
	}
	for (size_t i = 0; i < bs->n; i++) {
		struct binding *b = &bs->v[i];
		struct devwl_error e = {0};
		int r;

		if (cdi_only && strncmp(b->selector, "cdi:", 4)) {
			ch[i].skip = true;
			continue;
		}
		r = resolve(d, b, false, &ch[i].now, &e);
		if (r < 0 && !b->allow) {
			/* A denial stays as it was rather than lapse. */
			log_msg("selector deny %s on %s: %s; left as it was", b->selector, b->node,
				e.msg[0] ? e.msg : strerror(-r));
			ch[i].skip = true;
			continue;
		}
		if (r < 0)
			/* When in doubt, deny: an allow that cannot say what it names takes back
			 * all it gave. */
			log_msg("selector allow %s on %s: %s; what it granted is taken back",
				b->selector, b->node, e.msg[0] ? e.msg : strerror(-r));
		if (binding_diff(b->allow, &b->rules, &ch[i].now, &ch[i].deny, &ch[i].allow) < 0) {
			/* Out of memory: revoke all an allow binding gave (its old rules). */
			ch[i].deny = (struct rulevec){0};
			for (size_t k = 0; b->allow && k < b->rules.n; k++)
				(void)rulevec_add(&ch[i].deny, &b->rules.v[k]);
			free(ch[i].now.v);
			ch[i].now = (struct rulevec){0};
		}
	}
	/* Revocations first: an allow binding's devices gone. */
	for (size_t i = 0; i < bs->n; i++) {
		struct devwl_node *node = devwl_policy_find(d->policy, bs->v[i].node);

		for (size_t k = 0; !ch[i].skip && bs->v[i].allow && k < ch[i].deny.n; k++) {
			write_rule(node, false, &ch[i].deny.v[k], bs->v[i].selector);
			(void)rulevec_add(&touched, &ch[i].deny.v[k]);
			any = true;
		}
	}
	/* Then in order, each binding writing again what an earlier one touched. */
	for (size_t i = 0; i < bs->n; i++) {
		struct binding *b = &bs->v[i];
		struct devwl_node *node = devwl_policy_find(d->policy, b->node);
		struct rulevec *mine = b->allow ? &ch[i].allow : &ch[i].deny;
		struct rulevec again = {0};

		if (ch[i].skip)
			continue;
		for (size_t k = 0; k < ch[i].now.n; k++)
			if (in(&touched, &ch[i].now.v[k]) && !in(mine, &ch[i].now.v[k]))
				(void)rulevec_add(&again, &ch[i].now.v[k]);
		for (size_t k = 0; k < again.n; k++)
			(void)rulevec_add(mine, &again.v[k]);
		free(again.v);
		rulevec_sort(mine);
		for (size_t k = 0; k < mine->n; k++) {
			if (!write_rule(node, b->allow, &mine->v[k], b->selector) && b->allow) {
				/* Refused: not granted, so not said to be. */
				memmove(&mine->v[k], &mine->v[k + 1],
					(mine->n - k - 1) * sizeof(*mine->v));
				mine->n--;
				k--;
				continue;
			}
			(void)rulevec_add(&touched, &mine->v[k]);
			any = true;
		}
		if (ch[i].deny.n || ch[i].allow.n) {
			record(d, b, &ch[i].allow, &ch[i].deny, cause);
			free(b->rules.v);
			b->rules = ch[i].now;
			ch[i].now = (struct rulevec){0};
			log_rules(b, "now names");
		} else {
			/* Same devices; a changed order of the same is not worth a line. */
			free(b->rules.v);
			b->rules = ch[i].now;
			ch[i].now = (struct rulevec){0};
		}
	}
	for (size_t i = 0; i < bs->n; i++) {
		free(ch[i].now.v);
		free(ch[i].deny.v);
		free(ch[i].allow.v);
	}
	free(ch);
	free(touched.v);
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
			b->from_file ? "file" : "devwlctl");
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
