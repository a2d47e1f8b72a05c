/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whose container a name means. devwld serves runtimes of several uids (devwld(8) USERS),
 * and a container is its runtime's uid and its id (store.c): a user of --allow-uid picks
 * its ids freely, so it can take root's short id, or an id of which root's short id is a
 * prefix. A name given to devwlctl is therefore looked for among one owner's containers
 * only: root's unless the operator names another (--owner), never every owner's, where the
 * first or the only match could be the user's. Kubernetes names come from root runtimes
 * alone (store.c), so NAMESPACE/POD/CONTAINER is a kubelet's word, not a user's; so are
 * the names podman and nerdctl give (rtname.h).
 *
 * Every verb that takes a container comes here: attach and detach (attach.c) and the
 * filter of devwlctl events (control.c, once, when the stream starts). A name that names
 * nothing is answered with the owner's containers near it, as the operator may name them
 * (resolve_nearness()): the same owner's only, so the answer tells no more of another
 * owner than the exact match of a name it already says (--owner).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "devwld.h"
#include "list.h"
#include "resolve.h"
#include "util.h"

/* Candidates named when a name is ambiguous, and near matches when it names none. */
#define RESOLVE_SHOWN 3

/* name (of length n) is c's id, a prefix of it, c's Kubernetes name or its runtime's. */
static bool names(const struct container *c, const char *name, size_t n)
{
	return !strncmp(c->id, name, n) || (c->k8s_name && !strcmp(c->k8s_name, name)) ||
	       (c->rt_name && !strcmp(c->rt_name, name));
}

static unsigned char fold(char ch)
{
	unsigned char u = (unsigned char)ch;

	return u >= 'A' && u <= 'Z' ? (unsigned char)(u - 'A' + 'a') : u;
}

static unsigned int min3(unsigned int a, unsigned int b, unsigned int c)
{
	unsigned int m = a < b ? a : b;

	return m < c ? m : c;
}

unsigned int resolve_distance(const char *a, size_t na, const char *b, size_t nb, unsigned int max)
{
	/* Rows i-2, i-1 and i of the table, at i % 3: a transposition looks two back. Only
	 * the band |i - j| <= max is computed (a cell outside it is more than max), and the
	 * cell just past each end of it is "more than max" for the next row to read. */
	unsigned int rows[3][RESOLVE_NEAR_MAX + 2];
	const unsigned int far = max + 1;

	if (na > RESOLVE_NEAR_MAX || nb > RESOLVE_NEAR_MAX || max >= RESOLVE_NEAR_MAX)
		return UINT_MAX;
	if ((na > nb ? na - nb : nb - na) > max)
		return far;
	for (size_t j = 0; j <= nb && j <= max + 1; j++)
		rows[0][j] = j <= max ? (unsigned int)j : far;
	for (size_t i = 1; i <= na; i++) {
		unsigned int *row = rows[i % 3], *up = rows[(i - 1) % 3], *two = rows[(i + 1) % 3];
		size_t lo = i > max ? i - max : 1, hi = i + max < nb ? i + max : nb;

		row[lo - 1] = lo == 1 && i <= max ? (unsigned int)i : far;
		for (size_t j = lo; j <= hi; j++) {
			unsigned int cost = fold(a[i - 1]) != fold(b[j - 1]);

			row[j] = min3(up[j] + 1, row[j - 1] + 1, up[j - 1] + cost);
			if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
			    fold(a[i - 2]) == fold(b[j - 1]) && two[j - 2] + 1 < row[j])
				row[j] = two[j - 2] + 1;
			if (row[j] > far)
				row[j] = far;
		}
		if (hi < nb)
			row[hi + 1] = far;
	}
	return rows[na % 3][nb];
}

/* How near name (of length n) is to the name word (0: not near; 1 nearest, as
 * resolve_nearness()). */
static unsigned int near_name(const char *word, const char *name, size_t n)
{
	size_t nw;
	unsigned int dist;

	if (!word)
		return 0;
	nw = strlen(word);
	dist = resolve_distance(name, n, word, nw, 2);
	if (dist <= (n <= 5 ? 1u : 2u))
		return 1 + dist;
	if (n >= 3 && n < nw && !strncasecmp(word, name, n))
		return 3;
	return 0;
}

/* How near name is to the start of id (as resolve_nearness()). */
static unsigned int near_id(const char *id, const char *name, size_t n)
{
	size_t nid = strlen(id);
	unsigned int best = UINT_MAX;

	if (n <= nid && !strncasecmp(id, name, n))
		return 1;
	if (n < 4)
		return 0;
	/* One edit: a character wrong, missing or extra, against as much of the id. */
	for (size_t k = n - 1; k <= n + 1 && k <= nid; k++) {
		unsigned int dist = resolve_distance(name, n, id, k, 1);

		if (dist < best)
			best = dist;
	}
	return best <= 1 ? 2 : 0;
}

unsigned int resolve_nearness(const struct container *c, const char *name)
{
	size_t n = strlen(name);
	unsigned int best = 0;
	unsigned int r[] = {near_id(c->id, name, n), near_name(c->rt_name, name, n),
			    near_name(c->k8s_name, name, n)};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (r[i] && (!best || r[i] < best))
			best = r[i];
	return best;
}

/* Append c to list as the caller may name it: "NAME (ID...)", or "ID..." alone. */
static void append_shown(char *list, size_t size, const struct container *c, bool first)
{
	size_t used = strlen(list);
	const char *shown = resolve_shown_name(c);
	const char *more = strlen(c->id) > 12 ? "..." : "";

	if (shown)
		snprintf(list + used, size - used, "%s%.64s (%.12s%s)", first ? "" : ", ", shown,
			 c->id, more);
	else
		snprintf(list + used, size - used, "%s%.12s%s", first ? "" : ", ", c->id, more);
}

/* Keep c among the RESOLVE_SHOWN nearest so far (rank 0: not near), nearest first, the
 * earlier of equals first. */
static void near_keep(struct container **near, unsigned int *rank, size_t *nnear,
		      struct container *c, unsigned int r)
{
	size_t i = *nnear;

	if (!r || (i == RESOLVE_SHOWN && rank[i - 1] <= r))
		return;
	if (i == RESOLVE_SHOWN)
		i--;
	else
		(*nnear)++;
	for (; i > 0 && rank[i - 1] > r; i--) {
		near[i] = near[i - 1];
		rank[i] = rank[i - 1];
	}
	near[i] = c;
	rank[i] = r;
}

int resolve_owned_container(struct devwld *d, uid_t owner, const char *name,
			    struct container **ret_c, struct devwl_error *err)
{
	struct container *cand[RESOLVE_SHOWN] = {NULL}, *near[RESOLVE_SHOWN] = {NULL};
	unsigned int near_rank[RESOLVE_SHOWN] = {0};
	size_t n = strlen(name), ncand = 0, nnear = 0;
	bool elsewhere = false;
	uid_t other = 0;
	char list[RESOLVE_SHOWN * 96] = "", guess[RESOLVE_SHOWN * 96] = "";

	if (!n)
		return devwl_error_set(err, -EINVAL, 0, "no container named");
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		struct container *c = container_of(l, struct container, link);

		if (c->owner_uid != owner) {
			if (!elsewhere && names(c, name, n)) {
				elsewhere = true;
				other = c->owner_uid;
			}
			continue;
		}
		/* A full id is one container whatever else it prefixes, as with Docker. */
		if (!strcmp(c->id, name)) {
			*ret_c = c;
			return 0;
		}
		if (names(c, name, n)) {
			if (ncand < RESOLVE_SHOWN)
				cand[ncand] = c;
			ncand++;
		} else if (!ncand) {
			near_keep(near, near_rank, &nnear, c, resolve_nearness(c, name));
		}
	}
	if (ncand == 1) {
		*ret_c = cand[0];
		return 0;
	}
	if (!ncand) {
		if (elsewhere)
			snprintf(list, sizeof(list), "; uid %u has one: name it with --owner %u",
				 (unsigned int)other, (unsigned int)other);
		for (size_t i = 0; i < nnear; i++)
			append_shown(guess, sizeof(guess), near[i], !i);
		return devwl_error_set(
			err, -ENOENT, 0,
			"no container \"%.64s\" of uid %u%s%s%s (devwlctl containers lists "
			"them%s)",
			name, (unsigned int)owner, nnear ? ": did you mean " : "", guess,
			nnear ? "?" : "", list);
	}
	for (size_t i = 0; i < ncand && i < RESOLVE_SHOWN; i++) {
		size_t used = strlen(list);

		snprintf(list + used, sizeof(list) - used, "%s%.64s (uid %u)", i ? ", " : "",
			 cand[i]->id, (unsigned int)cand[i]->owner_uid);
	}
	return devwl_error_set(
		err, -EINVAL, 0,
		"\"%.64s\" names %zu containers of uid %u: %s%s; give more of the id", name, ncand,
		(unsigned int)owner, list, ncand > RESOLVE_SHOWN ? ", ..." : "");
}

const char *resolve_shown_name(const struct container *c)
{
	return c->rt_name ? c->rt_name : c->k8s_name;
}

bool resolve_full_id(const char *name)
{
	size_t n = strspn(name, "0123456789abcdef");

	return n == 64 && !name[n];
}
