/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwlctl attach / detach (devwlctl(1)): the arguments checked here, for a message that
 * names the bad one, and sent as one JSON object; devwld resolves the device, so the
 * daemon's view of /dev decides, not the client's.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "devwlctl.h"
#include "selector.h"
#include "util.h"

static void attach_usage(FILE *f, bool attach)
{
	if (!attach) {
		fputs("Usage: devwlctl detach CONTAINER DEVICE|SELECTOR|PATH [--owner UID] "
		      "[--dry-run]\n"
		      "\n"
		      "Take an attached device back: its node is removed from the container and\n"
		      "the grant revoked. Open file descriptors stay valid (see containers\n"
		      "--devices for who holds them). CONTAINER as attach takes it, among the\n"
		      "containers of runtimes running as UID [0]. Prints what was done; with\n"
		      "--dry-run, what would be, changing nothing.\n",
		      f);
		return;
	}
	fputs("Usage: devwlctl attach CONTAINER DEVICE [PATH] [--access rwm] [--mode MODE]\n"
	      "                       [--uid UID] [--gid GID] [--owner UID]\n"
	      "       devwlctl attach CONTAINER SELECTOR PATH [--access rwm] ...\n"
	      "\n"
	      "Give a running container a device: the grant on its node and the device\n"
	      "node at PATH in its filesystem (default: DEVICE's host path).\n"
	      "CONTAINER: its id, a prefix of one id only, NAMESPACE/POD/CONTAINER, or\n"
	      "podman's or nerdctl's name for it, among root's containers (those of\n"
	      "runtimes running as uid 0).\n"
	      "DEVICE: a host path (/dev/fuse) or \"c MAJOR:MINOR\" / \"b MAJOR:MINOR\".\n",
	      f);
	fputs("SELECTOR: the one device it names now, followed when it is unplugged and\n"
	      "plugged again (its numbers change, PATH does not); one of:\n",
	      f);
	for (size_t i = 0, col = 0; i < SELECTOR_KIND_MAX; i++) {
		int n = (int)(strlen(selector_kinds[i].prefix) + strlen(selector_kinds[i].arg));

		if (col && col + (size_t)n + 2 > 78) {
			fputc('\n', f);
			col = 0;
		}
		col += (size_t)fprintf(f, "%s%s%s%s", col ? " " : "  ", selector_kinds[i].prefix,
				       selector_kinds[i].arg,
				       i + 1 < SELECTOR_KIND_MAX ? "," : "\n");
	}
	fputs("  --access ACCESS  r, w, m [rw]\n"
	      "  --mode MODE      the node's mode, octal [the host node's, else 0600]\n"
	      "  --uid UID, --gid GID  its owner as the container sees it [the host\n"
	      "                   node's; in a user namespace the container's root]\n"
	      "  --parent-grant   allow it first on each ancestor node that refuses it\n"
	      "                   (a policy change, kept as devwlctl allow; detach does\n"
	      "                   not take it back)\n"
	      "  --owner UID      CONTAINER is one of the containers of runtimes running\n"
	      "                   as UID (devwlctl containers: OWNER) [0]\n"
	      "  --dry-run        resolve and check everything, change nothing\n"
	      "Prints what was done: the container, the device, PATH, access, owner,\n"
	      "mode and the node that holds the grant.\n",
	      f);
}

/* A number for --mode (octal), --uid, --gid: 0..max. */
static int number(const char *opt, const char *s, int base, unsigned long max, unsigned long *ret)
{
	char *end = NULL;

	errno = 0;
	*ret = strtoul(s, &end, base);
	if (!*s || *end || errno || *ret > max || s[0] == '-') {
		fprintf(stderr, "devwlctl: %s '%s': %s from 0 to %lu\n", opt, s,
			base == 8 ? "an octal mode" : "a number", max);
		return -EINVAL;
	}
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{"access", required_argument, NULL, 'a'},
		{"mode", required_argument, NULL, 'm'},
		{"uid", required_argument, NULL, 'u'},
		{"gid", required_argument, NULL, 'g'},
		{"parent-grant", no_argument, NULL, 'p'},
		{"owner", required_argument, NULL, 'o'},
		{"dry-run", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	bool attach = !strcmp(argv[0], "attach");
	struct json_object *o = json_object_new_object();
	unsigned long n;
	const char *s;
	int c, r = 2;

	if (!o)
		return 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			attach_usage(stdout, attach);
			r = 0;
			goto out;
		}
		if (c == '?' || (!attach && c != 'o' && c != 'n'))
			goto usage;
		switch (c) {
		case 'o':
			if (number("--owner", optarg, 10, UINT32_MAX - 1, &n) < 0)
				goto out;
			json_object_object_add(o, "owner", json_object_new_int64((int64_t)n));
			break;
		case 'n':
			json_object_object_add(o, "dry_run", json_object_new_boolean(true));
			break;
		case 'a':
			json_object_object_add(o, "access", json_object_new_string(optarg));
			break;
		case 'p':
			json_object_object_add(o, "parent_grant", json_object_new_boolean(true));
			break;
		case 'm':
			if (number("--mode", optarg, 8, 07777, &n) < 0)
				goto out;
			json_object_object_add(o, "mode", json_object_new_int64((int64_t)n));
			break;
		case 'u':
		case 'g':
			if (number(c == 'u' ? "--uid" : "--gid", optarg, 10, UINT32_MAX - 1, &n) <
			    0)
				goto out;
			json_object_object_add(o, c == 'u' ? "uid" : "gid",
					       json_object_new_int64((int64_t)n));
			break;
		}
	}
	if (argc - optind < 2 || argc - optind > (attach ? 3 : 2))
		goto usage;
	json_object_object_add(o, "container", json_object_new_string(argv[optind]));
	json_object_object_add(o, "device", json_object_new_string(argv[optind + 1]));
	if (argc - optind == 3)
		json_object_object_add(o, "path", json_object_new_string(argv[optind + 2]));
	s = json_object_to_json_string_ext(o,
					   JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	{
		_cleanup_free_ char *line = NULL;

		if (!s || asprintf(&line, "%s %s\n", argv[0], s) < 0) {
			r = 1;
			goto out;
		}
		r = ctl_request(line, strlen(line));
	}
	goto out;
usage:
	attach_usage(stderr, attach);
out:
	json_object_put(o);
	return r;
}
