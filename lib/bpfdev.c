/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Compile a node's allow list into a BPF_PROG_TYPE_CGROUP_DEVICE program that decides
 * exactly as devwl_node_check() does. Pure: builds instructions, makes no syscalls.
 *
 * The decision needs, for the request's (type, major, minor), the access of at most four
 * exceptions, one per key that can match: (major, minor), (major, *), (*, minor) and
 * (*, *). An ALLOW node denies when any of them shares an access bit with the request
 * (the union decides); a DENY node allows when one of them alone covers the request
 * (a union would be wrong: "c 1:* r" and "c *:3 w" together do not grant "c 1:3 rw").
 * So the program fetches the four separately, one nibble each: bit 3 "present", bits
 * 0-2 the access, (major, minor) in nibble 0, (major, *) in 1, (*, minor) in 2, (*, *)
 * in 3, and decides on the packed value.
 *
 * The fetches are balanced binary searches over sorted keys, per device type: one
 * subprogram searches the majors (and, inside a major, its minors), another the minors
 * of (*, minor) exceptions. A subprogram's leaves end in exit, so no jump has to reach
 * across the whole program (BPF jump offsets are 16 bits), and the size grows linearly
 * with the exceptions, the work per check logarithmically.
 *
 * The verifier explores every leaf and, after each, the rest of the caller. To keep that
 * linear, a leaf never returns a constant: it returns value ^ key where key is a register
 * the caller passed in and the verifier cannot know, and the caller xors it back. Every
 * leaf then hands the verifier the same unknown state, which it prunes after the first.
 *
 * With a ring buffer (bpfdev_compile_record()), every way to deny jumps to one tail at
 * the end of the main program that reads the request again from the context (whose
 * pointer the first instruction keeps on the stack: r1-r5 do not survive the calls and
 * r6-r9 are taken), writes a fixed record on the stack and hands it to
 * bpf_ringbuf_output(). The tail is reached from the early refusal and from the decision
 * only, so it adds a constant to the verifier's work, and runs only on a denial: an
 * allowed access costs what it did. The decision itself is the same instructions.
 *
 * Reporting allowed accesses too (BPFDEV_RECORD_ACCESSES), the one place each behaviour
 * allows is followed by a second tail instead of the bare exit: it looks the request up in
 * an LRU hash keyed by (type, access, major, minor) and, while the key's last report is
 * younger than the window (the clock read only when the tick moved, see
 * emit_allow_tail()), only adds one to its count (an atomic add: the same key on
 * other CPUs). Otherwise it takes the count with an atomic exchange (so an access counted
 * by another CPU meanwhile is in this report or the next, never lost or in both), stamps
 * the time and writes a record of count + 1 as the denial tail does. A full LRU map
 * forgets the keys least used: the next access of one is reported at once, and what it
 * had counted is lost with it (cgroupdev.c sizes the map past what a container touches).
 *
 * A reporter (BPFDEV_REPORT_ONLY) is the same program whose denial tail returns 1: it
 * stands beside a cgroup-v1 devices directory on a hybrid host, where the v1 rules decide
 * and tell nobody, and reports what they decide (cgroupdev.c, devwl_cgroup_set_reporter()).
 */
#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpfdev.h"
#include "util.h"

/* Registers of the main program; r6-r9 survive calls. */
#define R_ACCESS 6
#define R_MAJOR	 7
#define R_MINOR	 8
#define R_PACKED 9
/* Arguments of the subprograms: major, minor, and the key leaves xor their value with. */
#define A_MAJOR 1
#define A_MINOR 2
#define A_KEY	3

/* The stack of the main program, recording: the context pointer, the record below it,
 * and below that the seen map's key and a value to insert. */
#define STACK_CTX  (-8)
#define STACK_REC  (STACK_CTX - (int16_t)sizeof(struct bpfdev_record))
#define STACK_KEY  (STACK_REC - (int16_t)sizeof(struct bpfdev_seen_key))
#define STACK_SEEN (STACK_KEY - (int16_t)sizeof(struct bpfdev_seen))

#define PRESENT 8u
/* Leaves searched linearly below this many keys. */
#define LINEAR_MAX 3

struct prog {
	struct bpf_insn *v;
	size_t n, cap;
	int err;
	/* Recording denials: the ring's map fd (>= 0), the helpers to call, and the jumps
	 * to the recording tail (at most three: the early refusal, two in a decision). */
	int map_fd;
	int seen_fd; /* BPFDEV_RECORD_ACCESSES: the map of reported accesses */
	unsigned int helpers;
	size_t to_tail[4], nto_tail;
};

static size_t emit(struct prog *p, struct bpf_insn insn)
{
	if (p->err)
		return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct bpf_insn *v;
		if (cap > DEVWL_BPF_INSNS_MAX + 64)
			cap = DEVWL_BPF_INSNS_MAX + 64;
		if (p->n >= cap) {
			p->err = -E2BIG;
			return 0;
		}
		v = realloc(p->v, cap * sizeof(*v));
		if (!v) {
			p->err = -ENOMEM;
			return 0;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n] = insn;
	return p->n++;
}

static struct bpf_insn alu(uint8_t cls, uint8_t op, uint8_t dst, int32_t imm)
{
	return (struct bpf_insn){.code = (uint8_t)(cls | op | BPF_K), .dst_reg = dst, .imm = imm};
}

static struct bpf_insn alu_reg(uint8_t cls, uint8_t op, uint8_t dst, uint8_t src)
{
	return (struct bpf_insn){
		.code = (uint8_t)(cls | op | BPF_X), .dst_reg = dst, .src_reg = src};
}

static struct bpf_insn ldx_w(uint8_t dst, uint8_t src, int16_t off)
{
	return (struct bpf_insn){
		.code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = dst, .src_reg = src, .off = off};
}

static struct bpf_insn ldx_dw(uint8_t dst, uint8_t src, int16_t off)
{
	return (struct bpf_insn){
		.code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = dst, .src_reg = src, .off = off};
}

static struct bpf_insn stx(uint8_t size, uint8_t dst, uint8_t src, int16_t off)
{
	return (struct bpf_insn){.code = (uint8_t)(BPF_STX | BPF_MEM | size),
				 .dst_reg = dst,
				 .src_reg = src,
				 .off = off};
}

static struct bpf_insn st_imm(uint8_t size, uint8_t dst, int16_t off, int32_t imm)
{
	return (struct bpf_insn){
		.code = (uint8_t)(BPF_ST | BPF_MEM | size), .dst_reg = dst, .off = off, .imm = imm};
}

/* An atomic read-modify-write of a 64-bit word: BPF_ADD, or BPF_XCHG (src gets the old). */
static struct bpf_insn atomic_dw(int32_t op, uint8_t dst, uint8_t src, int16_t off)
{
	return (struct bpf_insn){.code = BPF_STX | BPF_ATOMIC | BPF_DW,
				 .dst_reg = dst,
				 .src_reg = src,
				 .off = off,
				 .imm = op};
}

/* dst = the map fd: BPF_LD_IMM64 with BPF_PSEUDO_MAP_FD, two instructions. */
static void emit_map(struct prog *p, uint8_t dst, int fd);

static struct bpf_insn call_helper(int32_t func)
{
	return (struct bpf_insn){.code = BPF_JMP | BPF_CALL, .imm = func};
}

/* A conditional jump on the low 32 bits against an immediate; offset patched later. */
static struct bpf_insn jmp32(uint8_t op, uint8_t dst, uint32_t imm)
{
	return (struct bpf_insn){
		.code = (uint8_t)(BPF_JMP32 | op | BPF_K), .dst_reg = dst, .imm = (int32_t)imm};
}

static struct bpf_insn ja(void)
{
	return (struct bpf_insn){.code = BPF_JMP | BPF_JA};
}

static struct bpf_insn exit_insn(void)
{
	return (struct bpf_insn){.code = BPF_JMP | BPF_EXIT};
}

/* Point the jump at `at` to the next instruction to be emitted. */
static void patch(struct prog *p, size_t at)
{
	size_t dist;

	if (p->err)
		return;
	dist = p->n - at - 1;
	if (dist > INT16_MAX) {
		p->err = -E2BIG;
		return;
	}
	p->v[at].off = (int16_t)dist;
}

/* r0 = value ^ key; exit. */
static void emit_return(struct prog *p, uint32_t value)
{
	emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_0, (int32_t)value));
	emit(p, alu_reg(BPF_ALU64, BPF_XOR, BPF_REG_0, A_KEY));
	emit(p, exit_insn());
}

/* Deny: r0 = 0 and exit, or, recording, a jump to the tail that records and denies. */
static void emit_deny(struct prog *p)
{
	if (p->map_fd < 0) {
		emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_0, 0));
		emit(p, exit_insn());
		return;
	}
	if (p->nto_tail == ARRAY_SIZE(p->to_tail)) {
		p->err = -EINVAL;
		return;
	}
	p->to_tail[p->nto_tail++] = emit(p, ja());
}

static void emit_allow_tail(struct prog *p);

/* Allow: r0 = 1 and exit, or, reporting accesses, the tail that reports and allows. */
static void emit_allow(struct prog *p)
{
	if (p->seen_fd >= 0) {
		emit_allow_tail(p);
		return;
	}
	emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_0, 1));
	emit(p, exit_insn());
}

/* ---- the exceptions of one device type, sorted for searching ------------------------ */

struct pair {
	uint32_t a, b; /* (major, minor) or (key, value) */
	uint32_t val;
};

struct type_set {
	struct pair *exact; /* (major, minor) -> access nibble */
	size_t nexact;
	struct pair *majw; /* (major, *) */
	size_t nmajw;
	struct pair *minw; /* (*, minor) */
	size_t nminw;
	uint32_t all; /* (*, *) nibble, 0 if absent */
	/* Distinct majors of exact and majw: a = major, val = (major, *) nibble, and the
	 * range of exact[] under it in b (first) and in the count array. */
	struct pair *majors;
	size_t *counts;
	size_t nmajors;
};

static int cmp_pair(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return 0;
}

static void type_set_free(struct type_set *t)
{
	free(t->exact);
	free(t->majw);
	free(t->minw);
	free(t->majors);
	free(t->counts);
	*t = (struct type_set){0};
}

static int type_set_build(const struct devwl_node *node, unsigned type, struct type_set *t)
{
	size_t n = devwl_node_exception_count(node), i, j, k;

	*t = (struct type_set){0};
	t->exact = calloc(n ? n : 1, sizeof(*t->exact));
	t->majw = calloc(n ? n : 1, sizeof(*t->majw));
	t->minw = calloc(n ? n : 1, sizeof(*t->minw));
	t->majors = calloc(n ? n : 1, sizeof(*t->majors));
	t->counts = calloc(n ? n : 1, sizeof(*t->counts));
	if (!t->exact || !t->majw || !t->minw || !t->majors || !t->counts) {
		type_set_free(t);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct devwl_rule e;
		uint32_t nib;

		if (devwl_node_exception(node, i, &e) < 0 || e.type != type)
			continue;
		nib = PRESENT | (e.access & DEVWL_ACC_MASK);
		/* Keys are unique in a node (an update ORs into an existing one). */
		if (e.major != DEVWL_ANY && e.minor != DEVWL_ANY)
			t->exact[t->nexact++] = (struct pair){e.major, e.minor, nib};
		else if (e.major != DEVWL_ANY)
			t->majw[t->nmajw++] = (struct pair){e.major, 0, nib};
		else if (e.minor != DEVWL_ANY)
			t->minw[t->nminw++] = (struct pair){e.minor, 0, nib};
		else
			t->all = nib;
	}
	qsort(t->exact, t->nexact, sizeof(*t->exact), cmp_pair);
	qsort(t->majw, t->nmajw, sizeof(*t->majw), cmp_pair);
	qsort(t->minw, t->nminw, sizeof(*t->minw), cmp_pair);
	/* Merge the majors of both lists. */
	for (i = 0, j = 0; i < t->nexact || j < t->nmajw;) {
		uint32_t m;
		struct pair *out = &t->majors[t->nmajors];

		if (j >= t->nmajw || (i < t->nexact && t->exact[i].a < t->majw[j].a))
			m = t->exact[i].a;
		else
			m = t->majw[j].a;
		*out = (struct pair){m, (uint32_t)i, 0};
		if (j < t->nmajw && t->majw[j].a == m)
			out->val = t->majw[j++].val;
		for (k = i; k < t->nexact && t->exact[k].a == m; k++)
			;
		t->counts[t->nmajors++] = k - i;
		i = k;
	}
	return 0;
}

/* ---- searches -------------------------------------------------------------------------- */

struct search {
	struct prog *p;
	const struct type_set *t;
	uint8_t reg;		 /* register holding the searched value */
	const struct pair *keys; /* sorted by .a */
	uint32_t miss;		 /* returned when no key matches */
	void (*leaf)(const struct search *s, size_t i);
};

static void search(const struct search *s, size_t lo, size_t hi)
{
	if (hi - lo <= LINEAR_MAX) {
		for (size_t i = lo; i < hi; i++) {
			size_t j = emit(s->p, jmp32(BPF_JNE, s->reg, s->keys[i].a));
			s->leaf(s, i);
			patch(s->p, j);
		}
		emit_return(s->p, s->miss);
		return;
	}
	size_t mid = lo + (hi - lo) / 2;
	size_t j = emit(s->p, jmp32(BPF_JGE, s->reg, s->keys[mid].a));
	search(s, lo, mid);
	patch(s->p, j);
	search(s, mid, hi);
}

static void leaf_value(const struct search *s, size_t i)
{
	emit_return(s->p, s->miss | s->keys[i].val);
}

/* Inside major i: (major, *) in nibble 1, and the search of its exact minors. */
static void leaf_major(const struct search *s, size_t i)
{
	uint32_t majv = s->t->majors[i].val << 4;
	size_t first = s->t->majors[i].b, count = s->t->counts[i];

	if (!count) {
		emit_return(s->p, majv);
		return;
	}
	/* The exact pairs are sorted by (major, minor): their minors, keyed in .b. */
	struct pair *minors = malloc(count * sizeof(*minors));
	if (!minors) {
		s->p->err = -ENOMEM;
		return;
	}
	for (size_t k = 0; k < count; k++)
		minors[k] = (struct pair){s->t->exact[first + k].b, 0, s->t->exact[first + k].val};
	struct search sub = {.p = s->p,
			     .t = s->t,
			     .reg = A_MINOR,
			     .keys = minors,
			     .miss = majv,
			     .leaf = leaf_value};
	search(&sub, 0, count);
	free(minors);
}

static void leaf_minor(const struct search *s, size_t i)
{
	emit_return(s->p, s->keys[i].val << 8);
}

/* ---- the program ------------------------------------------------------------------------ */

struct call {
	size_t at;     /* the call instruction */
	size_t target; /* index into subprogram starts */
};

static void emit_decide(struct prog *p, enum devwl_behavior behavior)
{
	size_t to_exit, allow[4];

	if (behavior == DEVWL_BEHAVIOR_ALLOW) {
		/* Denied when the union of the four shares a bit with the request. */
		emit(p, alu_reg(BPF_ALU64, BPF_MOV, BPF_REG_0, R_PACKED));
		emit(p, alu(BPF_ALU64, BPF_RSH, BPF_REG_0, 4));
		emit(p, alu_reg(BPF_ALU64, BPF_OR, R_PACKED, BPF_REG_0));
		emit(p, alu_reg(BPF_ALU64, BPF_MOV, BPF_REG_0, R_PACKED));
		emit(p, alu(BPF_ALU64, BPF_RSH, BPF_REG_0, 8));
		emit(p, alu_reg(BPF_ALU64, BPF_OR, R_PACKED, BPF_REG_0));
		emit(p, alu_reg(BPF_ALU64, BPF_AND, R_PACKED, R_ACCESS));
		emit(p, alu(BPF_ALU64, BPF_AND, R_PACKED, DEVWL_ACC_MASK));
		if (p->map_fd >= 0) {
			p->to_tail[p->nto_tail++] = emit(p, jmp32(BPF_JNE, R_PACKED, 0));
			emit_allow(p);
			return;
		}
		emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_0, 0));
		to_exit = emit(p, jmp32(BPF_JNE, R_PACKED, 0));
		emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_0, 1));
		patch(p, to_exit);
		emit(p, exit_insn());
		return;
	}
	/* Allowed when one present exception covers every bit asked for. */
	for (int i = 0; i < 4; i++) {
		size_t skip;
		emit(p, alu_reg(BPF_ALU64, BPF_MOV, BPF_REG_0, R_PACKED));
		if (i)
			emit(p, alu(BPF_ALU64, BPF_RSH, BPF_REG_0, 4 * i));
		emit(p, alu_reg(BPF_ALU64, BPF_MOV, BPF_REG_1, BPF_REG_0));
		emit(p, alu(BPF_ALU64, BPF_AND, BPF_REG_1, PRESENT));
		skip = emit(p, jmp32(BPF_JEQ, BPF_REG_1, 0));
		emit(p, alu(BPF_ALU64, BPF_XOR, BPF_REG_0, DEVWL_ACC_MASK));
		emit(p, alu_reg(BPF_ALU64, BPF_AND, BPF_REG_0, R_ACCESS));
		allow[i] = emit(p, jmp32(BPF_JEQ, BPF_REG_0, 0));
		patch(p, skip);
	}
	emit_deny(p);
	for (int i = 0; i < 4; i++)
		patch(p, allow[i]);
	emit_allow(p);
}

static void emit_map(struct prog *p, uint8_t dst, int fd)
{
	emit(p, (struct bpf_insn){.code = BPF_LD | BPF_DW | BPF_IMM,
				  .dst_reg = dst,
				  .src_reg = BPF_PSEUDO_MAP_FD,
				  .imm = fd});
	emit(p, (struct bpf_insn){0});
}

/*
 * The record on the stack below the saved context pointer (struct bpfdev_record), handed
 * to bpf_ringbuf_output(map, &rec, sizeof(rec), 0); whatever it returns (a full ring
 * drops the record), the answer is r0 = verdict. Expects the context in r6; the count in
 * r9 when allowed (a denial counts 1).
 */
static void emit_record(struct prog *p, bool allowed)
{
	const int16_t rec = STACK_REC;

	for (int16_t off = 0; off < 12; off += 4) {
		emit(p, ldx_w(BPF_REG_1, BPF_REG_6, off));
		emit(p, stx(BPF_W, BPF_REG_10, BPF_REG_1, (int16_t)(rec + off)));
	}
	emit(p, st_imm(BPF_W, BPF_REG_10, (int16_t)(rec + 12), allowed));
	if (allowed)
		emit(p, stx(BPF_DW, BPF_REG_10, BPF_REG_9, (int16_t)(rec + 32)));
	else
		emit(p, st_imm(BPF_DW, BPF_REG_10, (int16_t)(rec + 32), 1));
	if (p->helpers & BPFDEV_RECORD_PID) {
		emit(p, call_helper(BPF_FUNC_get_current_pid_tgid));
		emit(p, stx(BPF_DW, BPF_REG_10, BPF_REG_0, (int16_t)(rec + 16)));
	} else {
		emit(p, st_imm(BPF_DW, BPF_REG_10, (int16_t)(rec + 16), 0));
	}
	if (p->helpers & BPFDEV_RECORD_CGROUP) {
		emit(p, call_helper(BPF_FUNC_get_current_cgroup_id));
		emit(p, stx(BPF_DW, BPF_REG_10, BPF_REG_0, (int16_t)(rec + 24)));
	} else {
		emit(p, st_imm(BPF_DW, BPF_REG_10, (int16_t)(rec + 24), 0));
	}
	emit_map(p, BPF_REG_1, p->map_fd);
	emit(p, alu_reg(BPF_ALU64, BPF_MOV, BPF_REG_2, BPF_REG_10));
	emit(p, alu(BPF_ALU64, BPF_ADD, BPF_REG_2, rec));
	emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_3, (int32_t)sizeof(struct bpfdev_record)));
	emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_4, 0));
	emit(p, call_helper(BPF_FUNC_ringbuf_output));
	/* A reporter never refuses: what it records as denied, the v1 rules refuse. */
	emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_0, allowed || (p->helpers & BPFDEV_REPORT_ONLY)));
	emit(p, exit_insn());
}

/* The denial tail: every way to deny jumps here. */
static void emit_record_tail(struct prog *p)
{
	for (size_t i = 0; i < p->nto_tail; i++)
		patch(p, p->to_tail[i]);
	emit(p, ldx_dw(BPF_REG_6, BPF_REG_10, STACK_CTX));
	emit_record(p, false);
}

/*
 * The allow tail (see the top): r6 the context, r7 the time, r8 the seen map's value, r9
 * the count reported; r6-r9 are free once the decision is made. The clock is read only
 * when the tick (jiffies) moved since the key's last access: a flood's opens within one
 * tick are surely within the window, and bpf_ktime_get_ns() costs a paravirtual clock
 * read (hundreds of ns in some VMs), bpf_jiffies64() a load.
 */
static void emit_allow_tail(struct prog *p)
{
	const int16_t key = STACK_KEY, seen = STACK_SEEN;
	size_t absent, same_tick, due, report;

	emit(p, ldx_dw(BPF_REG_6, BPF_REG_10, STACK_CTX));
	for (int16_t off = 0; off < 12; off += 4) {
		emit(p, ldx_w(BPF_REG_1, BPF_REG_6, off));
		emit(p, stx(BPF_W, BPF_REG_10, BPF_REG_1, (int16_t)(key + off)));
	}
	emit(p, st_imm(BPF_W, BPF_REG_10, (int16_t)(key + 12), 0));
	emit_map(p, BPF_REG_1, p->seen_fd);
	emit(p, alu_reg(BPF_ALU64, BPF_MOV, BPF_REG_2, BPF_REG_10));
	emit(p, alu(BPF_ALU64, BPF_ADD, BPF_REG_2, key));
	emit(p, call_helper(BPF_FUNC_map_lookup_elem));
	absent =
		emit(p, (struct bpf_insn){.code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_0});
	emit(p, alu_reg(BPF_ALU64, BPF_MOV, BPF_REG_8, BPF_REG_0));
	/* The same tick as the key's last access: within the window. */
	emit(p, call_helper(BPF_FUNC_jiffies64));
	emit(p, ldx_dw(BPF_REG_1, BPF_REG_8, (int16_t)offsetof(struct bpfdev_seen, tick)));
	same_tick = emit(p, (struct bpf_insn){.code = BPF_JMP | BPF_JEQ | BPF_X,
					      .dst_reg = BPF_REG_0,
					      .src_reg = BPF_REG_1});
	emit(p, stx(BPF_DW, BPF_REG_8, BPF_REG_0, (int16_t)offsetof(struct bpfdev_seen, tick)));
	emit(p, call_helper(BPF_FUNC_ktime_get_ns));
	emit(p, alu_reg(BPF_ALU64, BPF_MOV, BPF_REG_7, BPF_REG_0));
	emit(p, ldx_dw(BPF_REG_1, BPF_REG_8, (int16_t)offsetof(struct bpfdev_seen, last_ns)));
	emit(p, alu_reg(BPF_ALU64, BPF_MOV, BPF_REG_2, BPF_REG_7));
	emit(p, alu_reg(BPF_ALU64, BPF_SUB, BPF_REG_2, BPF_REG_1));
	due = emit(p, (struct bpf_insn){.code = BPF_JMP | BPF_JGE | BPF_K,
					.dst_reg = BPF_REG_2,
					.imm = BPFDEV_SEEN_WINDOW_NS});
	/* Within the window: count it, allow. */
	patch(p, same_tick);
	emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_1, 1));
	emit(p, atomic_dw(BPF_ADD, BPF_REG_8, BPF_REG_1,
			  (int16_t)offsetof(struct bpfdev_seen, count)));
	emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_0, 1));
	emit(p, exit_insn());
	/* Due: stamp, take what was counted, report it with this one. */
	patch(p, due);
	emit(p, stx(BPF_DW, BPF_REG_8, BPF_REG_7, (int16_t)offsetof(struct bpfdev_seen, last_ns)));
	emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_9, 0));
	emit(p, atomic_dw(BPF_XCHG, BPF_REG_8, BPF_REG_9,
			  (int16_t)offsetof(struct bpfdev_seen, count)));
	emit(p, alu(BPF_ALU64, BPF_ADD, BPF_REG_9, 1));
	report = emit(p, ja());
	/* The first of its key: insert it (a full LRU map forgets the least used). */
	patch(p, absent);
	emit(p, call_helper(BPF_FUNC_ktime_get_ns));
	emit(p, stx(BPF_DW, BPF_REG_10, BPF_REG_0,
		    (int16_t)(seen + (int16_t)offsetof(struct bpfdev_seen, last_ns))));
	emit(p, st_imm(BPF_DW, BPF_REG_10,
		       (int16_t)(seen + (int16_t)offsetof(struct bpfdev_seen, count)), 0));
	emit(p, st_imm(BPF_DW, BPF_REG_10,
		       (int16_t)(seen + (int16_t)offsetof(struct bpfdev_seen, tick)), 0));
	emit_map(p, BPF_REG_1, p->seen_fd);
	emit(p, alu_reg(BPF_ALU64, BPF_MOV, BPF_REG_2, BPF_REG_10));
	emit(p, alu(BPF_ALU64, BPF_ADD, BPF_REG_2, key));
	emit(p, alu_reg(BPF_ALU64, BPF_MOV, BPF_REG_3, BPF_REG_10));
	emit(p, alu(BPF_ALU64, BPF_ADD, BPF_REG_3, seen));
	emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_4, BPF_ANY));
	emit(p, call_helper(BPF_FUNC_map_update_elem));
	emit(p, alu(BPF_ALU64, BPF_MOV, BPF_REG_9, 1));
	patch(p, report);
	emit_record(p, true);
}

static void emit_call(struct prog *p, struct call *calls, size_t *ncalls, size_t target)
{
	calls[*ncalls].at =
		emit(p, (struct bpf_insn){.code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_CALL});
	calls[(*ncalls)++].target = target;
	/* Undo the leaf's xor, then merge. */
	emit(p, alu_reg(BPF_ALU64, BPF_XOR, BPF_REG_0, R_ACCESS));
	emit(p, alu_reg(BPF_ALU64, BPF_OR, R_PACKED, BPF_REG_0));
}

static int compile(const struct devwl_node *node, int map_fd, int seen_fd, unsigned int helpers,
		   struct bpf_insn **ret_insns, size_t *ret_count)
{
	static const unsigned types[2] = {DEVWL_DEV_BLOCK, DEVWL_DEV_CHAR};
	struct type_set ts[2] = {{0}};
	struct prog p = {.map_fd = map_fd, .seen_fd = seen_fd, .helpers = helpers};
	struct call calls[4];
	size_t ncalls = 0, sub_start[4], to_section[2], to_decide[2], deny;
	enum devwl_behavior behavior;
	int r;

	if (!node || !ret_insns || !ret_count)
		return -EINVAL;
	behavior = devwl_node_behavior(node);
	for (int i = 0; i < 2; i++) {
		r = type_set_build(node, types[i], &ts[i]);
		if (r < 0)
			goto out;
	}

	/* ctx: u32 access_type (access << 16 | type), u32 major, u32 minor. */
	if (map_fd >= 0)
		emit(&p, stx(BPF_DW, BPF_REG_10, BPF_REG_1, STACK_CTX));
	emit(&p, ldx_w(BPF_REG_2, BPF_REG_1, 0));
	emit(&p, alu_reg(BPF_ALU, BPF_MOV, R_ACCESS, BPF_REG_2));
	emit(&p, alu(BPF_ALU, BPF_RSH, R_ACCESS, 16));
	emit(&p, alu(BPF_ALU, BPF_AND, BPF_REG_2, 0xffff));
	emit(&p, ldx_w(R_MAJOR, BPF_REG_1, 4));
	emit(&p, ldx_w(R_MINOR, BPF_REG_1, 8));
	/* An access bit devwl does not know, or another type: deny, as the check refuses. */
	deny = emit(&p, jmp32(BPF_JSET, R_ACCESS, ~(uint32_t)DEVWL_ACC_MASK));
	for (int i = 0; i < 2; i++)
		to_section[i] = emit(&p, jmp32(BPF_JEQ, BPF_REG_2, types[i]));
	patch(&p, deny);
	emit_deny(&p);
	for (int i = 0; i < 2; i++) {
		const struct type_set *t = &ts[i];
		patch(&p, to_section[i]);
		emit(&p, alu(BPF_ALU64, BPF_MOV, R_PACKED, (int32_t)(t->all << 12)));
		if (t->nmajors || t->nminw) {
			emit(&p, alu_reg(BPF_ALU64, BPF_MOV, A_MAJOR, R_MAJOR));
			emit(&p, alu_reg(BPF_ALU64, BPF_MOV, A_MINOR, R_MINOR));
			emit(&p, alu_reg(BPF_ALU64, BPF_MOV, A_KEY, R_ACCESS));
		}
		if (t->nmajors)
			emit_call(&p, calls, &ncalls, 2 * (size_t)i);
		if (t->nminw) {
			if (t->nmajors) {
				emit(&p, alu_reg(BPF_ALU64, BPF_MOV, A_MINOR, R_MINOR));
				emit(&p, alu_reg(BPF_ALU64, BPF_MOV, A_KEY, R_ACCESS));
			}
			emit_call(&p, calls, &ncalls, 2 * (size_t)i + 1);
		}
		to_decide[i] = i == 0 ? emit(&p, ja()) : 0;
	}
	patch(&p, to_decide[0]);
	emit_decide(&p, behavior);
	if (map_fd >= 0)
		emit_record_tail(&p);

	/* The subprograms, in the order the calls name them: 2i majors, 2i+1 minors. */
	for (int i = 0; i < 2; i++) {
		const struct type_set *t = &ts[i];
		sub_start[2 * i] = sub_start[2 * i + 1] = SIZE_MAX;
		if (t->nmajors) {
			struct search s = {.p = &p,
					   .t = t,
					   .reg = A_MAJOR,
					   .keys = t->majors,
					   .miss = 0,
					   .leaf = leaf_major};
			sub_start[2 * i] = p.n;
			search(&s, 0, t->nmajors);
		}
		if (t->nminw) {
			struct search s = {.p = &p,
					   .t = t,
					   .reg = A_MINOR,
					   .keys = t->minw,
					   .miss = 0,
					   .leaf = leaf_minor};
			sub_start[2 * i + 1] = p.n;
			search(&s, 0, t->nminw);
		}
	}
	for (size_t c = 0; !p.err && c < ncalls; c++)
		p.v[calls[c].at].imm = (int32_t)(sub_start[calls[c].target] - calls[c].at - 1);
	if (!p.err && p.n > DEVWL_BPF_INSNS_MAX)
		p.err = -E2BIG;
	r = p.err;
	if (r == 0) {
		*ret_insns = TAKE_PTR(p.v);
		*ret_count = p.n;
	}
out:
	free(p.v);
	type_set_free(&ts[0]);
	type_set_free(&ts[1]);
	return r;
}

int bpfdev_compile(const struct devwl_node *node, struct bpf_insn **ret_insns, size_t *ret_count)
{
	return compile(node, -1, -1, 0, ret_insns, ret_count);
}

int bpfdev_compile_record(const struct devwl_node *node, int map_fd, int seen_fd,
			  unsigned int helpers, struct bpf_insn **ret_insns, size_t *ret_count)
{
	bool accesses = helpers & BPFDEV_RECORD_ACCESSES;

	if (map_fd < 0 || accesses != (seen_fd >= 0) ||
	    (helpers & ~(BPFDEV_RECORD_PID | BPFDEV_RECORD_CGROUP | BPFDEV_RECORD_ACCESSES |
			 BPFDEV_REPORT_ONLY)))
		return -EINVAL;
	return compile(node, map_fd, seen_fd, helpers, ret_insns, ret_count);
}

DEVWL_EXPORT int devwl_node_compile_bpf(const struct devwl_node *node, struct bpf_insn **ret_insns,
					size_t *ret_count)
{
	return bpfdev_compile(node, ret_insns, ret_count);
}
