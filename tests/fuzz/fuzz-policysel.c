/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: policysel_extract (common/policysel.c) on arbitrary bytes. Beyond not
 * crashing or leaking: a failure says why; what it returns is as long as the input with
 * every line end in place, differs from it only where blanks replaced text, and every
 * rule it took out is a selector on a node the loaded policy holds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devwl.h"
#include "policysel.h"
#include "selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct devwl_policy *p = NULL;
	struct devwl_error err = {0};
	struct policysel ps = {0};
	char *text = malloc(size + 1), *plain = NULL;
	size_t len;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	len = strlen(text);
	if (policysel_extract(text, "fuzz.json", &plain, &ps, &err) < 0) {
		if (!err.msg[0] || err.code >= 0 || plain || ps.n)
			abort();
		free(text);
		return 0;
	}
	if (strlen(plain) != len)
		abort();
	for (size_t i = 0; i < len; i++)
		if (plain[i] != text[i] && (plain[i] != ' ' || text[i] == '\n' || text[i] == '\r'))
			abort();
	if (!ps.n && strcmp(plain, text))
		abort();
	/* What loads holds the node of every rule taken out: the callers look it up. */
	if (devwl_policy_load_string(plain, "fuzz.json", &p, &err) >= 0) {
		for (size_t i = 0; i < ps.n; i++)
			if (!devwl_policy_find(p, ps.v[i].node) ||
			    !selector_is(ps.v[i].selector, strlen(ps.v[i].selector)) ||
			    !ps.v[i].where[0])
				abort();
		devwl_policy_free(p);
	}
	policysel_clear(&ps);
	free(plain);
	free(text);
	return 0;
}
