/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A policy change between two opens takes effect at once: the first open of the zero
 * device is granted, the rule is revoked, the second open in the same process is denied;
 * then granted again after a new allow.
 */
#include "livetest.h"

static int stage;

static void hook(struct lt_sup *s, int count)
{
	(void)count;
	if (stage == 0 && s->allowed == 1) {
		lt_sup_rule(s, "deny c 1:5 r");
		stage = 1;
	} else if (stage == 1 && s->denied == 1) {
		lt_sup_rule(s, "allow c 1:5 r");
		stage = 2;
	}
}

int main(void)
{
	struct lt_nodes nodes;
	struct lt_sup s;
	char args[512];
	char *out = NULL;
	const char *want = "ok *read=00000000|EPERM|ok *read=00000000";

	lt_need_root();
	lt_nodes_make(&nodes);
	lt_sup_init(&s, "deny a;allow c 1:5 r");
	s.before_handle = hook;
	snprintf(args, sizeof(args),
		 "open %s/zero rdonly ; open %s/zero rdonly ; open %s/zero rdonly", nodes.dir,
		 nodes.dir, nodes.dir);
	out = lt_probe_run(&s, args);
	LT_CHECK(lt_match(out, want), "want %s\ngot %s", want, out);
	LT_CHECK(stage == 2, "policy hook ran to stage %d", stage);
	free(out);
	lt_sup_free(&s);
	lt_nodes_remove(&nodes);
	return lt_failures ? 1 : 0;
}
