/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/bpfdev.c: the compiled device program decides as devwl_node_check() does. A small
 * interpreter of the instructions the compiler emits runs the program here, without a
 * kernel (tests/oracle/bpf-oracle.c runs it in the kernel); any other instruction fails.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/bpf.h>

#include "devwl.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Run prog on ctx; returns r0, or -1 on an instruction the interpreter does not know. */
static long run(const struct bpf_insn *prog, size_t n, uint32_t access_type, uint32_t major,
		uint32_t minor)
{
	uint32_t ctx[3] = {access_type, major, minor};
	uint64_t r[11] = {0}, saved[8][4];
	size_t ret_pc[8], depth = 0, pc = 0, steps = 0;

	r[1] = (uint64_t)(uintptr_t)ctx;
	while (pc < n && steps++ < 100000) {
		const struct bpf_insn *i = &prog[pc++];
		uint8_t cls = BPF_CLASS(i->code), op = BPF_OP(i->code);
		uint64_t *d = &r[i->dst_reg];
		uint64_t s = BPF_SRC(i->code) == BPF_X ? r[i->src_reg] : (uint64_t)(int64_t)i->imm;

		if (cls == BPF_LDX) {
			if (i->code != (BPF_LDX | BPF_MEM | BPF_W) || i->src_reg != 1 ||
			    i->off % 4 || i->off < 0 || i->off > 8)
				return -1;
			*d = ctx[i->off / 4];
		} else if (cls == BPF_ALU || cls == BPF_ALU64) {
			uint64_t v = *d;
			switch (op) {
			case BPF_MOV:
				v = s;
				break;
			case BPF_RSH:
				v = cls == BPF_ALU ? (uint32_t)v >> (s & 31) : v >> (s & 63);
				break;
			case BPF_AND:
				v &= s;
				break;
			case BPF_OR:
				v |= s;
				break;
			case BPF_XOR:
				v ^= s;
				break;
			default:
				return -1;
			}
			*d = cls == BPF_ALU ? (uint32_t)v : v;
		} else if (cls == BPF_JMP || cls == BPF_JMP32) {
			uint64_t a = *d, b = s;
			bool take;
			if (i->code == (BPF_JMP | BPF_EXIT)) {
				if (!depth)
					return (long)r[0];
				depth--;
				memcpy(&r[6], saved[depth], sizeof(saved[depth]));
				pc = ret_pc[depth];
				continue;
			}
			if (i->code == (BPF_JMP | BPF_CALL)) {
				if (i->src_reg != BPF_PSEUDO_CALL || depth == 8)
					return -1;
				memcpy(saved[depth], &r[6], sizeof(saved[depth]));
				ret_pc[depth++] = pc;
				pc = (size_t)((long)pc + i->imm);
				continue;
			}
			if (i->code == (BPF_JMP | BPF_JA)) {
				pc = (size_t)((long)pc + i->off);
				continue;
			}
			if (cls == BPF_JMP32) {
				a = (uint32_t)a;
				b = (uint32_t)b;
			}
			switch (op) {
			case BPF_JEQ:
				take = a == b;
				break;
			case BPF_JNE:
				take = a != b;
				break;
			case BPF_JGE:
				take = a >= b;
				break;
			case BPF_JSET:
				take = (a & b) != 0;
				break;
			default:
				return -1;
			}
			if (take)
				pc = (size_t)((long)pc + i->off);
		} else {
			return -1;
		}
	}
	return -1;
}

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33) % n;
}

/* Majors and minors from a small set, so that random rules collide and overlap. */
static uint32_t pick_num(void)
{
	static const uint32_t v[] = {0, 1, 2, 3, 7, 4095, 1048575, DEVWL_ANY, DEVWL_ANY};
	return v[rnd(ARRAY_SIZE(v))];
}

static void random_rule(char *buf, size_t size)
{
	static const char *const acc[] = {"r", "w", "m", "rw", "rm", "wm", "rwm"};
	uint32_t ma = pick_num(), mi = pick_num();
	char a[16], b[16];

	if (rnd(20) == 0) {
		snprintf(buf, size, "a");
		return;
	}
	snprintf(a, sizeof(a), ma == DEVWL_ANY ? "*" : "%u", ma);
	snprintf(b, sizeof(b), mi == DEVWL_ANY ? "*" : "%u", mi);
	snprintf(buf, size, "%c %s:%s %s", rnd(2) ? 'c' : 'b', a, b, acc[rnd(7)]);
}

/* Every device of the small set, every access the kernel can ask, and more. */
static void compare_all(const struct devwl_node *node)
{
	static const uint32_t nums[] = {0, 1, 2, 3, 5, 7, 4095, 1048575};
	struct bpf_insn *prog = NULL;
	size_t n = 0;

	assert_int_equal(devwl_node_compile_bpf(node, &prog, &n), 0);
	assert_true(n > 0);
	for (int type = DEVWL_DEV_BLOCK; type <= DEVWL_DEV_CHAR; type++)
		for (size_t a = 0; a < ARRAY_SIZE(nums); a++)
			for (size_t b = 0; b < ARRAY_SIZE(nums); b++)
				for (int acc = 0; acc <= DEVWL_ACC_MASK; acc++) {
					int want =
						devwl_node_check(node, type, nums[a], nums[b], acc);
					long got =
						run(prog, n, (uint32_t)acc << 16 | (uint32_t)type,
						    nums[a], nums[b]);
					if (got != want)
						fail_msg(
							"%c %u:%u access %d: program %ld, check %d",
							type == DEVWL_DEV_CHAR ? 'c' : 'b', nums[a],
							nums[b], acc, got, want);
				}
	/* Unknown type or access bits: denied, as the check refuses them. */
	assert_int_equal(run(prog, n, 3u << 16 | 4u, 1, 3), 0);
	assert_int_equal(run(prog, n, 0x10u << 16 | DEVWL_DEV_CHAR, 1, 3), 0);
	free(prog);
}

static void test_compile_random_policies(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 400; seed++) {
		struct devwl_policy *p = devwl_policy_new();
		struct devwl_node *node;
		char rule[64];

		rng_state = seed;
		assert_non_null(p);
		node = devwl_policy_find(p, "/");
		if (rnd(2))
			devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL);
		for (uint32_t k = rnd(40); k > 0; k--) {
			random_rule(rule, sizeof(rule));
			(void)devwl_node_write(node, rnd(2) ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY,
					       rule, strlen(rule), NULL);
		}
		compare_all(node);
		devwl_policy_free(p);
	}
}

/* The case a union of exceptions gets wrong: no single grant covers "rw". */
static void test_compile_deny_needs_one_cover(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node = devwl_policy_find(p, "/");
	struct bpf_insn *prog = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL), 0);
	assert_int_equal(devwl_node_write(node, DEVWL_FILE_ALLOW, "c 1:* r", 7, NULL), 0);
	assert_int_equal(devwl_node_write(node, DEVWL_FILE_ALLOW, "c *:3 w", 7, NULL), 0);
	assert_int_equal(devwl_node_compile_bpf(node, &prog, &n), 0);
	assert_int_equal(run(prog, n, DEVWL_ACC_READ << 16 | DEVWL_DEV_CHAR, 1, 3), 1);
	assert_int_equal(run(prog, n, DEVWL_ACC_WRITE << 16 | DEVWL_DEV_CHAR, 1, 3), 1);
	assert_int_equal(
		run(prog, n, (DEVWL_ACC_READ | DEVWL_ACC_WRITE) << 16 | DEVWL_DEV_CHAR, 1, 3), 0);
	free(prog);
	devwl_policy_free(p);
}

/* An ALLOW node's denial that overlaps the request only partly still denies it. */
static void test_compile_allow_partial_overlap(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node = devwl_policy_find(p, "/");
	struct bpf_insn *prog = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(devwl_node_write(node, DEVWL_FILE_DENY, "b *:5 w", 7, NULL), 0);
	assert_int_equal(devwl_node_compile_bpf(node, &prog, &n), 0);
	assert_int_equal(
		run(prog, n, (DEVWL_ACC_READ | DEVWL_ACC_WRITE) << 16 | DEVWL_DEV_BLOCK, 8, 5), 0);
	assert_int_equal(run(prog, n, DEVWL_ACC_READ << 16 | DEVWL_DEV_BLOCK, 8, 5), 1);
	assert_int_equal(run(prog, n, DEVWL_ACC_WRITE << 16 | DEVWL_DEV_CHAR, 8, 5), 1);
	free(prog);
	devwl_policy_free(p);
}

/* Many exceptions: the searches still find every one, and the size stays linear. */
static void test_compile_many_exceptions(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node = devwl_policy_find(p, "/");
	struct bpf_insn *prog = NULL;
	size_t n = 0;
	char rule[64];

	(void)state;
	assert_int_equal(devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL), 0);
	for (unsigned i = 0; i < 10000; i++) {
		snprintf(rule, sizeof(rule), "c %u:%u r%s", 200 + i % 50, i / 50, i % 3 ? "w" : "");
		assert_int_equal(devwl_node_write(node, DEVWL_FILE_ALLOW, rule, strlen(rule), NULL),
				 0);
	}
	assert_int_equal(devwl_node_write(node, DEVWL_FILE_ALLOW, "c *:7 m", 7, NULL), 0);
	assert_int_equal(devwl_node_compile_bpf(node, &prog, &n), 0);
	assert_true(n < 10 * 10000);
	for (unsigned i = 0; i < 10000; i += 7) {
		uint32_t ma = 200 + i % 50, mi = i / 50;
		for (int acc = 1; acc <= DEVWL_ACC_MASK; acc++)
			assert_int_equal(run(prog, n, (uint32_t)acc << 16 | DEVWL_DEV_CHAR, ma, mi),
					 devwl_node_check(node, DEVWL_DEV_CHAR, ma, mi, acc));
	}
	assert_int_equal(run(prog, n, DEVWL_ACC_READ << 16 | DEVWL_DEV_CHAR, 250, 0), 0);
	free(prog);
	devwl_policy_free(p);
}

/* Past what 16-bit jumps reach, the compiler refuses rather than truncates. */
static void test_compile_too_many_refused(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node = devwl_policy_find(p, "/");
	struct bpf_insn *prog = NULL;
	size_t n = 0;
	char rule[64];

	(void)state;
	assert_int_equal(devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL), 0);
	for (unsigned i = 0; i < 40000; i++) {
		snprintf(rule, sizeof(rule), "b 8:%u r", i);
		assert_int_equal(devwl_node_write(node, DEVWL_FILE_ALLOW, rule, strlen(rule), NULL),
				 0);
	}
	assert_int_equal(devwl_node_compile_bpf(node, &prog, &n), -E2BIG);
	assert_null(prog);
	assert_int_equal(devwl_node_compile_bpf(NULL, &prog, &n), -EINVAL);
	devwl_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compile_random_policies),
		cmocka_unit_test(test_compile_deny_needs_one_cover),
		cmocka_unit_test(test_compile_allow_partial_overlap),
		cmocka_unit_test(test_compile_many_exceptions),
		cmocka_unit_test(test_compile_too_many_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
