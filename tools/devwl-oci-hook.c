/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwl-oci-hook: an OCI hook (createRuntime and poststop) that makes a container's
 * devwl node live exactly as long as the container. It reads the container state the
 * runtime writes to stdin and hands it to devwld over the control socket, which maps
 * it to a node with the function it maps listener connections with (annotation
 * org.devwl.node, listenerMetadata node=PATH, Kubernetes annotations, /containers/ID)
 * and creates or removes it. A runtime gives a hook no listenerMetadata: the hook adds
 * the bundle's (config.json) to the state as "metadata", where devwld reads it, so the
 * hook and the listener choose the same node.
 *
 *   "hooks": {
 *     "createRuntime": [{"path": "/usr/libexec/devwl/devwl-oci-hook",
 *                        "args": ["devwl-oci-hook", "createRuntime"]}],
 *     "poststop":      [{"path": "/usr/libexec/devwl/devwl-oci-hook",
 *                        "args": ["devwl-oci-hook", "poststop"]}]
 *   }
 */
#include <errno.h>
#include <signal.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fileio.h"
#include "jsonutil.h"
#include "ocibundle.h"
#include "util.h"

/* Container states are small; anything near this is not one. */
#define MAX_STATE (1024 * 1024)
/* "ok" or "error ENAME: why", one line. */
#define MAX_ANSWER 4096

static void usage(FILE *f)
{
	fputs("Usage: devwl-oci-hook [--socket PATH] createRuntime|poststop < STATE\n"
	      "\n"
	      "An OCI hook: creates (createRuntime, also accepted as createContainer or\n"
	      "prestart) or removes (poststop) the container's devwl node through devwld's\n"
	      "control socket [/run/devwl/control.sock].\n",
	      f);
}

/* devwl_read_all(), saying what went wrong with what (max fits an int). */
static int read_all(int fd, size_t max, const char *what, char **ret_text)
{
	int r = (int)devwl_read_all(fd, max, ret_text);

	if (r == -E2BIG)
		fprintf(stderr, "devwl-oci-hook: %s is over %zu bytes\n", what, max);
	else if (r < 0)
		fprintf(stderr, "devwl-oci-hook: reading %s: %s\n", what, strerror(-r));
	return r;
}

/*
 * Put the listenerMetadata of the state's bundle into state as "metadata", replacing
 * whatever was there: devwld must see what the runtime gives its listener, nothing else.
 * A bundle without one, or unreadable, adds none (said on stderr, not fatal: the
 * container then maps as one without metadata). 0 or -ENOMEM.
 */
static int add_metadata(struct json_object *state)
{
	_cleanup_free_ char *meta = NULL;
	struct devwl_error err = {0};
	struct json_object *bundle = NULL;
	int r;

	json_object_object_del(state, "metadata");
	if (!json_object_object_get_ex(state, "bundle", &bundle) ||
	    !json_object_is_type(bundle, json_type_string) || json_string_has_nul(bundle)) {
		fputs("devwl-oci-hook: the state names no bundle; no listenerMetadata\n", stderr);
		return 0;
	}
	r = oci_bundle_metadata(json_object_get_string(bundle), &meta, &err);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		fprintf(stderr, "devwl-oci-hook: no listenerMetadata: %s\n", err.msg);
	if (r <= 0)
		return 0;
	return json_add(state, "metadata", json_object_new_string(meta));
}

int main(int argc, char **argv)
{
	const char *socket_path = "/run/devwl/control.sock", *stage = NULL;
	_cleanup_free_ char *state = NULL, *answer = NULL;
	_cleanup_close_ int fd = -1;
	struct json_object *obj = NULL;
	size_t len = 0;
	bool create;
	int r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc)
			socket_path = argv[++i];
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!stage && argv[i][0] != '-')
			stage = argv[i];
		else {
			usage(stderr);
			return 2;
		}
	}
	if (!stage) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(stage, "createRuntime") || !strcmp(stage, "createContainer") ||
	    !strcmp(stage, "prestart"))
		create = true;
	else if (!strcmp(stage, "poststop"))
		create = false;
	else {
		fprintf(stderr, "devwl-oci-hook: unknown hook stage '%s'\n", stage);
		return 2;
	}

	if (read_all(STDIN_FILENO, MAX_STATE, "the container state on stdin", &state) < 0)
		return 1;
	obj = json_tokener_parse(state);
	if (!obj || !json_object_is_type(obj, json_type_object)) {
		fputs("devwl-oci-hook: the container state on stdin is not a JSON object\n",
		      stderr);
		json_object_put(obj);
		return 1;
	}
	if (add_metadata(obj) < 0) {
		fputs("devwl-oci-hook: out of memory\n", stderr);
		json_object_put(obj);
		return 1;
	}

	/* devwld may close first: an error to report, not a reason to die. */
	signal(SIGPIPE, SIG_IGN);
	fd = devwl_unix_connect(socket_path);
	if (fd < 0) {
		fprintf(stderr, "devwl-oci-hook: %s: %s\n", socket_path, strerror(-fd));
		json_object_put(obj);
		/* Nothing to clean up in a devwld that is not there. */
		return create ? 1 : 0;
	}
	{
		/* Plain json-c output escapes every newline: the state fits on one line. */
		const char *flat = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
		const char *cmd = create ? "hook-create " : "hook-delete ";

		r = devwl_write_all(fd, cmd, strlen(cmd));
		if (r >= 0)
			r = devwl_write_all(fd, flat, strlen(flat));
		if (r >= 0)
			r = devwl_write_all(fd, "\n", 1);
	}
	json_object_put(obj);
	if (r < 0 || shutdown(fd, SHUT_WR) < 0) {
		fprintf(stderr, "devwl-oci-hook: sending to %s: %s\n", socket_path,
			strerror(r < 0 ? -r : errno));
		return 1;
	}
	if (read_all(fd, MAX_ANSWER, "devwld's answer", &answer) < 0)
		return 1;
	len = strlen(answer);
	if (strcmp(answer, "ok\n") != 0) {
		/* "error ENAME: why" is said as it is: the runtime shows it to the user. */
		if (!strncmp(answer, "error ", 6))
			fprintf(stderr, "devwl-oci-hook: %s: %s%s", stage, answer + 6,
				answer[len - 1] == '\n' ? "" : "\n");
		else
			fprintf(stderr, "devwl-oci-hook: %s: devwld answered: %s\n", stage,
				len ? answer : "nothing");
		return 1;
	}
	return 0;
}
