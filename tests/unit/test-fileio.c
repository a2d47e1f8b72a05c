/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File helpers (base/fileio.c): reading a file to its end. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "fileio.h"

/* A file of len bytes, the byte at i being i * 7 (NUL bytes among them), read from 0. */
static int file_of(size_t len)
{
	int fd = memfd_create("test-fileio", MFD_CLOEXEC);

	assert_true(fd >= 0);
	for (size_t i = 0; i < len; i++) {
		char c = (char)(i * 7);

		assert_int_equal(write(fd, &c, 1), 1);
	}
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* Longer than any one read and than the first room: the whole file, NUL-terminated. */
static void test_read_all_whole_file(void **state)
{
	const size_t len = 200001;
	int fd = file_of(len);
	char *text = NULL;

	(void)state;
	assert_int_equal(devwl_read_all(fd, len, &text), len);
	for (size_t i = 0; i < len; i++)
		if (text[i] != (char)(i * 7))
			fail_msg("byte %zu is 0x%02x", i, (unsigned char)text[i]);
	assert_int_equal(text[len], '\0');
	free(text);
	close(fd);
}

static void test_read_all_empty(void **state)
{
	int fd = file_of(0);
	char *text = NULL;

	(void)state;
	assert_int_equal(devwl_read_all(fd, 0, &text), 0);
	assert_string_equal(text, "");
	free(text);
	close(fd);
}

/* One byte past max is refused, and nothing is handed back. */
static void test_read_all_too_big(void **state)
{
	int fd = file_of(10000);
	char *text = NULL;

	(void)state;
	assert_int_equal(devwl_read_all(fd, 9999, &text), -E2BIG);
	assert_null(text);
	close(fd);
	assert_int_equal(devwl_read_all(fd, 10, &text), -EBADF);
	assert_null(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_all_whole_file),
		cmocka_unit_test(test_read_all_empty),
		cmocka_unit_test(test_read_all_too_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
