/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A keeper slot's record (supervisor/format/slotrec.c): what a worker writes, a new worker reads
 * back exactly; the longest id and node devwld accepts fit in a keeper slot; and a record
 * a dead worker left damaged — cut short, grown, any byte changed, lengths that lie,
 * strings with NULs or outside their grammar — is refused, never read past its end.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "keeper_table.h"
#include "slotrec.h"

static const struct slot_owner sample = {
	.id = "web-1.a_b+c",
	.node = "/k8s/default/web/app",
	.created = true,
	.pid = 4242,
	.peer_uid = 1000,
	.peer_pid = 77,
};

static size_t encode(const struct slot_owner *o, unsigned char *buf)
{
	ssize_t n = slotrec_encode(o, buf, KEEPER_REC_MAX);

	assert_true(n > 0);
	return (size_t)n;
}

/* Decoding rec[0, len) on a heap copy of exactly len bytes: ASan sees any overread. */
static int decode(const unsigned char *rec, size_t len, struct slot_owner_buf *b)
{
	unsigned char *copy = malloc(len ? len : 1);
	const char *why = NULL;
	int r;

	assert_non_null(copy);
	memcpy(copy, rec, len);
	r = slotrec_decode(copy, len, b, &why);
	assert_non_null(why);
	if (r < 0)
		assert_true(*why);
	free(copy);
	return r;
}

static void test_slotrec_round_trip(void **state)
{
	unsigned char rec[KEEPER_REC_MAX];
	struct slot_owner_buf b;
	struct slot_owner o = sample;
	size_t len;

	(void)state;
	len = encode(&o, rec);
	assert_int_equal(len, SLOTREC_HEAD + strlen(o.id) + strlen(o.node));
	assert_int_equal(decode(rec, len, &b), 0);
	assert_string_equal(b.owner.id, o.id);
	assert_string_equal(b.owner.node, o.node);
	assert_true(b.owner.created);
	assert_false(b.owner.kernel);
	assert_int_equal(b.owner.pid, 4242);
	assert_int_equal(b.owner.peer_uid, 1000);
	assert_int_equal(b.owner.peer_pid, 77);

	/* crun exec's pid 0, the root node, a node not made on demand, uid 2^32-2 */
	o = (struct slot_owner){.id = "x", .node = "/", .peer_uid = 4294967294u};
	len = encode(&o, rec);
	assert_int_equal(decode(rec, len, &b), 0);
	assert_string_equal(b.owner.node, "/");
	assert_false(b.owner.created);
	assert_int_equal(b.owner.pid, 0);
	assert_int_equal(b.owner.peer_uid, 4294967294u);

	/* kernel mode, alone and with created */
	o = (struct slot_owner){.id = "k", .node = "/km", .kernel = true};
	assert_int_equal(decode(rec, encode(&o, rec), &b), 0);
	assert_true(b.owner.kernel);
	assert_false(b.owner.created);
	o.created = true;
	assert_int_equal(decode(rec, encode(&o, rec), &b), 0);
	assert_true(b.owner.kernel && b.owner.created);
}

/* The longest id (1024) and node path (4095) devwld takes: a record that fits a slot. */
static void test_slotrec_longest(void **state)
{
	static char id[SLOTREC_ID_MAX + 2], node[SLOTREC_NODE_MAX + 2];
	unsigned char rec[KEEPER_REC_MAX];
	struct slot_owner_buf b;
	struct slot_owner o = sample;
	size_t len, i;

	(void)state;
	memset(id, 'i', SLOTREC_ID_MAX);
	id[SLOTREC_ID_MAX] = '\0';
	/* "/nnn.../nnn...": components of 255 */
	for (i = 0; i < SLOTREC_NODE_MAX; i++)
		node[i] = i % 256 == 0 ? '/' : 'n';
	node[SLOTREC_NODE_MAX] = '\0';
	o.id = id;
	o.node = node;
	len = encode(&o, rec);
	assert_int_equal(len, SLOTREC_MAX);
	assert_true(len <= KEEPER_REC_MAX);
	assert_int_equal(decode(rec, len, &b), 0);
	assert_string_equal(b.owner.id, id);
	assert_string_equal(b.owner.node, node);

	/* One more character: refused at the attach, not cut. */
	id[SLOTREC_ID_MAX] = 'i';
	id[SLOTREC_ID_MAX + 1] = '\0';
	assert_int_equal(slotrec_encode(&o, rec, sizeof(rec)), -ENAMETOOLONG);
	id[SLOTREC_ID_MAX] = '\0';
	node[SLOTREC_NODE_MAX] = 'n';
	node[SLOTREC_NODE_MAX + 1] = '\0';
	assert_int_equal(slotrec_encode(&o, rec, sizeof(rec)), -ENAMETOOLONG);
	node[SLOTREC_NODE_MAX] = '\0';
	/* A buffer too small, an empty id or node */
	assert_int_equal(slotrec_encode(&sample, rec, SLOTREC_HEAD + 3), -ENAMETOOLONG);
	o = sample;
	o.id = "";
	assert_int_equal(slotrec_encode(&o, rec, sizeof(rec)), -EINVAL);
	o = sample;
	o.node = NULL;
	assert_int_equal(slotrec_encode(&o, rec, sizeof(rec)), -EINVAL);
}

/* Every length but its own: shorter (each prefix) and longer (trailing bytes). */
static void test_slotrec_decode_wrong_length(void **state)
{
	unsigned char rec[KEEPER_REC_MAX] = {0};
	struct slot_owner_buf b;
	size_t len;

	(void)state;
	len = encode(&sample, rec);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(decode(rec, n, &b), -EINVAL);
	for (size_t n = len + 1; n < len + 64; n++)
		assert_int_equal(decode(rec, n, &b), -EINVAL);
	assert_int_equal(decode(rec, KEEPER_REC_MAX, &b), -EINVAL);
}

/* Each header field out of range, and the lengths that lie. */
static void test_slotrec_decode_bad_header(void **state)
{
	unsigned char rec[KEEPER_REC_MAX], bad[KEEPER_REC_MAX];
	struct slot_owner_buf b;
	size_t len;
	uint16_t u16;
	int32_t s32;

	(void)state;
	len = encode(&sample, rec);
#define MUTATE(off, var, value)                                                                    \
	do {                                                                                       \
		memcpy(bad, rec, len);                                                             \
		var = (value);                                                                     \
		memcpy(bad + (off), &var, sizeof(var));                                            \
		assert_int_equal(decode(bad, len, &b), -EINVAL);                                   \
	} while (0)
	MUTATE(0, s32, 0x6b6c7764);			    /* magic: the table's, not a record's */
	MUTATE(4, u16, 2);				    /* version */
	MUTATE(6, u16, 4);				    /* flags */
	MUTATE(8, s32, -1);				    /* pid */
	MUTATE(16, s32, INT32_MIN);			    /* peer pid */
	MUTATE(20, u16, 0);				    /* id length 0 */
	MUTATE(20, u16, (uint16_t)(strlen(sample.id) + 1)); /* lengths shifted */
	MUTATE(22, u16, (uint16_t)(strlen(sample.node) - 1));
	MUTATE(20, u16, SLOTREC_ID_MAX + 1);
	MUTATE(22, u16, 0xffff);
#undef MUTATE
}

/* Strings outside their grammar, NULs inside them. */
static void test_slotrec_decode_bad_strings(void **state)
{
	static const char *const ids[] = {"a/b", "a b", ".", "..", "a\n", "\xc3\xa9"};
	static const char *const nodes[] = {"w",      "/w/",  "/w//x", "/w/../x",
					    "/w/./x", "/a b", "/w\x7f"};
	unsigned char rec[KEEPER_REC_MAX];
	struct slot_owner_buf b;
	struct slot_owner o = sample;
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(ids) / sizeof(*ids); i++) {
		o = sample;
		o.id = ids[i];
		len = encode(&o, rec);
		assert_int_equal(decode(rec, len, &b), -EINVAL);
	}
	for (size_t i = 0; i < sizeof(nodes) / sizeof(*nodes); i++) {
		o = sample;
		o.node = nodes[i];
		len = encode(&o, rec);
		assert_int_equal(decode(rec, len, &b), -EINVAL);
	}
	/* A NUL in the id, then in the node: a shorter string must not pass for it. */
	len = encode(&sample, rec);
	rec[SLOTREC_HEAD + 2] = '\0';
	assert_int_equal(decode(rec, len, &b), -EINVAL);
	len = encode(&sample, rec);
	rec[len - 1] = '\0';
	assert_int_equal(decode(rec, len, &b), -EINVAL);
}

/* Every byte of a record changed to every value: refused, or a record that is valid in
 * every part (a changed pid or letter is still a record); never a crash or overread. */
static void test_slotrec_decode_every_byte(void **state)
{
	unsigned char rec[KEEPER_REC_MAX], bad[KEEPER_REC_MAX];
	struct slot_owner_buf b;
	size_t len;

	(void)state;
	len = encode(&sample, rec);
	for (size_t i = 0; i < len; i++) {
		for (unsigned int v = 0; v < 256; v++) {
			memcpy(bad, rec, len);
			bad[i] = (unsigned char)v;
			if (decode(bad, len, &b) == 0) {
				assert_int_equal(strlen(b.owner.id) + strlen(b.owner.node) +
							 SLOTREC_HEAD,
						 len);
				assert_true(b.owner.pid >= 0 && b.owner.peer_pid >= 0);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slotrec_round_trip),
		cmocka_unit_test(test_slotrec_longest),
		cmocka_unit_test(test_slotrec_decode_wrong_length),
		cmocka_unit_test(test_slotrec_decode_bad_header),
		cmocka_unit_test(test_slotrec_decode_bad_strings),
		cmocka_unit_test(test_slotrec_decode_every_byte),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
