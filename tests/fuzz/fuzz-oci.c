/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: devwl_node_import_oci on arbitrary bytes into one node of a small fixed
 * tree (the first byte picks the node). A failed import must leave every node as it
 * was; a successful one must export to an array that rebuilds the node's listing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devwl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[] = {"/", "/a", "/a/b", "/c", "/c/d"};

static struct devwl_policy *fixed_tree(void)
{
	/* In order: a node's default can only change before it has children. */
	static const char *const steps[][3] = {
		{"/", "deny", "b 8:* w"},     {"/a", "mkdir", ""},
		{"/a", "deny", "a"},	      {"/a", "allow", "c 1:* rwm"},
		{"/a", "allow", "c 5:* rw"},  {"/a", "allow", "b 7:0 r"},
		{"/a/b", "mkdir", ""},	      {"/a/b", "deny", "c 1:3 m"},
		{"/c", "mkdir", ""},	      {"/c/d", "mkdir", ""},
		{"/c/d", "deny", "c 10:* r"},
	};
	struct devwl_policy *p = devwl_policy_new();

	if (!p)
		abort();
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const char *path = steps[i][0], *what = steps[i][1], *rule = steps[i][2];
		int r;
		if (!strcmp(what, "mkdir"))
			r = devwl_policy_mkdir(p, path);
		else
			r = devwl_policy_write(
				p, path, strcmp(what, "allow") ? DEVWL_FILE_DENY : DEVWL_FILE_ALLOW,
				rule, strlen(rule), NULL);
		if (r < 0)
			abort();
	}
	return p;
}

/* Every node's full listing, one after the other. */
static char *show_all(const struct devwl_policy *p)
{
	size_t len = 0;
	char *all = NULL;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char *s = NULL, *n;
		if (devwl_node_show(devwl_policy_find(p, paths[i]), &s) < 0)
			abort();
		n = realloc(all, len + strlen(s) + 2);
		if (!n)
			abort();
		all = n;
		strcpy(all + len, s);
		len += strlen(s);
		strcpy(all + len++, "|");
		free(s);
	}
	return all;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct devwl_policy *p;
	struct devwl_node *node;
	struct devwl_error err = {0};
	char *text, *before, *after, *json = NULL;

	if (size < 1)
		return 0;
	p = fixed_tree();
	node = devwl_policy_find(p, paths[data[0] % (sizeof(paths) / sizeof(paths[0]))]);
	text = malloc(size);
	if (!text)
		abort();
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	before = show_all(p);
	if (devwl_node_import_oci(node, text, &err) < 0) {
		after = show_all(p);
		if (strcmp(before, after) || !err.msg[0]) {
			fprintf(stderr, "failed import changed the tree: %s\n%s\n%s\n", err.msg,
				before, after);
			abort();
		}
		free(after);
	} else if (devwl_node_parent(node)) {
		/* Export and replay on a fresh sibling: same devices.list. */
		const struct devwl_node *parent = devwl_node_parent(node);
		char copy[64], *a = NULL, *b = NULL;
		snprintf(copy, sizeof(copy), "%s/copy",
			 strcmp(devwl_node_path(parent), "/") ? devwl_node_path(parent) : "");
		if (devwl_node_export_oci(node, &json) < 0 || devwl_policy_mkdir(p, copy) < 0 ||
		    devwl_node_import_oci(devwl_policy_find(p, copy), json, &err) < 0) {
			fprintf(stderr, "export does not replay: %s\n%s\n", err.msg,
				json ? json : "");
			abort();
		}
		if (devwl_node_list(node, &a) < 0 ||
		    devwl_node_list(devwl_policy_find(p, copy), &b) < 0 || strcmp(a, b))
			abort();
		free(a);
		free(b);
	}
	free(json);
	free(before);
	free(text);
	devwl_policy_free(p);
	return 0;
}
