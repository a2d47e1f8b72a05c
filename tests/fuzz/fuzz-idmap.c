/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the uid_map/gid_map reader of devwl_node_place()
 * (lib/place.c, place_idmap_lookup). The input's first line is the id looked up (decimal),
 * the rest the map text. The text comes from the kernel, but a reader that trusts its
 * input's shape is one bug away from reading past it: every text is answered with one of
 * the three results, a failure leaves the output alone, and a final newline more (the
 * kernel ends every line with one) changes nothing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	size_t id_len = nl ? (size_t)(nl - (const char *)data) + 1 : size;
	uint32_t id = 0;
	uint32_t out = 0xdeadbeef, again = 0xdeadbeef;
	char idtext[16] = "";
	char *map = NULL, *map2 = NULL;
	int r, r2;

	memcpy(idtext, data, id_len < sizeof(idtext) ? id_len : sizeof(idtext) - 1);
	id = (uint32_t)strtoul(idtext, NULL, 10);
	map = malloc(size - id_len + 1);
	map2 = malloc(size - id_len + 2);
	check(map && map2);
	memcpy(map, data + id_len, size - id_len);
	map[size - id_len] = '\0';
	r = place_idmap_lookup(map, id, &out);
	check(r == 0 || r == -ENOENT || r == -EINVAL);
	if (r < 0)
		check(out == 0xdeadbeef);

	memcpy(map2, map, size - id_len);
	memcpy(map2 + size - id_len, "\n", 2);
	r2 = place_idmap_lookup(map2, id, &again);
	if (strlen(map) == size - id_len) {
		check(r2 == r);
		check(r < 0 || again == out);
	}
	free(map);
	free(map2);
	return 0;
}
