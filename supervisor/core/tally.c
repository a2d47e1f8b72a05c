/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decisions counted as the metrics show them (front/metrics.c): by the subtree of the
 * container's node (its first --metrics-depth components, so the label's values are
 * few: "/k8s/prod", never a container's own node), the syscall and the verdict; and the
 * handling time in fixed buckets. Both under the audit's lock, without an allocation but
 * for a series seen for the first time; the series are bounded, past the bound every new
 * subtree counts as "other". A subtree never names a container (its id cuts it short),
 * and a container's own node's series go with it (tally_forget()): the bound holds the
 * host's subtrees, not a history of containers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "audit.h"
#include "util.h"

const double audit_le_seconds[AUDIT_LE_N] = {
	1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 1e-2, 1e-1, 1, 10,
};

/* Does the component comp[0..n) name the container of id? Ids as short as a word could
 * be part of any name: below 12 characters only the whole component counts. */
static bool names_container(const char *comp, size_t n, const char *id)
{
	size_t idn = id ? strlen(id) : 0;

	if (!idn || idn > n)
		return false;
	if (idn == n)
		return !memcmp(comp, id, n);
	return idn >= 12 && memmem(comp, n, id, idn);
}

size_t tally_subtree_len(const char *path, unsigned int depth, const char *container)
{
	size_t i = 0;

	for (unsigned int k = 0; k < depth && path[i] == '/' && path[i + 1]; k++) {
		size_t n = strcspn(path + i + 1, "/");

		/* The default template's /containers/{id}: "/containers", not one series per
		 * container (--metrics-containers is where ids are wanted). */
		if (names_container(path + i + 1, n, container))
			break;
		i += 1 + n;
	}
	return i ? i : 1;
}

static struct audit_series *series_of(struct audit *a, const char *path, size_t len,
				      const struct devwl_event *ev)
{
	struct audit_series *s;

	for (size_t i = 0; i < a->nseries; i++) {
		s = &a->series[i];
		if (s->verdict == ev->verdict && !strcmp(s->syscall, ev->syscall) &&
		    !strncmp(s->subtree, path, len) && !s->subtree[len])
			return s;
	}
	/* "other" has room of its own beyond the bound: one per syscall and verdict. */
	if (a->nseries >= AUDIT_SERIES_MAX + (strcmp(path, "other") ? 0 : 64))
		return NULL;
	if (ARRAY_RESERVE(a->series, a->series_cap, a->nseries + 1) < 0)
		return NULL;
	s = &a->series[a->nseries];
	*s = (struct audit_series){
		.subtree = strndup(path, len), .syscall = ev->syscall, .verdict = ev->verdict};
	if (!s->subtree)
		return NULL;
	a->nseries++;
	return s;
}

void tally_event(struct audit *a, const char *node_path, const char *container,
		 const struct devwl_event *ev)
{
	double secs = (double)ev->handling_ns / 1e9;
	const char *path = node_path && node_path[0] == '/' ? node_path : "/";
	struct audit_series *s;
	size_t len = tally_subtree_len(path, a->depth, container);

	a->sum_ns += ev->handling_ns;
	for (unsigned int i = 0; i < AUDIT_LE_N; i++)
		if (secs <= audit_le_seconds[i]) {
			a->le[i]++;
			break;
		}
	if (!ev->syscall)
		return;
	s = series_of(a, path, len, ev);
	/* No room, or no memory: the series "other" of this syscall and verdict. */
	if (!s)
		s = series_of(a, "other", strlen("other"), ev);
	if (s)
		s->n++;
}

void tally_forget(struct audit *a, const char *path)
{
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->nseries;) {
		if (strcmp(a->series[i].subtree, path)) {
			i++;
			continue;
		}
		free(a->series[i].subtree);
		a->series[i] = a->series[--a->nseries];
	}
	pthread_mutex_unlock(&a->lock);
}

void tally_clear(struct audit *a)
{
	for (size_t i = 0; i < a->nseries; i++)
		free(a->series[i].subtree);
	free(a->series);
	a->series = NULL;
	a->nseries = a->series_cap = 0;
}
