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
 * filter of devwlctl events (control.c, once, when the stream starts).
 */
#include <errno.h>
#include <string.h>

#include "devwld.h"
#include "list.h"
#include "resolve.h"
#include "util.h"

/* Candidates named when a name is ambiguous. */
#define RESOLVE_SHOWN 3

/* name (of length n) is c's id, a prefix of it, c's Kubernetes name or its runtime's. */
static bool names(const struct container *c, const char *name, size_t n)
{
	return !strncmp(c->id, name, n) || (c->k8s_name && !strcmp(c->k8s_name, name)) ||
	       (c->rt_name && !strcmp(c->rt_name, name));
}

int resolve_owned_container(struct devwld *d, uid_t owner, const char *name,
			    struct container **ret_c, struct devwl_error *err)
{
	struct container *cand[RESOLVE_SHOWN] = {NULL};
	size_t n = strlen(name), ncand = 0;
	bool elsewhere = false;
	uid_t other = 0;
	char list[RESOLVE_SHOWN * 96] = "";

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
		return devwl_error_set(
			err, -ENOENT, 0,
			"no container \"%.64s\" of uid %u (devwlctl containers lists "
			"them%s)",
			name, (unsigned int)owner, list);
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
