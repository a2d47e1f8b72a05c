/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/bpfdev.c: the compiled device program decides as devwl_node_check() does. A small
 * interpreter of the instructions the compiler emits runs the program here, without a
 * kernel (tests/oracle/bpf-oracle.c runs it in the kernel); any other instruction fails.
 * The recording program (bpfdev_compile_record()) runs here too: its stack, the map's
 * fd and the three helpers it calls, whose clobbered registers are made garbage.
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

#include "bpfdev.h"
#include "devwl.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* What a recording program handed to bpf_ringbuf_output(), and the helpers' answers. */
#define TEST_MAP_FD   7
#define TEST_PID_TGID (((uint64_t)4321 << 32) | 4322)
#define TEST_CGROUP   99
static struct bpfdev_record outputs[4];
static size_t noutputs;

/* The memory a load or store may touch: the context or the stack, nothing else. */
static void *mem_at(uint64_t addr, size_t size, uint8_t *ctx, uint8_t *stack, bool store)
{
	uintptr_t a = (uintptr_t)addr;

	if (!store && a >= (uintptr_t)ctx && a + size <= (uintptr_t)ctx + 12)
		return (void *)a;
	if (a >= (uintptr_t)stack && a + size <= (uintptr_t)stack + 512)
		return (void *)a;
	return NULL;
}

/* Run prog on ctx; returns r0, or -1 on an instruction the interpreter does not know. */
static long run(const struct bpf_insn *prog, size_t n, uint32_t access_type, uint32_t major,
		uint32_t minor)
{
	uint32_t ctx[3] = {access_type, major, minor};
	uint8_t stack[512];
	uint64_t r[11] = {0}, saved[8][4];
	size_t ret_pc[8], depth = 0, pc = 0, steps = 0;

	memset(stack, 0xa5, sizeof(stack)); /* a record read before it is written shows */
	noutputs = 0;
	r[1] = (uint64_t)(uintptr_t)ctx;
	r[10] = (uint64_t)(uintptr_t)(stack + sizeof(stack));
	while (pc < n && steps++ < 100000) {
		const struct bpf_insn *i = &prog[pc++];
		uint8_t cls = BPF_CLASS(i->code), op = BPF_OP(i->code);
		uint64_t *d = &r[i->dst_reg];
		uint64_t s = BPF_SRC(i->code) == BPF_X ? r[i->src_reg] : (uint64_t)(int64_t)i->imm;

		if (cls == BPF_LDX || cls == BPF_STX || cls == BPF_ST) {
			size_t size = BPF_SIZE(i->code) == BPF_W    ? 4
				      : BPF_SIZE(i->code) == BPF_DW ? 8
								    : 0;
			uint64_t base = cls == BPF_LDX ? r[i->src_reg] : *d, v = 0;
			void *m = mem_at(base + (uint64_t)(int64_t)i->off, size, (uint8_t *)ctx,
					 stack, cls != BPF_LDX);

			if (BPF_MODE(i->code) != BPF_MEM || !size || !m)
				return -1;
			if (cls == BPF_LDX) {
				memcpy(&v, m, size); /* little-endian, as the hosts that run this */
				*d = v;
			} else {
				v = cls == BPF_STX ? r[i->src_reg] : (uint64_t)(int64_t)i->imm;
				memcpy(m, &v, size);
			}
		} else if (i->code == (BPF_LD | BPF_DW | BPF_IMM)) {
			/* Only the map's fd: the value stands for the map. */
			if (i->src_reg != BPF_PSEUDO_MAP_FD || pc >= n || prog[pc].code)
				return -1;
			*d = 0xfeed000000000000ull | (uint32_t)i->imm;
			pc++;
		} else if (cls == BPF_ALU || cls == BPF_ALU64) {
			uint64_t v = *d;
			switch (op) {
			case BPF_MOV:
				v = s;
				break;
			case BPF_ADD:
				v += s;
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
			if (i->code == (BPF_JMP | BPF_CALL) && i->src_reg == 0) {
				void *m = NULL;

				switch (i->imm) {
				case BPF_FUNC_get_current_pid_tgid:
					r[0] = TEST_PID_TGID;
					break;
				case BPF_FUNC_get_current_cgroup_id:
					r[0] = TEST_CGROUP;
					break;
				case BPF_FUNC_ringbuf_output:
					m = mem_at(r[2], sizeof(outputs[0]), (uint8_t *)ctx, stack,
						   true);
					if (r[1] != (0xfeed000000000000ull | TEST_MAP_FD) ||
					    r[3] != sizeof(outputs[0]) || r[4] != 0 || !m ||
					    noutputs == ARRAY_SIZE(outputs))
						return -1;
					memcpy(&outputs[noutputs++], m, sizeof(outputs[0]));
					r[0] = 0;
					break;
				default:
					return -1;
				}
				/* A helper clobbers r1-r5: what the program keeps there is lost. */
				for (int k = 1; k <= 5; k++)
					r[k] = 0xdeadbeefdeadbeefull;
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

/* The record of the last run is the request denied, with what the helpers gave. */
static void check_record(uint32_t access_type, uint32_t major, uint32_t minor, unsigned int helpers)
{
	const struct bpfdev_record *rec = &outputs[0];

	assert_int_equal(noutputs, 1);
	assert_int_equal(rec->access_type, access_type);
	assert_int_equal(rec->major, major);
	assert_int_equal(rec->minor, minor);
	assert_int_equal(rec->allowed, 0);
	assert_true(rec->count == 1);
	assert_true(rec->pid_tgid == (helpers & BPFDEV_RECORD_PID ? TEST_PID_TGID : 0));
	assert_true(rec->cgroup_id == (helpers & BPFDEV_RECORD_CGROUP ? TEST_CGROUP : 0));
}

/*
 * Every device of the small set, every access the kernel can ask, and more; the program
 * compiled as devwl_node_compile_bpf() does, or recording with helpers (-1: not).
 */
static void compare_all_as(const struct devwl_node *node, int helpers)
{
	static const uint32_t nums[] = {0, 1, 2, 3, 5, 7, 4095, 1048575};
	struct bpf_insn *prog = NULL;
	size_t n = 0;

	if (helpers < 0)
		assert_int_equal(devwl_node_compile_bpf(node, &prog, &n), 0);
	else
		assert_int_equal(
			bpfdev_compile_record(node, TEST_MAP_FD, -1, (unsigned)helpers, &prog, &n),
			0);
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
					/* Recording: each denial once, no allowed access. */
					if (helpers >= 0 && want)
						assert_int_equal(noutputs, 0);
					else if (helpers >= 0)
						check_record((uint32_t)acc << 16 | (uint32_t)type,
							     nums[a], nums[b], (unsigned)helpers);
				}
	/* Unknown type or access bits: denied, as the check refuses them. */
	assert_int_equal(run(prog, n, 3u << 16 | 4u, 1, 3), 0);
	if (helpers >= 0)
		check_record(3u << 16 | 4u, 1, 3, (unsigned)helpers);
	assert_int_equal(run(prog, n, 0x10u << 16 | DEVWL_DEV_CHAR, 1, 3), 0);
	if (helpers >= 0)
		check_record(0x10u << 16 | DEVWL_DEV_CHAR, 1, 3, (unsigned)helpers);
	free(prog);
}

static void compare_all(const struct devwl_node *node)
{
	compare_all_as(node, -1);
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

/* The recording program decides as the plain one, for every helper level, and records
 * each denial once: random policies of both behaviours. */
static void test_compile_record_random_policies(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 100; seed++) {
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
		compare_all_as(node, (int)(seed % 4));
		devwl_policy_free(p);
	}
}

/* Recording adds a tail of constant size; bad arguments are refused. */
static void test_compile_record_size(void **state)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node = devwl_policy_find(p, "/");
	struct bpf_insn *plain = NULL, *rec = NULL;
	size_t n = 0, m = 0;
	char rule[64];

	(void)state;
	assert_int_equal(devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL), 0);
	for (unsigned i = 0; i < 1000; i++) {
		snprintf(rule, sizeof(rule), "c %u:%u rw", 200 + i % 50, i / 50);
		assert_int_equal(devwl_node_write(node, DEVWL_FILE_ALLOW, rule, strlen(rule), NULL),
				 0);
	}
	assert_int_equal(devwl_node_compile_bpf(node, &plain, &n), 0);
	assert_int_equal(bpfdev_compile_record(node, TEST_MAP_FD, -1,
					       BPFDEV_RECORD_PID | BPFDEV_RECORD_CGROUP, &rec, &m),
			 0);
	assert_true(m > n && m - n < 40);
	assert_int_equal(run(rec, m, DEVWL_ACC_READ << 16 | DEVWL_DEV_CHAR, 249, 19), 1);
	assert_int_equal(noutputs, 0);
	assert_int_equal(run(rec, m, DEVWL_ACC_MKNOD << 16 | DEVWL_DEV_CHAR, 249, 19), 0);
	check_record(DEVWL_ACC_MKNOD << 16 | DEVWL_DEV_CHAR, 249, 19,
		     BPFDEV_RECORD_PID | BPFDEV_RECORD_CGROUP);
	free(rec);
	/* A reporter records the same denial and allows it (the v1 rules refuse it). */
	assert_int_equal(
		bpfdev_compile_record(node, TEST_MAP_FD, -1,
				      BPFDEV_RECORD_PID | BPFDEV_RECORD_CGROUP | BPFDEV_REPORT_ONLY,
				      &rec, &m),
		0);
	assert_int_equal(run(rec, m, DEVWL_ACC_READ << 16 | DEVWL_DEV_CHAR, 249, 19), 1);
	assert_int_equal(noutputs, 0);
	assert_int_equal(run(rec, m, DEVWL_ACC_MKNOD << 16 | DEVWL_DEV_CHAR, 249, 19), 1);
	check_record(DEVWL_ACC_MKNOD << 16 | DEVWL_DEV_CHAR, 249, 19,
		     BPFDEV_RECORD_PID | BPFDEV_RECORD_CGROUP);
	assert_int_equal(run(rec, m, DEVWL_ACC_READ << 16 | 7, 249, 19), 1);
	free(plain);
	free(rec);
	assert_int_equal(bpfdev_compile_record(node, -1, -1, 0, &rec, &m), -EINVAL);
	assert_int_equal(bpfdev_compile_record(node, TEST_MAP_FD, -1, 4, &rec, &m), -EINVAL);
	/* Reporting allowed accesses needs the seen map, and the map the bit. */
	assert_int_equal(bpfdev_compile_record(node, TEST_MAP_FD, 8, 0, &rec, &m), -EINVAL);
	assert_int_equal(
		bpfdev_compile_record(node, TEST_MAP_FD, 8, BPFDEV_RECORD_ACCESSES | 16, &rec, &m),
		-EINVAL);
	assert_int_equal(
		bpfdev_compile_record(node, TEST_MAP_FD, 8, BPFDEV_RECORD_ACCESSES, &rec, &m), 0);
	assert_true(m > n);
	free(rec);
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
		cmocka_unit_test(test_compile_record_random_policies),
		cmocka_unit_test(test_compile_record_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
