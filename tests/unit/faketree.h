/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fake sysfs, udev database and /dev in a temporary directory, for the tests of what
 * resolves devices by identity (test-selector.c, test-learn.c). Included by one test
 * file each, after cmocka.h: the tree's paths are that file's own.
 */
#ifndef DEVWL_TEST_FAKETREE_H
#define DEVWL_TEST_FAKETREE_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fileio.h"

static char root[PATH_MAX];
static char sysfs[PATH_MAX + 8], udev[PATH_MAX + 8], dev[PATH_MAX + 8];

/* A file at rel (below the tree) holding text, its directories made. */
static void put(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(devwl_mkdir_parents(path), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A symlink at rel to target (inside the tree unless it starts with '!'). */
static void link_to(const char *rel, const char *target)
{
	char path[PATH_MAX * 2], to[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (target[0] == '!')
		snprintf(to, sizeof(to), "%s", target + 1);
	else
		snprintf(to, sizeof(to), "%s/%s", root, target);
	assert_int_equal(devwl_mkdir_parents(path), 0);
	assert_int_equal(symlink(to, path), 0);
}

/* A device directory with its dev file, subsystem link and /sys/dev/TYPE/M:m link. */
static void device(const char *dir, const char *type, const char *mm, const char *subsystem)
{
	char rel[PATH_MAX], to[PATH_MAX];

	snprintf(rel, sizeof(rel), "sys/%s/dev", dir);
	put(rel, mm);
	snprintf(rel, sizeof(rel), "sys/%s/subsystem", dir);
	snprintf(to, sizeof(to), "sys/class/%s", subsystem);
	link_to(rel, to);
	snprintf(rel, sizeof(rel), "sys/dev/%s/%s", type, mm);
	snprintf(to, sizeof(to), "sys/%s", dir);
	link_to(rel, to);
}

/* An empty tree under /tmp named for the test (tmpl: "/tmp/devwl-NAME-XXXXXX"). */
static void tree_make(char *tmpl)
{
	assert_non_null(mkdtemp(tmpl));
	snprintf(root, sizeof(root), "%s", tmpl);
	snprintf(sysfs, sizeof(sysfs), "%s/sys", root);
	snprintf(udev, sizeof(udev), "%s/udev", root);
	snprintf(dev, sizeof(dev), "%s/dev", root);
}

static int remove_tree(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

#endif
