/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A bundle's listenerMetadata (common/ocibundle.c), as devwl-oci-hook reads it. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ocibundle.h"

static void expect_metadata(const char *config, const char *want)
{
	struct devwl_error err = {0};
	char *meta = NULL;
	int r = oci_config_metadata(config, strlen(config), &meta, &err);

	if (r != (want ? 1 : 0) || (want && strcmp(meta, want)) || (!want && meta))
		fail_msg("%s: %d '%s' (%s), want '%s'", config, r, meta ? meta : "(none)", err.msg,
			 want ? want : "(none)");
	free(meta);
}

static void expect_error(const char *config, size_t len, const char *why)
{
	struct devwl_error err = {0};
	char *meta = NULL;
	int r = oci_config_metadata(config, len, &meta, &err);

	if (r != -EINVAL || meta || !strstr(err.msg, why))
		fail_msg("%s: %d '%s', want EINVAL '%s'", config, r, err.msg, why);
}

/* The seccomp section's string, whatever else the config holds; none is no error. */
static void test_oci_config_metadata_found(void **state)
{
	(void)state;
	expect_metadata("{\"ociVersion\":\"1.0.2\",\"linux\":{\"namespaces\":[],\"seccomp\":"
			"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/l\","
			"\"listenerMetadata\":\"node=/containers/example mode=kernel\"}}}",
			"node=/containers/example mode=kernel");
	expect_metadata("{\"linux\":{\"seccomp\":{\"listenerMetadata\":\"\"}}}", "");
	/* Escapes are the string's, as the runtime decodes them. */
	expect_metadata("{\"linux\":{\"seccomp\":{\"listenerMetadata\":\"node=/a\\u00e9\"}}}",
			"node=/a\xc3\xa9");
	expect_metadata("{}", NULL);
	expect_metadata("{\"linux\":{}}", NULL);
	expect_metadata("{\"linux\":{\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\"}}}", NULL);
	/* null is absent, as a runtime's decoder reads it. */
	expect_metadata("{\"linux\":null}", NULL);
	expect_metadata("{\"linux\":{\"seccomp\":{\"listenerMetadata\":null}}}", NULL);
}

static void test_oci_config_metadata_errors(void **state)
{
	static const char nul[] =
		"{\"linux\":{\"seccomp\":{\"listenerMetadata\":\"node=/a\\u0000/b\"}}}";

	(void)state;
	expect_error("[]", 2, "not a JSON object");
	expect_error("{\"linux\":", 9, "not JSON: it ends before the object does");
	expect_error("{nope}", 6, "not JSON");
	expect_error("", 0, "not JSON");
	expect_error("{\"linux\":[]}", 12, "\"linux\" is not an object");
	expect_error("{\"linux\":{\"seccomp\":\"x\"}}", 25, "\"seccomp\" is not an object");
	expect_error("{\"linux\":{\"seccomp\":{\"listenerMetadata\":7}}}", 44,
		     "\"listenerMetadata\" is not a string");
	/* Read as a C string it would name another node. */
	expect_error(nul, sizeof(nul) - 1, "\"listenerMetadata\" holds a NUL byte");
}

/* A bundle directory with config.json holding text (NULL: none). */
static char *bundle_with(const char *text)
{
	char *dir = strdup("/tmp/devwl-test-bundle-XXXXXX"), file[128];
	FILE *f;

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	if (text) {
		snprintf(file, sizeof(file), "%s/config.json", dir);
		f = fopen(file, "w");
		assert_non_null(f);
		assert_int_equal(fputs(text, f) >= 0, 1);
		assert_int_equal(fclose(f), 0);
	}
	return dir;
}

static void bundle_remove(char *dir)
{
	char file[128];

	snprintf(file, sizeof(file), "%s/config.json", dir);
	unlink(file);
	assert_int_equal(rmdir(dir), 0);
	free(dir);
}

static void test_oci_bundle_metadata_file(void **state)
{
	char *dir = bundle_with("{\"linux\":{\"seccomp\":{\"listenerMetadata\":\"node=/x\"}}}\n");
	struct devwl_error err = {0};
	char *meta = NULL;

	(void)state;
	assert_int_equal(oci_bundle_metadata(dir, &meta, &err), 1);
	assert_string_equal(meta, "node=/x");
	free(meta);
	bundle_remove(dir);

	/* A malformed config is named with its file. */
	dir = bundle_with("{\"linux\":[]}");
	assert_int_equal(oci_bundle_metadata(dir, &meta, &err), -EINVAL);
	assert_null(meta);
	assert_non_null(strstr(err.msg, "/config.json: \"linux\" is not an object"));
	assert_non_null(strstr(err.msg, dir));
	bundle_remove(dir);
}

static void test_oci_bundle_metadata_unreadable(void **state)
{
	char *dir = bundle_with(NULL), file[128];
	struct devwl_error err = {0};
	char *meta = NULL;
	int fd;

	(void)state;
	assert_int_equal(oci_bundle_metadata(dir, &meta, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "config.json: No such file or directory"));
	assert_int_equal(oci_bundle_metadata("relative/dir", &meta, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "bundle \"relative/dir\" is not an absolute path"));

	/* A FIFO is refused, not waited on. */
	snprintf(file, sizeof(file), "%s/config.json", dir);
	assert_int_equal(mkfifo(file, 0600), 0);
	assert_int_equal(oci_bundle_metadata(dir, &meta, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not a regular file"));
	unlink(file);

	/* Over the bound: refused whole, before it is parsed. */
	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, OCI_CONFIG_MAX + 1), 0);
	close(fd);
	assert_int_equal(oci_bundle_metadata(dir, &meta, &err), -E2BIG);
	assert_non_null(strstr(err.msg, "over 4194304 bytes"));
	assert_null(meta);
	bundle_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oci_config_metadata_found),
		cmocka_unit_test(test_oci_config_metadata_errors),
		cmocka_unit_test(test_oci_bundle_metadata_file),
		cmocka_unit_test(test_oci_bundle_metadata_unreadable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
