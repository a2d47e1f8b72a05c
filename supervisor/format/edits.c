/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The devwlctl changes (mkdir, rmdir, allow, deny, mknod_needs_cap, learn, unbind) made since the
 * policy file was loaded, in order, as the control lines that made them. A reload, an
 * automatic one included, and a start that finds the file changed apply the file and
 * then these again (policy.c), so a `devwlctl deny` is never silently undone by an
 * unrelated change of the file; `devwlctl reset` drops them (devwld(8) RELOAD).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "ctlverb.h"
#include "array.h"
#include "edits.h"
#include "util.h"

bool edit_is_change(const char *line, size_t len)
{
	size_t a = 0;
	enum ctl_verb v = ctl_verb_of(line, len, &a);

	return ctl_verb_fits(v, a, len) && ctl_verbs[v].flags & CTLV_EDIT;
}

int edit_target(const char *line, size_t len, char *buf, size_t size)
{
	const char *sp = memchr(line, ' ', len);
	const char *end;
	size_t n;

	if (!sp)
		return -EINVAL;
	sp++;
	end = memchr(sp, ' ', len - (size_t)(sp - line));
	n = end ? (size_t)(end - sp) : len - (size_t)(sp - line);
	if (n == 0 || n >= size || memchr(sp, '\0', n))
		return -EINVAL;
	memcpy(buf, sp, n);
	buf[n] = '\0';
	return 0;
}

/* A write of one plain rule (not "a", not a device name) to one node: what folds. */
struct write {
	enum devwl_file file;
	char node[4096];
	struct devwl_rule rule;
};

/* Is line such a write? A line it cannot read so is simply never folded. */
static bool write_of(const char *line, size_t len, struct write *w)
{
	size_t at;

	if (len > 6 && !memcmp(line, "allow ", 6)) {
		w->file = DEVWL_FILE_ALLOW;
		at = 6;
	} else if (len > 5 && !memcmp(line, "deny ", 5)) {
		w->file = DEVWL_FILE_DENY;
		at = 5;
	} else {
		return false;
	}
	if (edit_target(line, len, w->node, sizeof(w->node)) < 0)
		return false;
	at += strlen(w->node) + 1;
	return at < len && batch_plain_rule(line + at, len - at, &w->rule) >= 0 &&
	       w->rule.type != DEVWL_DEV_ALL;
}

/* How far back fold() looks: a run can only be this long by writing one device in ever
 * new spellings, and a longer look would cost every change that much parsing. */
#define FOLD_LOOKBACK 64

/*
 * Writes to one device of one node touch only that device's exception and, for a deny,
 * take the same bits from the descendants: each sets or clears its access bits whatever
 * was there, and whether an allow is refused depends on the parent alone. So within a
 * run of such writes at the end of the list, an earlier copy of the new write changes
 * nothing the new one leaves standing, and it goes: a device flipped between allowed
 * and denied a million times keeps two lines, not a million (tests/unit/test-edits.c
 * checks that the replays agree).
 */
static void fold(struct edits *e, const char *line, size_t len)
{
	struct write new, old;

	if (!write_of(line, len, &new))
		return;
	for (size_t i = e->n; i-- > 0 && e->n - i <= FOLD_LOOKBACK;) {
		if (!write_of(e->v[i].line, e->v[i].len, &old) || strcmp(old.node, new.node) ||
		    old.rule.type != new.rule.type || old.rule.major != new.rule.major ||
		    old.rule.minor != new.rule.minor)
			return;
		if (old.file == new.file && old.rule.access == new.rule.access) {
			free(e->v[i].line);
			memmove(&e->v[i], &e->v[i + 1], (e->n - i - 1) * sizeof(*e->v));
			e->n--;
			return;
		}
	}
}

static bool is_learn(const char *line, size_t len)
{
	size_t a = 0;

	return ctl_verb_of(line, len, &a) == CTL_LEARN;
}

int edits_add(struct edits *e, const char *line, size_t len)
{
	char *copy;

	/* Room first: a change that cannot be kept leaves the list as it was. */
	if (ARRAY_RESERVE(e->v, e->size, e->n + 1) < 0)
		return -ENOMEM;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	fold(e, line, len);
	if (e->n >= EDITS_MAX) {
		free(copy);
		return -ENOSPC;
	}
	memcpy(copy, line, len);
	copy[len] = '\0';
	e->v[e->n++] = (struct edit){.line = copy, .len = len};
	e->learns += is_learn(line, len);
	return 0;
}

void edits_clear(struct edits *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i].line);
	free(e->v);
	*e = (struct edits){0};
}

/* path is node or below it. */
static bool at_or_below(const char *path, const char *node)
{
	size_t n = strlen(node);

	return !strncmp(path, node, n) && (path[n] == '\0' || path[n] == '/' || !strcmp(node, "/"));
}

void edits_forget(struct edits *e, const char *path)
{
	size_t kept = 0;

	for (size_t i = 0; i < e->n; i++) {
		char node[4096];

		if (edit_target(e->v[i].line, e->v[i].len, node, sizeof(node)) >= 0 &&
		    at_or_below(node, path)) {
			e->learns -= is_learn(e->v[i].line, e->v[i].len);
			free(e->v[i].line);
		} else
			e->v[kept++] = e->v[i];
	}
	e->n = kept;
}

int edits_learn(const struct edits *e, const char *path)
{
	size_t n = strlen(path);

	/* Asked for every trapped call's container (serve.c): most devwlds never learn. */
	if (!e->learns)
		return -1;
	/* "learn PATH on|off", the last one: a reload replays them in this order. */
	for (size_t i = e->n; i-- > 0;) {
		const char *l = e->v[i].line, *w;
		size_t a = 0, len = e->v[i].len;

		if (ctl_verb_of(l, len, &a) != CTL_LEARN || len - a <= n + 1 ||
		    memcmp(l + a, path, n) || l[a + n] != ' ')
			continue;
		w = l + a + n + 1;
		if (len - a - n - 1 == 2 && !memcmp(w, "on", 2))
			return 1;
		if (len - a - n - 1 == 3 && !memcmp(w, "off", 3))
			return 0;
	}
	return -1;
}

/* A node's flag: "NODE true|false" (mknod_needs_cap), "NODE on|off" (learn: devwld's, not
 * the hierarchy's: set NULL, only checked here; core/learning.c reads the edit itself). */
static int node_flag(struct devwl_policy *policy, const char *verb, const char *yes, const char *no,
		     void (*set)(struct devwl_node *node, bool value), const char *args, size_t len,
		     FILE *out)
{
	_cleanup_free_ char *copy = strndup(args, len);
	struct devwl_node *node;
	char *value;

	if (!copy)
		return batch_reply_error(out, -ENOMEM, "out of memory");
	value = strchr(copy, ' ');
	if (!value || (strcmp(value + 1, yes) && strcmp(value + 1, no)))
		return batch_reply_error(out, -EINVAL, "%s: expects NODE %s|%s, not \"%.200s\"",
					 verb, yes, no, copy);
	*value++ = '\0';
	node = devwl_policy_find(policy, copy);
	if (!node)
		return batch_reply_error(out, -ENOENT, "no node %.200s", copy);
	if (set)
		set(node, !strcmp(value, yes));
	fputs("ok\n", out);
	return 0;
}

int edit_exec(struct devwl_policy *policy, const char *line, size_t len, FILE *out)
{
	size_t a = 0;

	switch (ctl_verb_of(line, len, &a)) {
	case CTL_MKNOD_CAP:
		return node_flag(policy, "mknod_needs_cap", "true", "false",
				 devwl_node_set_mknod_needs_cap, line + a, len - a, out);
	case CTL_LEARN:
		return node_flag(policy, "learn", "on", "off", NULL, line + a, len - a, out);
	default:
		return batch_exec(policy, line, len, out);
	}
}
