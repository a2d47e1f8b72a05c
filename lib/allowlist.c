/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hierarchy of allow lists, with the semantics of the cgroup-v1 devices controller
 * (security/device_cgroup.c): behavior + ordered exceptions per node, copy on create,
 * revocations propagated to every descendant, then revalidated. Pure data: no syscalls.
 *
 * Exceptions are kept in creation order (devices.list prints them so) and indexed by
 * (type, major, minor) once a node holds more than a few, so a check costs at most four
 * lookups however many exceptions there are. Nodes are indexed by path.
 */
#include <stdio.h>
#include <string.h>

#include "allowlist.h"
#include "array.h"
#include "rules.h"
#include "util.h"

/* Below this many exceptions a linear scan beats hashing. */
#define EX_INDEX_MIN 8
#define EMPTY_SLOT   UINT32_MAX

struct ex_list {
	struct devwl_rule *v;
	size_t n, cap;
	uint32_t *slots; /* open addressing: index into v, or EMPTY_SLOT */
	size_t nslots;	 /* power of two, or 0 while unindexed */
};

struct devwl_node {
	struct devwl_policy *policy;
	struct devwl_node *parent, *first_child, *last_child, *prev_sibling, *next_sibling;
	char *path;
	uint64_t hash;
	enum devwl_behavior behavior;
	struct ex_list ex;
	bool mknod_needs_cap;
	unsigned refs;
};

struct devwl_policy {
	struct devwl_node *root;
	struct devwl_node **table; /* open addressing by path hash */
	size_t nslots, count;
};

/* ---- exception lists ---------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t ex_hash(unsigned type, uint32_t major, uint32_t minor)
{
	return mix64(((uint64_t)major << 32 | minor) ^ ((uint64_t)type << 61) ^ type);
}

static bool ex_key_eq(const struct devwl_rule *e, unsigned type, uint32_t major, uint32_t minor)
{
	return e->type == type && e->major == major && e->minor == minor;
}

static void ex_index_put(struct ex_list *l, uint32_t idx)
{
	const struct devwl_rule *e = &l->v[idx];
	size_t mask = l->nslots - 1, s = ex_hash(e->type, e->major, e->minor) & mask;

	while (l->slots[s] != EMPTY_SLOT)
		s = (s + 1) & mask;
	l->slots[s] = idx;
}

/* (Re)build the index to fit l->n; drops it for short lists. */
static int ex_reindex(struct ex_list *l)
{
	size_t want = 16;

	if (l->n < EX_INDEX_MIN) {
		free(l->slots);
		l->slots = NULL;
		l->nslots = 0;
		return 0;
	}
	while (want < l->n * 2)
		want *= 2;
	if (want != l->nslots) {
		uint32_t *s = malloc(want * sizeof(*s));
		if (!s)
			return -ENOMEM;
		free(l->slots);
		l->slots = s;
		l->nslots = want;
	}
	memset(l->slots, 0xff, l->nslots * sizeof(*l->slots));
	for (size_t i = 0; i < l->n; i++)
		ex_index_put(l, (uint32_t)i);
	return 0;
}

static const struct devwl_rule *ex_find(const struct ex_list *l, unsigned type, uint32_t major,
					uint32_t minor)
{
	if (!l->nslots) {
		for (size_t i = 0; i < l->n; i++)
			if (ex_key_eq(&l->v[i], type, major, minor))
				return &l->v[i];
		return NULL;
	}
	size_t mask = l->nslots - 1, s = ex_hash(type, major, minor) & mask;
	for (; l->slots[s] != EMPTY_SLOT; s = (s + 1) & mask)
		if (ex_key_eq(&l->v[l->slots[s]], type, major, minor))
			return &l->v[l->slots[s]];
	return NULL;
}

static void ex_clean(struct ex_list *l)
{
	free(l->v);
	free(l->slots);
	*l = (struct ex_list){0};
}

static int ex_copy(struct ex_list *dst, const struct ex_list *src)
{
	struct ex_list l = {0};

	if (src->n) {
		l.v = malloc(src->n * sizeof(*l.v));
		if (!l.v)
			return -ENOMEM;
		memcpy(l.v, src->v, src->n * sizeof(*l.v));
		l.n = l.cap = src->n;
		if (ex_reindex(&l) < 0) {
			ex_clean(&l);
			return -ENOMEM;
		}
	}
	ex_clean(dst);
	*dst = l;
	return 0;
}

/* dev_exception_add(): OR the access into an existing key, else append. */
static int ex_add(struct ex_list *l, const struct devwl_rule *r)
{
	struct devwl_rule *e = (struct devwl_rule *)ex_find(l, r->type, r->major, r->minor);

	if (e) {
		e->access |= r->access;
		return 0;
	}
	if (ARRAY_RESERVE(l->v, l->cap, l->n + 1) < 0)
		return -ENOMEM;
	l->v[l->n++] = *r;
	if (l->n >= EX_INDEX_MIN && l->n * 2 <= l->nslots) {
		ex_index_put(l, (uint32_t)(l->n - 1));
		return 0;
	}
	if (ex_reindex(l) < 0) {
		l->n--;
		return -ENOMEM;
	}
	return 0;
}

/*
 * Drop the entries marked for deletion (type 0), keeping order, then rebuild the index
 * once. A mark, not access 0: the kernel keeps exceptions whose access is empty.
 */
static void ex_compact(struct ex_list *l)
{
	size_t j = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].type)
			l->v[j++] = l->v[i];
	if (j == l->n)
		return;
	l->n = j;
	/* Shrinking only frees memory, so the index rebuild cannot fail for want of it
	 * unless the table must grow, which it never does here. */
	if (l->n < EX_INDEX_MIN || ex_reindex(l) < 0) {
		free(l->slots);
		l->slots = NULL;
		l->nslots = 0;
	}
}

/* dev_exception_rm(): exact key only; clear bits; drop at 0. */
static void ex_rm(struct ex_list *l, const struct devwl_rule *r)
{
	struct devwl_rule *e = (struct devwl_rule *)ex_find(l, r->type, r->major, r->minor);

	if (!e)
		return;
	e->access &= (uint8_t)~r->access;
	if (!e->access) {
		e->type = 0;
		ex_compact(l);
	}
}

static bool type_compatible(unsigned want, unsigned have)
{
	if ((want & DEVWL_DEV_BLOCK) && !(have & DEVWL_DEV_BLOCK))
		return false;
	if ((want & DEVWL_DEV_CHAR) && !(have & DEVWL_DEV_CHAR))
		return false;
	return true;
}

/*
 * match_exception(): one exception covers the request completely. An exception's
 * major/minor must equal the request's or be "*", so only four keys can match.
 */
static bool match_rule(const struct ex_list *l, unsigned type, uint32_t major, uint32_t minor,
		       unsigned access)
{
	const uint32_t majors[2] = {major, DEVWL_ANY}, minors[2] = {minor, DEVWL_ANY};

	if (type != DEVWL_DEV_BLOCK && type != DEVWL_DEV_CHAR) {
		/* Not reached through the API; keep the kernel's general loop. */
		for (size_t i = 0; i < l->n; i++) {
			const struct devwl_rule *e = &l->v[i];
			if (type_compatible(type, e->type) &&
			    (e->major == DEVWL_ANY || e->major == major) &&
			    (e->minor == DEVWL_ANY || e->minor == minor) && !(access & ~e->access))
				return true;
		}
		return false;
	}
	for (int a = 0; a < (major == DEVWL_ANY ? 1 : 2); a++)
		for (int b = 0; b < (minor == DEVWL_ANY ? 1 : 2); b++) {
			const struct devwl_rule *e = ex_find(l, type, majors[a], minors[b]);
			if (e && !(access & ~e->access))
				return true;
		}
	return false;
}

/*
 * match_exception_partial(): some exception overlaps the request at all. A "*" in the
 * request overlaps every value, which needs the scan; otherwise four keys again.
 */
static bool match_rule_partial(const struct ex_list *l, unsigned type, uint32_t major,
			       uint32_t minor, unsigned access)
{
	if ((type == DEVWL_DEV_BLOCK || type == DEVWL_DEV_CHAR) && major != DEVWL_ANY &&
	    minor != DEVWL_ANY) {
		const uint32_t majors[2] = {major, DEVWL_ANY}, minors[2] = {minor, DEVWL_ANY};
		for (int a = 0; a < 2; a++)
			for (int b = 0; b < 2; b++) {
				const struct devwl_rule *e = ex_find(l, type, majors[a], minors[b]);
				if (e && (access & e->access))
					return true;
			}
		return false;
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct devwl_rule *e = &l->v[i];
		if (!type_compatible(type, e->type))
			continue;
		if (e->major != DEVWL_ANY && major != DEVWL_ANY && e->major != major)
			continue;
		if (e->minor != DEVWL_ANY && minor != DEVWL_ANY && e->minor != minor)
			continue;
		if (access & e->access)
			return true;
	}
	return false;
}

/* ---- the rules of the hierarchy ----------------------------------------------------- */

/* verify_new_ex(): may a child with behavior child_behavior hold exception r? */
static bool verify_new_ex(const struct devwl_node *parent, const struct devwl_rule *r,
			  enum devwl_behavior child_behavior)
{
	if (parent->behavior == DEVWL_BEHAVIOR_ALLOW) {
		/* An ALLOW child's exceptions only restrict; a DENY child's grant, so they
		 * must not touch any of the parent's denials, even partly. */
		if (child_behavior == DEVWL_BEHAVIOR_ALLOW)
			return true;
		return !match_rule_partial(&parent->ex, r->type, r->major, r->minor, r->access);
	}
	return match_rule(&parent->ex, r->type, r->major, r->minor, r->access);
}

static bool parent_has_perm(const struct devwl_node *node, const struct devwl_rule *r)
{
	return !node->parent || verify_new_ex(node->parent, r, node->behavior);
}

static bool parent_allows_removal(const struct devwl_node *node, const struct devwl_rule *r)
{
	const struct devwl_node *parent = node->parent;

	if (!parent || parent->behavior == DEVWL_BEHAVIOR_DENY)
		return true;
	return !match_rule_partial(&parent->ex, r->type, r->major, r->minor, r->access);
}

/* Delete, whole, every exception the parent no longer allows. */
static void revalidate_active_exceptions(struct devwl_node *node)
{
	bool dropped = false;

	for (size_t i = 0; i < node->ex.n; i++)
		if (!parent_has_perm(node, &node->ex.v[i])) {
			node->ex.v[i].type = 0;
			dropped = true;
		}
	if (dropped)
		ex_compact(&node->ex);
}

/* Pre-order successor of n within the subtree rooted at top. */
static struct devwl_node *next_pre(struct devwl_node *n, const struct devwl_node *top)
{
	if (n->first_child)
		return n->first_child;
	while (n != top) {
		if (n->next_sibling)
			return n->next_sibling;
		n = n->parent;
	}
	return NULL;
}

/* propagate_exception(): only new restrictions travel down. */
static int propagate_exception(struct devwl_node *writer, const struct devwl_rule *r)
{
	for (struct devwl_node *d = next_pre(writer, writer); d; d = next_pre(d, writer)) {
		if (writer->behavior == DEVWL_BEHAVIOR_ALLOW &&
		    d->behavior == DEVWL_BEHAVIOR_ALLOW) {
			int ret = ex_add(&d->ex, r);
			if (ret < 0)
				return ret;
		} else {
			ex_rm(&d->ex, r);
		}
		revalidate_active_exceptions(d);
	}
	return 0;
}

static int update_all(struct devwl_node *node, enum devwl_file file, struct devwl_error *err)
{
	if (node->first_child)
		return devwl_error_set(err, -EINVAL, 0,
				       "node %s has children: its default cannot change",
				       node->path);
	if (file == DEVWL_FILE_DENY) {
		ex_clean(&node->ex);
		node->behavior = DEVWL_BEHAVIOR_DENY;
		return 0;
	}
	if (node->parent && node->parent->behavior != DEVWL_BEHAVIOR_ALLOW)
		return devwl_error_set(err, -EPERM, 0,
				       "parent %s denies by default: %s cannot allow all",
				       node->parent->path, node->path);
	if (!node->parent) {
		ex_clean(&node->ex);
	} else {
		int r = ex_copy(&node->ex, &node->parent->ex);
		if (r < 0)
			return r;
	}
	node->behavior = DEVWL_BEHAVIOR_ALLOW;
	return 0;
}

static int refuse(struct devwl_error *err, const struct devwl_node *node,
		  const struct devwl_rule *r)
{
	char s[DEVWL_RULE_STR_MAX];

	devwl_rule_format(r, s, sizeof(s));
	return devwl_error_set(err, -EPERM, 0, "parent %s does not allow %s to %s",
			       node->parent ? node->parent->path : "(none)", node->path, s);
}

static int node_update(struct devwl_node *node, enum devwl_file file, const struct devwl_rule *r,
		       struct devwl_error *err)
{
	int ret;

	if (r->type == DEVWL_DEV_ALL)
		return update_all(node, file, err);
	if ((r->type != DEVWL_DEV_BLOCK && r->type != DEVWL_DEV_CHAR) ||
	    (r->access & ~DEVWL_ACC_MASK))
		return devwl_error_set(err, -EINVAL, 0, "invalid rule");

	if (file == DEVWL_FILE_ALLOW) {
		if (node->behavior == DEVWL_BEHAVIOR_ALLOW) {
			/* Allowing on an ALLOW node lifts a denial, if the parent agrees. */
			if (!parent_allows_removal(node, r))
				return refuse(err, node, r);
			ex_rm(&node->ex, r);
			return 0;
		}
		if (!parent_has_perm(node, r))
			return refuse(err, node, r);
		return ex_add(&node->ex, r);
	}
	if (file != DEVWL_FILE_DENY)
		return -EINVAL;
	if (node->behavior == DEVWL_BEHAVIOR_DENY) {
		ex_rm(&node->ex, r);
	} else {
		ret = ex_add(&node->ex, r);
		if (ret < 0)
			return ret;
	}
	return propagate_exception(node, r);
}

/* ---- nodes and the path index -------------------------------------------------------- */

static uint64_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static struct devwl_node **table_slot(const struct devwl_policy *p, const char *path, uint64_t h)
{
	size_t mask = p->nslots - 1, s = h & mask;

	for (; p->table[s]; s = (s + 1) & mask)
		if (p->table[s]->hash == h && strcmp(p->table[s]->path, path) == 0)
			break;
	return &p->table[s];
}

static int table_grow(struct devwl_policy *p)
{
	size_t n = p->nslots ? p->nslots * 2 : 16;
	struct devwl_node **old = p->table, **t = calloc(n, sizeof(*t));
	size_t oldn = p->nslots;

	if (!t)
		return -ENOMEM;
	p->table = t;
	p->nslots = n;
	for (size_t i = 0; i < oldn; i++)
		if (old[i])
			*table_slot(p, old[i]->path, old[i]->hash) = old[i];
	free(old);
	return 0;
}

/* Remove from the open-addressing table with backward shift (no tombstones). */
static void table_remove(struct devwl_policy *p, struct devwl_node *n)
{
	size_t mask = p->nslots - 1, i = (size_t)(table_slot(p, n->path, n->hash) - p->table);

	p->table[i] = NULL;
	for (size_t j = (i + 1) & mask; p->table[j]; j = (j + 1) & mask) {
		size_t home = p->table[j]->hash & mask;
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			p->table[i] = p->table[j];
			p->table[j] = NULL;
			i = j;
		}
	}
}

static struct devwl_node *node_alloc(struct devwl_policy *p, const char *path)
{
	struct devwl_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->path = strdup(path);
	if (!n->path) {
		free(n);
		return NULL;
	}
	n->policy = p;
	n->hash = path_hash(path);
	n->behavior = DEVWL_BEHAVIOR_ALLOW;
	n->mknod_needs_cap = true;
	return n;
}

static void node_free(struct devwl_node *n)
{
	if (!n)
		return;
	ex_clean(&n->ex);
	free(n->path);
	free(n);
}

DEVWL_EXPORT struct devwl_policy *devwl_policy_new(void)
{
	struct devwl_policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->root = node_alloc(p, "/");
	if (!p->root || table_grow(p) < 0) {
		node_free(p->root);
		free(p);
		return NULL;
	}
	*table_slot(p, "/", p->root->hash) = p->root;
	p->count = 1;
	return p;
}

DEVWL_EXPORT void devwl_policy_free(struct devwl_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nslots; i++)
		node_free(p->table[i]);
	free(p->table);
	free(p);
}

DEVWL_EXPORT struct devwl_node *devwl_policy_find(const struct devwl_policy *p, const char *path)
{
	if (!p || !path)
		return NULL;
	return *table_slot(p, path, path_hash(path));
}

DEVWL_EXPORT size_t devwl_policy_count(const struct devwl_policy *p)
{
	return p ? p->count : 0;
}

DEVWL_EXPORT int devwl_policy_mkdir(struct devwl_policy *p, const char *path)
{
	char parent_path[DEVWL_NODE_PATH_MAX];
	struct devwl_node *parent, *n;
	const char *slash;
	int r;

	if (!p || devwl_node_path_valid(path) < 0)
		return -EINVAL;
	if (devwl_policy_find(p, path))
		return -EEXIST;
	slash = strrchr(path, '/');
	if (slash == path) {
		parent = p->root;
	} else {
		memcpy(parent_path, path, (size_t)(slash - path));
		parent_path[slash - path] = '\0';
		parent = devwl_policy_find(p, parent_path);
		if (!parent)
			return -ENOENT;
	}
	if ((p->count + 1) * 2 > p->nslots && table_grow(p) < 0)
		return -ENOMEM;
	n = node_alloc(p, path);
	if (!n)
		return -ENOMEM;
	r = ex_copy(&n->ex, &parent->ex);
	if (r < 0) {
		node_free(n);
		return r;
	}
	n->behavior = parent->behavior;
	n->mknod_needs_cap = parent->mknod_needs_cap;
	n->parent = parent;
	n->prev_sibling = parent->last_child;
	if (parent->last_child)
		parent->last_child->next_sibling = n;
	else
		parent->first_child = n;
	parent->last_child = n;
	*table_slot(p, path, n->hash) = n;
	p->count++;
	return 0;
}

DEVWL_EXPORT int devwl_policy_rmdir(struct devwl_policy *p, const char *path)
{
	struct devwl_node *n;

	if (!p || devwl_node_path_valid(path) < 0)
		return -EINVAL;
	n = devwl_policy_find(p, path);
	if (!n)
		return -ENOENT;
	if (n == p->root || n->first_child || n->refs)
		return -EBUSY;
	if (n->prev_sibling)
		n->prev_sibling->next_sibling = n->next_sibling;
	else
		n->parent->first_child = n->next_sibling;
	if (n->next_sibling)
		n->next_sibling->prev_sibling = n->prev_sibling;
	else
		n->parent->last_child = n->prev_sibling;
	table_remove(p, n);
	p->count--;
	node_free(n);
	return 0;
}

DEVWL_EXPORT int devwl_policy_foreach(struct devwl_policy *p,
				      int (*fn)(struct devwl_node *node, void *userdata),
				      void *userdata)
{
	if (!p || !fn)
		return -EINVAL;
	for (struct devwl_node *n = p->root; n; n = next_pre(n, p->root)) {
		int r = fn(n, userdata);
		if (r < 0)
			return r;
	}
	return 0;
}

DEVWL_EXPORT int devwl_node_update(struct devwl_node *node, enum devwl_file file,
				   const struct devwl_rule *rule)
{
	if (!node || !rule)
		return -EINVAL;
	return node_update(node, file, rule, NULL);
}

DEVWL_EXPORT int devwl_node_write(struct devwl_node *node, enum devwl_file file, const char *buf,
				  size_t len, struct devwl_error *err)
{
	struct devwl_rule rule;
	int r;

	if (!node || (file != DEVWL_FILE_ALLOW && file != DEVWL_FILE_DENY))
		return devwl_error_set(err, -EINVAL, 0, "invalid node or file");
	/* A zero-length write(2) to devices.allow/deny succeeds without reaching the parser
	 * (the cgroup file layer returns first), so it changes nothing and is no error. */
	if (len == 0)
		return 0;
	r = devwl_rule_parse(buf, len, &rule, err);
	if (r < 0)
		return r;
	return node_update(node, file, &rule, err);
}

DEVWL_EXPORT int devwl_policy_write(struct devwl_policy *p, const char *path, enum devwl_file file,
				    const char *buf, size_t len, struct devwl_error *err)
{
	struct devwl_node *n = devwl_policy_find(p, path);

	if (!n)
		return devwl_error_set(err, -ENOENT, 0, "no node %s", path ? path : "(null)");
	return devwl_node_write(n, file, buf, len, err);
}

DEVWL_EXPORT int devwl_node_check(const struct devwl_node *node, int type, uint32_t major,
				  uint32_t minor, int access)
{
	if (!node || (type != DEVWL_DEV_BLOCK && type != DEVWL_DEV_CHAR) ||
	    (access & ~DEVWL_ACC_MASK))
		return -EINVAL;
	if (node->behavior == DEVWL_BEHAVIOR_ALLOW)
		return !match_rule_partial(&node->ex, (unsigned)type, major, minor,
					   (unsigned)access);
	return match_rule(&node->ex, (unsigned)type, major, minor, (unsigned)access);
}

/* ---- listings and accessors ----------------------------------------------------------- */

static int listing(const struct devwl_node *node, bool full, char **ret_text)
{
	size_t size = (node->ex.n + 3) * (DEVWL_RULE_STR_MAX + 8), off = 0;
	char *out = malloc(size), line[DEVWL_RULE_STR_MAX];
	const char *prefix = "";

	if (!out)
		return -ENOMEM;
	out[0] = '\0';
	if (full) {
		bool allow = node->behavior == DEVWL_BEHAVIOR_ALLOW;
		off += (size_t)sprintf(out, "behavior %s\n", allow ? "allow" : "deny");
		prefix = allow ? "deny " : "allow ";
	} else if (node->behavior == DEVWL_BEHAVIOR_ALLOW) {
		strcpy(out, "a *:* rwm\n");
		*ret_text = out;
		return 0;
	}
	for (size_t i = 0; i < node->ex.n; i++) {
		devwl_rule_format(&node->ex.v[i], line, sizeof(line));
		off += (size_t)sprintf(out + off, "%s%s\n", prefix, line);
	}
	if (full && !node->mknod_needs_cap)
		strcpy(out + off, "mknod_needs_cap false\n");
	*ret_text = out;
	return 0;
}

DEVWL_EXPORT int devwl_node_list(const struct devwl_node *node, char **ret_text)
{
	if (!node || !ret_text)
		return -EINVAL;
	return listing(node, false, ret_text);
}

DEVWL_EXPORT int devwl_node_show(const struct devwl_node *node, char **ret_text)
{
	if (!node || !ret_text)
		return -EINVAL;
	return listing(node, true, ret_text);
}

DEVWL_EXPORT const char *devwl_node_path(const struct devwl_node *node)
{
	return node ? node->path : NULL;
}

DEVWL_EXPORT enum devwl_behavior devwl_node_behavior(const struct devwl_node *node)
{
	return node ? node->behavior : DEVWL_BEHAVIOR_DENY;
}

DEVWL_EXPORT struct devwl_node *devwl_node_parent(const struct devwl_node *node)
{
	return node ? node->parent : NULL;
}

DEVWL_EXPORT size_t devwl_node_exception_count(const struct devwl_node *node)
{
	return node ? node->ex.n : 0;
}

DEVWL_EXPORT int devwl_node_exception(const struct devwl_node *node, size_t index,
				      struct devwl_rule *ret_rule)
{
	if (!node || !ret_rule)
		return -EINVAL;
	if (index >= node->ex.n)
		return -ERANGE;
	*ret_rule = node->ex.v[index];
	return 0;
}

DEVWL_EXPORT bool devwl_node_mknod_needs_cap(const struct devwl_node *node)
{
	return !node || node->mknod_needs_cap;
}

DEVWL_EXPORT void devwl_node_set_mknod_needs_cap(struct devwl_node *node, bool needs_cap)
{
	if (node)
		node->mknod_needs_cap = needs_cap;
}

DEVWL_EXPORT void devwl_node_ref(struct devwl_node *node)
{
	if (node)
		node->refs++;
}

DEVWL_EXPORT void devwl_node_unref(struct devwl_node *node)
{
	if (node && node->refs)
		node->refs--;
}

/* ---- snapshots: all-or-nothing updates of a subtree (lib/policyfile.c) ---------------- */

struct snap_node {
	enum devwl_behavior behavior;
	bool mknod_needs_cap;
	struct ex_list ex;
};

struct devwl_node_snapshot {
	size_t n;
	struct snap_node v[];
};

int node_snapshot_take(const struct devwl_node *node, struct devwl_node_snapshot **ret)
{
	struct devwl_node *top = (struct devwl_node *)node;
	struct devwl_node_snapshot *s;
	size_t n = 0, i = 0;

	if (!node || !ret)
		return -EINVAL;
	for (struct devwl_node *d = top; d; d = next_pre(d, top))
		n++;
	s = calloc(1, sizeof(*s) + n * sizeof(s->v[0]));
	if (!s)
		return -ENOMEM;
	s->n = n;
	for (struct devwl_node *d = top; d; d = next_pre(d, top), i++) {
		s->v[i].behavior = d->behavior;
		s->v[i].mknod_needs_cap = d->mknod_needs_cap;
		if (ex_copy(&s->v[i].ex, &d->ex) < 0) {
			node_snapshot_free(s);
			return -ENOMEM;
		}
	}
	*ret = s;
	return 0;
}

/* Restoring only moves lists back, so it cannot fail half-way. */
void node_snapshot_restore(struct devwl_node *node, struct devwl_node_snapshot *s)
{
	size_t i = 0;

	if (!node || !s)
		return;
	for (struct devwl_node *d = node; d && i < s->n; d = next_pre(d, node), i++) {
		ex_clean(&d->ex);
		d->ex = s->v[i].ex;
		s->v[i].ex = (struct ex_list){0};
		d->behavior = s->v[i].behavior;
		d->mknod_needs_cap = s->v[i].mknod_needs_cap;
	}
	node_snapshot_free(s);
}

void node_snapshot_free(struct devwl_node_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		ex_clean(&s->v[i].ex);
	free(s);
}
