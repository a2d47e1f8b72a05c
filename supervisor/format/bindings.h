/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Selector bindings (bindings.c): a node's grant or denial of the devices a selector
 * (common/selector.h) names, kept by identity so that devwld follows the devices across
 * unplug, replug and renumbering (core/follow.c). Pure: the list, the policy file's
 * "selectors", a devwlctl line, and what changes when a binding resolves anew.
 */
#ifndef DEVWLD_BINDINGS_H
#define DEVWLD_BINDINGS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "devwl.h"
#include "rulevec.h"

struct binding {
	char *node;
	bool allow;	      /* else deny */
	bool from_file;	      /* the policy file's, else a devwlctl change */
	char *selector;	      /* "SELECTOR [ACCESS]" as written */
	char *container;      /* made for this container's CDI annotations, else NULL */
	char *where;	      /* a node rule's "FILE: node PATH: rule N"; NULL otherwise */
	struct rulevec rules; /* what it resolved to when last written, sorted */
};

struct bindings {
	struct binding *v;
	size_t n, size;
};

/* Past this a devwlctl binding is refused, as a change past EDITS_MAX is. */
#define BINDINGS_MAX 1024

/* Append a binding (copies; rules empty). -ENOSPC past BINDINGS_MAX, -ENOMEM. */
int bindings_add(struct bindings *b, const char *node, bool allow, const char *selector,
		 bool from_file);
/* The same for a rule of a node's "rules" in the policy file (where: as named in
 * messages). */
int bindings_add_rule(struct bindings *b, const char *node, bool allow, const char *selector,
		      const char *where);
void bindings_clear(struct bindings *b);
/* Free what one binding holds (it stays in the list: the caller moves the rest). */
void binding_free(struct binding *b);
/* Mark the last binding added as made for container's annotations (copied). -ENOMEM. */
int binding_set_container(struct bindings *b, const char *container);
/* Drop the bindings of path and its descendants (a node made on demand is gone). */
void bindings_forget(struct bindings *b, const char *path);

/*
 * The policy file's "selectors" (NULL: none): [{"node": PATH, "allow"|"deny": "SELECTOR
 * [ACCESS]"}], appended to b in order. -EINVAL with err naming the element and why
 * (file: its name in messages), -ENOMEM.
 */
int bindings_from_json(struct json_object *arr, const char *file, struct bindings *b,
		       struct devwl_error *err);

/*
 * Is line a devwlctl change "allow|deny NODE RULE" whose RULE (escaped as on the line)
 * is a selector? Then *ret_node and *ret_selector (caller frees) and *ret_allow. 1 yes,
 * 0 no, -ENOMEM.
 */
int binding_of_line(const char *line, size_t len, char **ret_node, bool *ret_allow,
		    char **ret_selector);

/*
 * Is line a devwlctl "unbind NODE allow|deny SELECTOR [ACCESS]" (the selector escaped as
 * allow's)? Then as binding_of_line(). 1 yes, 0 no, -ENOMEM.
 */
int unbind_of_line(const char *line, size_t len, char **ret_node, bool *ret_allow,
		   char **ret_selector);

/*
 * The binding an unbind means: the last of b's bindings on node with that verb and
 * selector text ("SELECTOR [ACCESS]" as written), a container's CDI bindings apart (they
 * go with their container). Its index, or -ENOENT.
 */
long bindings_find(const struct bindings *b, const char *node, bool allow, const char *selector);
/* Remove binding i (freed; the rest keep their order). */
void bindings_remove(struct bindings *b, size_t i);

/*
 * What to write when a binding that resolved to old now resolves to now (both sorted
 * or not; a device is its type and numbers). For an allow binding: a device gone, or
 * access it lost, is denied (*deny); a device new, or access it gained, is allowed
 * (*allow). For a deny binding: what is new is denied; what is gone is left alone, so
 * that a denial naming nothing any more never turns into a grant. 0 or -ENOMEM
 * (both emptied).
 */
int binding_diff(bool allow, const struct rulevec *old, const struct rulevec *now,
		 struct rulevec *ret_deny, struct rulevec *ret_allow);

/* Take back from node what the allow writes of rules->v[0..n) added (added[k]: the access
 * write k gave that the node did not have before it): a binding refused half-way. */
void binding_undo(struct devwl_node *node, const struct rulevec *rules, const uint8_t *added,
		  size_t n);

/* One write of a plan: allow or deny rule on the node of bindings' v[binding]. */
struct binding_write {
	size_t binding;
	bool allow;
	struct devwl_rule rule;
};

struct binding_plan {
	struct binding_write *v;
	size_t n, size;
};

/*
 * The writes, in the order to make them, that take every binding of bs from its rules
 * to now[i] (what it resolves to now), each as binding_diff() says; skip[i] (skip may
 * be NULL): binding i is left as it is and writes nothing. First every allow binding's
 * revocations, so that a device one binding gives up and another names ends granted;
 * then, binding by binding in bs's order, its grants (allow) or new denials (deny), and
 * again, with all the access it names now, each device it names that an earlier write
 * of the plan touched on its node or an ancestor (a write elsewhere leaves its node as
 * it was): later bindings win, as when the list is first written. A write
 * the node refuses when made still counts as touched (a binding after it writes what it
 * names anyway). 0 or -ENOMEM (ret empty); binding_plan_free() ret.
 */
int bindings_plan(const struct bindings *bs, const struct rulevec *now, const bool *skip,
		  struct binding_plan *ret);
void binding_plan_free(struct binding_plan *p);

#endif
