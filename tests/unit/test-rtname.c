/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runtime names (supervisor/format/rtname.c): nerdctl's annotation, podman's storage
 * beside the bundle, and nothing for a bundle of another shape or a name that is no
 * plain word.
 */
#include <errno.h>
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

#include "ocistate.h"
#include "rtname.h"

#define ID "e7d8247338562e94f6db91a774cbef3908e5e63992ac7424d0b2d371337dc18e"

static char dir[] = "/tmp/test-rtname.XXXXXX";

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	char p[512];

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(p, sizeof(p), "%s/vfs-containers", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/vfs-containers/%s", dir, ID);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/vfs-containers/%s/userdata", dir, ID);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/vfs-containers/containers.json", dir);
	put(p, "[{\"id\":\"0000\",\"names\":[\"other\"]},"
	       "{\"id\":\"" ID "\",\"names\":[\"eager_tesla\"],\"image\":\"x\"},"
	       "{\"id\":\"bad\",\"names\":[\"../etc\"]}]");
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *name_of(const char *id, const char *bundle, const char *k1, const char *v1)
{
	struct annotation annos[1] = {{(char *)k1, (char *)v1}};
	struct oci_state st = {
		.id = (char *)id, .bundle = (char *)bundle, .annos = annos, .nannos = k1 ? 1 : 0};

	return rtname_of(&st);
}

static void test_rtname_of_podman(void **state)
{
	char bundle[512], *n;

	(void)state;
	snprintf(bundle, sizeof(bundle), "%s/vfs-containers/%s/userdata", dir, ID);
	n = name_of(ID, bundle, "io.container.manager", "libpod");
	assert_non_null(n);
	assert_string_equal(n, "eager_tesla");
	free(n);
	/* Not podman's (no libpod annotation), or a bundle of another shape: no name. */
	assert_null(name_of(ID, bundle, NULL, NULL));
	assert_null(name_of(ID, dir, "io.container.manager", "libpod"));
	snprintf(bundle, sizeof(bundle), "%s/vfs-containers/%s", dir, ID);
	assert_null(name_of(ID, bundle, "io.container.manager", "libpod"));
}

static void test_rtname_from_storage(void **state)
{
	char path[512], *n;

	(void)state;
	snprintf(path, sizeof(path), "%s/vfs-containers/containers.json", dir);
	n = rtname_from_storage(path, "0000");
	assert_string_equal(n, "other");
	free(n);
	/* A name that is no plain word, an id not there, no file. */
	assert_null(rtname_from_storage(path, "bad"));
	assert_null(rtname_from_storage(path, "1111"));
	assert_null(rtname_from_storage("/nonexistent/containers.json", ID));
}

static void test_rtname_of_nerdctl(void **state)
{
	char *n;

	(void)state;
	n = name_of("abc", NULL, "nerdctl/name", "web-1");
	assert_string_equal(n, "web-1");
	free(n);
	assert_null(name_of("abc", NULL, "nerdctl/name", "a b"));
	assert_null(name_of("abc", NULL, "nerdctl/name", "/x"));
	assert_null(name_of("abc", NULL, "nerdctl/name", ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rtname_of_podman),
		cmocka_unit_test(test_rtname_from_storage),
		cmocka_unit_test(test_rtname_of_nerdctl),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
