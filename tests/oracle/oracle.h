/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The differential oracle: random operation sequences applied to libdevwl and to the
 * kernel's cgroup-v1 devices controller, compared result by result.
 */
#ifndef DEVWL_ORACLE_H
#define DEVWL_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devwl.h"

/* Node paths: "/" and up to three levels below it, from a small set of names. */
#define ORACLE_PATH_MAX	 16
#define ORACLE_DEPTH_MAX 3

enum op_kind {
	OP_MKDIR,
	OP_RMDIR,
	OP_WRITE,
	OP_CHECK,
	OP_LIST,
	OP_BIND,   /* a selector binding on a node, written as devwld's follow_bind() does */
	OP_REPLUG, /* a selector's devices change: the bindings' plan written */
};

/* Fake selectors: each names a set of devices of the probes' space that replugs change. */
#define ORACLE_SELECTORS 3
#define ORACLE_SET_MAX	 6

struct op {
	enum op_kind kind;
	char path[ORACLE_PATH_MAX];
	/* OP_WRITE */
	enum devwl_file file;
	char *buf; /* may hold NUL bytes; heap, owned by the op */
	size_t len;
	/* OP_CHECK: type DEVWL_DEV_CHAR/_BLOCK, access one of {}, r, w, rw, m */
	int type;
	uint32_t major, minor;
	int access;
	/* OP_BIND, OP_REPLUG: the selector; OP_BIND: allow, else deny */
	unsigned sel;
	bool allow;
	/* OP_REPLUG: what the selector names from now on */
	struct devwl_rule set[ORACLE_SET_MAX];
	size_t nset;
};

/* gen.c: a deterministic sequence of n operations for a seed. */
struct op *ops_generate(uint64_t seed, size_t n);
void ops_free(struct op *ops, size_t n);
/* One line describing op (bytes escaped, long writes abbreviated); returns buf. */
char *op_describe(const struct op *op, char *buf, size_t size);

/* kernel.c: the kernel side. Every function returns 0 or a negative errno. */
struct kside;
/*
 * Check that we can run at all; on "cannot run here" returns 77 and fills reason.
 * Otherwise creates the private tmpfs with the probe device nodes.
 */
int kside_new(struct kside **ret, char *reason, size_t size);
void kside_free(struct kside *ks);
/* A fresh, empty scratch cgroup for node "/" (and removal of the previous one). */
int kside_begin(struct kside *ks);
/* Remove every cgroup made since kside_begin, deepest first. */
int kside_end(struct kside *ks);
int kside_mkdir(struct kside *ks, const char *path);
int kside_rmdir(struct kside *ks, const char *path);
/* write(2) of buf[0..len) to devices.allow/deny: 0 or -errno. */
int kside_write(struct kside *ks, const char *path, enum devwl_file file, const char *buf,
		size_t len);
/* devices.list; caller frees *ret_text. */
int kside_list(struct kside *ks, const char *path, char **ret_text);
/* One probe process in the node's cgroup: 1 allowed, 0 denied (EPERM), < 0 error. */
int kside_check(struct kside *ks, const char *path, int type, uint32_t major, uint32_t minor,
		int access);
/* Remove scratch cgroups left behind by oracle processes that no longer exist. */
void kside_reap_stale(void);

/*
 * follow.c: selector bindings on both sides (OP_BIND, OP_REPLUG) and the invariants of a
 * replug. One per run; the plain writes that succeeded and the nodes removed are told.
 */
struct oracle_follow;
struct oracle_follow *oracle_follow_new(void);
void oracle_follow_free(struct oracle_follow *f);
/* op stays valid while f is in use. 0 or -ENOMEM. */
int oracle_follow_note_write(struct oracle_follow *f, const struct op *op);
void oracle_follow_note_rmdir(struct oracle_follow *f, const char *path);
/*
 * op (OP_BIND or OP_REPLUG) on p and the kernel: 0 all agreed and held, 1 a divergence
 * or a broken invariant, < 0 the oracle failed; what says why. checks: the invariant
 * checks made, added to.
 */
int oracle_follow_apply(struct oracle_follow *f, struct devwl_policy *p, struct kside *ks,
			const struct op *op, size_t *checks, char *what, size_t size);

/* Devices the probes use: c/b, majors 1..3, minors 0..2 (never 0:0). */
#define PROBE_MAJOR_MIN 1
#define PROBE_MAJOR_MAX 3
#define PROBE_MINOR_MIN 0
#define PROBE_MINOR_MAX 2

#endif
