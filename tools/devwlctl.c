/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwlctl: inspect and change device allow lists; see devwlctl(1). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "devwl.h"
#include "util.h"

static void usage(FILE *f)
{
	fputs("Usage: devwlctl [--socket PATH] COMMAND [ARGS]\n"
	      "\n"
	      "Commands:\n"
	      "  batch [--policy FILE]   read commands from stdin, answer each on stdout,\n"
	      "                          against a local what-if policy (default: the kernel's\n"
	      "                          root cgroup, allow all)\n"
	      "\n"
	      "Batch commands (one per line):\n"
	      "  mkdir NODE | rmdir NODE | allow NODE RULE | deny NODE RULE\n"
	      "  list NODE | show NODE | check NODE c|b MAJOR MINOR ACCESS|-\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help     show this help\n"
	      "  -V, --version  show the version\n",
	      f);
}

static int cmd_batch(int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct devwl_policy *policy = NULL;
	const char *policy_file = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			policy_file = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "devwlctl batch: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (policy_file) {
		struct devwl_error err = {0};
		int r = devwl_policy_load_file(policy_file, &policy, &err);
		if (r < 0) {
			fprintf(stderr, "devwlctl: %s\n", err.msg[0] ? err.msg : strerror(-r));
			return 1;
		}
	} else {
		policy = devwl_policy_new();
		if (!policy) {
			fputs("devwlctl: out of memory\n", stderr);
			return 1;
		}
	}
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		if (n > 0 && line[n - 1] == '\n')
			n--;
		batch_exec(policy, line, (size_t)n, stdout);
	}
	devwl_policy_free(policy);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			printf("devwlctl %s\n", devwl_version());
			return 0;
		}
		fprintf(stderr, "devwlctl: unknown option '%s'\n", argv[i]);
		usage(stderr);
		return 2;
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[i], "batch"))
		return cmd_batch(argc - i, argv + i);
	fprintf(stderr, "devwlctl: unknown command '%s' (see devwlctl --help)\n", argv[i]);
	return 2;
}
