/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwlctl's word when devwld cannot be reached. A bare "PATH: ENOENT" leaves an operator
 * to guess whether devwld is down, listens elsewhere or refuses them; each errno connect()
 * and the first read give here has one cause worth naming, and one thing to do.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <stdbool.h>

#include "ctlmsg.h"
#include "util.h"

const char *ctl_socket_pick(const char *option, const char *env, enum socket_origin *ret_origin)
{
	if (option) {
		*ret_origin = SOCKET_OPTION;
		return option;
	}
	if (env && *env) {
		*ret_origin = SOCKET_ENV;
		return env;
	}
	*ret_origin = SOCKET_DEFAULT;
	return CTL_SOCKET_DEFAULT;
}

static const char *origin_name(enum socket_origin origin)
{
	switch (origin) {
	case SOCKET_OPTION:
		return "given with --socket";
	case SOCKET_ENV:
		return "from DEVWL_SOCKET";
	default:
		return "the default; --socket PATH or DEVWL_SOCKET=PATH names another";
	}
}

char *ctl_socket_error(int r, const char *path, enum socket_origin origin, char *buf, size_t size)
{
	const char *name = strerrorname_np(-r), *what;

	switch (-r) {
	case ENOENT:
	case ECONNREFUSED:
	case ENOTSOCK:
		/* No socket file, or one nobody accepts on: no devwld there. */
		what = "is devwld running? It listens where its --control says (devwld(8))";
		break;
	case EACCES:
	case EPERM:
		/* The socket is mode 0600, root's: --allow-uid is for runtimes, not devwlctl. */
		what = "the control socket is root's alone: run devwlctl as root";
		break;
	case ECONNRESET:
	case EPIPE:
		/* devwld closes a peer other than root at once (or it stopped meanwhile). */
		what = "devwld closed the connection: it answers root alone, or it stopped";
		break;
	default:
		what = NULL;
		break;
	}
	if (what)
		snprintf(buf, size, "devwlctl: cannot reach devwld at %s (%s): %s: %s", path,
			 origin_name(origin), name ? name : strerror(-r), what);
	else
		snprintf(buf, size, "devwlctl: %s (%s): %s", path, origin_name(origin),
			 name ? name : strerror(-r));
	return buf;
}

/* A 64-hex container id, as Docker, containerd and podman make them. */
static bool long_hex_id(const char *id)
{
	if (strlen(id) != 64)
		return false;
	for (; *id; id++)
		if (!strchr("0123456789abcdef", *id))
			return false;
	return true;
}

/*
 * The container and node words of an event line. A 64-hex id is shown as the 12 first
 * characters, as docker ps does, and a node ending in it (the default /containers/{id})
 * with {id} instead: else the one id fills 130 columns of every line.
 */
static void print_container_node(FILE *out, const char *container, const char *node)
{
	size_t n = strlen(node), c = strlen(container);

	if (!long_hex_id(container)) {
		fprintf(out, " %s %s", *container ? container : "-", *node ? node : "-");
		return;
	}
	fprintf(out, " %.12s", container);
	if (n > c && node[n - c - 1] == '/' && !strcmp(node + n - c, container))
		fprintf(out, " %.*s{id}", (int)(n - c), node);
	else
		fprintf(out, " %s", *node ? node : "-");
}

/* A string field of an audit line, or "". */
static const char *field(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	return json_object_object_get_ex(obj, key, &v) && v ? json_object_get_string(v) : "";
}

/* The rules of an array member, after a label, or nothing when there are none. */
static void print_rules(FILE *out, struct json_object *obj, const char *key, const char *label)
{
	struct json_object *v = NULL;
	size_t n;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_array) ||
	    !(n = json_object_array_length(v)))
		return;
	fprintf(out, " %s", label);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? ", " : " ",
			json_object_get_string(json_object_array_get_idx(v, i)));
}

/* A selector's devices changed: time, node, selector, granted and revoked, cause. */
static void print_selector(FILE *out, struct json_object *obj)
{
	const char *t = field(obj, "time");
	struct json_object *v = NULL;

	fprintf(out, "%.12s", strlen(t) >= 23 ? t + 11 : t);
	/* A binding made for a container's CDI annotations names it, as decisions do. */
	if (json_object_object_get_ex(obj, "container", &v)) {
		const char *id = json_object_get_string(v);

		fprintf(out, " %.*s", long_hex_id(id) ? 12 : (int)strlen(id), id);
	}
	fprintf(out, " selector %s %s %s:", field(obj, "node"), field(obj, "binding"),
		field(obj, "selector"));
	if (json_object_object_get_ex(obj, "reason", &v))
		fprintf(out, " refused: %s", json_object_get_string(v));
	print_rules(out, obj, "revoked", "revoked");
	print_rules(out, obj, "granted", "granted");
	fprintf(out, " (%s)\n", field(obj, "cause"));
}

/* Another writer changed a kernel-mode cgroup: time, container, node, what changed and
 * what devwld did (devwld(8), KERNEL MODE: drift). */
static void print_drift(FILE *out, struct json_object *obj)
{
	const char *t = field(obj, "time");

	fprintf(out, "%.12s", strlen(t) >= 23 ? t + 11 : t);
	print_container_node(out, field(obj, "container"), field(obj, "node"));
	fprintf(out, " drift v%s %s: %s (%s, repairs %s)\n", field(obj, "version"),
		field(obj, "cgroup"), field(obj, "what"), field(obj, "result"),
		field(obj, "repairs"));
}

/*
 * The words of a line for people after its time, container and node, column by column:
 * a decision's keys, and a record's that is no decision ("event": attach, detach...).
 * One table, so the two forms keep the same columns.
 */
static const struct {
	const char *decision, *record;
} columns[] = {
	{"pid", "event"},     {"syscall", "path"},  {"path", "device"},
	{"device", "access"}, {"access", "result"}, {"decision", NULL},
};

void ctl_event_print(FILE *out, struct json_object *obj)
{
	bool record = json_object_object_get_ex(obj, "event", NULL);
	struct json_object *v = NULL;
	const char *t;

	if (!strcmp(field(obj, "event"), "selector")) {
		print_selector(out, obj);
		return;
	}
	if (!strcmp(field(obj, "event"), "drift")) {
		print_drift(out, obj);
		return;
	}
	t = json_object_object_get_ex(obj, "time", &v) ? json_object_get_string(v) : "?";
	/* 2026-12-03T16:54:01.123456789Z → 16:54:01.123 */
	fprintf(out, "%.12s", strlen(t) >= 23 ? t + 11 : t);
	print_container_node(out, field(obj, "container"), field(obj, "node"));
	for (size_t i = 0; i < ARRAY_SIZE(columns); i++) {
		const char *key = record ? columns[i].record : columns[i].decision;
		const char *s = NULL;

		if (!key)
			break;
		s = field(obj, key);
		fprintf(out, " %s", *s ? s : "-");
	}
	if (json_object_object_get_ex(obj, "errno", &v))
		fprintf(out, " %s", json_object_get_string(v));
	/* An attachment by selector: what names it, and what it was before a replug. */
	if (json_object_object_get_ex(obj, "selector", &v))
		fprintf(out, " by %s", json_object_get_string(v));
	if (json_object_object_get_ex(obj, "old_device", &v))
		fprintf(out, ", was %s", json_object_get_string(v));
	if (json_object_object_get_ex(obj, "cause", &v))
		fprintf(out, " [%s]", json_object_get_string(v));
	/* Which check said so: a policy denial and a missing CAP_MKNOD are both EPERM. */
	if (json_object_object_get_ex(obj, "reason", &v)) {
		fprintf(out, " (%s", json_object_get_string(v));
		if (json_object_object_get_ex(obj, "rule", &v))
			fprintf(out, ": %s", json_object_get_string(v));
		fputc(')', out);
	}
	fputc('\n', out);
}

/* devwlctl --help: every command; unit-ctlmsg checks it names each of ctl_verbs[]. */
void ctl_usage(FILE *f)
{
	fputs("Usage: devwlctl [--socket PATH] COMMAND [ARGS]\n"
	      "\n"
	      "Commands to a running devwld (its control socket, root only):\n"
	      "  allow NODE RULE | deny NODE RULE   write RULE (\"c 1:3 rwm\") to the node\n"
	      "                                     (or a name: /dev/fuse rw, char-pts rw;\n"
	      "                                     or a selector: usb:0403:6001 rw, which\n"
	      "                                     devwld follows: devwlctl selectors)\n"
	      "  mkdir NODE | rmdir NODE            create / remove a node\n"
	      "  list NODE | show NODE              devices.list / the full listing\n"
	      "  check NODE c|b MAJOR MINOR ACCESS  would the node allow it?\n"
	      "  mknod-cap NODE true|false          whether on-behalf mknod needs CAP_MKNOD\n"
	      "  learn NODE on|off                  learn mode: the node's containers run\n"
	      "                                     under its parent, each device they\n"
	      "                                     touch recorded\n"
	      "  advise CONTAINER|NODE [--owner UID]\n"
	      "                                     the minimal policy learnt so far, as a\n"
	      "                                     policy file (devwl-policy(5))\n"
	      "  containers                         ID NODE PROCESSES NOTIFICATIONS MODE OWNER\n"
	      "                                     NAME per line (OWNER: the runtimes' uid;\n"
	      "                                     NAME: podman's, nerdctl's or the\n"
	      "                                     Kubernetes name, or -)\n"
	      "  containers --devices               ID TYPE MAJOR:MINOR ACCESS PATH OPEN-BY\n"
	      "                                     [SELECTOR] per attached device (OPEN-BY:\n"
	      "                                     pids or -; \"- -\" and (waiting): its\n"
	      "                                     selector names no device now)\n"
	      "  attach CONTAINER DEVICE [PATH] [--access rwm] [--mode 0660] [--uid U]\n"
	      "         [--gid G] [--owner UID] [--dry-run]\n"
	      "                                     give a running container a device: the\n"
	      "                                     grant and its node at PATH (DEVICE: a\n"
	      "                                     host path, or \"c MAJOR:MINOR\", or a\n"
	      "                                     selector, followed: loop:FILE PATH)\n"
	      "  detach CONTAINER DEVICE|PATH [--owner UID] [--dry-run]\n"
	      "                                     take it back: node removed, grant revoked\n"
	      "  selectors                          the selector bindings devwld follows:\n"
	      "                                     NODE VERB SELECTOR [SOURCE]: RULES NOW\n"
	      "  unbind NODE allow|deny SELECTOR [ACCESS]\n"
	      "                                     drop that one binding (as selectors\n"
	      "                                     lists it); an allow's grant is revoked\n"
	      "  stats                              counters and handling times\n"
	      "  metrics                            the same and more, as Prometheus text\n"
	      "  reload                             reload the policy file (as SIGHUP); the\n"
	      "                                     changes made with devwlctl stay\n"
	      "  reset                              reload it and drop those changes\n"
	      "  restart                            hand devwld over to a new devwld (as\n"
	      "                                     SIGUSR2); returns once the new one serves\n"
	      "  events [--container CONTAINER [--owner UID]] [--all] [--json] [--follow]\n"
	      "                                     follow devwld's decisions as they happen\n"
	      "                                     (--all: also calls that reach no device;\n"
	      "                                     --follow: again after devwld restarts)\n"
	      "  batch --connect PATH               the batch protocol against devwld\n"
	      "\n"
	      "CONTAINER: an id, a prefix of one id only, NAMESPACE/POD/CONTAINER, or the\n"
	      "name podman or nerdctl gave it, among the containers of runtimes running as\n"
	      "uid 0, or as UID with --owner.\n"
	      "\n"
	      "  batch [--policy FILE]   read commands from stdin, answer each on stdout,\n"
	      "                          against a local what-if policy (default: the kernel's\n"
	      "                          root cgroup, allow all)\n"
	      "    [--sysfs DIR] [--udev-data DIR] [--dev DIR] [--cdi-dir DIR]...\n"
	      "                          resolve selectors (usb:..., cdi:...) in these trees\n"
	      "                          [/sys, /run/udev/data, /dev, /etc/cdi /var/run/cdi]\n"
	      "\n"
	      "Batch commands (one per line):\n"
	      "  mkdir NODE | rmdir NODE | allow NODE RULE | deny NODE RULE\n"
	      "  list NODE | show NODE | check NODE c|b MAJOR MINOR ACCESS|-\n"
	      "\n"
	      "Options:\n"
	      "  --socket PATH  devwld's control socket [$DEVWL_SOCKET, else\n"
	      "                 /run/devwl/control.sock]\n"
	      "  -h, --help     show this help\n"
	      "  -V, --version  show the version\n",
	      f);
}
