/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: devwl_policy_load_string on arbitrary bytes. Beyond not crashing or
 * leaking, whatever loads must save, and what is saved must load back to the same
 * devices.list on every node.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devwl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct cmp {
	const struct devwl_policy *other;
};

static int same_list(struct devwl_node *a, void *userdata)
{
	const struct cmp *c = userdata;
	const struct devwl_node *b = devwl_policy_find(c->other, devwl_node_path(a));
	char *la = NULL, *lb = NULL;

	if (!b || devwl_node_list(a, &la) < 0 || devwl_node_list(b, &lb) < 0 || strcmp(la, lb))
		abort();
	free(la);
	free(lb);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct devwl_policy *p = NULL, *q = NULL;
	struct devwl_error err = {0};
	char *text = malloc(size + 1), *saved = NULL;
	struct cmp c;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (devwl_policy_load_string(text, "fuzz.json", &p, &err) < 0) {
		/* Every failure says what went wrong. */
		if (!err.msg[0] || err.code >= 0)
			abort();
		free(text);
		return 0;
	}
	if (devwl_policy_to_string(p, &saved) < 0)
		abort();
	if (devwl_policy_load_string(saved, "saved.json", &q, &err) < 0) {
		fprintf(stderr, "saved policy does not load: %s\n%s", err.msg, saved);
		abort();
	}
	if (devwl_policy_count(p) != devwl_policy_count(q))
		abort();
	c.other = q;
	devwl_policy_foreach(p, same_list, &c);
	devwl_policy_free(p);
	devwl_policy_free(q);
	free(saved);
	free(text);
	return 0;
}
