/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Random operation sequences for the oracle. Generation is deterministic per seed and
 * independent of results, so any prefix can be replayed on fresh state. The generator
 * tracks which nodes exist (mkdir/rmdir outcomes do not depend on the policy) so most
 * operations hit real nodes, and it draws rules from small major/minor sets so they
 * collide, plus every corner of the kernel's grammar we know of.
 */
#include <stdio.h>
#include <string.h>

#include "oracle.h"
#include "util.h"

struct rng {
	uint64_t s;
};

/* splitmix64: tiny, and the same sequence on every machine. */
static uint64_t rnd64(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned rnd(struct rng *r, unsigned n)
{
	return (unsigned)(rnd64(r) % n);
}

static bool chance(struct rng *r, unsigned percent)
{
	return rnd(r, 100) < percent;
}

/* A growable byte buffer; allocation failure aborts the generator (a test program). */
struct bytes {
	char *p;
	size_t len, cap;
};

static void put(struct bytes *b, const void *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			abort();
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct bytes *b, const char *s)
{
	put(b, s, strlen(s));
}

static void putch(struct bytes *b, char c)
{
	put(b, &c, 1);
}

/* The kernel's isspace() set, 0xa0 included. */
static const char kspaces[] = {' ', '\t', '\n', '\v', '\f', '\r', (char)0xa0};
/* Bytes that look like whitespace to someone but are not to the kernel. */
static const char not_spaces[] = {(char)0x85, 0x1c, 0x1f, (char)0xff, 0x7f, '_'};

static void gen_one_space(struct rng *r, struct bytes *b)
{
	if (chance(r, 4))
		putch(b, not_spaces[rnd(r, sizeof(not_spaces))]);
	else if (chance(r, 65))
		putch(b, ' ');
	else
		putch(b, kspaces[rnd(r, sizeof(kspaces))]);
}

/* A separator the grammar wants exactly one whitespace char at. */
static void gen_sep(struct rng *r, struct bytes *b)
{
	unsigned k = rnd(r, 100);

	if (k < 2)
		return; /* none */
	gen_one_space(r, b);
	if (k >= 98)
		gen_one_space(r, b); /* two */
}

/* Optional whitespace where the grammar strips it (both ends of the write). */
static void gen_pad(struct rng *r, struct bytes *b)
{
	if (!chance(r, 25))
		return;
	for (unsigned n = 1 + rnd(r, 3); n; n--)
		putch(b, kspaces[rnd(r, sizeof(kspaces))]);
}

static void gen_number(struct rng *r, struct bytes *b, unsigned lo, unsigned hi)
{
	static const char *const corners[] = {
		"4294967295", /* the same as '*' */
		"4294967294",
		"4294967296",
		"04294967295",	/* 11 digits, fits */
		"99999999999",	/* 11 digits, too big */
		"000000000001", /* 12 digits */
		"00000000001",	/* 11 digits */
		"0",
		"00",
		"",
		"**",
		"*1",
		"1*",
		"-1",
		"+1",
		"0x1",
		" 1",
	};
	unsigned k = rnd(r, 100);
	char s[32];

	if (k < 58) {
		snprintf(s, sizeof(s), "%u", lo + rnd(r, hi - lo + 1));
		puts_(b, s);
	} else if (k < 78) {
		putch(b, '*');
	} else if (k < 89) {
		/* leading zeros, usually still within 11 digits */
		for (unsigned z = 1 + rnd(r, 10); z; z--)
			putch(b, '0');
		snprintf(s, sizeof(s), "%u", lo + rnd(r, hi - lo + 1));
		puts_(b, s);
	} else {
		puts_(b, corners[rnd(r, ARRAY_SIZE(corners))]);
	}
}

static void gen_access(struct rng *r, struct bytes *b)
{
	static const char rwm[] = "rwm";
	static const char *const odd[] = {"x",	  "rx",	  "R",	  "a",	  " r",
					  "r w",  "rwmx", "rrrw", "mmmm", "wrmr",
					  "r\nw", "\nrw", "r\rw", "-",	  "rw\t"};
	unsigned k = rnd(r, 100);

	if (k < 62) {
		/* a non-empty subset in random order */
		char s[4];
		unsigned n = 0, mask = 1 + rnd(r, 7);
		for (unsigned i = 0; i < 3; i++)
			if (mask & (1u << i))
				s[n++] = rwm[i];
		for (unsigned i = n; i > 1; i--) {
			unsigned j = rnd(r, i);
			char t = s[i - 1];
			s[i - 1] = s[j];
			s[j] = t;
		}
		put(b, s, n);
	} else if (k < 72) {
		/* repeats */
		for (unsigned n = 1 + rnd(r, 4); n; n--)
			putch(b, rwm[rnd(r, 3)]);
	} else if (k < 95) {
		puts_(b, odd[rnd(r, ARRAY_SIZE(odd))]);
	}
	/* else: no access field at all */
}

static void gen_a_rule(struct rng *r, struct bytes *b)
{
	static const char *const tails[] = {"",		"",	  "",  " junk",
					    " *:* rwm", " 1:1 r", "b", "\nc 1:1 r",
					    "\t",	"xyz",	  " ", "\xa0junk"};

	putch(b, 'a');
	puts_(b, tails[rnd(r, ARRAY_SIZE(tails))]);
}

/* Keys of recent clean rules: reusing them with other access makes rules collide. */
struct keys {
	struct {
		char type;
		unsigned major, minor; /* index into the small sets; 3 is '*' */
	} v[4];
	unsigned n;
};

/* A well-formed "b|c MAJOR:MINOR ACCESS" from the small sets, so rules collide. */
static void gen_clean_rule(struct rng *r, struct keys *keys, struct bytes *b)
{
	static const char *const accs[] = {"r", "w", "m", "rw", "rm", "wm", "rwm"};
	char s[64], maj[8], min[8], type = chance(r, 55) ? 'c' : 'b';
	unsigned ma = rnd(r, 4), mi = rnd(r, 4);

	if (keys->n && chance(r, 50)) {
		unsigned k = rnd(r, keys->n < ARRAY_SIZE(keys->v) ? keys->n
								  : (unsigned)ARRAY_SIZE(keys->v));
		type = keys->v[k].type;
		ma = keys->v[k].major;
		mi = keys->v[k].minor;
	} else {
		unsigned k = keys->n++ % ARRAY_SIZE(keys->v);
		keys->v[k].type = type;
		keys->v[k].major = ma;
		keys->v[k].minor = mi;
	}
	snprintf(maj, sizeof(maj), "%u", PROBE_MAJOR_MIN + ma);
	snprintf(min, sizeof(min), "%u", PROBE_MINOR_MIN + mi);
	snprintf(s, sizeof(s), "%c %s:%s %s", type, ma == 3 ? "*" : maj, mi == 3 ? "*" : min,
		 accs[rnd(r, ARRAY_SIZE(accs))]);
	puts_(b, s);
}

/* One write payload for devices.allow/deny; true when it is an "a" rule. */
static bool gen_rule(struct rng *r, struct keys *keys, struct bytes *b)
{
	static const char bad_types[] = {'d', 'C', 'B', 'A', '*', '1', 'u', ':'};
	unsigned k = rnd(r, 100);

	if (k >= 20 && chance(r, 45)) {
		gen_clean_rule(r, keys, b);
		return false;
	}
	if (k < 1)
		return false; /* an empty write */
	gen_pad(r, b);
	if (k < 20) {
		gen_a_rule(r, b);
	} else {
		if (k < 60)
			putch(b, 'c');
		else if (k < 96)
			putch(b, 'b');
		else
			putch(b, bad_types[rnd(r, sizeof(bad_types))]);
		gen_sep(r, b);
		gen_number(r, b, PROBE_MAJOR_MIN, PROBE_MAJOR_MAX);
		if (chance(r, 97))
			putch(b, ':');
		else
			putch(b, chance(r, 50) ? ' ' : ';');
		gen_number(r, b, PROBE_MINOR_MIN, PROBE_MINOR_MAX);
		if (chance(r, 96)) {
			gen_sep(r, b);
			gen_access(r, b);
		}
	}
	gen_pad(r, b);
	/* A second rule on another line is ignored by the kernel. */
	if (chance(r, 5)) {
		putch(b, '\n');
		puts_(b, chance(r, 50) ? "c 1:1 rwm" : "a");
	}
	/* NUL bytes inside the write. */
	if (b->len && chance(r, 4)) {
		size_t at = rnd(r, (unsigned)b->len + 1);
		put(b, "", 1); /* grow by one */
		memmove(b->p + at + 1, b->p + at, b->len - 1 - at);
		b->p[at] = '\0';
	}
	/* Around the one-page limit: exactly 4096 bytes is fine, one more is E2BIG. */
	if (chance(r, 3)) {
		size_t want = chance(r, 50) ? DEVWL_RULE_WRITE_MAX
					    : DEVWL_RULE_WRITE_MAX + 1 + rnd(r, 200);
		char fill = chance(r, 70) ? ' ' : 'x';
		while (b->len < want)
			putch(b, fill);
	}
	return k < 20;
}

/* ---- the node tree the generator expects ---------------------------------------------- */

static const char *const names[] = {"a", "b", "c"};

struct tree {
	char paths[64][ORACLE_PATH_MAX];
	size_t n;
};

static int tree_find(const struct tree *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->paths[i], path) == 0)
			return (int)i;
	return -1;
}

static unsigned depth_of(const char *path)
{
	unsigned d = 0;

	if (strcmp(path, "/") == 0)
		return 0;
	for (; *path; path++)
		d += *path == '/';
	return d;
}

static bool has_children(const struct tree *t, const char *path)
{
	size_t len = strlen(path);

	for (size_t i = 0; i < t->n; i++)
		if (strncmp(t->paths[i], path, len) == 0 && t->paths[i][len] == '/')
			return true;
	return false;
}

static void child_path(char *out, const char *parent, const char *name)
{
	snprintf(out, ORACLE_PATH_MAX, "%s/%s", strcmp(parent, "/") == 0 ? "" : parent, name);
}

static void random_path(struct rng *r, char *out)
{
	unsigned d = 1 + rnd(r, ORACLE_DEPTH_MAX);

	strcpy(out, "/");
	for (unsigned i = 0; i < d; i++) {
		char tmp[ORACLE_PATH_MAX];
		child_path(tmp, out, names[rnd(r, ARRAY_SIZE(names))]);
		strcpy(out, tmp);
	}
}

/* Leaves more often than inner nodes: an "a" write only switches a node without children. */
static const char *pick_node(struct rng *r, const struct tree *t)
{
	for (int tries = 0; tries < 3; tries++) {
		const char *p = t->paths[rnd(r, (unsigned)t->n)];
		if (!has_children(t, p) || tries == 2)
			return p;
	}
	return "/";
}

/* ---- fake selectors and the nodes bound to them --------------------------------------- */

struct sels {
	struct devwl_rule set[ORACLE_SELECTORS][ORACLE_SET_MAX];
	size_t n[ORACLE_SELECTORS];
	char bound[16][ORACLE_PATH_MAX]; /* nodes bindings were made on, most recent last */
	size_t nbound;
};

static uint8_t gen_set_access(struct rng *r)
{
	static const uint8_t accs[] = {
		DEVWL_ACC_READ | DEVWL_ACC_WRITE,
		DEVWL_ACC_READ | DEVWL_ACC_WRITE,
		DEVWL_ACC_READ,
		DEVWL_ACC_WRITE,
		DEVWL_ACC_MKNOD,
		DEVWL_ACC_READ | DEVWL_ACC_MKNOD,
		DEVWL_ACC_READ | DEVWL_ACC_WRITE | DEVWL_ACC_MKNOD,
	};

	return accs[rnd(r, ARRAY_SIZE(accs))];
}

static bool set_has(const struct devwl_rule *set, size_t n, const struct devwl_rule *x)
{
	for (size_t i = 0; i < n; i++)
		if (set[i].type == x->type && set[i].major == x->major && set[i].minor == x->minor)
			return true;
	return false;
}

/* Selector k's devices change as a replug changes them: numbers vanish, new ones appear
 * (often one that vanished from another selector), access changes. */
static void gen_replug(struct rng *r, struct sels *ss, unsigned k, struct op *op)
{
	struct devwl_rule *set = ss->set[k];
	size_t n = 0;

	op->kind = OP_REPLUG;
	op->sel = k;
	strcpy(op->path, "/");
	for (size_t i = 0; i < ss->n[k]; i++) {
		if (chance(r, 30))
			continue;
		set[n] = set[i];
		if (chance(r, 20))
			set[n].access = gen_set_access(r);
		n++;
	}
	for (unsigned add = rnd(r, 3) + (n == 0); add && n < ORACLE_SET_MAX; add--) {
		struct devwl_rule x = {
			.type = chance(r, 55) ? DEVWL_DEV_CHAR : DEVWL_DEV_BLOCK,
			.access = gen_set_access(r),
			.major = PROBE_MAJOR_MIN + rnd(r, PROBE_MAJOR_MAX - PROBE_MAJOR_MIN + 1),
			.minor = PROBE_MINOR_MIN + rnd(r, PROBE_MINOR_MAX - PROBE_MINOR_MIN + 1),
		};
		unsigned other = rnd(r, ORACLE_SELECTORS);

		if (ss->n[other] && chance(r, 40))
			x = ss->set[other][rnd(r, (unsigned)ss->n[other])];
		if (!set_has(set, n, &x))
			set[n++] = x;
	}
	ss->n[k] = n;
	memcpy(op->set, set, n * sizeof(*set));
	op->nset = n;
}

/* A binding, on a node bound before more often than not, so bindings share nodes. */
static void gen_bind(struct rng *r, const struct tree *t, struct sels *ss, struct op *op)
{
	unsigned k = rnd(r, ORACLE_SELECTORS);

	if (!ss->n[k]) {
		gen_replug(r, ss, k, op);
		return;
	}
	op->kind = OP_BIND;
	op->sel = k;
	op->allow = chance(r, 70);
	if (ss->nbound && chance(r, 60))
		strcpy(op->path, ss->bound[rnd(r, (unsigned)ss->nbound)]);
	else
		strcpy(op->path, t->paths[rnd(r, (unsigned)t->n)]);
	if (ss->nbound == ARRAY_SIZE(ss->bound))
		memmove(ss->bound[0], ss->bound[1], --ss->nbound * sizeof(ss->bound[0]));
	strcpy(ss->bound[ss->nbound++], op->path);
}

/* A node removed takes its bindings with it. */
static void forget_bound(struct sels *ss, const char *path)
{
	size_t kept = 0;

	for (size_t i = 0; i < ss->nbound; i++)
		if (strcmp(ss->bound[i], path))
			memmove(ss->bound[kept++], ss->bound[i], sizeof(ss->bound[0]));
	ss->nbound = kept;
}

static void gen_op(struct rng *r, struct tree *t, struct keys *keys, struct sels *ss, struct op *op)
{
	unsigned k = rnd(r, 100);

	memset(op, 0, sizeof(*op));
	if (k < 11) {
		op->kind = OP_MKDIR;
		if (chance(r, 85)) {
			const char *parent = t->paths[rnd(r, (unsigned)t->n)];
			if (depth_of(parent) < ORACLE_DEPTH_MAX) {
				child_path(op->path, parent, names[rnd(r, ARRAY_SIZE(names))]);
			} else {
				random_path(r, op->path);
			}
		} else {
			random_path(r, op->path);
		}
		if (tree_find(t, op->path) < 0) {
			char parent[ORACLE_PATH_MAX];
			char *slash;
			strcpy(parent, op->path);
			slash = strrchr(parent, '/');
			if (slash == parent)
				slash[1] = '\0';
			else
				*slash = '\0';
			if (tree_find(t, parent) >= 0 && t->n < ARRAY_SIZE(t->paths))
				strcpy(t->paths[t->n++], op->path);
		}
	} else if (k < 20) {
		int i;
		op->kind = OP_RMDIR;
		if (t->n > 1 && chance(r, 80))
			strcpy(op->path, t->paths[1 + rnd(r, (unsigned)t->n - 1)]);
		else
			random_path(r, op->path);
		i = tree_find(t, op->path);
		if (i > 0 && !has_children(t, op->path)) {
			memmove(t->paths[i], t->paths[i + 1],
				(t->n-- - (size_t)i - 1) * sizeof(t->paths[0]));
			forget_bound(ss, op->path);
		}
	} else if (k < 64) {
		struct bytes b = {0};
		op->kind = OP_WRITE;
		op->file = chance(r, 50) ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY;
		if (gen_rule(r, keys, &b))
			strcpy(op->path, pick_node(r, t));
		else
			strcpy(op->path, t->paths[rnd(r, (unsigned)t->n)]);
		op->buf = b.p ? b.p : calloc(1, 1);
		if (!op->buf)
			abort();
		op->len = b.len;
	} else if (k < 67) {
		gen_bind(r, t, ss, op);
	} else if (k < 71) {
		gen_replug(r, ss, rnd(r, ORACLE_SELECTORS), op);
	} else if (k < 92) {
		static const int accesses[] = {0, DEVWL_ACC_READ, DEVWL_ACC_WRITE,
					       DEVWL_ACC_READ | DEVWL_ACC_WRITE, DEVWL_ACC_MKNOD};
		op->kind = OP_CHECK;
		strcpy(op->path, t->paths[rnd(r, (unsigned)t->n)]);
		op->type = chance(r, 55) ? DEVWL_DEV_CHAR : DEVWL_DEV_BLOCK;
		op->major = PROBE_MAJOR_MIN + rnd(r, PROBE_MAJOR_MAX - PROBE_MAJOR_MIN + 1);
		op->minor = PROBE_MINOR_MIN + rnd(r, PROBE_MINOR_MAX - PROBE_MINOR_MIN + 1);
		op->access = accesses[rnd(r, ARRAY_SIZE(accesses))];
	} else {
		op->kind = OP_LIST;
		strcpy(op->path, t->paths[rnd(r, (unsigned)t->n)]);
	}
}

struct op *ops_generate(uint64_t seed, size_t n)
{
	struct rng r = {seed * 0x2545f4914f6cdd1dULL + 1};
	struct tree t = {.n = 1};
	struct keys keys = {0};
	struct sels ss = {0};
	struct op *ops = calloc(n ? n : 1, sizeof(*ops));

	if (!ops)
		return NULL;
	strcpy(t.paths[0], "/");
	for (size_t i = 0; i < n; i++)
		gen_op(&r, &t, &keys, &ss, &ops[i]);
	return ops;
}

void ops_free(struct op *ops, size_t n)
{
	if (!ops)
		return;
	for (size_t i = 0; i < n; i++)
		free(ops[i].buf);
	free(ops);
}

/* Append s[0..n) to out as a C string literal body. */
static size_t escape(char *out, size_t size, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 5 < size; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n')
			o += (size_t)snprintf(out + o, size - o, "\\n");
		else if (c == '\t')
			o += (size_t)snprintf(out + o, size - o, "\\t");
		else if (c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, size - o, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	return o;
}

static void access_str(int access, char *s)
{
	char *p = s;

	if (access & DEVWL_ACC_READ)
		*p++ = 'r';
	if (access & DEVWL_ACC_WRITE)
		*p++ = 'w';
	if (access & DEVWL_ACC_MKNOD)
		*p++ = 'm';
	if (p == s)
		*p++ = '-';
	*p = '\0';
}

char *op_describe(const struct op *op, char *buf, size_t size)
{
	char body[512], acc[4];

	switch (op->kind) {
	case OP_MKDIR:
		snprintf(buf, size, "mkdir %s", op->path);
		break;
	case OP_RMDIR:
		snprintf(buf, size, "rmdir %s", op->path);
		break;
	case OP_WRITE:
		if (op->len <= 120) {
			escape(body, sizeof(body), op->buf, op->len);
		} else {
			/* Long writes are padding after a short head: show both ends. */
			size_t o = escape(body, sizeof(body), op->buf, 60);
			o += (size_t)snprintf(body + o, sizeof(body) - o, "\"...\"");
			escape(body + o, sizeof(body) - o, op->buf + op->len - 20, 20);
		}
		snprintf(buf, size, "write %s devices.%s \"%s\" (%zu bytes)", op->path,
			 op->file == DEVWL_FILE_ALLOW ? "allow" : "deny", body, op->len);
		break;
	case OP_CHECK:
		access_str(op->access, acc);
		snprintf(buf, size, "check %s %c %u:%u %s", op->path,
			 op->type == DEVWL_DEV_CHAR ? 'c' : 'b', op->major, op->minor, acc);
		break;
	case OP_LIST:
		snprintf(buf, size, "list %s", op->path);
		break;
	case OP_BIND:
		snprintf(buf, size, "bind %s selector-%u %s", op->path, op->sel,
			 op->allow ? "allow" : "deny");
		break;
	case OP_REPLUG: {
		size_t o = (size_t)snprintf(buf, size, "replug selector-%u:", op->sel);

		for (size_t i = 0; i < op->nset && o < size; i++) {
			char s[DEVWL_RULE_STR_MAX] = "?";

			(void)devwl_rule_format(&op->set[i], s, sizeof(s));
			o += (size_t)snprintf(buf + o, size - o, "%s %s", i ? "," : "", s);
		}
		if (!op->nset && o < size)
			snprintf(buf + o, size - o, " nothing");
		break;
	}
	}
	return buf;
}
