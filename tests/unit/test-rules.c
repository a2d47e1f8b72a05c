/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rule grammar (lib/rules.c) against a decision table, data/rules.tsv, whose rows
 * come from the edges of the kernel's parser (devcgroup_update_access): what is
 * accepted, what it parses to and how it prints; what is refused, where and why.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "access.h"
#include "devwl.h"
#include "rules.h"

#define FIELDS	 9
#define CELL_MAX 8192

/* One row of the table with its escapes decoded. */
struct row {
	unsigned lineno;
	char input[CELL_MAX];
	size_t input_len;
	char expect[16], type[4], major[16], minor[16], access[8];
	char format[64];
	size_t format_len;
	char offset[16], message[256];
};

/* Field by field: the struct has padding that no one initialises. */
static bool rule_eq(const struct devwl_rule *a, const struct devwl_rule *b)
{
	return a->type == b->type && a->access == b->access && a->major == b->major &&
	       a->minor == b->minor;
}

static int hexdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode \n \t \r \v \f \0 \\ \xHH; the table cannot hold those bytes raw. */
static size_t unescape(const char *s, char *out, size_t size, unsigned lineno)
{
	size_t o = 0;

	for (; *s; s++) {
		char c = *s;
		if (c == '\\') {
			s++;
			switch (*s) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case 'v':
				c = '\v';
				break;
			case 'f':
				c = '\f';
				break;
			case '0':
				c = '\0';
				break;
			case '\\':
				c = '\\';
				break;
			case 'x':
				if (hexdigit(s[1]) < 0 || hexdigit(s[2]) < 0)
					fail_msg("rules.tsv:%u: bad \\x escape", lineno);
				c = (char)(hexdigit(s[1]) << 4 | hexdigit(s[2]));
				s += 2;
				break;
			default:
				fail_msg("rules.tsv:%u: bad escape", lineno);
			}
		}
		if (o + 1 >= size)
			fail_msg("rules.tsv:%u: cell too long", lineno);
		out[o++] = c;
	}
	out[o] = '\0';
	return o;
}

static void copy_cell(char *dst, size_t size, const char *src, unsigned lineno)
{
	if (strlen(src) >= size)
		fail_msg("rules.tsv:%u: cell '%s' too long", lineno, src);
	strcpy(dst, src);
}

static struct row *load_table(size_t *ret_n)
{
	const char *dir = getenv("DEVWL_TEST_DATA");
	char path[4096], line[CELL_MAX];
	struct row *rows = NULL;
	size_t n = 0;
	unsigned lineno = 0;
	FILE *f;

	if (!dir)
		dir = "tests/unit/data";
	snprintf(path, sizeof(path), "%s/rules.tsv", dir);
	f = fopen(path, "re");
	if (!f)
		fail_msg("cannot open %s (set DEVWL_TEST_DATA)", path);
	while (fgets(line, sizeof(line), f)) {
		char *cells[FIELDS] = {NULL}, *p = line;
		size_t k = 0;
		struct row *r;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		for (k = 0; k < FIELDS; k++) {
			cells[k] = p;
			p = strchr(p, '\t');
			if (!p)
				break;
			*p++ = '\0';
		}
		if (k != FIELDS - 1 || p) {
			/* cmocka's fail_msg() is not declared noreturn: leave the loop. */
			fail_msg("rules.tsv:%u: want %d tab-separated fields", lineno, FIELDS);
			break;
		}
		rows = realloc(rows, (n + 1) * sizeof(*rows));
		assert_non_null(rows);
		r = &rows[n++];
		memset(r, 0, sizeof(*r));
		r->lineno = lineno;
		r->input_len = unescape(cells[0], r->input, sizeof(r->input), lineno);
		copy_cell(r->expect, sizeof(r->expect), cells[1], lineno);
		copy_cell(r->type, sizeof(r->type), cells[2], lineno);
		copy_cell(r->major, sizeof(r->major), cells[3], lineno);
		copy_cell(r->minor, sizeof(r->minor), cells[4], lineno);
		copy_cell(r->access, sizeof(r->access), cells[5], lineno);
		r->format_len = unescape(cells[6], r->format, sizeof(r->format), lineno);
		copy_cell(r->offset, sizeof(r->offset), cells[7], lineno);
		copy_cell(r->message, sizeof(r->message), cells[8], lineno);
	}
	fclose(f);
	*ret_n = n;
	return rows;
}

static uint32_t table_number(const char *s)
{
	return strcmp(s, "*") == 0 ? DEVWL_ANY : (uint32_t)strtoul(s, NULL, 10);
}

static unsigned table_access(const char *s)
{
	unsigned a = 0;

	if (strcmp(s, "-") == 0)
		return 0;
	for (; *s; s++)
		a |= *s == 'r' ? DEVWL_ACC_READ : *s == 'w' ? DEVWL_ACC_WRITE : DEVWL_ACC_MKNOD;
	return a;
}

static int table_type(const char *s)
{
	return s[0] == 'a' ? DEVWL_DEV_ALL : s[0] == 'b' ? DEVWL_DEV_BLOCK : DEVWL_DEV_CHAR;
}

static void check_accepted(const struct row *r)
{
	struct devwl_rule rule = {0}, again = {0};
	struct devwl_error err = {0};
	char buf[DEVWL_RULE_STR_MAX];
	int ret;

	ret = devwl_rule_parse(r->input, r->input_len, &rule, &err);
	if (ret != 0)
		fail_msg("rules.tsv:%u: refused (%d at %zu: %s), want accepted", r->lineno, ret,
			 err.offset, err.msg);
	if (rule.type != table_type(r->type) || rule.major != table_number(r->major) ||
	    rule.minor != table_number(r->minor) || rule.access != table_access(r->access))
		fail_msg("rules.tsv:%u: parsed type %u %u:%u access %u, want %s %s:%s %s",
			 r->lineno, rule.type, rule.major, rule.minor, rule.access, r->type,
			 r->major, r->minor, r->access);
	ret = devwl_rule_format(&rule, buf, sizeof(buf));
	if (ret != (int)r->format_len || strcmp(buf, r->format) != 0)
		fail_msg("rules.tsv:%u: formatted '%s' (%d), want '%s'", r->lineno, buf, ret,
			 r->format);
	/* What devices.list prints parses back to the same rule, except that an empty
	 * access field prints as nothing, which the grammar refuses as a missing field. */
	ret = devwl_rule_parse(buf, strlen(buf), &again, NULL);
	if (rule.access == 0) {
		if (ret != -EINVAL)
			fail_msg("rules.tsv:%u: '%s' re-parsed with %d, want -EINVAL", r->lineno,
				 buf, ret);
	} else if (ret != 0 || !rule_eq(&rule, &again)) {
		fail_msg("rules.tsv:%u: '%s' does not parse back to itself", r->lineno, buf);
	}
}

static void check_refused(const struct row *r)
{
	const struct devwl_rule sentinel = {.type = 99, .access = 99, .major = 7, .minor = 7};
	struct devwl_rule rule = sentinel;
	struct devwl_error err = {0};
	int want = strcmp(r->expect, "E2BIG") == 0 ? -E2BIG : -EINVAL;
	int ret;

	ret = devwl_rule_parse(r->input, r->input_len, &rule, &err);
	if (ret != want)
		fail_msg("rules.tsv:%u: returned %d, want %s", r->lineno, ret, r->expect);
	if (!rule_eq(&rule, &sentinel))
		fail_msg("rules.tsv:%u: ret_rule written on failure", r->lineno);
	if (err.code != ret)
		fail_msg("rules.tsv:%u: err.code %d, returned %d", r->lineno, err.code, ret);
	if (strcmp(r->offset, "-") != 0 && err.offset != strtoul(r->offset, NULL, 10))
		fail_msg("rules.tsv:%u: error offset %zu, want %s (%s)", r->lineno, err.offset,
			 r->offset, err.msg);
	if (strcmp(r->message, "-") != 0 && !strstr(err.msg, r->message))
		fail_msg("rules.tsv:%u: message '%s' lacks '%s'", r->lineno, err.msg, r->message);
	/* The same refusal without an error struct. */
	assert_int_equal(devwl_rule_parse(r->input, r->input_len, &rule, NULL), want);
}

static void test_rule_parse_table(void **state)
{
	size_t n = 0, accepted = 0, refused = 0;
	struct row *rows = load_table(&n);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(rows[i].expect, "ok") == 0) {
			check_accepted(&rows[i]);
			accepted++;
		} else if (strcmp(rows[i].expect, "EINVAL") == 0 ||
			   strcmp(rows[i].expect, "E2BIG") == 0) {
			check_refused(&rows[i]);
			refused++;
		} else {
			fail_msg("rules.tsv:%u: bad expect '%s'", rows[i].lineno, rows[i].expect);
		}
	}
	free(rows);
	/* The brief of this table: at least 40 rows, both outcomes well represented. */
	assert_true(accepted + refused >= 40);
	assert_true(accepted >= 15);
	assert_true(refused >= 15);
}

/* A rule padded with whitespace to exactly len bytes. */
static char *padded(const char *rule, size_t len, bool leading)
{
	size_t rl = strlen(rule);
	char *buf = malloc(len);

	assert_non_null(buf);
	assert_true(len >= rl);
	memset(buf, ' ', len);
	memcpy(leading ? buf + len - rl : buf, rule, rl);
	return buf;
}

static void test_rule_parse_4096_accepted(void **state)
{
	struct devwl_rule rule = {0};
	char *buf;

	(void)state;
	buf = padded("c 1:3 rw", DEVWL_RULE_WRITE_MAX, false);
	assert_int_equal(devwl_rule_parse(buf, DEVWL_RULE_WRITE_MAX, &rule, NULL), 0);
	assert_int_equal(rule.type, DEVWL_DEV_CHAR);
	assert_int_equal(rule.major, 1);
	assert_int_equal(rule.minor, 3);
	assert_int_equal(rule.access, DEVWL_ACC_READ | DEVWL_ACC_WRITE);
	free(buf);
	buf = padded("b 8:1 m", DEVWL_RULE_WRITE_MAX, true);
	assert_int_equal(devwl_rule_parse(buf, DEVWL_RULE_WRITE_MAX, &rule, NULL), 0);
	assert_int_equal(rule.type, DEVWL_DEV_BLOCK);
	assert_int_equal(rule.access, DEVWL_ACC_MKNOD);
	free(buf);
}

static void test_rule_parse_4097_e2big(void **state)
{
	struct devwl_error err = {0};
	struct devwl_rule rule = {0};
	char *buf;

	(void)state;
	buf = padded("c 1:3 rw", DEVWL_RULE_WRITE_MAX + 1, false);
	assert_int_equal(devwl_rule_parse(buf, DEVWL_RULE_WRITE_MAX + 1, &rule, &err), -E2BIG);
	assert_int_equal(err.code, -E2BIG);
	assert_int_equal(err.offset, DEVWL_RULE_WRITE_MAX);
	assert_non_null(strstr(err.msg, "4096"));
	/* The length decides, not the content: a NUL early in the buffer does not help. */
	buf[8] = '\0';
	assert_int_equal(devwl_rule_parse(buf, DEVWL_RULE_WRITE_MAX + 1, &rule, NULL), -E2BIG);
	free(buf);
}

static void test_rule_parse_len_bounds_input(void **state)
{
	struct devwl_rule rule = {0};

	(void)state;
	/* Only buf[0..len) is the write: what follows in memory does not count. */
	assert_int_equal(devwl_rule_parse("c 1:3 rwm", 7, &rule, NULL), 0);
	assert_int_equal(rule.access, DEVWL_ACC_READ);
	assert_int_equal(devwl_rule_parse("c 1:3 rwm", 5, &rule, NULL), -EINVAL);
	assert_int_equal(devwl_rule_parse("c 1:3 rwm", 0, &rule, NULL), -EINVAL);
	assert_int_equal(devwl_rule_parse(NULL, 0, &rule, NULL), -EINVAL);
	assert_int_equal(devwl_rule_parse(NULL, 5, &rule, NULL), -EINVAL);
}

static void test_rule_format_longest_fits(void **state)
{
	const struct devwl_rule r = {.type = DEVWL_DEV_BLOCK,
				     .access = DEVWL_ACC_MASK,
				     .major = 4294967294u,
				     .minor = 4294967294u};
	char buf[DEVWL_RULE_STR_MAX];

	(void)state;
	assert_int_equal(devwl_rule_format(&r, buf, sizeof(buf)), 27);
	assert_string_equal(buf, "b 4294967294:4294967294 rwm");
}

static void test_rule_format_enospc(void **state)
{
	const struct devwl_rule r = {
		.type = DEVWL_DEV_CHAR, .access = DEVWL_ACC_READ, .major = 10, .minor = 200};
	char buf[16];

	(void)state;
	/* "c 10:200 r" is 10 bytes: it needs 11 with the NUL. */
	assert_int_equal(devwl_rule_format(&r, buf, 11), 10);
	assert_string_equal(buf, "c 10:200 r");
	assert_int_equal(devwl_rule_format(&r, buf, 10), -ENOSPC);
	assert_int_equal(devwl_rule_format(&r, buf, 1), -ENOSPC);
}

static void test_rule_format_einval(void **state)
{
	struct devwl_rule r = {.type = 3, .access = DEVWL_ACC_READ, .major = 1, .minor = 1};
	char buf[DEVWL_RULE_STR_MAX];

	(void)state;
	assert_int_equal(devwl_rule_format(&r, buf, sizeof(buf)), -EINVAL);
	r.type = 0;
	assert_int_equal(devwl_rule_format(&r, buf, sizeof(buf)), -EINVAL);
	r.type = DEVWL_DEV_CHAR;
	r.access = 8;
	assert_int_equal(devwl_rule_format(&r, buf, sizeof(buf)), -EINVAL);
	r.access = DEVWL_ACC_READ;
	assert_int_equal(devwl_rule_format(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(devwl_rule_format(&r, NULL, sizeof(buf)), -EINVAL);
}

/* Every type, wildcard and access combination prints and parses back to itself. */
static void test_rule_format_round_trip_all(void **state)
{
	const uint32_t nums[] = {0, 1, 7, 255, 4095, 1048575, 4294967294u, DEVWL_ANY};
	const uint8_t types[] = {DEVWL_DEV_BLOCK, DEVWL_DEV_CHAR};
	unsigned n = 0;

	(void)state;
	for (size_t t = 0; t < 2; t++)
		for (size_t a = 0; a < 8; a++)
			for (size_t b = 0; b < 8; b++)
				for (unsigned acc = 1; acc <= DEVWL_ACC_MASK; acc++) {
					struct devwl_rule r = {.type = types[t],
							       .access = (uint8_t)acc,
							       .major = nums[a],
							       .minor = nums[b]},
							  back = {0};
					char buf[DEVWL_RULE_STR_MAX];
					int len = devwl_rule_format(&r, buf, sizeof(buf));

					assert_true(len > 0);
					assert_int_equal(
						devwl_rule_parse(buf, (size_t)len, &back, NULL), 0);
					assert_true(rule_eq(&r, &back));
					n++;
				}
	assert_int_equal(n, 2 * 8 * 8 * 7);
}

static void test_kspace_matches_kernel_ctype(void **state)
{
	(void)state;
	for (unsigned c = 0; c < 256; c++) {
		bool want = c == ' ' || (c >= 9 && c <= 13) || c == 0xa0;
		if (rules_kspace((unsigned char)c) != want)
			fail_msg("rules_kspace(0x%02x) = %d, want %d", c,
				 rules_kspace((unsigned char)c), want);
	}
}

/* Sorted by devwl_rule_key_cmp, equal keys found whatever their access: what has_key() and
 * cgroupdev's v1 diff rely on. */
static void test_devwl_rule_key_cmp_orders_type_major_minor(void **state)
{
	struct devwl_rule v[] = {
		{DEVWL_DEV_CHAR, DEVWL_ACC_READ, 1, 5},
		{DEVWL_DEV_BLOCK, DEVWL_ACC_READ, 8, 0},
		{DEVWL_DEV_CHAR, DEVWL_ACC_MASK, 1, 3},
		{DEVWL_DEV_ALL, DEVWL_ACC_MASK, DEVWL_ANY, DEVWL_ANY},
		{DEVWL_DEV_CHAR, DEVWL_ACC_MKNOD, 0, DEVWL_ANY},
	};
	const struct devwl_rule want[] = {
		{DEVWL_DEV_BLOCK, DEVWL_ACC_READ, 8, 0},
		{DEVWL_DEV_CHAR, DEVWL_ACC_MKNOD, 0, DEVWL_ANY},
		{DEVWL_DEV_CHAR, DEVWL_ACC_MASK, 1, 3},
		{DEVWL_DEV_CHAR, DEVWL_ACC_READ, 1, 5},
		{DEVWL_DEV_ALL, DEVWL_ACC_MASK, DEVWL_ANY, DEVWL_ANY},
	};
	const struct devwl_rule key = {DEVWL_DEV_CHAR, DEVWL_ACC_WRITE, 1, 3};
	const struct devwl_rule *hit = NULL;

	(void)state;
	qsort(v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), devwl_rule_key_cmp);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		assert_true(rule_eq(&v[i], &want[i]));
	hit = bsearch(&key, v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), devwl_rule_key_cmp);
	assert_ptr_equal(hit, &v[2]);
}

/* The library writes struct devwl_error whole: a caller's garbage in the reserved tail
 * would otherwise read as a member added later (devwl.h). */
static void test_rule_parse_error_reserved_zeroed(void **state)
{
	struct devwl_rule r;
	struct devwl_error err;

	(void)state;
	memset(&err, 0xa5, sizeof(err));
	assert_int_equal(devwl_rule_parse("x 1:3 r", 7, &r, &err), -EINVAL);
	assert_int_equal(err.code, -EINVAL);
	for (size_t i = 0; i < sizeof(err.reserved) / sizeof(err.reserved[0]); i++)
		assert_int_equal(err.reserved[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_parse_table),
		cmocka_unit_test(test_rule_parse_4096_accepted),
		cmocka_unit_test(test_rule_parse_4097_e2big),
		cmocka_unit_test(test_rule_parse_len_bounds_input),
		cmocka_unit_test(test_rule_format_longest_fits),
		cmocka_unit_test(test_rule_format_enospc),
		cmocka_unit_test(test_rule_format_einval),
		cmocka_unit_test(test_rule_format_round_trip_all),
		cmocka_unit_test(test_kspace_matches_kernel_ctype),
		cmocka_unit_test(test_devwl_rule_key_cmp_orders_type_major_minor),
		cmocka_unit_test(test_rule_parse_error_reserved_zeroed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
