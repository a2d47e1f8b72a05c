/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device nodes devwl made for a workload on nodev mounts (the node gate's GATE_NODEV),
 * which nobody but devwl opens: the handler opens them for the caller as its policy says
 * (DESIGN.md, "nodev mounts"). It is a fact about the workload, not about the thread that
 * made the node, so it is one object every handler serving the workload shares, and that
 * the embedder can save across a restart. A ring: the oldest is forgotten first, so a
 * workload making nodes without end costs bounded memory (an old node then stops opening).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "devwl.h"
#include "util.h"

#define NODESET_MAX 1024

struct nodeset_entry {
	uint64_t dev, ino;
};

struct devwl_nodeset {
	atomic_uint refs;
	pthread_mutex_t lock;
	size_t next, count;
	struct nodeset_entry e[NODESET_MAX];
};

DEVWL_EXPORT struct devwl_nodeset *devwl_nodeset_new(void)
{
	struct devwl_nodeset *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	atomic_init(&s->refs, 1);
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

DEVWL_EXPORT struct devwl_nodeset *devwl_nodeset_ref(struct devwl_nodeset *s)
{
	if (s)
		atomic_fetch_add(&s->refs, 1);
	return s;
}

DEVWL_EXPORT void devwl_nodeset_unref(struct devwl_nodeset *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
		pthread_mutex_destroy(&s->lock);
		free(s);
	}
}

/* Under s->lock: its index, or -1. */
static ssize_t find(const struct devwl_nodeset *s, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < s->count; i++)
		if (s->e[i].dev == dev && s->e[i].ino == ino)
			return (ssize_t)i;
	return -1;
}

DEVWL_EXPORT int devwl_nodeset_add(struct devwl_nodeset *s, uint64_t dev, uint64_t ino)
{
	if (!s || ino == 0)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (find(s, dev, ino) < 0) {
		s->e[s->next] = (struct nodeset_entry){.dev = dev, .ino = ino};
		s->next = (s->next + 1) % NODESET_MAX;
		if (s->count < NODESET_MAX)
			s->count++;
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

DEVWL_EXPORT int devwl_nodeset_remove(struct devwl_nodeset *s, uint64_t dev, uint64_t ino)
{
	ssize_t i;

	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	i = find(s, dev, ino);
	/* A hole: entries never move, so get() by index stays stable for a saver. */
	if (i >= 0)
		s->e[i] = (struct nodeset_entry){0};
	pthread_mutex_unlock(&s->lock);
	return i >= 0 ? 0 : -ENOENT;
}

DEVWL_EXPORT bool devwl_nodeset_has(struct devwl_nodeset *s, uint64_t dev, uint64_t ino)
{
	bool has = false;

	if (!s || ino == 0)
		return false;
	pthread_mutex_lock(&s->lock);
	has = find(s, dev, ino) >= 0;
	pthread_mutex_unlock(&s->lock);
	return has;
}

DEVWL_EXPORT int devwl_nodeset_get(struct devwl_nodeset *s, size_t i, uint64_t *ret_dev,
				   uint64_t *ret_ino)
{
	int r = -ENOENT;

	if (!s || !ret_dev || !ret_ino)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (i < s->count) {
		*ret_dev = s->e[i].dev;
		*ret_ino = s->e[i].ino;
		r = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}
