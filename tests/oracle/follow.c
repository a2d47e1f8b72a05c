/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Selector bindings on both sides. Fake selectors name sets of the probes' devices; a
 * bind writes one set to a node as devwld's follow_bind() does, a replug changes a set
 * and writes the plan devwld's follow_refresh() writes (bindings_plan(), compiled in
 * from devwld's format layer): plain allow/deny writes, each compared. After a replug
 * the checks below hold what the plan promises on both sides, stated without the plan:
 *   - a device (and access) gone from an allow binding, which no other allow binding of
 *     the node names and no wildcard of the node's list grants, is denied there;
 *   - a device the plan writes again, whose last binding on its node is an allow
 *     binding, is allowed there when the parent allows it, nothing above the node
 *     names it and no plain denial may hold it: the order of the plan decides this one;
 *   - a deny binding's new denials hold, its writes are denials, and nothing denied
 *     before the replug is allowed after it unless an allow binding of the node names
 *     it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attachment.h"
#include "bindings.h"
#include "oracle.h"
#include "util.h"

/* Kernel checks per replug: each forks a probe; libdevwl answers every one. */
#define KERNEL_CHECKS_MAX 6
#define NODES_MAX	  64
#define NUMBERS                                                                                    \
	(2 * (PROBE_MAJOR_MAX - PROBE_MAJOR_MIN + 1) * (PROBE_MINOR_MAX - PROBE_MINOR_MIN + 1))

static const uint8_t bits[] = {DEVWL_ACC_READ, DEVWL_ACC_WRITE, DEVWL_ACC_MKNOD};

struct oracle_follow {
	struct bindings bs;
	struct rulevec sel[ORACLE_SELECTORS];
	const struct op **writes; /* plain writes that succeeded, in order */
	size_t nwrites, size;
	size_t replugs;
};

/* One thing a replug must leave so, checked on both sides. */
struct expect {
	char path[ORACLE_PATH_MAX];
	struct devwl_rule dev; /* access: the one bit asked */
	bool allowed;
	const char *why;
};

struct expects {
	struct expect *v;
	size_t n, size;
};

struct oracle_follow *oracle_follow_new(void)
{
	return calloc(1, sizeof(struct oracle_follow));
}

void oracle_follow_free(struct oracle_follow *f)
{
	if (!f)
		return;
	bindings_clear(&f->bs);
	for (size_t k = 0; k < ORACLE_SELECTORS; k++)
		free(f->sel[k].v);
	free(f->writes);
	free(f);
}

int oracle_follow_note_write(struct oracle_follow *f, const struct op *op)
{
	if (f->nwrites == f->size) {
		size_t size = f->size ? 2 * f->size : 64;
		const struct op **v = realloc(f->writes, size * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->writes = v;
		f->size = size;
	}
	f->writes[f->nwrites++] = op;
	return 0;
}

void oracle_follow_note_rmdir(struct oracle_follow *f, const char *path)
{
	bindings_forget(&f->bs, path);
}

static unsigned sel_of(const struct binding *b)
{
	return (unsigned)(b->selector[strlen(b->selector) - 1] - '0');
}

static bool same_dev(const struct devwl_rule *a, const struct devwl_rule *b)
{
	return a->type == b->type && a->major == b->major && a->minor == b->minor;
}

/* The access rv gives dev's number (0: it names it not). */
static uint8_t names(const struct rulevec *rv, const struct devwl_rule *dev)
{
	for (size_t i = 0; i < rv->n; i++)
		if (same_dev(&rv->v[i], dev))
			return rv->v[i].access;
	return 0;
}

/* a is n or one of its ancestors. */
static bool above_or_at(const char *a, const char *n)
{
	size_t len = strlen(a);

	return !strcmp(a, "/") || (!strncmp(a, n, len) && (n[len] == '\0' || n[len] == '/'));
}

/*
 * Might a plain write to file at path or above it hold dev's bit against what a binding
 * wrote (where the node's default allows: a denial is an exception there)? A rule for
 * one number never does (a binding's write of the same number takes the bit), nor does
 * an "a" rule (it switches the default and empties the list); a wildcard that covers
 * the number does (a write for one number leaves it), and a write the parser does not
 * take is assumed to.
 */
static bool plain_may_hold(const struct oracle_follow *f, enum devwl_file file, const char *path,
			   const struct devwl_rule *dev, uint8_t bit)
{
	for (size_t i = 0; i < f->nwrites; i++) {
		const struct op *w = f->writes[i];
		struct devwl_rule x;

		if (w->file != file || !above_or_at(w->path, path))
			continue;
		if (devwl_rule_parse(w->buf, w->len, &x, NULL) < 0)
			return true;
		if (x.type == dev->type && (x.access & bit) &&
		    (x.major == DEVWL_ANY || x.major == dev->major) &&
		    (x.minor == DEVWL_ANY || x.minor == dev->minor) &&
		    (x.major == DEVWL_ANY || x.minor == DEVWL_ANY))
			return true;
	}
	return false;
}

/*
 * Does path's list hold a wildcard that grants dev's bit? A denial of the one number
 * leaves it (an exception is removed only by an equal one), so the bit stays allowed.
 * The plan writes single numbers only: the wildcards are the plain writes', the same
 * before the plan as after. A list of "a *:* rwm" (the default allows) holds none: a
 * denial there adds an exception.
 */
static int list_holds(struct devwl_policy *p, const char *path, const struct devwl_rule *dev,
		      uint8_t bit)
{
	struct devwl_node *node = devwl_policy_find(p, path);
	_cleanup_free_ char *list = NULL;
	int r = node ? devwl_node_list(node, &list) : -ENOENT;

	for (char *line = list, *nl; r >= 0 && line && *line; line = nl ? nl + 1 : NULL) {
		struct devwl_rule x;

		nl = strchr(line, '\n');
		if (devwl_rule_parse(line, nl ? (size_t)(nl - line) : strlen(line), &x, NULL) < 0)
			return 1; /* not understood: assume it holds */
		if (x.type == dev->type && (x.access & bit) &&
		    (x.major == DEVWL_ANY || x.major == dev->major) &&
		    (x.minor == DEVWL_ANY || x.minor == dev->minor) &&
		    (x.major == DEVWL_ANY || x.minor == DEVWL_ANY))
			return 1;
	}
	return r < 0 ? r : 0;
}

static const char *verb(bool allow)
{
	return allow ? "allow" : "deny";
}

/* One write on both sides; *ret: what both returned. 1 when they differ (what says). */
static int write_both(struct devwl_policy *p, struct kside *ks, const char *path, bool allow,
		      const struct devwl_rule *rule, int *ret, char *what, size_t size)
{
	enum devwl_file file = allow ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY;
	struct devwl_node *node = devwl_policy_find(p, path);
	char s[DEVWL_RULE_STR_MAX];
	int mine, theirs, n;

	n = devwl_rule_format(rule, s, sizeof(s));
	if (!node || n < 0) {
		snprintf(what, size, "oracle: no node %s or bad rule", path);
		return -EINVAL;
	}
	mine = devwl_node_update(node, file, rule);
	theirs = kside_write(ks, path, file, s, (size_t)n);
	if (mine != theirs) {
		snprintf(what, size, "%s %s on %s: libdevwl returned %d, kernel %d", verb(allow), s,
			 path, mine, theirs);
		return 1;
	}
	*ret = mine;
	return 0;
}

/* As follow_bind(): all of the set or nothing, the binding kept only when all took. */
static int bind(struct oracle_follow *f, struct devwl_policy *p, struct kside *ks,
		const struct op *op, char *what, size_t size)
{
	_cleanup_free_ uint8_t *added = NULL;
	char name[16];
	struct binding *b;
	int r = 0, w;

	if (!devwl_policy_find(p, op->path))
		return 0; /* a minimised sequence may lack the mkdir */
	snprintf(name, sizeof(name), "selector-%u", op->sel);
	if (bindings_add(&f->bs, op->path, op->allow, name, false) < 0)
		return -ENOMEM;
	b = &f->bs.v[f->bs.n - 1];
	for (size_t k = 0; k < f->sel[op->sel].n; k++)
		if (rulevec_add(&b->rules, &f->sel[op->sel].v[k]) < 0)
			return -ENOMEM;
	added = calloc(b->rules.n ? b->rules.n : 1, sizeof(*added));
	if (!added)
		return -ENOMEM;
	for (size_t k = 0; r == 0 && k < b->rules.n; k++) {
		const struct devwl_rule *rule = &b->rules.v[k];
		uint8_t before = attachment_access(devwl_policy_find(p, op->path), rule->type,
						   rule->major, rule->minor);

		r = write_both(p, ks, op->path, op->allow, rule, &w, what, size);
		if (r || w == 0) {
			added[k] = rule->access & ~before;
			continue;
		}
		/* Only what this bind added goes again, as binding_undo() takes it back. */
		for (size_t j = 0; r == 0 && j < k; j++) {
			struct devwl_rule back = b->rules.v[j];

			back.access = added[j];
			if (back.access)
				r = write_both(p, ks, op->path, false, &back, &w, what, size);
		}
		free(b->rules.v);
		free(b->node);
		free(b->selector);
		f->bs.n--;
		break;
	}
	return r;
}

static int expect(struct expects *e, const char *path, const struct devwl_rule *dev, uint8_t bit,
		  bool allowed, const char *why)
{
	if (e->n == e->size) {
		size_t size = e->size ? 2 * e->size : 32;
		struct expect *v = realloc(e->v, size * sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->v = v;
		e->size = size;
	}
	snprintf(e->v[e->n].path, sizeof(e->v[e->n].path), "%s", path);
	e->v[e->n].dev = *dev;
	e->v[e->n].dev.access = bit;
	e->v[e->n].allowed = allowed;
	e->v[e->n++].why = why;
	return 0;
}

/* Does binding j, other than i, on path give dev's bit (allow binding) now? */
static bool other_grants(const struct bindings *bs, const struct rulevec *now, size_t i,
			 const char *path, const struct devwl_rule *dev, uint8_t bit)
{
	for (size_t j = 0; j < bs->n; j++)
		if (j != i && bs->v[j].allow && !strcmp(bs->v[j].node, path) &&
		    (names(&now[j], dev) & bit))
			return true;
	return false;
}

/*
 * Denied: each device of devs[i] of every binding whose allow is allow, unless another
 * allow binding of its node names it or the node's list holds it. For allow bindings
 * devs is what vanished from them; for deny bindings, what is new to them (why says).
 */
static int expect_unheld(const struct oracle_follow *f, struct devwl_policy *p,
			 const struct rulevec *now, const struct rulevec *devs, bool allow,
			 const char *why, struct expects *e)
{
	for (size_t i = 0; i < f->bs.n; i++) {
		const struct binding *b = &f->bs.v[i];

		for (size_t k = 0; b->allow == allow && k < devs[i].n; k++)
			for (size_t x = 0; x < ARRAY_SIZE(bits); x++) {
				const struct devwl_rule *dev = &devs[i].v[k];
				int held;

				if (!(dev->access & bits[x]) ||
				    other_grants(&f->bs, now, i, b->node, dev, bits[x]))
					continue;
				held = list_holds(p, b->node, dev, bits[x]);
				if (held < 0)
					return held;
				if (!held && expect(e, b->node, dev, bits[x], false, why) < 0)
					return -ENOMEM;
			}
	}
	return 0;
}

/* Is path's default to allow (its list "a *:* rwm")? */
static int default_allows(struct devwl_policy *p, const char *path, bool *ret)
{
	struct devwl_node *node = devwl_policy_find(p, path);
	_cleanup_free_ char *list = NULL;
	int r = node ? devwl_node_list(node, &list) : -ENOENT;

	if (r >= 0)
		*ret = !strcmp(list, "a *:* rwm\n");
	return r < 0 ? r : 0;
}

/* Does a binding on a node strictly above path name dev, before or now? */
static bool named_above(const struct bindings *bs, const struct rulevec *now, const char *path,
			const struct devwl_rule *dev)
{
	for (size_t j = 0; j < bs->n; j++)
		if (strcmp(bs->v[j].node, path) && above_or_at(bs->v[j].node, path) &&
		    (names(&now[j], dev) || names(&bs->v[j].rules, dev)))
			return true;
	return false;
}

/*
 * A device the plan rewrites (a revocation touched it, or a binding up to i changed it)
 * whose last binding on its node is allow binding i: allowed with all i names, when the
 * parent allows that, nothing above names it and no plain denial may hold it.
 */
static int expect_rewritten(const struct oracle_follow *f, struct devwl_policy *p,
			    const struct rulevec *now, const struct rulevec *lost,
			    const struct rulevec *gained, struct expects *e)
{
	struct rulevec touched = {0};
	int r = 0;

	for (size_t i = 0; r >= 0 && i < f->bs.n; i++)
		for (size_t k = 0; r >= 0 && f->bs.v[i].allow && k < lost[i].n; k++)
			r = rulevec_add(&touched, &lost[i].v[k]);
	for (size_t i = 0; r >= 0 && i < f->bs.n; i++) {
		const struct binding *b = &f->bs.v[i];
		char parent[ORACLE_PATH_MAX];
		struct devwl_node *up = NULL;
		bool allows_all;
		char *slash;

		/* What binding i - 1 wrote: an allow binding its changes, a deny binding
		 * what it names anew (what it no longer names is left alone). */
		for (size_t k = 0; r >= 0 && i && f->bs.v[i - 1].allow && k < lost[i - 1].n; k++)
			r = rulevec_add(&touched, &lost[i - 1].v[k]);
		for (size_t k = 0; r >= 0 && i && k < gained[i - 1].n; k++)
			r = rulevec_add(&touched, &gained[i - 1].v[k]);
		if (!b->allow || r < 0)
			continue;
		snprintf(parent, sizeof(parent), "%s", b->node);
		slash = strrchr(parent, '/');
		if (strcmp(b->node, "/")) {
			slash[slash == parent] = '\0';
			up = devwl_policy_find(p, parent);
		}
		r = default_allows(p, b->node, &allows_all);
		for (size_t k = 0; r >= 0 && k < now[i].n; k++) {
			const struct devwl_rule *dev = &now[i].v[k];
			/* Touched before: all it names is written; else what it gained. */
			uint8_t acc = names(&touched, dev) ? dev->access : names(&gained[i], dev);
			bool last = true, held = false;

			for (size_t j = i + 1; j < f->bs.n; j++)
				last &= strcmp(f->bs.v[j].node, b->node) || !names(&now[j], dev);
			/* Where the default denies, a denial is no exception that could hold. */
			for (size_t x = 0; allows_all && x < ARRAY_SIZE(bits); x++)
				held |= (acc & bits[x]) &&
					plain_may_hold(f, DEVWL_FILE_DENY, b->node, dev, bits[x]);
			if (!acc || !last || held || named_above(&f->bs, now, b->node, dev) ||
			    (up &&
			     devwl_node_check(up, dev->type, dev->major, dev->minor, acc) != 1))
				continue;
			for (size_t x = 0; r >= 0 && x < ARRAY_SIZE(bits); x++)
				if (acc & bits[x])
					r = expect(e, b->node, dev, bits[x], true,
						   "written again, its last binding allows it");
		}
	}
	free(touched.v);
	return r < 0 ? -ENOMEM : 0;
}

/* Every node's access to every probe number, per bit, in libdevwl. */
struct snapshot {
	struct devwl_node *node[NODES_MAX];
	uint8_t access[NODES_MAX][NUMBERS];
	size_t n;
};

static struct devwl_rule dev_of(size_t k)
{
	size_t per_type = NUMBERS / 2, minors = PROBE_MINOR_MAX - PROBE_MINOR_MIN + 1;

	return (struct devwl_rule){
		.type = k < per_type ? DEVWL_DEV_BLOCK : DEVWL_DEV_CHAR,
		.major = PROBE_MAJOR_MIN + (uint32_t)((k % per_type) / minors),
		.minor = PROBE_MINOR_MIN + (uint32_t)(k % minors),
	};
}

static int add_node(struct devwl_node *node, void *userdata)
{
	struct snapshot *s = userdata;

	if (s->n == NODES_MAX)
		return -E2BIG;
	s->node[s->n++] = node;
	return 0;
}

static int snapshot(struct devwl_policy *p, struct snapshot *s)
{
	int r;

	s->n = 0;
	r = devwl_policy_foreach(p, add_node, s);
	if (r < 0)
		return r;
	for (size_t i = 0; i < s->n; i++)
		for (size_t k = 0; k < NUMBERS; k++) {
			struct devwl_rule d = dev_of(k);

			s->access[i][k] = 0;
			for (size_t x = 0; x < ARRAY_SIZE(bits); x++)
				if (devwl_node_check(s->node[i], d.type, d.major, d.minor,
						     bits[x]) == 1)
					s->access[i][k] |= bits[x];
		}
	return 0;
}

/* Nothing denied before is allowed after but what an allow binding of the node names. */
static int nothing_else_granted(const struct oracle_follow *f, const struct snapshot *before,
				const struct snapshot *after, char *what, size_t size)
{
	for (size_t i = 0; i < after->n; i++) {
		const char *path = devwl_node_path(after->node[i]);

		for (size_t k = 0; k < NUMBERS; k++) {
			struct devwl_rule d = dev_of(k);
			uint8_t gained = after->access[i][k] & (uint8_t)~before->access[i][k];
			uint8_t named = 0;
			char s[DEVWL_RULE_STR_MAX] = "?";

			for (size_t j = 0; j < f->bs.n; j++)
				if (f->bs.v[j].allow && !strcmp(f->bs.v[j].node, path))
					named |= names(&f->bs.v[j].rules, &d);
			if (!(gained & (uint8_t)~named))
				continue;
			d.access = gained & (uint8_t)~named;
			(void)devwl_rule_format(&d, s, sizeof(s));
			snprintf(what, size,
				 "invariant: the replug made %s allowed on %s, which no allow "
				 "binding of the node names",
				 s, path);
			return 1;
		}
	}
	return 0;
}

/* Each expectation in libdevwl, and a few of them (a different few each time) in the
 * kernel. */
static int check(struct oracle_follow *f, struct devwl_policy *p, struct kside *ks,
		 const struct expects *e, size_t *checks, char *what, size_t size)
{
	size_t from = e->n ? f->replugs % e->n : 0;

	for (size_t n = 0; n < e->n; n++) {
		const struct expect *x = &e->v[(from + n) % e->n];
		struct devwl_node *node = devwl_policy_find(p, x->path);
		char s[DEVWL_RULE_STR_MAX] = "?";
		int mine, theirs;

		(void)devwl_rule_format(&x->dev, s, sizeof(s));
		mine = node ? devwl_node_check(node, x->dev.type, x->dev.major, x->dev.minor,
					       x->dev.access)
			    : -ENOENT;
		theirs = mine != (int)x->allowed || n < KERNEL_CHECKS_MAX
				 ? kside_check(ks, x->path, x->dev.type, x->dev.major, x->dev.minor,
					       x->dev.access)
				 : mine;
		if (theirs < 0 && mine >= 0) {
			snprintf(what, size, "probe failed for %s on %s: %d", s, x->path, theirs);
			return theirs;
		}
		if (mine != (int)x->allowed || theirs != mine) {
			snprintf(what, size,
				 "invariant: %s on %s (%s) must be %s: libdevwl says %d, kernel %d "
				 "(1 allowed, 0 denied)",
				 s, x->path, x->why, x->allowed ? "allowed" : "denied", mine,
				 theirs);
			return 1;
		}
		(*checks)++;
	}
	return 0;
}

static void free_vecs(struct rulevec *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].v);
	free(v);
}

/* The plan's writes on both sides, each compared; a deny binding writes denials only. */
static int write_plan(const struct oracle_follow *f, struct devwl_policy *p, struct kside *ks,
		      const struct binding_plan *plan, char *what, size_t size)
{
	int r = 0, w;

	for (size_t k = 0; r == 0 && k < plan->n; k++) {
		const struct binding *b = &f->bs.v[plan->v[k].binding];

		if (plan->v[k].allow && !b->allow) {
			snprintf(what, size, "invariant: the plan grants for deny binding %zu",
				 plan->v[k].binding);
			return 1;
		}
		r = write_both(p, ks, b->node, plan->v[k].allow, &plan->v[k].rule, &w, what, size);
	}
	return r;
}

/*
 * What a binding no longer names (lost) and names anew (gained), access bit by bit:
 * worked out here, not by binding_diff(), so that the invariants do not take the
 * plan's word for what changed.
 */
static int changes(const struct rulevec *old, const struct rulevec *now, struct rulevec *lost,
		   struct rulevec *gained)
{
	int r = 0;

	for (size_t k = 0; r >= 0 && k < old->n; k++) {
		struct devwl_rule x = old->v[k];

		x.access &= (uint8_t)~names(now, &x);
		if (x.access)
			r = rulevec_add(lost, &x);
	}
	for (size_t k = 0; r >= 0 && k < now->n; k++) {
		struct devwl_rule x = now->v[k];

		x.access &= (uint8_t)~names(old, &x);
		if (x.access)
			r = rulevec_add(gained, &x);
	}
	return r;
}

static int replug(struct oracle_follow *f, struct devwl_policy *p, struct kside *ks,
		  const struct op *op, size_t *checks, char *what, size_t size)
{
	struct bindings *bs = &f->bs;
	struct rulevec *now = calloc(bs->n + 1, sizeof(*now));
	struct rulevec *lost = calloc(bs->n + 1, sizeof(*lost));
	struct rulevec *gained = calloc(bs->n + 1, sizeof(*gained));
	struct snapshot *before = malloc(sizeof(*before)), *after = malloc(sizeof(*after));
	struct binding_plan plan = {0};
	struct expects e = {0};
	int r = now && lost && gained && before && after ? 0 : -ENOMEM;

	f->replugs++;
	f->sel[op->sel].n = 0;
	for (size_t k = 0; r >= 0 && k < op->nset; k++)
		r = rulevec_add(&f->sel[op->sel], &op->set[k]);
	rulevec_sort(&f->sel[op->sel]);
	/* Every binding resolved again, as follow_refresh() resolves them. */
	for (size_t i = 0; r >= 0 && i < bs->n; i++) {
		const struct rulevec *sel = &f->sel[sel_of(&bs->v[i])];

		for (size_t k = 0; r >= 0 && k < sel->n; k++)
			r = rulevec_add(&now[i], &sel->v[k]);
		if (r >= 0)
			r = changes(&bs->v[i].rules, &now[i], &lost[i], &gained[i]);
	}
	if (r >= 0)
		r = bindings_plan(bs, now, NULL, &plan);
	if (r >= 0)
		r = expect_unheld(f, p, now, lost, true, "vanished from an allow binding", &e);
	if (r >= 0)
		r = expect_unheld(f, p, now, gained, false, "new to a deny binding", &e);
	if (r >= 0)
		r = expect_rewritten(f, p, now, lost, gained, &e);
	if (r >= 0)
		r = snapshot(p, before);
	if (r == 0)
		r = write_plan(f, p, ks, &plan, what, size);
	for (size_t i = 0; r == 0 && i < bs->n; i++) {
		free(bs->v[i].rules.v);
		bs->v[i].rules = now[i];
		now[i] = (struct rulevec){0};
	}
	if (r == 0)
		r = snapshot(p, after);
	if (r == 0)
		r = nothing_else_granted(f, before, after, what, size);
	if (r == 0)
		r = check(f, p, ks, &e, checks, what, size);
	if (r < 0 && !what[0])
		snprintf(what, size, "oracle: replug: %s", strerror(-r));
	free_vecs(now, bs->n);
	free_vecs(lost, bs->n);
	free_vecs(gained, bs->n);
	free(before);
	free(after);
	free(e.v);
	binding_plan_free(&plan);
	return r;
}

int oracle_follow_apply(struct oracle_follow *f, struct devwl_policy *p, struct kside *ks,
			const struct op *op, size_t *checks, char *what, size_t size)
{
	what[0] = '\0';
	if (op->kind == OP_BIND)
		return bind(f, p, ks, op, what, size);
	return replug(f, p, ks, op, checks, what, size);
}
