/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: the state file a new worker reads (supervisor/format/statefile.c). Whatever the
 * bytes, parse_state() takes them whole or refuses them with a reason; what it takes
 * holds only valid ids, nodes and slots, and written out again (state_text()) reads
 * back to the same thing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devwld.h"
#include "keeper_table.h"
#include "nodepath.h"
#include "state.h"
#include "statefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct saved *s)
{
	if (!s->policy)
		abort();
	for (size_t i = 0; i < s->ncontainers; i++) {
		const struct saved_container *c = &s->containers[i];

		if (!oci_id_valid(c->id) || devwl_node_path_valid(c->node) < 0)
			abort();
		for (size_t j = 0; j < c->nprocs; j++)
			if (c->procs[j].slot >= KEEPER_SLOTS_MAX || c->procs[j].pid < 0 ||
			    c->procs[j].peer_pid < 0)
				abort();
	}
}

static bool same(const struct saved *a, const struct saved *b)
{
	char *pa = NULL, *pb = NULL;
	bool eq;

	if (devwl_policy_to_string(a->policy, &pa) < 0 ||
	    devwl_policy_to_string(b->policy, &pb) < 0)
		abort();
	eq = !strcmp(pa, pb) && !a->policy_text == !b->policy_text &&
	     (!a->policy_text || !strcmp(a->policy_text, b->policy_text)) &&
	     a->ondemand.n == b->ondemand.n && a->edits.n == b->edits.n &&
	     a->ncontainers == b->ncontainers;
	free(pa);
	free(pb);
	for (size_t i = 0; eq && i < a->ondemand.n; i++)
		eq = !strcmp(a->ondemand.v[i], b->ondemand.v[i]);
	for (size_t i = 0; eq && i < a->edits.n; i++)
		eq = a->edits.v[i].len == b->edits.v[i].len &&
		     !memcmp(a->edits.v[i].line, b->edits.v[i].line, a->edits.v[i].len);
	for (size_t i = 0; eq && i < a->ncontainers; i++) {
		const struct saved_container *x = &a->containers[i], *y = &b->containers[i];

		eq = !strcmp(x->id, y->id) && !strcmp(x->node, y->node) &&
		     x->created == y->created && x->owner == y->owner && x->nprocs == y->nprocs &&
		     !memcmp(x->procs, y->procs, x->nprocs * sizeof(*x->procs));
	}
	return eq;
}

/* What a daemon that restored s would write: the structs state_text() reads. */
static char *rewrite(struct saved *s)
{
	struct devwld *d = calloc(1, sizeof(*d));
	struct container *c = calloc(s->ncontainers + 1, sizeof(*c));
	size_t nprocs = 0, k = 0;
	struct cproc *p;
	char *text = NULL;

	for (size_t i = 0; i < s->ncontainers; i++)
		nprocs += s->containers[i].nprocs;
	p = calloc(nprocs + 1, sizeof(*p));
	if (!d || !c || !p)
		abort();
	d->policy = s->policy;
	d->policy_text = s->policy_text;
	d->ondemand = s->ondemand;
	d->edits = s->edits;
	list_init(&d->containers);
	for (size_t i = 0; i < s->ncontainers; i++) {
		c[i].id = s->containers[i].id;
		c[i].node_path = s->containers[i].node;
		c[i].created_node = s->containers[i].created;
		c[i].owner_uid = s->containers[i].owner;
		list_init(&c[i].procs);
		list_add_tail(&c[i].link, &d->containers);
		for (size_t j = 0; j < s->containers[i].nprocs; j++, k++) {
			const struct saved_proc *sp = &s->containers[i].procs[j];

			p[k] = (struct cproc){.has_slot = true,
					      .slot = sp->slot,
					      .tag = sp->tag,
					      .pid = sp->pid,
					      .peer_uid = sp->peer_uid,
					      .peer_pid = sp->peer_pid};
			list_add_tail(&p[k].link, &c[i].procs);
		}
	}
	if (state_text(d, &text) < 0)
		text = NULL; /* out of memory only */
	free(p);
	free(c);
	free(d);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct saved s = {0}, again = {0};
	struct devwl_error err = {0};
	char *text, *out;
	int r;

	/* state.c reads at most STATE_TEXT_MAX and refuses a NUL byte before this. */
	if (size > 1 << 20 || memchr(data, '\0', size))
		return 0;
	text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	r = parse_state("state.json", text, &s, &err);
	free(text);
	if (r < 0) {
		if (r != -ENOMEM && !err.msg[0])
			abort();
		saved_clear(&s);
		return 0;
	}
	check(&s);
	out = rewrite(&s);
	if (out) {
		if (parse_state("state.json", out, &again, &err) < 0 || !same(&s, &again))
			abort();
		free(out);
	}
	saved_clear(&again);
	saved_clear(&s);
	return 0;
}
