/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: a keeper slot's record (supervisor/format/slotrec.c), as a new worker reads it from
 * the shared table a dead worker wrote: any bytes, at most a slot's worth. Whatever
 * decodes must hold a valid container id and node path and encode back to the very same
 * bytes (one record, one meaning); nothing may be read past the end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allowlist.h"
#include "keeper_table.h"
#include "ocistate.h"
#include "slotrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char again[KEEPER_REC_MAX];
	struct slot_owner_buf b;
	const char *why = NULL;
	ssize_t n;

	if (size > KEEPER_REC_MAX)
		return 0;
	if (slotrec_decode(data, size, &b, &why) < 0) {
		if (!why || !*why)
			abort();
		return 0;
	}
	if (!oci_id_valid(b.owner.id) || devwl_node_path_valid(b.owner.node) < 0 ||
	    b.owner.pid < 0 || b.owner.peer_pid < 0)
		abort();
	n = slotrec_encode(&b.owner, again, sizeof(again));
	if (n < 0 || (size_t)n != size || memcmp(again, data, size))
		abort();
	return 0;
}
