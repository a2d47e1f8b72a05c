/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small helpers on device rules that every part shares (access.c): the access letters
 * ("rwm"), read and written one way everywhere, and the order of rule keys. */
#ifndef DEVWL_ACCESS_H
#define DEVWL_ACCESS_H

#include <stddef.h>
#include <stdint.h>

/* s[0..len): r, w and m, each at most once, in any order, at least one: DEVWL_ACC_* bits
 * in *ret, or -EINVAL. */
int devwl_access_parse(const char *s, size_t len, uint8_t *ret);
/* The bits as "rwm" (in that order; "" for none) in buf; returns buf. */
char *devwl_access_text(unsigned int access, char buf[static 4]);

/* qsort/bsearch order of struct devwl_rule by key: type, major, minor (not access). */
int devwl_rule_key_cmp(const void *a, const void *b);

#endif
