/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwlctl: inspect and change device allow lists; see devwlctl(1). */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "batch.h"
#include "ctlmsg.h"
#include "ctlverb.h"
#include "devwlctl.h"
#include "devwl.h"
#include "fileio.h"
#include "policysel.h"
#include "selector.h"
#include "util.h"

const char *socket_path = CTL_SOCKET_DEFAULT;
static enum socket_origin socket_origin = SOCKET_DEFAULT;

/*
 * Send input (from in_fd until EOF, or buf[0..len) when in_fd < 0) to devwld, half-close,
 * and copy every answer to out until devwld closes. Reading and writing interleave, so
 * a long batch never deadlocks against devwld pausing until its answers are read.
 */
static int talk(const char *path, int in_fd, const char *buf, size_t len, FILE *out)
{
	_cleanup_close_ int fd = devwl_unix_connect(path);
	char ibuf[16384], obuf[16384];
	size_t ilen = 0, ioff = 0;
	bool in_eof = in_fd < 0, sent_eof = false;

	if (fd < 0)
		return fd;
	for (;;) {
		struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN}, {.fd = -1}};
		ssize_t n;

		if (in_fd < 0 && ioff == ilen && len) {
			ilen = len < sizeof(ibuf) ? len : sizeof(ibuf);
			memcpy(ibuf, buf, ilen);
			buf += ilen;
			len -= ilen;
			ioff = 0;
		}
		if (ioff < ilen)
			pfd[0].events |= POLLOUT;
		else if (!in_eof)
			pfd[1] = (struct pollfd){.fd = in_fd, .events = POLLIN};
		else if (!sent_eof && len == 0) {
			shutdown(fd, SHUT_WR);
			sent_eof = true;
		}
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return negerrno();
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(fd, obuf, sizeof(obuf));
			if (n < 0)
				return negerrno();
			if (n == 0)
				return sent_eof ? 0 : -ECONNRESET;
			fwrite(obuf, 1, (size_t)n, out);
			if (out == stdout)
				fflush(out);
		}
		if (pfd[0].revents & POLLOUT) {
			n = send(fd, ibuf + ioff, ilen - ioff, MSG_NOSIGNAL);
			if (n < 0)
				return negerrno();
			ioff += (size_t)n;
		}
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(in_fd, ibuf, sizeof(ibuf));
			if (n < 0)
				return negerrno();
			if (n == 0)
				in_eof = true;
			ilen = (size_t)n;
			ioff = 0;
		}
	}
}

static void print_errno(int r)
{
	char msg[1024];

	fprintf(stderr, "%s\n", ctl_socket_error(r, socket_path, socket_origin, msg, sizeof(msg)));
}

/* A NODE word cannot hold what the line protocol uses as separators. */
static bool plain_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

/* One command to devwld; its answer goes to stdout, an "error ENAME" answer to stderr. */
static int cmd_daemon(int argc, char **argv)
{
	enum ctl_verb v = ctl_verb_by_word(argv[0]);
	_cleanup_free_ char *line = NULL;
	size_t line_len = 0;
	FILE *f;

	/* A command with options of its own (events, attach...) is main()'s to call. */
	if (v == CTL_VERB_COUNT || ctl_verbs[v].nargs < 0) {
		fprintf(stderr, "devwlctl: unknown command '%s' (see devwlctl --help)\n", argv[0]);
		return 2;
	}
	if (argc - 1 != ctl_verbs[v].nargs) {
		fprintf(stderr, "devwlctl %s: expects %d argument(s)\n", argv[0],
			ctl_verbs[v].nargs);
		return 2;
	}
	f = open_memstream(&line, &line_len);
	if (!f)
		return 1;
	fputs(ctl_verbs[v].wire, f);
	for (int a = 1; a < argc; a++) {
		fputc(' ', f);
		if (ctl_verbs[v].flags & CTLV_RULE && a == argc - 1) {
			batch_escape(f, argv[a], strlen(argv[a]));
		} else if (plain_word(argv[a])) {
			fputs(argv[a], f);
		} else {
			fclose(f);
			fprintf(stderr, "devwlctl: bad argument '%s'\n", argv[a]);
			return 2;
		}
	}
	fputc('\n', f);
	if (fclose(f) != 0)
		return 1;
	return ctl_request(line, line_len);
}

int ctl_request(const char *line, size_t line_len)
{
	_cleanup_free_ char *answer = NULL;
	size_t answer_len = 0;
	FILE *f;
	int r;

	f = open_memstream(&answer, &answer_len);
	if (!f)
		return 1;
	r = talk(socket_path, -1, line, line_len, f);
	if (fclose(f) != 0)
		return 1;
	if (r < 0) {
		print_errno(r);
		return 1;
	}
	if (!strncmp(answer, "error ", 6)) {
		fprintf(stderr, "devwlctl: %s", answer + 6);
		return 1;
	}
	if (!strcmp(answer, "ok\n"))
		return 0;
	/* Listings end with a lone "."; the protocol's terminator is not output. */
	if (answer_len >= 2 && !strcmp(answer + answer_len - 2, ".\n"))
		answer[answer_len -= 2] = '\0';
	fwrite(answer, 1, answer_len, stdout);
	return 0;
}

/* advise CONTAINER|NODE [--owner UID]: the policy learnt, as devwld writes it. */
static int cmd_advise(int argc, char **argv)
{
	static const struct option opts[] = {
		{"owner", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	_cleanup_free_ char *req = NULL;
	const char *owner = NULL;
	int c, len;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			owner = optarg;
			break;
		case 'h':
			ctl_usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc - 1 || !plain_word(argv[optind]) ||
	    (owner && (!*owner || strspn(owner, "0123456789") != strlen(owner)))) {
		fputs("devwlctl advise: expects CONTAINER|NODE [--owner UID]\n", stderr);
		return 2;
	}
	len = asprintf(&req, "advise %s%s%s%s\n", owner ? "owner=" : "", owner ? owner : "",
		       owner ? " " : "", argv[optind]);
	if (len < 0)
		return 1;
	return ctl_request(req, (size_t)len);
}

/* devwld's worker generation from "stats", or a negative errno. */
static long generation(void)
{
	_cleanup_free_ char *answer = NULL;
	size_t len = 0;
	const char *g;
	FILE *f = open_memstream(&answer, &len);
	int r;

	if (!f)
		return -ENOMEM;
	r = talk(socket_path, -1, "stats\n", 6, f);
	if (fclose(f) != 0)
		return -ENOMEM;
	if (r < 0)
		return r;
	g = strstr(answer, "\ngeneration ");
	return g ? strtol(g + 12, NULL, 10) : -EPROTO;
}

/*
 * Ask for a planned restart, then wait until a devwld of another generation answers:
 * connections made meanwhile wait in the socket's backlog for the new one, so the
 * first answer that comes back tells that it serves.
 */
static int cmd_restart(int argc, char **argv)
{
	long before, now = 0;
	int r;

	(void)argv;
	if (argc != 1) {
		fputs("devwlctl restart: expects no argument\n", stderr);
		return 2;
	}
	before = generation();
	if (before < 0) {
		print_errno((int)before);
		return 1;
	}
	r = cmd_daemon(argc, argv);
	if (r != 0)
		return r;
	/* A devwld that never comes back is a failure, not a hang. */
	alarm(60);
	for (;;) {
		now = generation();
		if (now >= 0 && now != before)
			return 0;
		if (now < 0 && now != -ECONNRESET && now != -ECONNREFUSED && now != -ENOENT) {
			print_errno((int)now);
			return 1;
		}
		usleep(10000);
	}
}

/* One line of the stream: as it came (--json), or for people (ctl_event_print()). */
static void print_event(const char *line, bool json)
{
	struct json_object *obj = json_tokener_parse(line), *v = NULL;

	if (obj && json_object_object_get_ex(obj, "missed", &v))
		fprintf(stderr, "devwlctl: %s decisions missed (devwlctl did not keep up)\n",
			json_object_get_string(v));
	else if (json || !obj)
		puts(line);
	else
		ctl_event_print(stdout, obj);
	fflush(stdout);
	json_object_put(obj);
}

/*
 * One subscription: send req, print what comes until devwld closes the stream. Returns 0
 * when a stream devwld accepted ended, 1 when devwld refused it (said on stderr), or a
 * negative errno when devwld could not be reached.
 */
static int follow_once(const char *req, bool json)
{
	_cleanup_free_ char *line = NULL;
	bool first = true;
	size_t cap = 0;
	ssize_t n;
	FILE *in;
	int fd, r;

	fd = devwl_unix_connect(socket_path);
	if (fd < 0)
		return fd;
	/* The request, and no half-close: devwld takes that for the end of the stream. */
	r = devwl_write_all(fd, req, strlen(req));
	if (r < 0 || !(in = fdopen(fd, "r"))) {
		close(fd);
		return r < 0 ? r : -ENOMEM;
	}
	while ((n = getline(&line, &cap, in)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (first) {
			first = false;
			if (!strcmp(line, "ok"))
				continue;
			fprintf(stderr, "devwlctl: %s\n",
				!strncmp(line, "error ", 6) ? line + 6 : line);
			fclose(in);
			return 1;
		}
		print_event(line, json);
	}
	fclose(in);
	/* Closed before it answered: a devwld going away under us, as a refused connect. */
	return first ? -ECONNRESET : 0;
}

/*
 * Follow devwld's decisions until it or we stop. devwld ends the stream when it stops or
 * restarts (a planned restart too: the stream is the old worker's); that is said, since
 * silence would look like a quiet host. With --follow devwlctl waits for devwld and
 * subscribes again, as tail -F does.
 */
static int cmd_events(int argc, char **argv)
{
	static const struct option opts[] = {
		{"container", required_argument, NULL, 'c'},
		{"owner", required_argument, NULL, 'o'},
		{"all", no_argument, NULL, 'a'},
		{"json", no_argument, NULL, 'j'},
		{"follow", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	_cleanup_free_ char *req = NULL;
	const char *container = NULL, *owner = NULL;
	bool all = false, json = false, follow = false, lost = false;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:o:ajfh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			container = optarg;
			break;
		case 'o':
			owner = optarg;
			break;
		case 'a':
			all = true;
			break;
		case 'j':
			json = true;
			break;
		case 'f':
			follow = true;
			break;
		case 'h':
			ctl_usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc || (container && !plain_word(container)) ||
	    (owner && (!container || !*owner || strspn(owner, "0123456789") != strlen(owner)))) {
		fputs("devwlctl events: expects [--container CONTAINER [--owner UID]] [--all] "
		      "[--json] [--follow]\n",
		      stderr);
		return 2;
	}
	/* The container last: devwld takes the rest of the line as its name. */
	if (asprintf(&req, "events%s%s%s%s%s\n", all ? " all" : "", owner ? " owner=" : "",
		     owner ? owner : "", container ? " container=" : "",
		     container ? container : "") < 0)
		return 1;
	for (;;) {
		r = follow_once(req, json);
		if (r == 1)
			return 1;
		if (r >= 0 && lost)
			lost = false;
		if (!follow) {
			if (r < 0) {
				print_errno(r);
				return 1;
			}
			fputs("devwlctl: devwld ended the stream (it stopped or restarted;"
			      " --follow subscribes again)\n",
			      stderr);
			return 1;
		}
		if (r >= 0) {
			fputs("devwlctl: devwld ended the stream (it stopped or restarted);"
			      " subscribing again\n",
			      stderr);
		} else if (!lost) {
			print_errno(r);
			fputs("devwlctl: waiting for devwld\n", stderr);
			lost = true;
		}
		/* Not a busy loop while devwld is down: a restart takes milliseconds. */
		usleep(r >= 0 ? 10000 : 100000);
	}
}

/* A selector's note that is no error (a CDI spec refused, nothing matched): beside the
 * answers, which stay one per command. */
static void warn_resolve(void *userdata, const char *msg)
{
	(void)userdata;
	fprintf(stderr, "devwlctl: warning: %s\n", msg);
}

/* A policy file's node selector rules, resolved against env once, as devwld writes them
 * on a load: after the nodes, an allow the parent refuses skipped with a warning. */
static int apply_selector_rules(struct devwl_policy *policy, const struct selector_env *env,
				const struct policysel *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		const struct policysel_rule *x = &ps->v[i];
		struct devwl_node *node = devwl_policy_find(policy, x->node);
		_cleanup_free_ struct devwl_rule *rules = NULL;
		struct devwl_error err = {0};
		size_t n = 0;
		int r;

		r = selector_resolve(env, x->selector, strlen(x->selector), &rules, &n, &err);
		if (r < 0) {
			fprintf(stderr, "devwlctl: %s: %s %s: %s\n", x->where,
				x->allow ? "allow" : "deny", x->selector,
				err.msg[0] ? err.msg : strerror(-r));
			return r;
		}
		for (size_t k = 0; node && k < n; k++) {
			char s[DEVWL_RULE_STR_MAX] = "?";

			r = devwl_node_update(node, x->allow ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY,
					      &rules[k]);
			if (r >= 0)
				continue;
			(void)devwl_rule_format(&rules[k], s, sizeof(s));
			fprintf(stderr, "devwlctl: warning: %s: %s %s: %s\n", x->where,
				x->allow ? "allow" : "deny", s,
				r == -EPERM ? "refused by the parent, skipped" : strerror(-r));
		}
	}
	return 0;
}

static int cmd_batch(int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"connect", required_argument, NULL, 'c'},
		{"sysfs", required_argument, NULL, 's'},
		{"udev-data", required_argument, NULL, 'u'},
		{"dev", required_argument, NULL, 'd'},
		{"cdi-dir", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct devwl_policy *policy = NULL;
	const char *policy_file = NULL, *connect_path = NULL;
	_cleanup_free_ const char **cdi_dirs = calloc((size_t)argc, sizeof(*cdi_dirs));
	struct selector_env env = {.cdi_dirs = cdi_dirs, .warn = warn_resolve};
	bool local_roots = false;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int c;

	if (!cdi_dirs) {
		fputs("devwlctl: out of memory\n", stderr);
		return 1;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:c:h", opts, NULL)) != -1) {
		local_roots |= c == 's' || c == 'u' || c == 'd' || c == 'C';
		switch (c) {
		case 'p':
			policy_file = optarg;
			break;
		case 'c':
			connect_path = optarg;
			break;
		case 's':
			env.sysfs = optarg;
			break;
		case 'u':
			env.udev = optarg;
			break;
		case 'd':
			env.dev = optarg;
			break;
		case 'C':
			cdi_dirs[env.n_cdi_dirs++] = optarg;
			break;
		case 'h':
			ctl_usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "devwlctl batch: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	/* Without --cdi-dir, the CDI's own directories. */
	if (env.n_cdi_dirs == 0)
		env.cdi_dirs = NULL;
	if (connect_path) {
		int r;

		if (policy_file || local_roots) {
			fputs("devwlctl batch: --connect excludes --policy, --sysfs, --udev-data, "
			      "--dev and --cdi-dir (devwld resolves against its host)\n",
			      stderr);
			return 2;
		}
		r = talk(connect_path, STDIN_FILENO, NULL, 0, stdout);
		if (r < 0) {
			socket_path = connect_path;
			socket_origin = SOCKET_OPTION;
			print_errno(r);
			return 1;
		}
		return 0;
	}
	if (policy_file) {
		struct devwl_error err = {0};
		struct policysel ps = {0};
		int r = policysel_load_file(policy_file, &policy, &ps, &err);

		if (r < 0) {
			fprintf(stderr, "devwlctl: %s\n", err.msg[0] ? err.msg : strerror(-r));
			return 1;
		}
		r = apply_selector_rules(policy, &env, &ps);
		policysel_clear(&ps);
		if (r < 0) {
			devwl_policy_free(policy);
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
		batch_exec_env(policy, &env, line, (size_t)n, stdout);
	}
	devwl_policy_free(policy);
	return 0;
}

/*
 * allow|deny NODE NAME [ACCESS] with a device name (devwl_devname_resolve()): resolved here, so
 * devwld gets the kernel's rules, and each rule is printed as it is written.
 */
static int cmd_named(int argc, char **argv)
{
	_cleanup_free_ struct devwl_rule *rules = NULL;
	_cleanup_free_ char *name = NULL;
	struct devwl_error err = {0};
	size_t n = 0;
	int r;

	/* "NAME ACCESS" as one argument or two. */
	if (asprintf(&name, "%s%s%s", argv[2], argc == 4 ? " " : "", argc == 4 ? argv[3] : "") < 0)
		return 1;
	r = devwl_devname_resolve(name, strlen(name), NULL, &rules, &n, &err);
	if (r < 0) {
		fprintf(stderr, "devwlctl: %s\n", err.msg);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		char rule[DEVWL_RULE_STR_MAX];

		if (devwl_rule_format(&rules[i], rule, sizeof(rule)) < 0)
			return 1;
		printf("%s %s %s\n", argv[0], argv[1], rule);
		fflush(stdout);
		r = cmd_daemon(3, (char *[]){argv[0], argv[1], rule, NULL});
		if (r != 0)
			return r;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *option = NULL;
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			ctl_usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			printf("devwlctl %s\n", devwl_version());
			return 0;
		}
		if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			option = argv[++i];
			continue;
		}
		if (!strncmp(argv[i], "--socket=", 9)) {
			option = argv[i] + 9;
			continue;
		}
		fprintf(stderr, "devwlctl: unknown option '%s'\n", argv[i]);
		ctl_usage(stderr);
		return 2;
	}
	/* devwlctl is no set-uid program, but root runs it: secure_getenv all the same. */
	socket_path = ctl_socket_pick(option, secure_getenv("DEVWL_SOCKET"), &socket_origin);
	if (i >= argc) {
		ctl_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[i], "batch"))
		return cmd_batch(argc - i, argv + i);
	if (!strcmp(argv[i], "restart"))
		return cmd_restart(argc - i, argv + i);
	if (!strcmp(argv[i], "events"))
		return cmd_events(argc - i, argv + i);
	if (!strcmp(argv[i], "advise"))
		return cmd_advise(argc - i, argv + i);
	if (!strcmp(argv[i], "attach") || !strcmp(argv[i], "detach"))
		return cmd_attach(argc - i, argv + i);
	if (!strcmp(argv[i], "containers") && argc - i == 2 && !strcmp(argv[i + 1], "--devices"))
		return ctl_request("devices\n", 8);
	if ((argc - i == 3 || argc - i == 4) &&
	    (!strcmp(argv[i], "allow") || !strcmp(argv[i], "deny")) &&
	    devwl_devname_is_name(argv[i + 2], strlen(argv[i + 2])))
		return cmd_named(argc - i, argv + i);
	/* A selector goes to devwld as written, which resolves it: "SELECTOR ACCESS" as one
	 * argument or two. */
	if (argc - i == 4 && (!strcmp(argv[i], "allow") || !strcmp(argv[i], "deny")) &&
	    selector_is(argv[i + 2], strlen(argv[i + 2]))) {
		_cleanup_free_ char *rule = NULL;

		if (asprintf(&rule, "%s %s", argv[i + 2], argv[i + 3]) < 0)
			return 1;
		return cmd_daemon(3, (char *[]){argv[i], argv[i + 1], rule, NULL});
	}
	/* unbind NODE allow|deny SELECTOR [ACCESS]: the selector text as the binding has it. */
	if (argc - i == 5 && !strcmp(argv[i], "unbind")) {
		_cleanup_free_ char *rule = NULL;

		if (asprintf(&rule, "%s %s", argv[i + 3], argv[i + 4]) < 0)
			return 1;
		return cmd_daemon(4, (char *[]){argv[i], argv[i + 1], argv[i + 2], rule, NULL});
	}
	return cmd_daemon(argc - i, argv + i);
}
