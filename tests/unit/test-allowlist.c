/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The allow-list hierarchy (lib/allowlist.c): every update rule of doc/DESIGN.md §2 by hand,
 * then a naive reference model written here from the kernel's device_cgroup.c (linear
 * lists, no index, nothing clever) driven side by side with the library over long random
 * operation sequences with fixed seeds. The model is the cheap, root-free oracle; the
 * kernel itself is the expensive one (tests/oracle).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allowlist.h"
#include "devwl.h"

#define B	   DEVWL_DEV_BLOCK
#define C	   DEVWL_DEV_CHAR
#define R	   DEVWL_ACC_READ
#define W	   DEVWL_ACC_WRITE
#define M	   DEVWL_ACC_MKNOD
#define ANY	   DEVWL_ANY
#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers over the library ------------------------------------------------------- */

static int wr(struct devwl_policy *p, const char *path, enum devwl_file file, const char *rule)
{
	return devwl_policy_write(p, path, file, rule, strlen(rule), NULL);
}

static void expect_list(struct devwl_policy *p, const char *path, const char *want)
{
	char *text = NULL;

	assert_int_equal(devwl_node_list(devwl_policy_find(p, path), &text), 0);
	if (strcmp(text, want) != 0)
		fail_msg("list %s:\n%s--- want:\n%s---", path, text, want);
	free(text);
}

static void expect_show(struct devwl_policy *p, const char *path, const char *want)
{
	char *text = NULL;

	assert_int_equal(devwl_node_show(devwl_policy_find(p, path), &text), 0);
	if (strcmp(text, want) != 0)
		fail_msg("show %s:\n%s--- want:\n%s---", path, text, want);
	free(text);
}

static int chk(struct devwl_policy *p, const char *path, int type, uint32_t major, uint32_t minor,
	       int access)
{
	return devwl_node_check(devwl_policy_find(p, path), type, major, minor, access);
}

static struct devwl_policy *policy_with(const char *const *paths)
{
	struct devwl_policy *p = devwl_policy_new();

	assert_non_null(p);
	for (; *paths; paths++)
		assert_int_equal(devwl_policy_mkdir(p, *paths), 0);
	return p;
}

/* ---- the naive model ------------------------------------------------------------------ */

struct mnode {
	char *path;
	int parent; /* index, -1 for the root */
	bool alive;
	enum devwl_behavior behavior;
	struct devwl_rule *ex;
	size_t n, cap;
	bool needs_cap;
	unsigned refs;
};

struct model {
	struct mnode *v;
	size_t n, cap;
};

static void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->v = calloc(1, sizeof(*m->v));
	assert_non_null(m->v);
	m->cap = m->n = 1;
	m->v[0] = (struct mnode){.path = strdup("/"),
				 .parent = -1,
				 .alive = true,
				 .behavior = DEVWL_BEHAVIOR_ALLOW,
				 .needs_cap = true};
}

static void model_free(struct model *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].path);
		free(m->v[i].ex);
	}
	free(m->v);
}

static int model_find(const struct model *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].alive && strcmp(m->v[i].path, path) == 0)
			return (int)i;
	return -1;
}

static bool model_has_children(const struct model *m, int i)
{
	for (size_t j = 0; j < m->n; j++)
		if (m->v[j].alive && m->v[j].parent == i)
			return true;
	return false;
}

static bool same_key(const struct devwl_rule *a, const struct devwl_rule *b)
{
	return a->type == b->type && a->major == b->major && a->minor == b->minor;
}

/* dev_exception_add() */
static void m_ex_add(struct mnode *n, const struct devwl_rule *r)
{
	for (size_t i = 0; i < n->n; i++)
		if (same_key(&n->ex[i], r)) {
			n->ex[i].access |= r->access;
			return;
		}
	if (n->n == n->cap) {
		n->cap = n->cap ? n->cap * 2 : 4;
		n->ex = realloc(n->ex, n->cap * sizeof(*n->ex));
		assert_non_null(n->ex);
	}
	n->ex[n->n++] = *r;
}

static void m_ex_del(struct mnode *n, size_t i)
{
	memmove(&n->ex[i], &n->ex[i + 1], (n->n - i - 1) * sizeof(*n->ex));
	n->n--;
}

/* dev_exception_rm() */
static void m_ex_rm(struct mnode *n, const struct devwl_rule *r)
{
	for (size_t i = 0; i < n->n; i++)
		if (same_key(&n->ex[i], r)) {
			n->ex[i].access &= (uint8_t)~r->access;
			if (!n->ex[i].access)
				m_ex_del(n, i);
			return;
		}
}

/* match_exception() */
static bool m_match(const struct mnode *n, unsigned type, uint32_t major, uint32_t minor,
		    unsigned access)
{
	for (size_t i = 0; i < n->n; i++) {
		const struct devwl_rule *e = &n->ex[i];
		if ((type & B) && !(e->type & B))
			continue;
		if ((type & C) && !(e->type & C))
			continue;
		if (e->major != ANY && e->major != major)
			continue;
		if (e->minor != ANY && e->minor != minor)
			continue;
		if (access & ~e->access)
			continue;
		return true;
	}
	return false;
}

/* match_exception_partial() */
static bool m_match_partial(const struct mnode *n, unsigned type, uint32_t major, uint32_t minor,
			    unsigned access)
{
	for (size_t i = 0; i < n->n; i++) {
		const struct devwl_rule *e = &n->ex[i];
		if ((type & B) && !(e->type & B))
			continue;
		if ((type & C) && !(e->type & C))
			continue;
		if (e->major != ANY && major != ANY && e->major != major)
			continue;
		if (e->minor != ANY && minor != ANY && e->minor != minor)
			continue;
		if (!(access & e->access))
			continue;
		return true;
	}
	return false;
}

/* verify_new_ex() via parent_has_perm() */
static bool m_parent_has_perm(const struct model *m, int i, const struct devwl_rule *r)
{
	const struct mnode *n = &m->v[i], *parent;

	if (n->parent < 0)
		return true;
	parent = &m->v[n->parent];
	if (parent->behavior == DEVWL_BEHAVIOR_ALLOW) {
		if (n->behavior == DEVWL_BEHAVIOR_ALLOW)
			return true;
		return !m_match_partial(parent, r->type, r->major, r->minor, r->access);
	}
	return m_match(parent, r->type, r->major, r->minor, r->access);
}

/* parent_allows_removal(), as the kernel writes it (it tests the child's behavior). */
static bool m_parent_allows_removal(const struct model *m, int i, const struct devwl_rule *r)
{
	const struct mnode *n = &m->v[i];

	if (n->parent < 0)
		return true;
	if (n->behavior == DEVWL_BEHAVIOR_DENY)
		return true;
	return !m_match_partial(&m->v[n->parent], r->type, r->major, r->minor, r->access);
}

static void m_revalidate(struct model *m, int i)
{
	struct mnode *n = &m->v[i];

	for (size_t k = 0; k < n->n;) {
		if (!m_parent_has_perm(m, i, &n->ex[k]))
			m_ex_del(n, k);
		else
			k++;
	}
}

/* Pre-order, children in creation order (their order in m->v). */
static void m_preorder(const struct model *m, int i, int *out, size_t *nout)
{
	out[(*nout)++] = i;
	for (size_t j = 0; j < m->n; j++)
		if (m->v[j].alive && m->v[j].parent == i)
			m_preorder(m, (int)j, out, nout);
}

static void m_propagate(struct model *m, int w, const struct devwl_rule *r)
{
	int *order = malloc(m->n * sizeof(*order));
	size_t n = 0;

	assert_non_null(order);
	m_preorder(m, w, order, &n);
	for (size_t k = 1; k < n; k++) {
		struct mnode *d = &m->v[order[k]];
		if (m->v[w].behavior == DEVWL_BEHAVIOR_ALLOW && d->behavior == DEVWL_BEHAVIOR_ALLOW)
			m_ex_add(d, r);
		else
			m_ex_rm(d, r);
		m_revalidate(m, order[k]);
	}
	free(order);
}

/* devcgroup_update_access() after parsing. */
static int model_update(struct model *m, int i, enum devwl_file file, const struct devwl_rule *r)
{
	struct mnode *n = &m->v[i];

	if (r->type == DEVWL_DEV_ALL) {
		if (model_has_children(m, i))
			return -EINVAL;
		if (file == DEVWL_FILE_DENY) {
			n->n = 0;
			n->behavior = DEVWL_BEHAVIOR_DENY;
			return 0;
		}
		if (n->parent >= 0 && m->v[n->parent].behavior != DEVWL_BEHAVIOR_ALLOW)
			return -EPERM;
		n->n = 0;
		if (n->parent >= 0)
			for (size_t k = 0; k < m->v[n->parent].n; k++)
				m_ex_add(n, &m->v[n->parent].ex[k]);
		n->behavior = DEVWL_BEHAVIOR_ALLOW;
		return 0;
	}
	if (file == DEVWL_FILE_ALLOW) {
		if (n->behavior == DEVWL_BEHAVIOR_ALLOW) {
			if (!m_parent_allows_removal(m, i, r))
				return -EPERM;
			m_ex_rm(n, r);
			return 0;
		}
		if (!m_parent_has_perm(m, i, r))
			return -EPERM;
		m_ex_add(n, r);
		return 0;
	}
	if (n->behavior == DEVWL_BEHAVIOR_DENY)
		m_ex_rm(n, r);
	else
		m_ex_add(n, r);
	m_propagate(m, i, r);
	return 0;
}

static int model_mkdir(struct model *m, const char *path)
{
	char parent[256];
	const char *slash = strrchr(path, '/');
	int pi;
	struct mnode *n;

	if (model_find(m, path) >= 0)
		return -EEXIST;
	assert_true(slash && (size_t)(slash - path) < sizeof(parent));
	if (slash == path) {
		strcpy(parent, "/");
	} else {
		memcpy(parent, path, (size_t)(slash - path));
		parent[slash - path] = '\0';
	}
	pi = model_find(m, parent);
	if (pi < 0)
		return -ENOENT;
	if (m->n == m->cap) {
		m->cap *= 2;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		assert_non_null(m->v);
	}
	n = &m->v[m->n++];
	*n = (struct mnode){.path = strdup(path),
			    .parent = pi,
			    .alive = true,
			    .behavior = m->v[pi].behavior,
			    .needs_cap = m->v[pi].needs_cap};
	for (size_t k = 0; k < m->v[pi].n; k++)
		m_ex_add(n, &m->v[pi].ex[k]);
	return 0;
}

static int model_rmdir(struct model *m, const char *path)
{
	int i = model_find(m, path);

	if (i < 0)
		return -ENOENT;
	if (i == 0 || model_has_children(m, i) || m->v[i].refs)
		return -EBUSY;
	m->v[i].alive = false;
	m->v[i].n = 0;
	return 0;
}

static int model_check(const struct mnode *n, int type, uint32_t major, uint32_t minor, int access)
{
	if (n->behavior == DEVWL_BEHAVIOR_ALLOW)
		return !m_match_partial(n, (unsigned)type, major, minor, (unsigned)access);
	return m_match(n, (unsigned)type, major, minor, (unsigned)access);
}

/* The listings, written out from doc/DESIGN.md §2 without the library's formatter. */
static void m_rule_text(const struct devwl_rule *r, char *buf, size_t size)
{
	char maj[12], min[12];

	if (r->major == ANY)
		strcpy(maj, "*");
	else
		snprintf(maj, sizeof(maj), "%u", r->major);
	if (r->minor == ANY)
		strcpy(min, "*");
	else
		snprintf(min, sizeof(min), "%u", r->minor);
	snprintf(buf, size, "%c %s:%s %s%s%s", r->type == B ? 'b' : 'c', maj, min,
		 r->access & R ? "r" : "", r->access & W ? "w" : "", r->access & M ? "m" : "");
}

static char *model_listing(const struct mnode *n, bool full)
{
	size_t size = 64 + n->n * 48, off = 0;
	char *out = malloc(size), line[40];

	assert_non_null(out);
	out[0] = '\0';
	if (!full && n->behavior == DEVWL_BEHAVIOR_ALLOW) {
		strcpy(out, "a *:* rwm\n");
		return out;
	}
	if (full)
		off += (size_t)sprintf(out, "behavior %s\n",
				       n->behavior == DEVWL_BEHAVIOR_ALLOW ? "allow" : "deny");
	for (size_t k = 0; k < n->n; k++) {
		m_rule_text(&n->ex[k], line, sizeof(line));
		off += (size_t)sprintf(out + off, "%s%s\n",
				       !full				     ? ""
				       : n->behavior == DEVWL_BEHAVIOR_ALLOW ? "deny "
									     : "allow ",
				       line);
	}
	if (full && !n->needs_cap)
		strcpy(out + off, "mknod_needs_cap false\n");
	return out;
}

/* ---- random operation sequences ------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64: fixed seeds, same sequence everywhere. */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned rndn(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static const char *const tree_paths[] = {
	"/",	  "/a",	    "/b",     "/c",	"/a/x",	    "/a/y",	  "/b/x",
	"/a/x/p", "/a/x/q", "/b/x/p", "/a/y/z", "/a/x/p/d", "/a/x/p/d/e",
};

static struct devwl_rule random_rule(void)
{
	static const uint32_t nums[] = {1, 2, 3, ANY};
	struct devwl_rule r = {0};

	if (rndn(10) == 0) {
		r.type = DEVWL_DEV_ALL;
		r.major = r.minor = ANY;
		r.access = DEVWL_ACC_MASK;
		return r;
	}
	r.type = rndn(2) ? C : B;
	r.major = nums[rndn(4)];
	r.minor = nums[rndn(4)];
	/* An empty access is legal (see rules.tsv): keep it rare but present. */
	r.access = (uint8_t)(rndn(20) == 0 ? 0 : 1 + rndn(7));
	return r;
}

/* The rule as text the grammar parses back to r, with some harmless decoration. */
static size_t rule_text(const struct devwl_rule *r, char *buf, size_t size)
{
	char body[40];
	const char *lead = rndn(4) == 0 ? " \t" : "";
	const char *trail = rndn(4) == 0 ? "\n" : "";

	if (r->type == DEVWL_DEV_ALL) {
		snprintf(buf, size, "%sa%s", lead, trail);
		return strlen(buf);
	}
	m_rule_text(r, body, sizeof(body));
	if (r->access == 0) /* a newline right after the separator: no access bits */
		snprintf(buf, size, "%s%s\nx", lead, body);
	else
		snprintf(buf, size, "%s%s%s", lead, body, trail);
	return strlen(buf);
}

static void compare(struct devwl_policy *p, struct model *m, uint64_t seed, unsigned step,
		    const char *op)
{
	static const uint32_t nums[] = {1, 2, 3, ANY};
	int order[64];
	size_t norder = 0;

	for (size_t i = 0; i < m->n; i++) {
		const struct mnode *mn = &m->v[i];
		struct devwl_node *ln = devwl_policy_find(p, mn->path);
		char *want, *got = NULL;

		if (!mn->alive) {
			if (ln && model_find(m, mn->path) < 0)
				fail_msg("seed %llu step %u (%s): %s should be gone",
					 (unsigned long long)seed, step, op, mn->path);
			continue;
		}
		if (!ln)
			fail_msg("seed %llu step %u (%s): %s missing", (unsigned long long)seed,
				 step, op, mn->path);
		for (int full = 0; full < 2; full++) {
			want = model_listing(mn, full);
			assert_int_equal(
				full ? devwl_node_show(ln, &got) : devwl_node_list(ln, &got), 0);
			if (strcmp(want, got) != 0)
				fail_msg("seed %llu step %u (%s): %s %s:\n%s--- model:\n%s---",
					 (unsigned long long)seed, step, op, full ? "show" : "list",
					 mn->path, got, want);
			free(want);
			free(got);
		}
		for (int t = 0; t < 2; t++)
			for (int a = 0; a < 4; a++)
				for (int b = 0; b < 4; b++)
					for (int acc = 0; acc <= DEVWL_ACC_MASK; acc++) {
						int type = t ? C : B;
						int lw = devwl_node_check(ln, type, nums[a],
									  nums[b], acc);
						int mw = model_check(mn, type, nums[a], nums[b],
								     acc);
						if (lw != mw)
							fail_msg("seed %llu step %u (%s): check %s "
								 "%c %u:%u acc %d: lib %d model %d",
								 (unsigned long long)seed, step, op,
								 mn->path, t ? 'c' : 'b', nums[a],
								 nums[b], acc, lw, mw);
					}
	}
	/* Same number of nodes. */
	m_preorder(m, 0, order, &norder);
	assert_int_equal(devwl_policy_count(p), norder);
}

/* Pre-order as the library walks it, compared against the model's. */
struct walk {
	const char **paths;
	size_t n;
};

static int collect(struct devwl_node *node, void *userdata)
{
	struct walk *w = userdata;

	w->paths[w->n++] = devwl_node_path(node);
	return 0;
}

static void compare_order(struct devwl_policy *p, struct model *m)
{
	int order[64];
	const char *paths[64];
	size_t norder = 0;
	struct walk w = {paths, 0};

	m_preorder(m, 0, order, &norder);
	assert_int_equal(devwl_policy_foreach(p, collect, &w), 0);
	assert_int_equal(w.n, norder);
	for (size_t k = 0; k < norder; k++)
		assert_string_equal(w.paths[k], m->v[order[k]].path);
}

static void run_random(uint64_t seed, unsigned steps)
{
	struct devwl_policy *p = devwl_policy_new();
	struct model m;

	assert_non_null(p);
	model_init(&m);
	rng_state = seed;
	for (unsigned step = 0; step < steps; step++) {
		const char *path = tree_paths[rndn(N_ELEMS(tree_paths))];
		unsigned what = rndn(100);
		char op[128];
		int lr, mr;

		if (what < 12) {
			snprintf(op, sizeof(op), "mkdir %s", path);
			lr = devwl_policy_mkdir(p, path);
			mr = strcmp(path, "/") == 0 ? -EEXIST : model_mkdir(&m, path);
		} else if (what < 18) {
			snprintf(op, sizeof(op), "rmdir %s", path);
			lr = devwl_policy_rmdir(p, path);
			mr = model_rmdir(&m, path);
		} else if (what < 20) {
			/* Pin or unpin: rmdir must then fail EBUSY. */
			int i = model_find(&m, path);
			struct devwl_node *n = devwl_policy_find(p, path);
			bool pin = rndn(2);
			snprintf(op, sizeof(op), "%s %s", pin ? "ref" : "unref", path);
			assert_true((i >= 0) == (n != NULL));
			if (n && pin) {
				devwl_node_ref(n);
				m.v[i].refs++;
			} else if (n && m.v[i].refs) {
				devwl_node_unref(n);
				m.v[i].refs--;
			}
			lr = mr = 0;
		} else if (what < 22) {
			int i = model_find(&m, path);
			bool cap = rndn(2);
			snprintf(op, sizeof(op), "mknod_needs_cap %s %d", path, cap);
			if (i >= 0) {
				devwl_node_set_mknod_needs_cap(devwl_policy_find(p, path), cap);
				m.v[i].needs_cap = cap;
			}
			lr = mr = 0;
		} else {
			struct devwl_rule r = random_rule();
			enum devwl_file file = rndn(2) ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY;
			int i = model_find(&m, path);
			char text[64], shown[40];
			size_t len = rule_text(&r, text, sizeof(text));

			if (r.type == DEVWL_DEV_ALL)
				strcpy(shown, "a");
			else
				m_rule_text(&r, shown, sizeof(shown));
			snprintf(op, sizeof(op), "%s %s %s",
				 file == DEVWL_FILE_ALLOW ? "allow" : "deny", path, shown);
			if (rndn(2)) {
				lr = devwl_policy_write(p, path, file, text, len, NULL);
			} else {
				struct devwl_node *n = devwl_policy_find(p, path);
				lr = n ? devwl_node_update(n, file, &r) : -ENOENT;
			}
			mr = i < 0 ? -ENOENT : model_update(&m, i, file, &r);
		}
		if (lr != mr)
			fail_msg("seed %llu step %u: %s: lib %d model %d", (unsigned long long)seed,
				 step, op, lr, mr);
		compare(p, &m, seed, step, op);
		compare_order(p, &m);
	}
	devwl_policy_free(p);
	model_free(&m);
}

/* ---- every update rule by hand -------------------------------------------------------- */

static void test_node_update_add_ors_in_place(void **state)
{
	static const char *const paths[] = {"/d", "/al", NULL};
	struct devwl_policy *p = policy_with(paths);

	(void)state;
	assert_int_equal(wr(p, "/d", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(wr(p, "/d", DEVWL_FILE_ALLOW, "c 1:3 r"), 0);
	assert_int_equal(wr(p, "/d", DEVWL_FILE_ALLOW, "c 1:3 w"), 0);
	expect_list(p, "/d", "c 1:3 rw\n");
	assert_int_equal(wr(p, "/d", DEVWL_FILE_ALLOW, "c 1:4 m"), 0);
	assert_int_equal(wr(p, "/d", DEVWL_FILE_ALLOW, "b 1:3 r"), 0);
	/* An existing key keeps its place; only new keys append. */
	assert_int_equal(wr(p, "/d", DEVWL_FILE_ALLOW, "c 1:3 m"), 0);
	expect_list(p, "/d", "c 1:3 rwm\nc 1:4 m\nb 1:3 r\n");
	assert_int_equal(devwl_node_exception_count(devwl_policy_find(p, "/d")), 3);

	assert_int_equal(wr(p, "/al", DEVWL_FILE_DENY, "c 1:3 r"), 0);
	assert_int_equal(wr(p, "/al", DEVWL_FILE_DENY, "c *:* m"), 0);
	assert_int_equal(wr(p, "/al", DEVWL_FILE_DENY, "c 1:3 w"), 0);
	expect_show(p, "/al", "behavior allow\ndeny c 1:3 rw\ndeny c *:* m\n");
	devwl_policy_free(p);
}

static void test_node_update_remove_exact_only(void **state)
{
	static const char *const paths[] = {"/d", "/al", NULL};
	struct devwl_policy *p = policy_with(paths);

	(void)state;
	assert_int_equal(wr(p, "/d", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(wr(p, "/d", DEVWL_FILE_ALLOW, "c 1:3 rwm"), 0);
	assert_int_equal(wr(p, "/d", DEVWL_FILE_ALLOW, "c *:* r"), 0);
	assert_int_equal(wr(p, "/d", DEVWL_FILE_ALLOW, "c 1:* w"), 0);
	/* Removing clears bits of the exact key... */
	assert_int_equal(wr(p, "/d", DEVWL_FILE_DENY, "c 1:3 r"), 0);
	expect_list(p, "/d", "c 1:3 wm\nc *:* r\nc 1:* w\n");
	/* ...a wildcard never removes narrower entries, nor another type... */
	assert_int_equal(wr(p, "/d", DEVWL_FILE_DENY, "c *:3 rwm"), 0);
	assert_int_equal(wr(p, "/d", DEVWL_FILE_DENY, "b 1:3 rwm"), 0);
	assert_int_equal(wr(p, "/d", DEVWL_FILE_DENY, "c 1:* m"), 0);
	expect_list(p, "/d", "c 1:3 wm\nc *:* r\nc 1:* w\n");
	/* ...and an entry goes when its last bit does, order of the rest kept. */
	assert_int_equal(wr(p, "/d", DEVWL_FILE_DENY, "c 1:3 wm"), 0);
	expect_list(p, "/d", "c *:* r\nc 1:* w\n");
	assert_int_equal(wr(p, "/d", DEVWL_FILE_DENY, "c *:* rwm"), 0);
	expect_list(p, "/d", "c 1:* w\n");
	/* An entry with no access at all is kept (the kernel keeps it) and listed so. */
	assert_int_equal(wr(p, "/d", DEVWL_FILE_ALLOW, "c 9:9 \nrw"), 0);
	expect_list(p, "/d", "c 1:* w\nc 9:9 \n");
	assert_int_equal(devwl_node_check(devwl_policy_find(p, "/d"), C, 9, 9, 0), 1);
	assert_int_equal(devwl_node_check(devwl_policy_find(p, "/d"), C, 9, 9, R), 0);
	assert_int_equal(wr(p, "/d", DEVWL_FILE_DENY, "c 9:9 r"), 0);
	expect_list(p, "/d", "c 1:* w\n");

	/* The same on an ALLOW node, where "allow" removes. */
	assert_int_equal(wr(p, "/al", DEVWL_FILE_DENY, "c 1:3 rw"), 0);
	assert_int_equal(wr(p, "/al", DEVWL_FILE_ALLOW, "c *:* rwm"), 0);
	assert_int_equal(wr(p, "/al", DEVWL_FILE_ALLOW, "c 1:* rwm"), 0);
	expect_show(p, "/al", "behavior allow\ndeny c 1:3 rw\n");
	assert_int_equal(wr(p, "/al", DEVWL_FILE_ALLOW, "c 1:3 wm"), 0);
	expect_show(p, "/al", "behavior allow\ndeny c 1:3 r\n");
	assert_int_equal(wr(p, "/al", DEVWL_FILE_ALLOW, "c 1:3 r"), 0);
	expect_show(p, "/al", "behavior allow\n");
	devwl_policy_free(p);
}

static void test_node_update_all(void **state)
{
	static const char *const paths[] = {"/p", "/p/c", "/p/c/g", "/q", "/q/c", NULL};
	struct devwl_policy *p = policy_with(paths);
	struct devwl_error err = {0};

	(void)state;
	/* A node with children cannot change its default: EINVAL, before any EPERM. */
	assert_int_equal(wr(p, "/p", DEVWL_FILE_DENY, "a"), -EINVAL);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "a"), -EINVAL);
	assert_int_equal(wr(p, "/", DEVWL_FILE_DENY, "a"), -EINVAL);
	assert_int_equal(devwl_policy_write(p, "/p/c", DEVWL_FILE_DENY, "a", 1, &err), -EINVAL);
	assert_int_equal(err.code, -EINVAL);
	assert_non_null(strstr(err.msg, "/p/c"));

	/* deny a: exceptions cleared, DENY; lists as nothing at all. */
	assert_int_equal(wr(p, "/p/c/g", DEVWL_FILE_DENY, "c 1:3 r"), 0);
	assert_int_equal(wr(p, "/p/c/g", DEVWL_FILE_DENY, "a"), 0);
	expect_list(p, "/p/c/g", "");
	expect_show(p, "/p/c/g", "behavior deny\n");
	assert_int_equal(devwl_node_behavior(devwl_policy_find(p, "/p/c/g")), DEVWL_BEHAVIOR_DENY);
	/* Under a DENY parent, allow a is EPERM on a leaf, EINVAL with children. */
	assert_int_equal(devwl_policy_rmdir(p, "/p/c/g"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/q/c/g"), 0);
	assert_int_equal(wr(p, "/q/c/g", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/q/c/g/h"), 0);
	expect_list(p, "/q/c/g/h", "");
	assert_int_equal(devwl_policy_write(p, "/q/c/g/h", DEVWL_FILE_ALLOW, "a", 1, &err), -EPERM);
	assert_int_equal(err.code, -EPERM);
	assert_non_null(strstr(err.msg, "/q/c/g"));
	assert_int_equal(wr(p, "/q/c/g", DEVWL_FILE_ALLOW, "a"), -EINVAL);

	/* allow a under an ALLOW parent: exceptions := a copy of the parent's. */
	assert_int_equal(wr(p, "/p", DEVWL_FILE_DENY, "b 8:* w"), 0);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "c 1:3 r"), 0);
	expect_list(p, "/p/c", "c 1:3 r\n");
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "a"), 0);
	expect_show(p, "/p/c", "behavior allow\ndeny b 8:* w\n");
	expect_list(p, "/p/c", "a *:* rwm\n");

	/* The root: deny a, grant freely (no parent), allow a clears. */
	assert_int_equal(devwl_policy_rmdir(p, "/q/c/g/h"), 0);
	assert_int_equal(devwl_policy_rmdir(p, "/q/c/g"), 0);
	assert_int_equal(devwl_policy_rmdir(p, "/q/c"), 0);
	assert_int_equal(devwl_policy_rmdir(p, "/q"), 0);
	assert_int_equal(devwl_policy_rmdir(p, "/p/c"), 0);
	assert_int_equal(devwl_policy_rmdir(p, "/p"), 0);
	assert_int_equal(wr(p, "/", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(wr(p, "/", DEVWL_FILE_ALLOW, "c 5:5 rwm"), 0);
	expect_list(p, "/", "c 5:5 rwm\n");
	assert_int_equal(wr(p, "/", DEVWL_FILE_ALLOW, "a junk"), 0);
	expect_show(p, "/", "behavior allow\n");
	devwl_policy_free(p);
}

static void test_node_update_allow_on_deny_under_deny_parent(void **state)
{
	static const char *const paths[] = {"/p", NULL};
	struct devwl_policy *p = policy_with(paths);
	struct devwl_error err = {0};
	struct devwl_node *c;

	(void)state;
	assert_int_equal(wr(p, "/p", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(wr(p, "/p", DEVWL_FILE_ALLOW, "c 1:* rw"), 0);
	assert_int_equal(wr(p, "/p", DEVWL_FILE_ALLOW, "b *:* m"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/p/c"), 0);
	expect_list(p, "/p/c", "c 1:* rw\nb *:* m\n");
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_DENY, "c 1:* rw"), 0);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_DENY, "b *:* m"), 0);
	expect_list(p, "/p/c", "");
	/* Covered completely by one parent exception. */
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "c 1:3 r"), 0);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "c 1:* rw"), 0);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "b 7:7 m"), 0);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "b *:7 m"), 0);
	/* Not covered: access, number, wildcard wider than the parent's, type. */
	c = devwl_policy_find(p, "/p/c");
	assert_int_equal(devwl_node_write(c, DEVWL_FILE_ALLOW, "c 1:3 rwm", 9, &err), -EPERM);
	assert_int_equal(err.code, -EPERM);
	assert_string_equal(err.msg, "parent /p does not allow /p/c to c 1:3 rwm");
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "c 2:3 r"), -EPERM);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "c *:3 r"), -EPERM);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "c 9:9 m"), -EPERM);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "b 7:7 r"), -EPERM);
	/* Parts covered by two different parent exceptions do not add up. */
	assert_int_equal(wr(p, "/p", DEVWL_FILE_ALLOW, "c 1:3 m"), 0);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "c 1:3 rm"), -EPERM);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "c 1:3 m"), 0);
	/* An empty access needs the device named by the parent. */
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "c 1:7 \nx"), 0);
	assert_int_equal(wr(p, "/p/c", DEVWL_FILE_ALLOW, "c 5:5 \nx"), -EPERM);
	expect_list(p, "/p/c", "c 1:3 rm\nc 1:* rw\nb 7:7 m\nb *:7 m\nc 1:7 \n");
	devwl_policy_free(p);
}

static void test_node_update_allow_on_deny_under_allow_parent(void **state)
{
	static const char *const paths[] = {"/q", "/q/d", NULL};
	struct devwl_policy *p = policy_with(paths);

	(void)state;
	assert_int_equal(wr(p, "/q/d", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(wr(p, "/q", DEVWL_FILE_DENY, "c 1:3 w"), 0);
	assert_int_equal(wr(p, "/q", DEVWL_FILE_DENY, "b *:* r"), 0);
	/* No overlap with any parent denial, not even partial. */
	assert_int_equal(wr(p, "/q/d", DEVWL_FILE_ALLOW, "c 1:3 r"), 0);
	assert_int_equal(wr(p, "/q/d", DEVWL_FILE_ALLOW, "c 1:3 rw"), -EPERM);
	assert_int_equal(wr(p, "/q/d", DEVWL_FILE_ALLOW, "c 1:* w"), -EPERM);
	assert_int_equal(wr(p, "/q/d", DEVWL_FILE_ALLOW, "c *:3 wm"), -EPERM);
	assert_int_equal(wr(p, "/q/d", DEVWL_FILE_ALLOW, "c *:* m"), 0);
	assert_int_equal(wr(p, "/q/d", DEVWL_FILE_ALLOW, "b 8:1 w"), 0);
	assert_int_equal(wr(p, "/q/d", DEVWL_FILE_ALLOW, "b 8:1 r"), -EPERM);
	assert_int_equal(wr(p, "/q/d", DEVWL_FILE_ALLOW, "c 2:3 rwm"), 0);
	expect_list(p, "/q/d", "c 1:3 r\nc *:* m\nb 8:1 w\nc 2:3 rwm\n");
	devwl_policy_free(p);
}

static void test_node_update_allow_on_allow_node(void **state)
{
	static const char *const paths[] = {"/q", "/q/e", NULL};
	struct devwl_policy *p = policy_with(paths);
	struct devwl_error err = {0};

	(void)state;
	assert_int_equal(wr(p, "/q", DEVWL_FILE_DENY, "c 1:3 w"), 0);
	expect_show(p, "/q/e", "behavior allow\ndeny c 1:3 w\n");
	assert_int_equal(wr(p, "/q/e", DEVWL_FILE_DENY, "c 4:4 rwm"), 0);
	assert_int_equal(wr(p, "/q/e", DEVWL_FILE_ALLOW, "c 4:4 r"), 0);
	expect_show(p, "/q/e", "behavior allow\ndeny c 1:3 w\ndeny c 4:4 wm\n");
	/* Lifting a denial the parent holds, even partly: EPERM. */
	assert_int_equal(devwl_policy_write(p, "/q/e", DEVWL_FILE_ALLOW, "c 1:3 w", 7, &err),
			 -EPERM);
	assert_string_equal(err.msg, "parent /q does not allow /q/e to c 1:3 w");
	assert_int_equal(wr(p, "/q/e", DEVWL_FILE_ALLOW, "c *:* w"), -EPERM);
	assert_int_equal(wr(p, "/q/e", DEVWL_FILE_ALLOW, "c 1:3 rw"), -EPERM);
	/* No overlap and no exact match: a silent no-op. */
	assert_int_equal(wr(p, "/q/e", DEVWL_FILE_ALLOW, "c 1:* r"), 0);
	assert_int_equal(wr(p, "/q/e", DEVWL_FILE_ALLOW, "c 9:9 rwm"), 0);
	expect_show(p, "/q/e", "behavior allow\ndeny c 1:3 w\ndeny c 4:4 wm\n");
	devwl_policy_free(p);
}

static void test_node_update_deny_propagates_preorder(void **state)
{
	static const char *const paths[] = {"/t", "/t/a", "/t/a/x", "/t/b", "/t/b/y", NULL};
	struct devwl_policy *p = policy_with(paths);

	(void)state;
	assert_int_equal(wr(p, "/t/a/x", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(wr(p, "/t/a/x", DEVWL_FILE_ALLOW, "c 1:3 rw"), 0);
	assert_int_equal(wr(p, "/t/a/x", DEVWL_FILE_ALLOW, "c 5:5 r"), 0);
	assert_int_equal(devwl_policy_rmdir(p, "/t/b/y"), 0);
	assert_int_equal(wr(p, "/t/b", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(wr(p, "/t/b", DEVWL_FILE_ALLOW, "c 1:* rwm"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/t/b/y"), 0);
	assert_int_equal(wr(p, "/t/b/y", DEVWL_FILE_DENY, "c 1:* rwm"), 0);
	assert_int_equal(wr(p, "/t/b/y", DEVWL_FILE_ALLOW, "c 1:3 r"), 0);
	assert_int_equal(wr(p, "/t/b/y", DEVWL_FILE_ALLOW, "c 1:4 w"), 0);

	/* Never refused, whatever it names. */
	assert_int_equal(wr(p, "/t", DEVWL_FILE_DENY, "c 1:3 r"), 0);
	expect_show(p, "/t", "behavior allow\ndeny c 1:3 r\n");
	/* ALLOW under an ALLOW writer: the exception is added. */
	expect_show(p, "/t/a", "behavior allow\ndeny c 1:3 r\n");
	/* DENY: exact removal, then revalidation against the (already updated) parent. */
	expect_list(p, "/t/a/x", "c 1:3 w\nc 5:5 r\n");
	/* No exact match in /t/b, but "c 1:* rwm" overlaps /t's new denial: deleted whole. */
	expect_list(p, "/t/b", "");
	/* /t/b/y loses "c 1:3 r" by removal and "c 1:4 w" by revalidation against the
	 * emptied /t/b: the walk is pre-order, so parents are settled first. */
	expect_list(p, "/t/b/y", "");
	assert_int_equal(chk(p, "/t/b/y", C, 1, 4, W), 0);

	/* A DENY writer removes from every descendant and revalidates. */
	devwl_policy_free(p);
	static const char *const paths2[] = {"/u", NULL};
	p = policy_with(paths2);
	assert_int_equal(wr(p, "/u", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(wr(p, "/u", DEVWL_FILE_ALLOW, "c *:* rwm"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/u/v"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/u/v/w"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/u/z"), 0);
	assert_int_equal(wr(p, "/u/v", DEVWL_FILE_ALLOW, "c 1:3 rwm"), 0);
	assert_int_equal(wr(p, "/u/v", DEVWL_FILE_ALLOW, "c 1:4 r"), 0);
	assert_int_equal(wr(p, "/u/v/w", DEVWL_FILE_ALLOW, "c 1:3 rw"), 0);
	assert_int_equal(wr(p, "/u", DEVWL_FILE_DENY, "c 1:3 w"), 0);
	expect_list(p, "/u", "c *:* rwm\n");
	expect_list(p, "/u/v", "c *:* rwm\nc 1:3 rm\nc 1:4 r\n");
	expect_list(p, "/u/v/w", "c *:* rwm\nc 1:3 r\n");
	expect_list(p, "/u/z", "c *:* rwm\n");
	assert_int_equal(wr(p, "/u", DEVWL_FILE_DENY, "c *:* w"), 0);
	expect_list(p, "/u/v", "c *:* rm\nc 1:3 rm\nc 1:4 r\n");
	assert_int_equal(wr(p, "/u", DEVWL_FILE_DENY, "c *:* rm"), 0);
	expect_list(p, "/u", "");
	expect_list(p, "/u/v", "");
	expect_list(p, "/u/v/w", "");
	expect_list(p, "/u/z", "");
	devwl_policy_free(p);
}

static void test_node_update_grants_never_propagate(void **state)
{
	static const char *const paths[] = {"/g", "/g/h", "/d", NULL};
	struct devwl_policy *p = policy_with(paths);

	(void)state;
	assert_int_equal(wr(p, "/g", DEVWL_FILE_DENY, "c 1:3 rwm"), 0);
	expect_show(p, "/g/h", "behavior allow\ndeny c 1:3 rwm\n");
	assert_int_equal(wr(p, "/g", DEVWL_FILE_ALLOW, "c 1:3 rwm"), 0);
	expect_show(p, "/g", "behavior allow\n");
	expect_show(p, "/g/h", "behavior allow\ndeny c 1:3 rwm\n");
	/* Now the child may lift it too. */
	assert_int_equal(wr(p, "/g/h", DEVWL_FILE_ALLOW, "c 1:3 rwm"), 0);
	expect_show(p, "/g/h", "behavior allow\n");

	assert_int_equal(wr(p, "/d", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/d/k"), 0);
	assert_int_equal(wr(p, "/d", DEVWL_FILE_ALLOW, "c 1:3 r"), 0);
	expect_list(p, "/d", "c 1:3 r\n");
	expect_list(p, "/d/k", "");
	devwl_policy_free(p);
}

static void test_node_check_partial_and_complete(void **state)
{
	static const char *const paths[] = {"/al", "/dn", NULL};
	struct devwl_policy *p = policy_with(paths);
	struct devwl_node *n;

	(void)state;
	assert_int_equal(wr(p, "/al", DEVWL_FILE_DENY, "c 1:3 w"), 0);
	assert_int_equal(wr(p, "/al", DEVWL_FILE_DENY, "c *:5 m"), 0);
	/* ALLOW: denied as soon as one exception overlaps, even partly. */
	assert_int_equal(chk(p, "/al", C, 1, 3, R), 1);
	assert_int_equal(chk(p, "/al", C, 1, 3, R | W), 0);
	assert_int_equal(chk(p, "/al", C, 1, 3, W), 0);
	assert_int_equal(chk(p, "/al", C, 1, 4, W), 1);
	assert_int_equal(chk(p, "/al", B, 1, 3, W), 1);
	assert_int_equal(chk(p, "/al", C, 9, 5, M), 0);
	assert_int_equal(chk(p, "/al", C, 9, 5, R | W), 1);
	assert_int_equal(chk(p, "/al", C, 1, 3, 0), 1);

	/* DENY: allowed only if one exception covers it completely. */
	assert_int_equal(wr(p, "/dn", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(wr(p, "/dn", DEVWL_FILE_ALLOW, "c 1:* rw"), 0);
	assert_int_equal(wr(p, "/dn", DEVWL_FILE_ALLOW, "c 1:3 m"), 0);
	assert_int_equal(chk(p, "/dn", C, 1, 3, R | W), 1);
	assert_int_equal(chk(p, "/dn", C, 1, 3, M), 1);
	assert_int_equal(chk(p, "/dn", C, 1, 3, R | W | M), 0);
	assert_int_equal(chk(p, "/dn", C, 1, 4, M), 0);
	assert_int_equal(chk(p, "/dn", C, 2, 1, R), 0);
	assert_int_equal(chk(p, "/dn", B, 1, 3, R), 0);
	/* Empty access (access(F_OK)): passes iff some exception names the device. */
	assert_int_equal(chk(p, "/dn", C, 1, 9, 0), 1);
	assert_int_equal(chk(p, "/dn", C, 2, 2, 0), 0);
	assert_int_equal(chk(p, "/dn", B, 1, 3, 0), 0);
	assert_int_equal(wr(p, "/dn", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(chk(p, "/dn", C, 1, 3, 0), 0);

	n = devwl_policy_find(p, "/al");
	assert_int_equal(devwl_node_check(n, 0, 1, 3, R), -EINVAL);
	assert_int_equal(devwl_node_check(n, DEVWL_DEV_ALL, 1, 3, R), -EINVAL);
	assert_int_equal(devwl_node_check(n, B | C, 1, 3, R), -EINVAL);
	assert_int_equal(devwl_node_check(n, C, 1, 3, 8), -EINVAL);
	assert_int_equal(devwl_node_check(n, C, 1, 3, -1), -EINVAL);
	assert_int_equal(devwl_node_check(NULL, C, 1, 3, R), -EINVAL);
	devwl_policy_free(p);
}

static void test_node_list_and_show_bytes(void **state)
{
	static const char *const paths[] = {"/n", NULL};
	struct devwl_policy *p = policy_with(paths);
	struct devwl_node *n = devwl_policy_find(p, "/n");
	struct devwl_rule r = {0};

	(void)state;
	expect_list(p, "/", "a *:* rwm\n");
	expect_show(p, "/", "behavior allow\n");
	assert_int_equal(wr(p, "/n", DEVWL_FILE_DENY, "b 4294967295:0 mwr"), 0);
	expect_list(p, "/n", "a *:* rwm\n");
	expect_show(p, "/n", "behavior allow\ndeny b *:0 rwm\n");
	assert_int_equal(wr(p, "/n", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(wr(p, "/n", DEVWL_FILE_ALLOW, "c 136:* wr"), 0);
	assert_int_equal(wr(p, "/n", DEVWL_FILE_ALLOW, "b 4294967294:4294967294 m"), 0);
	assert_int_equal(wr(p, "/n", DEVWL_FILE_ALLOW, "c 0:0 rm"), 0);
	expect_list(p, "/n", "c 136:* rw\nb 4294967294:4294967294 m\nc 0:0 rm\n");
	expect_show(p, "/n",
		    "behavior deny\nallow c 136:* rw\nallow b 4294967294:4294967294 m\n"
		    "allow c 0:0 rm\n");
	/* The waiver shows in the full listing only, and children inherit it. */
	assert_true(devwl_node_mknod_needs_cap(n));
	devwl_node_set_mknod_needs_cap(n, false);
	assert_false(devwl_node_mknod_needs_cap(n));
	expect_list(p, "/n", "c 136:* rw\nb 4294967294:4294967294 m\nc 0:0 rm\n");
	expect_show(p, "/n",
		    "behavior deny\nallow c 136:* rw\nallow b 4294967294:4294967294 m\n"
		    "allow c 0:0 rm\nmknod_needs_cap false\n");
	assert_int_equal(devwl_policy_mkdir(p, "/n/k"), 0);
	assert_false(devwl_node_mknod_needs_cap(devwl_policy_find(p, "/n/k")));
	expect_show(p, "/n/k",
		    "behavior deny\nallow c 136:* rw\nallow b 4294967294:4294967294 m\n"
		    "allow c 0:0 rm\nmknod_needs_cap false\n");
	assert_true(devwl_node_mknod_needs_cap(devwl_policy_find(p, "/")));
	/* Exceptions by index. */
	assert_int_equal(devwl_node_exception_count(n), 3);
	assert_int_equal(devwl_node_exception(n, 1, &r), 0);
	assert_int_equal(r.type, B);
	assert_int_equal(r.major, 4294967294u);
	assert_int_equal(r.access, M);
	assert_int_equal(devwl_node_exception(n, 3, &r), -ERANGE);
	assert_string_equal(devwl_node_path(n), "/n");
	assert_ptr_equal(devwl_node_parent(n), devwl_policy_find(p, "/"));
	assert_null(devwl_node_parent(devwl_policy_find(p, "/")));
	devwl_policy_free(p);
}

static void test_policy_mkdir_rmdir_errno(void **state)
{
	static const char *const bad[] = {
		"",	"a",	 "//",	  "/a/",    "/a//b",  "/.",    "/..", "/a/.",  "/a/../b",
		"/a b", "/a\tb", "/a\nb", "/a\x7f", "/a\xa0", "/\x01", "a/b", "/a/b/", NULL,
	};
	struct devwl_policy *p = devwl_policy_new();
	char name[300], longpath[DEVWL_NODE_PATH_MAX + 2];
	struct devwl_node *n;

	(void)state;
	assert_non_null(p);
	for (size_t i = 0; bad[i]; i++) {
		if (devwl_policy_mkdir(p, bad[i]) != -EINVAL)
			fail_msg("mkdir '%s' not EINVAL", bad[i]);
		assert_int_equal(devwl_policy_rmdir(p, bad[i]), -EINVAL);
	}
	assert_int_equal(devwl_policy_mkdir(p, NULL), -EINVAL);
	assert_int_equal(devwl_policy_mkdir(NULL, "/a"), -EINVAL);
	/* Names: 255 bytes fine, 256 not; dots inside names fine. */
	name[0] = '/';
	memset(name + 1, 'n', 256);
	name[257] = '\0';
	assert_int_equal(devwl_policy_mkdir(p, name), -EINVAL);
	name[256] = '\0';
	assert_int_equal(devwl_policy_mkdir(p, name), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/..."), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/.a"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/a.."), 0);
	/* A path of 4096 bytes or more is refused. */
	for (size_t i = 0; i < sizeof(longpath) - 1; i += 2) {
		longpath[i] = '/';
		longpath[i + 1] = 'x';
	}
	longpath[DEVWL_NODE_PATH_MAX] = '\0';
	assert_int_equal(devwl_policy_mkdir(p, longpath), -EINVAL);

	assert_int_equal(devwl_policy_mkdir(p, "/"), -EEXIST);
	assert_int_equal(devwl_policy_mkdir(p, "/a"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/a"), -EEXIST);
	assert_int_equal(devwl_policy_mkdir(p, "/x/y"), -ENOENT);
	assert_int_equal(devwl_policy_mkdir(p, "/a/b"), 0);
	assert_int_equal(devwl_policy_rmdir(p, "/a"), -EBUSY);
	assert_int_equal(devwl_policy_rmdir(p, "/"), -EBUSY);
	assert_int_equal(devwl_policy_rmdir(p, "/nope"), -ENOENT);
	assert_int_equal(devwl_policy_rmdir(p, "/a/b/c"), -ENOENT);
	n = devwl_policy_find(p, "/a/b");
	devwl_node_ref(n);
	devwl_node_ref(n);
	assert_int_equal(devwl_policy_rmdir(p, "/a/b"), -EBUSY);
	devwl_node_unref(n);
	assert_int_equal(devwl_policy_rmdir(p, "/a/b"), -EBUSY);
	devwl_node_unref(n);
	/* "/", the long name, "/...", "/.a", "/a..", "/a", "/a/b" */
	assert_int_equal(devwl_policy_count(p), 7);
	assert_int_equal(devwl_policy_rmdir(p, "/a/b"), 0);
	assert_null(devwl_policy_find(p, "/a/b"));
	assert_int_equal(devwl_policy_rmdir(p, "/a/b"), -ENOENT);
	assert_int_equal(devwl_policy_rmdir(p, "/a"), 0);
	assert_int_equal(devwl_policy_count(p), 5);
	assert_int_equal(devwl_policy_write(p, "/a", DEVWL_FILE_DENY, "a", 1, NULL), -ENOENT);
	assert_int_equal(devwl_policy_write(p, NULL, DEVWL_FILE_DENY, "a", 1, NULL), -ENOENT);
	assert_int_equal(devwl_node_write(devwl_policy_find(p, "/"), 3, "a", 1, NULL), -EINVAL);
	/* A zero-length write succeeds and changes nothing (cgroup_file_write returns 0
	 * for nbytes == 0 before the devices controller sees it); one NUL byte does not. */
	assert_int_equal(devwl_policy_write(p, "/", DEVWL_FILE_DENY, "c 1:3 r", 0, NULL), 0);
	assert_int_equal(devwl_policy_write(p, "/", DEVWL_FILE_DENY, NULL, 0, NULL), 0);
	assert_int_equal(devwl_policy_write(p, "/", DEVWL_FILE_DENY, "", 1, NULL), -EINVAL);
	expect_show(p, "/", "behavior allow\n");
	/* A re-created node starts afresh as a copy of its parent. */
	assert_int_equal(devwl_policy_mkdir(p, "/a"), 0);
	assert_int_equal(wr(p, "/a", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(devwl_policy_rmdir(p, "/a"), 0);
	assert_int_equal(devwl_policy_mkdir(p, "/a"), 0);
	expect_list(p, "/a", "a *:* rwm\n");
	devwl_policy_free(p);
}

/* The path index with deletions: open addressing must find every survivor. */
static void test_policy_find_after_many_rmdir(void **state)
{
	enum { N = 5000 };
	struct devwl_policy *p = devwl_policy_new();
	static char paths[N][32];
	static unsigned perm[N];
	static bool gone[N];

	(void)state;
	assert_non_null(p);
	rng_state = 5000;
	/* 100 parents with 49 children each: rmdir of a parent needs its children gone. */
	for (unsigned i = 0; i < N; i++) {
		if (i % 50 == 0)
			snprintf(paths[i], sizeof(paths[i]), "/p%u", i / 50);
		else
			snprintf(paths[i], sizeof(paths[i]), "/p%u/c%u", i / 50, i);
		assert_int_equal(devwl_policy_mkdir(p, paths[i]), 0);
		perm[i] = i;
	}
	assert_int_equal(devwl_policy_count(p), N + 1);
	for (unsigned i = N - 1; i > 0; i--) {
		unsigned j = rndn(i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	/* Delete half: children in random order, parents only once empty. */
	unsigned deleted = 0;
	for (unsigned k = 0; k < N && deleted < N / 2; k++) {
		unsigned i = perm[k];
		int r = devwl_policy_rmdir(p, paths[i]);
		if (i % 50 == 0 && r == -EBUSY)
			continue;
		assert_int_equal(r, 0);
		gone[i] = true;
		deleted++;
	}
	/* Then some parents whose children all went. */
	for (unsigned i = 0; i < N; i += 50) {
		bool empty = true;
		for (unsigned c = i + 1; c < i + 50; c++)
			empty &= gone[c];
		if (!gone[i] && empty) {
			assert_int_equal(devwl_policy_rmdir(p, paths[i]), 0);
			gone[i] = true;
			deleted++;
		}
	}
	assert_true(deleted >= N / 2);
	assert_int_equal(devwl_policy_count(p), N + 1 - deleted);
	for (unsigned i = 0; i < N; i++) {
		struct devwl_node *n = devwl_policy_find(p, paths[i]);
		if (gone[i] && n)
			fail_msg("%s found after rmdir", paths[i]);
		if (!gone[i] && (!n || strcmp(devwl_node_path(n), paths[i]) != 0))
			fail_msg("%s not found", paths[i]);
	}
	assert_null(devwl_policy_find(p, "/p100"));
	/* Re-create what went; everything is found again. */
	for (unsigned i = 0; i < N; i++)
		if (gone[i])
			assert_int_equal(devwl_policy_mkdir(p, paths[i]), 0);
	for (unsigned i = 0; i < N; i++)
		assert_non_null(devwl_policy_find(p, paths[i]));
	assert_int_equal(devwl_policy_count(p), N + 1);
	devwl_policy_free(p);
}

static struct devwl_rule random_big_rule(void)
{
	struct devwl_rule r = {.type = rndn(2) ? C : B};

	r.major = rndn(50) == 0 ? ANY : rndn(200);
	r.minor = rndn(50) == 0 ? ANY : rndn(100);
	r.access = (uint8_t)(1 + rndn(7));
	return r;
}

static void compare_big(struct devwl_policy *p, struct model *m, const char *path, unsigned queries,
			const char *when)
{
	int i = model_find(m, path);
	struct devwl_node *n = devwl_policy_find(p, path);
	char *want = model_listing(&m->v[i], true), *got = NULL;

	assert_int_equal(devwl_node_show(n, &got), 0);
	if (strcmp(want, got) != 0)
		fail_msg("%s %s: listings differ (%zu vs %zu bytes)", when, path, strlen(got),
			 strlen(want));
	free(want);
	free(got);
	assert_int_equal(devwl_node_exception_count(n), m->v[i].n);
	for (unsigned q = 0; q < queries; q++) {
		int type = rndn(2) ? C : B;
		uint32_t major = rndn(40) == 0 ? ANY : rndn(210);
		uint32_t minor = rndn(40) == 0 ? ANY : rndn(105);
		int access = (int)rndn(8);
		int lw = devwl_node_check(n, type, major, minor, access);
		int mw = model_check(&m->v[i], type, major, minor, access);
		if (lw != mw)
			fail_msg("%s %s: check %c %u:%u %d: lib %d model %d", when, path,
				 type == C ? 'c' : 'b', major, minor, access, lw, mw);
	}
}

/* A node with 10,000 exceptions goes through the exception index: decisions must not
 * change, before and after deletions, for grants (DENY) and denials (ALLOW). */
static void test_node_check_10000_exceptions(void **state)
{
	enum { QUERIES = 20000 };
	static const char *const paths[] = {"/big", "/big/kid", "/wide", NULL};
	struct devwl_policy *p = policy_with(paths);
	struct model m;

	(void)state;
	model_init(&m);
	for (size_t i = 0; paths[i]; i++)
		assert_int_equal(model_mkdir(&m, paths[i]), 0);
	rng_state = 10000;
	assert_int_equal(devwl_policy_rmdir(p, "/big/kid"), 0);
	assert_int_equal(model_rmdir(&m, "/big/kid"), 0);
	assert_int_equal(wr(p, "/big", DEVWL_FILE_DENY, "a"), 0);
	assert_int_equal(model_update(&m, model_find(&m, "/big"), DEVWL_FILE_DENY,
				      &(struct devwl_rule){.type = DEVWL_DEV_ALL}),
			 0);
	while (m.v[model_find(&m, "/big")].n < 10000) {
		struct devwl_rule r = random_big_rule();
		assert_int_equal(
			devwl_node_update(devwl_policy_find(p, "/big"), DEVWL_FILE_ALLOW, &r),
			model_update(&m, model_find(&m, "/big"), DEVWL_FILE_ALLOW, &r));
	}
	while (m.v[model_find(&m, "/wide")].n < 10000) {
		struct devwl_rule r = random_big_rule();
		assert_int_equal(
			devwl_node_update(devwl_policy_find(p, "/wide"), DEVWL_FILE_DENY, &r),
			model_update(&m, model_find(&m, "/wide"), DEVWL_FILE_DENY, &r));
	}
	assert_int_equal(devwl_node_exception_count(devwl_policy_find(p, "/big")), 10000);
	compare_big(p, &m, "/big", QUERIES, "filled");
	compare_big(p, &m, "/wide", QUERIES, "filled");

	/* Delete some: exact keys (part or all of their bits) and misses. */
	for (unsigned k = 0; k < 4000; k++) {
		const struct mnode *b = &m.v[model_find(&m, "/big")];
		struct devwl_rule r = rndn(4) ? b->ex[rndn((unsigned)b->n)] : random_big_rule();
		if (rndn(2))
			r.access = (uint8_t)(1 + rndn(7));
		assert_int_equal(
			devwl_node_update(devwl_policy_find(p, "/big"), DEVWL_FILE_DENY, &r),
			model_update(&m, model_find(&m, "/big"), DEVWL_FILE_DENY, &r));
	}
	for (unsigned k = 0; k < 4000; k++) {
		const struct mnode *w = &m.v[model_find(&m, "/wide")];
		struct devwl_rule r = rndn(4) ? w->ex[rndn((unsigned)w->n)] : random_big_rule();
		if (rndn(2))
			r.access = (uint8_t)(1 + rndn(7));
		assert_int_equal(
			devwl_node_update(devwl_policy_find(p, "/wide"), DEVWL_FILE_ALLOW, &r),
			model_update(&m, model_find(&m, "/wide"), DEVWL_FILE_ALLOW, &r));
	}
	assert_true(m.v[model_find(&m, "/big")].n < 10000);
	assert_true(m.v[model_find(&m, "/wide")].n < 10000);
	compare_big(p, &m, "/big", QUERIES, "after deletions");
	compare_big(p, &m, "/wide", QUERIES, "after deletions");

	/* A child copies them all; each removal on the parent then revalidates them all
	 * (against the parent's index). The naive model is quadratic here: keep it short. */
	assert_int_equal(devwl_policy_mkdir(p, "/big/kid"), 0);
	assert_int_equal(model_mkdir(&m, "/big/kid"), 0);
	compare_big(p, &m, "/big/kid", QUERIES, "copied");
	for (unsigned k = 0; k < 20; k++) {
		const struct mnode *b = &m.v[model_find(&m, "/big")];
		struct devwl_rule r = b->ex[rndn((unsigned)b->n)];
		if (k % 5 == 0)
			r.major = ANY; /* removes nothing exact, but revalidation may drop some */
		assert_int_equal(
			devwl_node_update(devwl_policy_find(p, "/big"), DEVWL_FILE_DENY, &r),
			model_update(&m, model_find(&m, "/big"), DEVWL_FILE_DENY, &r));
	}
	compare_big(p, &m, "/big", QUERIES, "after revalidation");
	compare_big(p, &m, "/big/kid", QUERIES, "after revalidation");
	/* And refill: the index must take new keys after compaction. */
	for (unsigned k = 0; k < 3000; k++) {
		struct devwl_rule r = random_big_rule();
		assert_int_equal(
			devwl_node_update(devwl_policy_find(p, "/big"), DEVWL_FILE_ALLOW, &r),
			model_update(&m, model_find(&m, "/big"), DEVWL_FILE_ALLOW, &r));
	}
	compare_big(p, &m, "/big", QUERIES, "refilled");
	model_free(&m);
	devwl_policy_free(p);
}

/* ---- the oracle: random sequences against the model ------------------------------------ */

static void test_policy_random_vs_model_seed1(void **state)
{
	(void)state;
	run_random(1, 3000);
}

static void test_policy_random_vs_model_seed2(void **state)
{
	(void)state;
	run_random(2, 3000);
}

static void test_policy_random_vs_model_seed3(void **state)
{
	(void)state;
	run_random(0xdecafbadULL, 3000);
}

static void test_policy_random_vs_model_seed4(void **state)
{
	(void)state;
	run_random(424242, 3000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_update_add_ors_in_place),
		cmocka_unit_test(test_node_update_remove_exact_only),
		cmocka_unit_test(test_node_update_all),
		cmocka_unit_test(test_node_update_allow_on_deny_under_deny_parent),
		cmocka_unit_test(test_node_update_allow_on_deny_under_allow_parent),
		cmocka_unit_test(test_node_update_allow_on_allow_node),
		cmocka_unit_test(test_node_update_deny_propagates_preorder),
		cmocka_unit_test(test_node_update_grants_never_propagate),
		cmocka_unit_test(test_node_check_partial_and_complete),
		cmocka_unit_test(test_node_list_and_show_bytes),
		cmocka_unit_test(test_policy_mkdir_rmdir_errno),
		cmocka_unit_test(test_policy_find_after_many_rmdir),
		cmocka_unit_test(test_node_check_10000_exceptions),
		cmocka_unit_test(test_policy_random_vs_model_seed1),
		cmocka_unit_test(test_policy_random_vs_model_seed2),
		cmocka_unit_test(test_policy_random_vs_model_seed3),
		cmocka_unit_test(test_policy_random_vs_model_seed4),
	};

	/* DEVWL_TEST_FILTER=test_node_* runs a subset. */
	if (getenv("DEVWL_TEST_FILTER"))
		cmocka_set_test_filter(getenv("DEVWL_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
