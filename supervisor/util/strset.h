/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A sorted set of strings (strset.c). */
#ifndef DEVWLD_STRSET_H
#define DEVWLD_STRSET_H

#include <stddef.h>
#include <sys/types.h>

struct strset {
	char **v;
	size_t n, cap;
};
/* Add a copy of str (nothing if it is there): 0 or -ENOMEM. */
int strset_add(struct strset *s, const char *str);
/* The index of str, or -1. */
ssize_t strset_find(const struct strset *s, const char *str);
void strset_del(struct strset *s, size_t i);
void strset_clear(struct strset *s);

#endif
