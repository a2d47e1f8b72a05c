/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A keeper slot's record (slotrec.h). Native byte order: it is read on the machine that
 * wrote it, by the same binary or, after an upgrade's re-exec, a later one, which the
 * version tells apart. Layout (SLOTREC_HEAD bytes, then the strings):
 *
 *   0 magic "dwlr"   4 version (u16)   6 flags (u16: 1 = node made on demand)
 *   8 pid (s32)     12 peer uid (u32) 16 peer pid (s32)
 *  20 id length (u16)                 22 node path length (u16)
 *  24 id, then node path (no NULs)
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "keeper_table.h"
#include "nodepath.h"
#include "ocistate.h"
#include "slotrec.h"

#define SLOTREC_MAGIC	0x726c7764u /* "dwlr" */
#define SLOTREC_VERSION 1u
#define FLAG_CREATED	1u
#define FLAG_KERNEL	2u

_Static_assert(SLOTREC_NODE_MAX == DEVWL_NODE_PATH_MAX - 1, "the longest node path");
/* Every process devwld attaches has a record: the longest one fits in the keeper's. */
_Static_assert(SLOTREC_MAX <= KEEPER_REC_MAX, "a record fits in a keeper slot");

struct head {
	uint32_t magic;
	uint16_t version, flags;
	int32_t pid;
	uint32_t peer_uid;
	int32_t peer_pid;
	uint16_t id_len, node_len;
};

_Static_assert(sizeof(struct head) == SLOTREC_HEAD, "the header's layout");

ssize_t slotrec_encode(const struct slot_owner *o, void *buf, size_t size)
{
	struct head h = {.magic = SLOTREC_MAGIC, .version = SLOTREC_VERSION};
	size_t id_len, node_len;
	unsigned char *out = buf;

	if (!o->id || !o->node || !*o->id || !*o->node)
		return -EINVAL;
	id_len = strlen(o->id);
	node_len = strlen(o->node);
	if (id_len > SLOTREC_ID_MAX || node_len > SLOTREC_NODE_MAX ||
	    size < SLOTREC_HEAD + id_len + node_len)
		return -ENAMETOOLONG;
	h.flags = (o->created ? FLAG_CREATED : 0) | (o->kernel ? FLAG_KERNEL : 0);
	h.pid = o->pid;
	h.peer_uid = o->peer_uid;
	h.peer_pid = o->peer_pid;
	h.id_len = (uint16_t)id_len;
	h.node_len = (uint16_t)node_len;
	memcpy(out, &h, sizeof(h));
	memcpy(out + SLOTREC_HEAD, o->id, id_len);
	memcpy(out + SLOTREC_HEAD + id_len, o->node, node_len);
	return (ssize_t)(SLOTREC_HEAD + id_len + node_len);
}

static int bad(const char **ret_why, const char *why)
{
	*ret_why = why;
	return -EINVAL;
}

int slotrec_decode(const void *rec, size_t len, struct slot_owner_buf *ret, const char **ret_why)
{
	const unsigned char *in = rec;
	struct head h;

	*ret_why = "";
	if (len < SLOTREC_HEAD)
		return bad(ret_why, "shorter than its header");
	if (len > SLOTREC_MAX)
		return bad(ret_why, "longer than any record");
	memcpy(&h, in, sizeof(h));
	if (h.magic != SLOTREC_MAGIC)
		return bad(ret_why, "not a record");
	if (h.version != SLOTREC_VERSION)
		return bad(ret_why, "a record version this devwld does not know");
	if (h.flags & ~(FLAG_CREATED | FLAG_KERNEL))
		return bad(ret_why, "unknown flags");
	if (h.pid < 0 || h.peer_pid < 0)
		return bad(ret_why, "a negative pid");
	if (h.id_len == 0 || h.id_len > SLOTREC_ID_MAX || h.node_len == 0 ||
	    h.node_len > SLOTREC_NODE_MAX)
		return bad(ret_why, "an id or node path length out of bounds");
	if ((size_t)SLOTREC_HEAD + h.id_len + h.node_len != len)
		return bad(ret_why, "its lengths do not add up to its size");
	memcpy(ret->id, in + SLOTREC_HEAD, h.id_len);
	ret->id[h.id_len] = '\0';
	memcpy(ret->node, in + SLOTREC_HEAD + h.id_len, h.node_len);
	ret->node[h.node_len] = '\0';
	/* The checks a runtime's message and a state file pass, NULs included. */
	if (strlen(ret->id) != h.id_len || !oci_id_valid(ret->id))
		return bad(ret_why, "not a valid container id");
	if (strlen(ret->node) != h.node_len || devwl_node_path_valid(ret->node) < 0)
		return bad(ret_why, "not a valid node path");
	ret->owner = (struct slot_owner){
		.id = ret->id,
		.node = ret->node,
		.created = h.flags & FLAG_CREATED,
		.kernel = h.flags & FLAG_KERNEL,
		.pid = h.pid,
		.peer_uid = h.peer_uid,
		.peer_pid = h.peer_pid,
	};
	return 0;
}
