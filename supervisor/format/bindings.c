/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Selector bindings: the list, where they come from (the policy file's "selectors", a
 * devwlctl allow or deny whose rule is a selector) and the writes that take a node from
 * what a binding resolved to last to what it resolves to now. Whether and how a node is
 * written is core/follow.c's; nothing here reads the devices.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "batch.h"
#include "bindings.h"
#include "nodepath.h"
#include "selector.h"
#include "util.h"

int bindings_add(struct bindings *b, const char *node, bool allow, const char *selector,
		 bool from_file)
{
	struct binding x = {.allow = allow, .from_file = from_file};

	if (b->n >= BINDINGS_MAX)
		return -ENOSPC;
	if (ARRAY_RESERVE(b->v, b->size, b->n + 1) < 0)
		return -ENOMEM;
	x.node = strdup(node);
	x.selector = strdup(selector);
	if (!x.node || !x.selector) {
		free(x.node);
		free(x.selector);
		return -ENOMEM;
	}
	b->v[b->n++] = x;
	return 0;
}

int bindings_add_rule(struct bindings *b, const char *node, bool allow, const char *selector,
		      const char *where)
{
	char *w = strdup(where);
	int r;

	if (!w)
		return -ENOMEM;
	r = bindings_add(b, node, allow, selector, true);
	if (r < 0) {
		free(w);
		return r;
	}
	b->v[b->n - 1].where = w;
	return 0;
}

void binding_free(struct binding *x)
{
	free(x->node);
	free(x->selector);
	free(x->container);
	free(x->where);
	free(x->rules.v);
}

int binding_set_container(struct bindings *b, const char *container)
{
	char *c = strdup(container);

	if (!c)
		return -ENOMEM;
	free(b->v[b->n - 1].container);
	b->v[b->n - 1].container = c;
	return 0;
}

void bindings_clear(struct bindings *b)
{
	for (size_t i = 0; i < b->n; i++)
		binding_free(&b->v[i]);
	free(b->v);
	*b = (struct bindings){0};
}

void bindings_forget(struct bindings *b, const char *path)
{
	size_t kept = 0, n = strlen(path);

	for (size_t i = 0; i < b->n; i++) {
		const char *node = b->v[i].node;

		if (!strncmp(node, path, n) && (node[n] == '\0' || node[n] == '/'))
			binding_free(&b->v[i]);
		else
			b->v[kept++] = b->v[i];
	}
	b->n = kept;
}

static int element(struct json_object *o, size_t i, const char *file, struct bindings *b,
		   struct devwl_error *err)
{
	const char *node = NULL, *sel = NULL;
	bool allow = false;

	if (!json_object_is_type(o, json_type_object))
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: \"selectors\"[%zu]: must be an object {\"node\", "
				       "\"allow\" or \"deny\"}",
				       file, i);
	json_object_object_foreach (o, key, val) {
		bool is_node = !strcmp(key, "node"), is_allow = !strcmp(key, "allow");

		if (!is_node && !is_allow && strcmp(key, "deny"))
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: \"selectors\"[%zu]: unknown key \"%.64s\" "
					       "(known: node, allow, deny)",
					       file, i, key);
		if (!json_object_is_type(val, json_type_string))
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: \"selectors\"[%zu]: \"%s\" must be a string",
					       file, i, key);
		if (is_node) {
			node = json_object_get_string(val);
			continue;
		}
		if (sel)
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: \"selectors\"[%zu]: \"allow\" or \"deny\", not "
					       "both",
					       file, i);
		sel = json_object_get_string(val);
		allow = is_allow;
	}
	if (!node || devwl_node_path_valid(node) < 0)
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: \"selectors\"[%zu]: \"node\" must be a node path "
				       "(/a/b)",
				       file, i);
	if (!sel)
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: \"selectors\"[%zu]: \"allow\" or \"deny\" is missing",
				       file, i);
	/* A plain rule belongs in the node's "rules": a binding is followed, a rule is not. */
	if (!selector_is(sel, strlen(sel)))
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: \"selectors\"[%zu]: \"%.200s\" is no selector (%s)",
				       file, i, sel, selector_prefixes());
	if (bindings_add(b, node, allow, sel, true) < 0)
		return devwl_error_set(err, b->n >= BINDINGS_MAX ? -EINVAL : -ENOMEM, 0,
				       b->n >= BINDINGS_MAX ? "%s: more than %d selector bindings"
							    : "%s: out of memory",
				       file, BINDINGS_MAX);
	return 0;
}

int bindings_from_json(struct json_object *arr, const char *file, struct bindings *b,
		       struct devwl_error *err)
{
	if (!arr)
		return 0;
	if (!json_object_is_type(arr, json_type_array))
		return devwl_error_set(err, -EINVAL, 0, "%s: \"selectors\": must be an array",
				       file);
	if (json_object_array_length(arr) > BINDINGS_MAX)
		return devwl_error_set(err, -EINVAL, 0, "%s: \"selectors\": more than %d bindings",
				       file, BINDINGS_MAX);
	for (size_t i = 0, n = json_object_array_length(arr); i < n; i++) {
		int r = element(json_object_array_get_idx(arr, i), i, file, b, err);

		if (r < 0)
			return r;
	}
	return 0;
}

int binding_of_line(const char *line, size_t len, char **ret_node, bool *ret_allow,
		    char **ret_selector)
{
	const char *p, *sp;
	bool allow;
	char *node, *sel;
	int n;

	if (len > 6 && !memcmp(line, "allow ", 6)) {
		allow = true;
		p = line + 6;
	} else if (len > 5 && !memcmp(line, "deny ", 5)) {
		allow = false;
		p = line + 5;
	} else {
		return 0;
	}
	sp = memchr(p, ' ', len - (size_t)(p - line));
	if (!sp || sp == p || memchr(p, '\0', (size_t)(sp - p)))
		return 0;
	sel = malloc(len + 1);
	if (!sel)
		return -ENOMEM;
	n = batch_unescape(sp + 1, len - (size_t)(sp + 1 - line), sel);
	if (n < 0 || memchr(sel, '\0', (size_t)n) || !selector_is(sel, (size_t)n)) {
		free(sel);
		return 0;
	}
	sel[n] = '\0';
	node = strndup(p, (size_t)(sp - p));
	if (!node) {
		free(sel);
		return -ENOMEM;
	}
	*ret_node = node;
	*ret_allow = allow;
	*ret_selector = sel;
	return 1;
}

int unbind_of_line(const char *line, size_t len, char **ret_node, bool *ret_allow,
		   char **ret_selector)
{
	_cleanup_free_ char *as_bind = NULL;
	const char *end = line + len, *node = line + 7, *verb, *rest;
	int n;

	if (len <= 7 || memcmp(line, "unbind ", 7) || memchr(line, '\0', len))
		return 0;
	verb = memchr(node, ' ', (size_t)(end - node));
	if (!verb || verb == node)
		return 0;
	verb++;
	rest = memchr(verb, ' ', (size_t)(end - verb));
	if (!rest)
		return 0;
	rest++;
	/* As the binding was made: "VERB NODE SELECTOR". */
	n = asprintf(&as_bind, "%.*s %.*s %.*s", (int)(rest - 1 - verb), verb,
		     (int)(verb - 1 - node), node, (int)(end - rest), rest);
	if (n < 0) {
		as_bind = NULL;
		return -ENOMEM;
	}
	return binding_of_line(as_bind, (size_t)n, ret_node, ret_allow, ret_selector);
}

long bindings_find(const struct bindings *b, const char *node, bool allow, const char *selector)
{
	for (size_t i = b->n; i-- > 0;) {
		const struct binding *x = &b->v[i];

		if (!x->container && x->allow == allow && !strcmp(x->node, node) &&
		    !strcmp(x->selector, selector))
			return (long)i;
	}
	return -ENOENT;
}

void bindings_remove(struct bindings *b, size_t i)
{
	binding_free(&b->v[i]);
	memmove(&b->v[i], &b->v[i + 1], (b->n - i - 1) * sizeof(b->v[0]));
	b->n--;
}

static const struct devwl_rule *find(const struct rulevec *rv, const struct devwl_rule *r)
{
	for (size_t i = 0; i < rv->n; i++)
		if (rv->v[i].type == r->type && rv->v[i].major == r->major &&
		    rv->v[i].minor == r->minor)
			return &rv->v[i];
	return NULL;
}

/* rule with only the bits of mask, added to rv unless that leaves none. */
static int add_bits(struct rulevec *rv, const struct devwl_rule *rule, uint8_t mask)
{
	struct devwl_rule x = *rule;

	x.access = rule->access & mask;
	return x.access ? rulevec_add(rv, &x) : 0;
}

int binding_diff(bool allow, const struct rulevec *old, const struct rulevec *now,
		 struct rulevec *ret_deny, struct rulevec *ret_allow)
{
	struct rulevec deny = {0}, grant = {0};
	int r = 0;

	/* Gone, or fewer bits: an allow binding takes back what it gave. */
	for (size_t i = 0; allow && r >= 0 && i < old->n; i++) {
		const struct devwl_rule *n = find(now, &old->v[i]);

		r = add_bits(&deny, &old->v[i], n ? (uint8_t)~n->access : 0xff);
	}
	/* New, or more bits: granted, or denied by a deny binding. */
	for (size_t i = 0; r >= 0 && i < now->n; i++) {
		const struct devwl_rule *o = find(old, &now->v[i]);

		r = add_bits(allow ? &grant : &deny, &now->v[i], o ? (uint8_t)~o->access : 0xff);
	}
	if (r < 0) {
		free(deny.v);
		free(grant.v);
		*ret_deny = *ret_allow = (struct rulevec){0};
		return r;
	}
	rulevec_sort(&deny);
	rulevec_sort(&grant);
	*ret_deny = deny;
	*ret_allow = grant;
	return 0;
}

void binding_undo(struct devwl_node *node, const struct rulevec *rules, const uint8_t *added,
		  size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct devwl_rule rule = rules->v[k];

		rule.access = added[k];
		if (rule.access)
			(void)devwl_node_update(node, DEVWL_FILE_DENY, &rule);
	}
}

static int plan_add(struct binding_plan *p, size_t binding, bool allow,
		    const struct devwl_rule *rule)
{
	if (ARRAY_RESERVE(p->v, p->size, p->n + 1) < 0)
		return -ENOMEM;
	p->v[p->n++] = (struct binding_write){.binding = binding, .allow = allow, .rule = *rule};
	return 0;
}

/* Each binding's grants and denials, as binding_diff() gives them. */
struct pending {
	struct rulevec deny, allow;
};

static void pending_free(struct pending *pd, size_t n)
{
	for (size_t i = 0; pd && i < n; i++) {
		free(pd[i].deny.v);
		free(pd[i].allow.v);
	}
	free(pd);
}

/* Is node at or below the node at path above? */
static bool at_or_below(const char *node, const char *above)
{
	size_t n = strlen(above);

	if (!strcmp(above, "/"))
		return true;
	return !strncmp(node, above, n) && (node[n] == '\0' || node[n] == '/');
}

/*
 * Did an earlier write of plan touch rule's device where binding i's node feels it: on
 * its node, or on an ancestor (a revocation there reaches it; a grant there is what its
 * own grant needs)? Writes on other nodes leave i's node as it was.
 */
static bool touched(const struct bindings *bs, const struct binding_plan *plan, size_t i,
		    const struct devwl_rule *rule)
{
	for (size_t k = 0; k < plan->n; k++) {
		const struct devwl_rule *t = &plan->v[k].rule;

		if (t->type == rule->type && t->major == rule->major && t->minor == rule->minor &&
		    at_or_below(bs->v[i].node, bs->v[plan->v[k].binding].node))
			return true;
	}
	return false;
}

int bindings_plan(const struct bindings *bs, const struct rulevec *now, const bool *skip,
		  struct binding_plan *ret)
{
	struct binding_plan plan = {0};
	struct pending *pd = calloc(bs->n ? bs->n : 1, sizeof(*pd));
	int r = pd ? 0 : -ENOMEM;

	for (size_t i = 0; r >= 0 && i < bs->n; i++)
		if (!skip || !skip[i])
			r = binding_diff(bs->v[i].allow, &bs->v[i].rules, &now[i], &pd[i].deny,
					 &pd[i].allow);
	/* Revocations first: what a later binding names it then grants again. */
	for (size_t i = 0; r >= 0 && i < bs->n; i++)
		for (size_t k = 0; r >= 0 && bs->v[i].allow && k < pd[i].deny.n; k++)
			r = plan_add(&plan, i, false, &pd[i].deny.v[k]);
	for (size_t i = 0; r >= 0 && i < bs->n; i++) {
		bool allow = bs->v[i].allow;
		struct rulevec *mine = allow ? &pd[i].allow : &pd[i].deny;

		if (skip && skip[i])
			continue;
		/* Touched: all it names, not only what changed, or an earlier revocation of
		 * one bit would leave the device short of it. */
		for (size_t k = 0; r >= 0 && k < now[i].n; k++)
			if (touched(bs, &plan, i, &now[i].v[k]))
				r = rulevec_add(mine, &now[i].v[k]);
		rulevec_sort(mine);
		for (size_t k = 0; r >= 0 && k < mine->n; k++)
			r = plan_add(&plan, i, allow, &mine->v[k]);
	}
	pending_free(pd, bs->n);
	if (r < 0) {
		binding_plan_free(&plan);
		*ret = (struct binding_plan){0};
		return r;
	}
	*ret = plan;
	return 0;
}

void binding_plan_free(struct binding_plan *p)
{
	free(p->v);
	*p = (struct binding_plan){0};
}
