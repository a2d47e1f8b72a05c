/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A sorted set of strings: the nodes devwld made on demand (policy.c, statefile.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "array.h"
#include "strset.h"

static int strset_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

ssize_t strset_find(const struct strset *s, const char *str)
{
	char *const *hit = s->n ? bsearch(&str, s->v, s->n, sizeof(*s->v), strset_cmp) : NULL;

	return hit ? hit - s->v : -1;
}

int strset_add(struct strset *s, const char *str)
{
	size_t i = 0;

	if (strset_find(s, str) >= 0)
		return 0;
	if (ARRAY_RESERVE(s->v, s->cap, s->n + 1) < 0)
		return -ENOMEM;
	while (i < s->n && strcmp(s->v[i], str) < 0)
		i++;
	memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
	s->v[i] = strdup(str);
	if (!s->v[i]) {
		memmove(s->v + i, s->v + i + 1, (s->n - i) * sizeof(*s->v));
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

void strset_del(struct strset *s, size_t i)
{
	free(s->v[i]);
	memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(*s->v));
	s->n--;
}

void strset_clear(struct strset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct strset){0};
}
