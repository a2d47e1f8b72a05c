/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A page of the tree's documentation as text, for the tests that check a table of the
 * code against the pages that list it (test-selector.c, test-ctlmsg.c,
 * test-policyfile.c). Included after cmocka.h.
 */
#ifndef DEVWL_TEST_DOCPAGE_H
#define DEVWL_TEST_DOCPAGE_H

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fileio.h"

/* The file at name (from the top of the tree: "doc/devwlctl.1"), with roff's \- written
 * as the hyphen it shows; the caller frees it. */
static char *doc_page(const char *name)
{
	const char *data = getenv("DEVWL_TEST_DATA");
	char path[PATH_MAX], *text = NULL;
	int fd;

	assert_non_null(data);
	snprintf(path, sizeof(path), "%s/../../../%s", data, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("cannot open %s", path);
	assert_true(devwl_read_all(fd, 1 << 22, &text) > 0);
	close(fd);
	for (char *r = text, *w = text;; r++) {
		if (r[0] == '\\' && r[1] == '-')
			continue;
		if (!(*w++ = *r))
			break;
	}
	return text;
}

#endif
