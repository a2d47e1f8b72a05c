/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Intrusive doubly linked lists, as the kernel's: a struct list_head inside each item,
 * container_of() back from it to the item. An empty list points at itself.
 */
#ifndef DEVWL_LIST_H
#define DEVWL_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_head {
	struct list_head *next, *prev;
};

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

static inline void list_init(struct list_head *h)
{
	h->next = h->prev = h;
}

static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

/* Unlinked, n is an empty list again: a second list_del() of it does no harm. */
static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list_init(n);
}

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

#endif
