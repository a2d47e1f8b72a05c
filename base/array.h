/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A growable array: room by doubling, the size arithmetic checked once (base/array.c). */
#ifndef DEVWL_ARRAY_H
#define DEVWL_ARRAY_H

#include <stddef.h>

/*
 * Make room for want items of size bytes in the heap array whose address is items (a
 * pointer to the array pointer, NULL while empty) and whose capacity is *cap: the
 * capacity doubles (from 8) until it holds want. On failure the array and *cap are as
 * they were. 0, or -ENOMEM (also when want * size does not fit a size_t).
 */
int devwl_array_reserve(void *items, size_t *cap, size_t want, size_t size);

/* devwl_array_reserve() for an array pointer v: ARRAY_RESERVE(l->v, l->cap, l->n + 1). */
#define ARRAY_RESERVE(v, cap, want) devwl_array_reserve(&(v), &(cap), (want), sizeof(*(v)))

#endif
