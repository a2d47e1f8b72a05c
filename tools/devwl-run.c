/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwl-run: run one command under a device allow list; see devwl-run(1).
 *
 * The parent builds the policy and the kernel baseline, forks, and supervises: it answers
 * the child's trapped calls from one poll() loop over the notify fd and a signalfd. The
 * child joins the baseline (the parent moves it before letting it go on), is contained in
 * it (tools/contain.c), sets no_new_privs, drops capabilities, installs the filter, hands
 * the notify fd over and execs.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/seccomp.h>

#include "baseline.h"
#include "contain.h"
#include "defaults.h"
#include "devwl.h"
#include "audit-line.h"
#include "fds.h"
#include "fileio.h"
#include "learn.h"
#include "policysel.h"
#include "selector.h"
#include "util.h"

#define EXIT_USAGE	 2
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND	 127

/* Signals passed on to the command. */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

/* Who enforces opens: the kernel (the policy programmed into the device cgroup, only
 * mknod trapped) or devwl (every open trapped and decided, grants made on behalf). */
enum run_mode {
	MODE_AUTO = 0,
	MODE_KERNEL,
	MODE_AUTHORITATIVE,
};

static const char *const mode_names[] = {
	[MODE_AUTO] = "auto",
	[MODE_KERNEL] = "kernel",
	[MODE_AUTHORITATIVE] = "authoritative",
};

static int mode_parse(const char *s, enum run_mode *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (s && strcmp(s, mode_names[i]) == 0) {
			*ret = (enum run_mode)i;
			return 0;
		}
	return -EINVAL;
}

struct rule_arg {
	enum devwl_file file;
	const char *text;
};

struct options {
	const char *policy_file;
	const char *node_path;
	struct rule_arg *rules;
	size_t n_rules;
	cap_value_t *drop_caps;
	size_t n_drop_caps;
	const char *audit;
	const char *connect;
	const char *id;
	enum baseline_kind baseline;
	enum run_mode mode;
	bool keep_caps;
	bool allow_io_uring;
	bool userns; /* --userns: the command makes nodes in user namespaces of its own */
	bool verbose;
	bool learn;
	const char *learn_file; /* where --learn writes the policy */
	char **argv;
};

/* Where --learn writes without a FILE: not stdout, which is the command's. */
#define LEARN_FILE_DEFAULT "devwl-learned.json"

static void usage(FILE *f)
{
	fputs("Usage: devwl-run [OPTIONS] [--] COMMAND [ARG]...\n"
	      "\n"
	      "Run COMMAND with access to exactly the devices its allow list grants.\n"
	      "\n"
	      "Options:\n"
	      "  -p, --policy FILE      load the allow lists from a JSON policy file\n"
	      "  -n, --node PATH        run in this node of the policy (default /; created,\n"
	      "                         inheriting from its parent, if missing)\n"
	      "  -a, --allow RULE       add \"TYPE MAJOR:MINOR ACCESS\" to the node's allow list\n"
	      "                         or a device by name (\"/dev/fuse rw\", \"char-pts rw\")\n"
	      "                         or by what it is (\"usb:0403:6001 rw\", \"loop:FILE r\",\n"
	      "                         \"cdi:VENDOR/CLASS=NAME rw\"...: devwl-policy(5))\n"
	      "  -d, --deny RULE        remove it (both apply in order, after the policy)\n"
	      "  -c, --drop-cap CAP     drop a capability (CAP_MKNOD or mknod) from the command\n"
	      "  -A, --audit FILE       append one JSON line per decision to FILE (- = stderr)\n"
	      "  -C, --connect SOCKET   hand the notify fd to devwld on SOCKET and exec in place\n"
	      "      --id ID            container id sent with --connect (default devwl-run-PID)\n"
	      "      --baseline=KIND    kernel baseline: auto (default), v1, v2 or none\n"
	      "      --no-baseline      the same as --baseline=none (not recommended)\n"
	      "      --mode=MODE        who enforces opens: kernel (the policy in the device\n"
	      "                         cgroup, only mknod trapped), authoritative (every open\n"
	      "                         trapped), auto (default: kernel where it can be)\n"
	      "      --keep-caps        leave COMMAND every capability and a writable cgroup\n"
	      "                         hierarchy: run as root, it can leave its baseline\n"
	      "      --allow-io-uring   do not refuse io_uring_setup (io_uring bypasses devwl)\n"
	      "      --userns           the command makes device nodes in user namespaces of\n"
	      "                         its own: in kernel mode also trap unlink and rename,\n"
	      "                         so that such a node is removed and renamed as a plain\n"
	      "                         one\n"
	      "      --learn[=FILE]     run under the node's parent (the root: itself), every\n"
	      "                         open trapped, and write the policy granting the node\n"
	      "                         just the devices the command used to FILE (- for\n"
	      "                         stdout; default " LEARN_FILE_DEFAULT ")\n"
	      "  -v, --verbose          print the rules each name or selector resolves to\n"
	      "  -h, --help             show this help\n"
	      "  -V, --version          show the version\n"
	      "\n"
	      "Without --policy the allow list is the standard container set:\n"
	      "  c 1:3, 1:5, 1:7, 1:8, 1:9, 5:0, 5:2, 136:* rwm\n"
	      "(null, zero, full, random, urandom, tty, ptmx, pts/*).\n"
	      "\n"
	      "Exit status: the command's, 128+N if it was killed by signal N, 1 if devwl-run\n"
	      "failed, 2 on a usage error, 126/127 if COMMAND could not be run.\n",
	      f);
}

static int parse_cap(const char *name, cap_value_t *ret)
{
	char buf[64];

	if (cap_from_name(name, ret) == 0)
		return 0;
	/* Also take the name without its prefix, in either case: "mknod", "MKNOD". */
	if (strlen(name) + 5 > sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "cap_%s", name);
	for (char *p = buf; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	return cap_from_name(buf, ret) == 0 ? 0 : -EINVAL;
}

enum {
	OPT_NO_BASELINE = 256,
	OPT_BASELINE,
	OPT_ALLOW_IO_URING,
	OPT_USERNS,
	OPT_KEEP_CAPS,
	OPT_ID,
	OPT_MODE,
	OPT_LEARN,
};

/* Returns -1 to go on, or an exit status. */
static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"node", required_argument, NULL, 'n'},
		{"allow", required_argument, NULL, 'a'},
		{"deny", required_argument, NULL, 'd'},
		{"drop-cap", required_argument, NULL, 'c'},
		{"audit", required_argument, NULL, 'A'},
		{"connect", required_argument, NULL, 'C'},
		{"id", required_argument, NULL, OPT_ID},
		{"baseline", required_argument, NULL, OPT_BASELINE},
		{"no-baseline", no_argument, NULL, OPT_NO_BASELINE},
		{"mode", required_argument, NULL, OPT_MODE},
		{"allow-io-uring", no_argument, NULL, OPT_ALLOW_IO_URING},
		{"userns", no_argument, NULL, OPT_USERNS},
		{"keep-caps", no_argument, NULL, OPT_KEEP_CAPS},
		{"learn", optional_argument, NULL, OPT_LEARN},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	const char *env = secure_getenv("DEVWL_BASELINE");
	const char *mode_env = secure_getenv("DEVWL_MODE");
	bool kernel_asked = false; /* --mode=kernel itself, not DEVWL_MODE */
	int c;

	if (mode_env && *mode_env && mode_parse(mode_env, &o->mode) < 0) {
		fprintf(stderr,
			"devwl-run: DEVWL_MODE=%s: expected kernel, authoritative or auto\n",
			mode_env);
		return EXIT_USAGE;
	}
	o->baseline = BASELINE_AUTO;
	if (env && *env && baseline_kind_parse(env, &o->baseline) < 0) {
		fprintf(stderr, "devwl-run: DEVWL_BASELINE=%s: expected auto, v1, v2 or none\n",
			env);
		return EXIT_USAGE;
	}
	o->rules = calloc((size_t)argc, sizeof(*o->rules));
	/* Room for the containment's own as well (restrict_command). */
	o->drop_caps = calloc((size_t)argc + contain_n_caps, sizeof(*o->drop_caps));
	if (!o->rules || !o->drop_caps) {
		fputs("devwl-run: out of memory\n", stderr);
		return EXIT_FAILURE;
	}
	/* "+": the command's own options are not ours, even without "--". */
	while ((c = getopt_long(argc, argv, "+p:n:a:d:c:A:C:vhV", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->policy_file = optarg;
			break;
		case 'n':
			o->node_path = optarg;
			break;
		case 'a':
		case 'd':
			o->rules[o->n_rules].file = c == 'a' ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY;
			o->rules[o->n_rules++].text = optarg;
			break;
		case 'c':
			if (parse_cap(optarg, &o->drop_caps[o->n_drop_caps]) < 0) {
				fprintf(stderr, "devwl-run: --drop-cap %s: unknown capability\n",
					optarg);
				return EXIT_USAGE;
			}
			o->n_drop_caps++;
			break;
		case 'A':
			o->audit = optarg;
			break;
		case 'C':
			o->connect = optarg;
			break;
		case OPT_ID:
			o->id = optarg;
			break;
		case OPT_BASELINE:
			if (baseline_kind_parse(optarg, &o->baseline) < 0) {
				fprintf(stderr,
					"devwl-run: --baseline=%s: expected auto, v1, v2 or none\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_MODE:
			if (mode_parse(optarg, &o->mode) < 0) {
				fprintf(stderr,
					"devwl-run: --mode=%s: expected kernel, authoritative or "
					"auto\n",
					optarg);
				return EXIT_USAGE;
			}
			kernel_asked = o->mode == MODE_KERNEL;
			break;
		case OPT_NO_BASELINE:
			o->baseline = BASELINE_NONE;
			break;
		case OPT_USERNS:
			o->userns = true;
			break;
		case OPT_ALLOW_IO_URING:
			o->allow_io_uring = true;
			break;
		case OPT_KEEP_CAPS:
			o->keep_caps = true;
			break;
		case OPT_LEARN:
			o->learn = true;
			o->learn_file = optarg && *optarg ? optarg : LEARN_FILE_DEFAULT;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("devwl-run %s\n", devwl_version());
			return 0;
		default:
			fputs("Try 'devwl-run --help'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fputs("devwl-run: no command given\nTry 'devwl-run --help'.\n", stderr);
		return EXIT_USAGE;
	}
	if (o->connect && (o->policy_file || o->n_rules > 0 || o->audit)) {
		fputs("devwl-run: --connect leaves the policy and the audit to devwld: "
		      "--policy, --allow, --deny and --audit do not apply\n",
		      stderr);
		return EXIT_USAGE;
	}
	if (o->learn && (o->connect || o->n_rules > 0 || kernel_asked)) {
		/* The ceiling is the policy's, and every open must trap to be seen. */
		fputs("devwl-run: --learn runs under the node's parent as the policy defines it, "
		      "every open trapped: --connect, --allow, --deny and --mode=kernel do not "
		      "apply\n",
		      stderr);
		return EXIT_USAGE;
	}
	if (o->learn) /* whatever DEVWL_MODE says */
		o->mode = MODE_AUTHORITATIVE;
	if (o->id && !o->connect) {
		fputs("devwl-run: --id only applies with --connect\n", stderr);
		return EXIT_USAGE;
	}
	o->argv = argv + optind;
	return -1;
}

/* ---- the policy ---------------------------------------------------------------------- */

/* Create path and its missing ancestors; each new node inherits from its parent. */
static int mkdir_p(struct devwl_policy *policy, const char *path)
{
	_cleanup_free_ char *buf = strdup(path);
	int r;

	if (!buf)
		return -ENOMEM;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		r = devwl_policy_mkdir(policy, buf);
		*p = '/';
		if (r < 0 && r != -EEXIST)
			return r;
	}
	r = devwl_policy_mkdir(policy, buf);
	return r == -EEXIST ? 0 : r;
}

static void warn_resolve(void *userdata, const char *msg)
{
	fprintf(stderr, "devwl-run: warning: %s: %s\n", (const char *)userdata, msg);
}

static int write_rule(struct devwl_node *node, enum devwl_file file, const char *text,
		      const char *origin, bool verbose)
{
	_cleanup_free_ struct devwl_rule *rules = NULL;
	struct selector_env env = {.warn = warn_resolve, .userdata = (void *)origin};
	struct devwl_error err = {0};
	size_t n = 0;
	int r;

	/* A device name (/dev/fuse, char-pts) or a selector (usb:0403:6001) is the rules it
	 * resolves to now, as a policy file's names are: the node holds numbers only. */
	if (!devwl_devname_is_name(text, strlen(text)) && !selector_is(text, strlen(text))) {
		r = devwl_node_write(node, file, text, strlen(text), &err);
		goto out;
	}
	r = selector_resolve_rule(&env, text, strlen(text), &rules, &n, &err);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		char s[DEVWL_RULE_STR_MAX];

		devwl_rule_format(&rules[i], s, sizeof(s));
		if (verbose)
			fprintf(stderr, "devwl-run: %s '%s': %s\n", origin, text, s);
		r = devwl_node_update(node, file, &rules[i]);
		if (r < 0)
			devwl_error_set(&err, r, 0, "%s %s", s,
					r == -EPERM ? "is not allowed by the parent"
						    : strerror(-r));
	}
out:
	if (r < 0)
		fprintf(stderr, "devwl-run: %s '%s' on %s: %s\n", origin, text,
			devwl_node_path(node), err.msg[0] ? err.msg : strerror(-r));
	return r;
}

/* Returns -1 on success (ret_* set), or an exit status. */
static int build_policy(const struct options *o, struct devwl_policy **ret_policy,
			struct devwl_node **ret_node)
{
	struct devwl_policy *policy = NULL;
	struct devwl_node *node = NULL;
	const char *path = o->node_path ? o->node_path : "/";
	int r;

	if (o->policy_file) {
		struct devwl_error err = {0};
		struct policysel ps = {0};

		r = policysel_load_file(o->policy_file, &policy, &ps, &err);
		if (r < 0) {
			fprintf(stderr, "devwl-run: %s\n", err.msg[0] ? err.msg : strerror(-r));
			return EXIT_FAILURE;
		}
		/* A node's selector rules, resolved once, after its plain rules as in devwld. */
		for (size_t i = 0; r >= 0 && i < ps.n; i++)
			r = write_rule(devwl_policy_find(policy, ps.v[i].node),
				       ps.v[i].allow ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY,
				       ps.v[i].selector, ps.v[i].where, o->verbose);
		policysel_clear(&ps);
		if (r < 0) {
			devwl_policy_free(policy);
			return EXIT_FAILURE;
		}
	} else {
		policy = devwl_policy_new();
		if (!policy)
			goto oom;
		/* What a container gets by default: what OCI runtimes give every one. */
		if (devwl_node_set_defaults(devwl_policy_find(policy, "/")) < 0)
			goto oom;
	}
	r = mkdir_p(policy, path);
	if (r < 0) {
		fprintf(stderr, "devwl-run: --node %s: %s\n", path,
			r == -EINVAL ? "not a valid node path" : strerror(-r));
		devwl_policy_free(policy);
		return r == -EINVAL ? EXIT_USAGE : EXIT_FAILURE;
	}
	node = devwl_policy_find(policy, path);
	if (!node)
		goto oom;
	for (size_t i = 0; i < o->n_rules; i++) {
		const struct rule_arg *a = &o->rules[i];
		r = write_rule(node, a->file, a->text,
			       a->file == DEVWL_FILE_ALLOW ? "--allow" : "--deny", o->verbose);
		if (r < 0) {
			devwl_policy_free(policy);
			/* A rule that does not parse is a usage error; one the hierarchy
			 * refuses (EPERM) is a policy failure. */
			return r == -EINVAL || r == -E2BIG ? EXIT_USAGE : EXIT_FAILURE;
		}
	}
	*ret_policy = policy;
	*ret_node = node;
	return -1;
oom:
	fputs("devwl-run: out of memory\n", stderr);
	devwl_policy_free(policy);
	return EXIT_FAILURE;
}

/* ---- the child ----------------------------------------------------------------------- */

/* What the child tells the parent: 0 and the notify fd, or the errno of a failed step. */
struct child_msg {
	int error;
	char step[200];
};

static int send_msg(int sock, const struct child_msg *msg, int fd)
{
	SCM_RIGHTS_BUF(1) u;
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = sizeof(*msg)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	scm_rights_put(&mh, u.buf, &fd, fd >= 0);
	return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? negerrno() : 0;
}

/* Receive a child_msg; ret_fd gets the fd passed with it, or -1. 0 on EOF. */
static ssize_t recv_msg(int sock, struct child_msg *msg, int *ret_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = msg, .iov_len = sizeof(*msg)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	size_t nfds = 0;
	ssize_t n;

	*ret_fd = -1;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return negerrno();
	scm_rights_take(&mh, ret_fd, 1, &nfds);
	return n;
}

/*
 * Drop each capability from every set. The bounding set first, while CAP_SETPCAP (which
 * may be among those dropped) is still effective; ambient last, as lowering the others
 * already removes it from there.
 */
static int drop_caps(const cap_value_t *caps, size_t n, const char **ret_step)
{
	cap_t cur = NULL;
	int r = 0;

	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (prctl(PR_CAPBSET_READ, caps[i], 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, caps[i], 0, 0, 0) < 0) {
			*ret_step = "dropping a capability from the bounding set";
			return negerrno();
		}
	}
	cur = cap_get_proc();
	if (!cur) {
		*ret_step = "cap_get_proc";
		return negerrno();
	}
	if (cap_set_flag(cur, CAP_EFFECTIVE, (int)n, caps, CAP_CLEAR) < 0 ||
	    cap_set_flag(cur, CAP_PERMITTED, (int)n, caps, CAP_CLEAR) < 0 ||
	    cap_set_flag(cur, CAP_INHERITABLE, (int)n, caps, CAP_CLEAR) < 0 ||
	    cap_set_proc(cur) < 0) {
		*ret_step = "cap_set_proc";
		r = negerrno();
	}
	cap_free(cur);
	for (size_t i = 0; r >= 0 && i < n; i++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, caps[i], 0, 0) < 0 &&
		    errno != EINVAL) {
			*ret_step = "lowering an ambient capability";
			r = negerrno();
		}
	return r;
}

/*
 * Everything the command gives up before exec, as root or not: contained in its baseline
 * of kind unless told to keep its capabilities (BASELINE_NONE: there is no baseline to
 * keep it in), no_new_privs, and the capabilities it was told to drop plus, contained,
 * those that would let it out. On failure step (of size) says what failed; the caller
 * must not run the command.
 */
static int restrict_command(const struct options *o, enum baseline_kind kind, char *step,
			    size_t size)
{
	bool contain = kind != BASELINE_NONE && !o->keep_caps;
	size_t n = o->n_drop_caps;
	const char *what = NULL;
	int r, fd = -1;

	if (contain) {
		r = contain_enter(kind, &what);
		if (r < 0) {
			snprintf(step, size,
				 "containing the command (--keep-caps runs it uncontained, able "
				 "to leave its baseline): %s",
				 what);
			return r;
		}
		r = contain_check_fds(&fd);
		if (r == -EBADF) {
			snprintf(step, size,
				 "fd %d: the command would inherit a directory or a cgroup file, "
				 "and reach past its read-only cgroup hierarchy through it (close "
				 "it, or --keep-caps)",
				 fd);
			return r;
		}
		what = "checking the inherited file descriptors";
		if (r < 0)
			goto fail;
		/* parse_args left room for these. */
		memcpy(o->drop_caps + n, contain_caps, contain_n_caps * sizeof(*contain_caps));
		n += contain_n_caps;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		what = "PR_SET_NO_NEW_PRIVS";
		r = negerrno();
		goto fail;
	}
	r = drop_caps(o->drop_caps, n, &what);
	if (r >= 0)
		return 0;
fail:
	snprintf(step, size, "%s", what ? what : "containing the command");
	return r;
}

/* Say loudly where the baseline does not hold: with --keep-caps the command can leave it,
 * and io_uring without one reaches devices devwl never sees. */
static void warn_uncontained(const struct options *o, const struct baseline *b)
{
	if (o->allow_io_uring && b->kind == BASELINE_NONE)
		fputs("devwl-run: WARNING: --allow-io-uring without a kernel baseline: io_uring "
		      "opens never reach devwl, so they reach every device the kernel lets this "
		      "user open\n",
		      stderr);
	if (!o->keep_caps || b->kind == BASELINE_NONE)
		return;
	fprintf(stderr,
		"devwl-run: WARNING: --keep-caps: the command keeps every capability and a "
		"writable cgroup hierarchy: run as root it can leave its kernel baseline (%s, %s) "
		"or rewrite it, and a call devwl lets through (CONTINUE) can then reach any "
		"device; see devwl-run(1), CONTAINMENT\n",
		baseline_kind_name(b->kind), b->dir ? b->dir : "?");
}

static unsigned int filter_flags(const struct options *o, bool kernel_mode)
{
	/* Twins are bound only in kernel mode: only there do unlink and rename trap. */
	return (o->allow_io_uring ? DEVWL_FILTER_ALLOW_IO_URING : 0) |
	       (kernel_mode ? DEVWL_FILTER_MKNOD_ONLY : 0) |
	       (kernel_mode && o->userns ? DEVWL_FILTER_TWINS : 0);
}

/* Everything between the go from the parent and exec. Does not return. */
static void __attribute__((noreturn))
child_run(const struct options *o, enum baseline_kind kind, bool kernel_mode, int sock,
	  const sigset_t *saved_mask)
{
	struct child_msg msg = {0};
	const char *step = NULL;
	int notify_fd = -1;
	char go = 0;
	ssize_t n;
	int r;

	/* The parent moves us into the baseline before it says go; EOF: it gave up. */
	do
		n = read(sock, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(EXIT_FAILURE);

	if (sigprocmask(SIG_SETMASK, saved_mask, NULL) < 0) {
		step = "sigprocmask";
		r = negerrno();
		goto fail;
	}
	r = restrict_command(o, kind, msg.step, sizeof(msg.step));
	if (r < 0)
		goto fail; /* msg.step says what failed */
	r = devwl_filter_install(filter_flags(o, kernel_mode), &notify_fd);
	if (r < 0) {
		step = "installing the seccomp filter";
		goto fail;
	}
	r = send_msg(sock, &msg, notify_fd);
	if (r < 0)
		_exit(EXIT_FAILURE);
	close(notify_fd);
	close(sock);

	execvp(o->argv[0], o->argv);
	r = errno;
	fprintf(stderr, "devwl-run: %s: %s\n", o->argv[0], strerror(r));
	_exit(r == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
fail:
	msg.error = -r;
	if (step)
		snprintf(msg.step, sizeof(msg.step), "%s", step);
	(void)send_msg(sock, &msg, -1);
	_exit(EXIT_FAILURE);
}

/* ---- the supervisor ------------------------------------------------------------------ */

struct supervisor {
	const struct options *o;
	struct devwl_node *node;
	struct baseline baseline;
	struct devwl_notify *notify;
	int notify_fd, signal_fd, audit_fd;
	pid_t child;
	int child_status; /* wait status once the child is reaped, else -1 */
	bool kernel_mode;
	int programmed; /* size of the allow list in the cgroup (writes, instructions), or -errno */
	const char *no_baseline_why; /* set when running without a baseline */
	bool warned_userns;
	unsigned warned;
	struct learn *learn; /* --learn: every device access recorded here */
};

static int status_to_exit(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_FAILURE;
}

/* Reap whatever has exited, remembering the command's status. */
static void reap(struct supervisor *s, int flags)
{
	int status = 0;
	pid_t pid;

	while ((pid = waitpid(-1, &status, flags)) > 0 || (pid < 0 && errno == EINTR))
		if (pid == s->child)
			s->child_status = status;
}

/* SIGKILL our direct children (orphans of the command come to us: we are a subreaper).
 * Without a baseline cgroup this is how leftovers are found. Returns how many. */
static int kill_children(void)
{
	char path[64];
	int n = 0;
	long pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%ld", &pid) == 1) {
		(void)kill((pid_t)pid, SIGKILL);
		n++;
	}
	fclose(f);
	return n;
}

/* Kill every process the command left behind and reap them all, then drop the cgroup. */
static void cleanup_processes(struct supervisor *s)
{
	for (;;) {
		int left = baseline_kill(&s->baseline);
		left = (left > 0 ? left : 0) + kill_children();
		reap(s, WNOHANG);
		if (left <= 0 && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			break;
		/* Wait for one to go rather than spin; ECHILD with tasks still listed
		 * means they are exiting and not ours to reap: look again shortly. */
		if (waitpid(-1, NULL, __WALL) < 0 && errno == ECHILD)
			usleep(2000);
	}
	reap(s, WNOHANG);
}

/* Is the process in another user namespace than ours? false when it cannot be told. Ours
 * is looked at once: a look can cost an nsfs dentry made and freed (lib/caller.c). */
static bool other_userns(pid_t pid)
{
	static struct stat own;
	static bool have_own;
	char path[64];
	struct stat a;

	if (!have_own && stat("/proc/self/ns/user", &own) < 0)
		return false;
	have_own = true;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	return pid > 0 && stat(path, &a) == 0 && (a.st_dev != own.st_dev || a.st_ino != own.st_ino);
}

/* One {"event":"mode"} record to the audit, if there is one. */
static void write_mode(struct supervisor *s, const struct audit_mode *m)
{
	char line[AUDIT_LINE_SMALL];
	int n = 0;

	if (s->audit_fd < 0)
		return;
	n = audit_mode_format(m, line, sizeof(line));
	if (n > 0 && write(s->audit_fd, line, (size_t)n) < 0 && s->warned++ < 10)
		fprintf(stderr, "devwl-run: writing the audit: %m\n");
}

/*
 * A node made in a user namespace of the command's own sits on a nodev mount there: devwl
 * binds a node the kernel opens over it (libdevwl(3), GRANTS). Where that failed, in
 * kernel mode nobody can open it (opens are not trapped); say so, once.
 */
static void warn_userns_node(struct supervisor *s, const struct devwl_event *ev)
{
	if (!s->kernel_mode || s->warned_userns || ev->verdict != DEVWL_VERDICT_ALLOW ||
	    !ev->syscall || strncmp(ev->syscall, "mknod", 5) != 0 ||
	    !devwl_notify_reason(s->notify) || !other_userns(ev->pid))
		return;
	s->warned_userns = true;
	fprintf(stderr,
		"devwl-run: warning: kernel mode: pid %d made a device node in a user namespace "
		"of its own, and no node the kernel opens could be bound over it: it cannot be "
		"opened in this mode: run with --mode=authoritative\n",
		(int)ev->pid);
	write_mode(s, &(struct audit_mode){.mode = "kernel",
					   .warning = "node made in a user namespace",
					   .pid = ev->pid});
}

/*
 * In learn mode the call is received here, so that its program is named before the answer
 * lets it run on: a short one is often ended and reaped right after ("?" in the record).
 * The buffer is as large as this kernel's notification, kept for the run.
 */
static int handle_learning(struct supervisor *s, struct devwl_event *ev, struct learn_program *prog)
{
	static struct seccomp_notif *req;
	static size_t size;

	if (!req) {
		struct seccomp_notif_sizes sizes = {0};

		if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
			return negerrno();
		size = sizes.seccomp_notif > sizeof(*req) ? sizes.seccomp_notif : sizeof(*req);
		if (!(req = malloc(size)))
			return -ENOMEM;
	}
	memset(req, 0, size);
	if (ioctl(s->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
		return negerrno();
	/* req->pid is the calling thread's id in our pid namespace. */
	learn_program_of(0, (pid_t)req->pid, prog);
	return devwl_notify_handle_request(s->notify, s->notify_fd, req, size, s->node, ev);
}

static void handle_notification(struct supervisor *s)
{
	struct devwl_event ev = {0};
	struct learn_program prog;
	int r = s->learn ? handle_learning(s, &ev, &prog)
			 : devwl_notify_handle(s->notify, s->notify_fd, s->node, &ev);

	if (r == -ENOENT || r == -EAGAIN || r == -EINTR)
		return;
	if (r < 0) {
		/* A few are worth a look; a flood of the same would only drown the log. */
		if (s->warned++ < 10)
			fprintf(stderr, "devwl-run: handling a notification: %s\n", strerror(-r));
		return;
	}
	warn_userns_node(s, &ev);
	if (s->learn && ev.type) {
		r = learn_record(s->learn, &ev, &prog, NULL);
		if (r < 0 && s->warned++ < 10)
			fprintf(stderr, "devwl-run: learning: %s\n", strerror(-r));
	}
	if (s->audit_fd >= 0) {
		r = audit_write(s->audit_fd, &ev, NULL, NULL, devwl_notify_reason(s->notify),
				s->node);
		if (r < 0 && s->warned++ < 10)
			fprintf(stderr, "devwl-run: writing the audit: %s\n", strerror(-r));
	}
}

/* In kernel mode what the device program refused, and with --audit what it allowed
 * (deduplicated, counted): to the audit. */
static void handle_denials(struct supervisor *s)
{
	struct devwl_denial d[32];
	int n;

	do {
		n = devwl_cgroup_read_denials(s->baseline.cgroup, d, ARRAY_SIZE(d));
		for (int i = 0; i < n; i++) {
			int r = audit_write_report(s->audit_fd, &d[i], NULL, NULL, s->node);

			if (r < 0 && s->warned++ < 10)
				fprintf(stderr, "devwl-run: writing the audit: %s\n", strerror(-r));
		}
	} while (n == (int)ARRAY_SIZE(d));
	if (n < 0 && s->warned++ < 10)
		fprintf(stderr, "devwl-run: reading the kernel's denials: %s\n", strerror(-n));
}

static void handle_signals(struct supervisor *s)
{
	struct signalfd_siginfo si;

	while (read(s->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			reap(s, WNOHANG);
			continue;
		}
		/* A terminal sends ^C and ^\ to its whole foreground group, the command
		 * included: passing those on would deliver them twice. */
		if ((si.ssi_signo == SIGINT || si.ssi_signo == SIGQUIT) && si.ssi_code == SI_KERNEL)
			continue;
		if (s->child_status < 0)
			(void)kill(s->child, (int)si.ssi_signo);
	}
}

static int supervise(struct supervisor *s)
{
	struct pollfd pfd[3] = {
		{.fd = s->notify_fd, .events = POLLIN},
		{.fd = s->signal_fd, .events = POLLIN},
		{.fd = -1, .events = POLLIN},
	};

	if (s->kernel_mode && s->audit_fd >= 0) {
		int fd = devwl_cgroup_denials_fd(s->baseline.cgroup);
		pfd[2].fd = fd >= 0 ? fd : -1; /* v1 tells nobody; nor does an old kernel */
	}

	/* Plain poll sleeps on the notify fd's own wait queue, where SYNC_WAKE_UP keeps
	 * the target and us on one CPU (KERNEL-NOTES: epoll loses half the gain). */
	while (s->child_status < 0) {
		if (poll(pfd, ARRAY_SIZE(pfd), -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "devwl-run: poll: %m\n");
			return -errno;
		}
		if (pfd[0].revents & POLLIN)
			handle_notification(s);
		else if (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			pfd[0].fd = -1; /* no filter user left: nothing more to serve */
		if (pfd[1].revents & POLLIN)
			handle_signals(s);
		if (pfd[2].revents & POLLIN)
			handle_denials(s);
		else if (pfd[2].revents & (POLLERR | POLLNVAL))
			pfd[2].fd = -1;
	}
	/* What the program refused while the command ended. */
	if (pfd[2].fd >= 0)
		handle_denials(s);
	return 0;
}

static int open_audit(const char *spec)
{
	int fd;

	if (!spec)
		return -1;
	if (strcmp(spec, "-") == 0)
		return fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	fd = open(spec, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0640);
	if (fd < 0)
		return -1;
	return fd;
}

static void warn_no_baseline(const char *why)
{
	fprintf(stderr,
		"devwl-run: warning: %s: no kernel baseline, only deny-only enforcement is "
		"possible: devices the policy denies are refused, but a device is granted only "
		"as far as the kernel already allows this user, and calls devwl lets through "
		"(CONTINUE) are judged by the kernel alone\n",
		why);
}

/* Root of the initial user namespace, the only one that may program device cgroups?
 * (Its uid_map maps every id onto itself.) */
static bool initial_root(void)
{
	char line[128] = "";
	unsigned long a = 1, b = 1, n = 0;
	FILE *f = fopen("/proc/self/uid_map", "re");
	bool init = false;

	if (f && fgets(line, sizeof(line), f))
		init = sscanf(line, "%lu %lu %lu", &a, &b, &n) == 3 && a == 0 && b == 0 &&
		       n == 4294967295UL;
	if (f)
		fclose(f);
	return init && geteuid() == 0;
}

/* Why no device cgroup could be made, when it is for want of privilege; else NULL. */
static const char *unprivileged_why(int r)
{
	if (r != -EPERM && r != -EACCES && r != -EROFS)
		return NULL;
	if (geteuid() != 0)
		return "not privileged enough for a device cgroup";
	if (!initial_root())
		return "in a user namespace, where no device cgroup can be programmed";
	return NULL;
}

/* Set up the baseline unless told not to. Returns -1 to go on, or an exit status. */
static int setup_baseline(struct supervisor *s)
{
	char name[64];
	int r;

	if (s->o->baseline == BASELINE_NONE) {
		s->no_baseline_why = "--no-baseline";
		warn_no_baseline(s->no_baseline_why);
		return -1;
	}
	snprintf(name, sizeof(name), "devwl-run.%d", (int)getpid());
	/* Kernel mode's opens are not trapped: with --audit its program reports them. In
	 * authoritative mode the trapped calls say it all, and a report would repeat them. */
	r = baseline_create(
		s->o->baseline, name,
		s->o->audit && s->o->mode != MODE_AUTHORITATIVE ? DEVWL_CGROUP_RECORD_ACCESSES : 0,
		&s->baseline);
	if (r >= 0)
		return -1;
	s->no_baseline_why = unprivileged_why(r);
	if (s->no_baseline_why) {
		warn_no_baseline(s->no_baseline_why);
		return -1;
	}
	fprintf(stderr,
		"devwl-run: cannot set up the kernel baseline (%s): %s\n"
		"devwl-run: --no-baseline runs without it, with deny-only enforcement\n",
		baseline_kind_name(s->o->baseline), strerror(-r));
	return EXIT_FAILURE;
}

/* Say in the audit who enforces what. */
static void audit_mode(struct supervisor *s, int size, int error)
{
	struct audit_mode m = {.mode = s->kernel_mode ? "kernel" : "authoritative",
			       .version = s->baseline.kind == BASELINE_V1 ? 1 : 2};

	if (s->kernel_mode || s->programmed >= 0) {
		m.cgroup = m.version == 1 ? "v1" : "v2";
		m.size = s->kernel_mode ? size : s->programmed;
	}
	if (!s->kernel_mode)
		m.reason = !error || s->programmed >= 0 ? "asked for"
			   : s->no_baseline_why		? s->no_baseline_why
							: strerror(-error);
	write_mode(s, &m);
}

/*
 * The policy is programmed into the baseline cgroup wherever it can be, in every mode: the
 * kernel then opens every granted device itself, in the command's own context (a grant
 * lifts the device policy and nothing else: libdevwl(3), GRANTS). Kernel mode where that
 * worked and was not refused; authoritative otherwise (asked for; or no cgroup we may
 * program: unprivileged, in a user namespace, --no-baseline; or a policy the kernel cannot
 * hold), where a failed attempt leaves the baseline denying every device and devwl opens
 * granted devices on the command's behalf. Returns -1 to go on, or an exit status.
 */
static int choose_mode(struct supervisor *s)
{
	int r = s->baseline.dir ? baseline_program(&s->baseline, s->node) : -EOPNOTSUPP;

	s->programmed = r;
	s->kernel_mode = r >= 0 && s->o->mode != MODE_AUTHORITATIVE;
	if (!s->kernel_mode && s->o->mode == MODE_KERNEL) {
		fprintf(stderr, "devwl-run: --mode=kernel: cannot program the device cgroup: %s\n",
			strerror(-r));
		return EXIT_FAILURE;
	}
	audit_mode(s, r, s->o->mode == MODE_AUTHORITATIVE ? 0 : r);
	/* What auto chose decides whether opens are judged at all: say it, as devwl-run(1)
	 * promises. A mode asked for by name needs no telling. */
	if (s->o->mode == MODE_AUTO && s->kernel_mode)
		fprintf(stderr, "devwl-run: mode kernel (cgroup v%d)\n",
			s->baseline.kind == BASELINE_V1 ? 1 : 2);
	else if (s->o->mode == MODE_AUTO)
		fprintf(stderr, "devwl-run: mode authoritative (no kernel mode: %s)\n",
			s->no_baseline_why ? s->no_baseline_why : strerror(-r));
	return -1;
}

/* Serve node to the command; *ret_ran says whether it ran (was handed its filter). */
static int run_supervised(const struct options *o, struct devwl_node *node, struct learn *learn,
			  bool *ret_ran)
{
	struct supervisor s = {
		.o = o,
		.node = node,
		.learn = learn,
		.baseline = BASELINE_INIT,
		.notify_fd = -1,
		.signal_fd = -1,
		.audit_fd = -1,
		.child = -1,
		.child_status = -1,
	};
	_cleanup_close_ int sock_parent = -1, sock_child = -1;
	sigset_t mask, saved;
	struct child_msg msg = {0};
	int ret = EXIT_FAILURE, fd = -1, r;
	ssize_t n;

	if (o->audit) {
		s.audit_fd = open_audit(o->audit);
		if (s.audit_fd < 0) {
			fprintf(stderr, "devwl-run: --audit %s: %m\n", o->audit);
			return EXIT_FAILURE;
		}
	}
	s.notify = devwl_notify_new();
	if (!s.notify) {
		fputs("devwl-run: cannot set up notification handling (out of memory, or no "
		      "seccomp user notification in this kernel)\n",
		      stderr);
		goto out;
	}
	r = setup_baseline(&s);
	if (r >= 0) {
		ret = r;
		goto out;
	}
	r = choose_mode(&s);
	if (r >= 0) {
		ret = r;
		goto out;
	}
	/* With its capabilities kept, the command can leave the cgroup: no baseline then. */
	devwl_notify_set_baseline(s.notify, !s.no_baseline_why && !o->keep_caps);
	devwl_notify_set_enforced(s.notify, s.programmed >= 0 && !o->keep_caps);
	/* Orphans of the command come back to us, so none outlives the run. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "devwl-run: PR_SET_CHILD_SUBREAPER: %m\n");
		goto out;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&mask, forwarded[i]);
	if (sigprocmask(SIG_BLOCK, &mask, &saved) < 0) {
		fprintf(stderr, "devwl-run: sigprocmask: %m\n");
		goto out;
	}
	s.signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s.signal_fd < 0) {
		fprintf(stderr, "devwl-run: signalfd: %m\n");
		goto out;
	}
	{
		int sv[2] = {-1, -1};
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
			fprintf(stderr, "devwl-run: socketpair: %m\n");
			goto out;
		}
		sock_parent = sv[0];
		sock_child = sv[1];
	}

	warn_uncontained(o, &s.baseline);
	fflush(NULL);
	s.child = fork();
	if (s.child < 0) {
		fprintf(stderr, "devwl-run: fork: %m\n");
		goto out;
	}
	if (s.child == 0) {
		close(TAKE_FD(sock_parent));
		if (s.signal_fd >= 0)
			close(s.signal_fd);
		if (s.audit_fd >= 0)
			close(s.audit_fd);
		child_run(o, s.baseline.kind, s.kernel_mode, sock_child, &saved);
	}
	close(TAKE_FD(sock_child));
	/* Ours only: the command gets the default disposition back through exec. */
	signal(SIGPIPE, SIG_IGN);

	if (s.baseline.dir) {
		r = baseline_add(&s.baseline, s.child);
		if (r < 0) {
			fprintf(stderr, "devwl-run: moving the command into %s: %s\n",
				s.baseline.dir, strerror(-r));
			goto out_kill;
		}
	}
	if (write(sock_parent, "g", 1) != 1) {
		fprintf(stderr, "devwl-run: starting the command: %m\n");
		goto out_kill;
	}
	n = recv_msg(sock_parent, &msg, &fd);
	if (n != (ssize_t)sizeof(msg) || msg.error != 0 || fd < 0) {
		if (n == (ssize_t)sizeof(msg) && msg.error != 0)
			fprintf(stderr, "devwl-run: %.*s: %s\n", (int)sizeof(msg.step), msg.step,
				strerror(msg.error));
		else
			fputs("devwl-run: the command exited before its filter was set up\n",
			      stderr);
		if (fd >= 0)
			close(fd);
		goto out_kill;
	}
	s.notify_fd = fd;
	*ret_ran = true;
	close(TAKE_FD(sock_parent));

	if (supervise(&s) < 0)
		goto out_kill;
	ret = status_to_exit(s.child_status);
out_kill:
	if (s.child > 0 && s.child_status < 0)
		(void)kill(s.child, SIGKILL);
	cleanup_processes(&s);
	if (ret == EXIT_FAILURE && s.child_status >= 0 && s.notify_fd >= 0)
		ret = status_to_exit(s.child_status);
out:
	if (s.notify_fd >= 0)
		close(s.notify_fd);
	if (s.signal_fd >= 0)
		close(s.signal_fd);
	if (s.audit_fd >= 0)
		close(s.audit_fd);
	devwl_notify_free(s.notify);
	r = baseline_destroy(&s.baseline);
	if (r < 0)
		fprintf(stderr, "devwl-run: removing the baseline cgroup: %s\n", strerror(-r));
	return ret;
}

/* ---- --connect: devwld supervises ---------------------------------------------------- */

static int run_connected(const struct options *o)
{
	struct baseline b = BASELINE_INIT;
	char step[200] = "";
	int notify_fd = -1, r;

	r = -1;
	if (o->baseline == BASELINE_NONE) {
		warn_no_baseline("--no-baseline");
	} else {
		/* A cgroup of this run's own, below one all --connect runs share: devwld may
		 * program it for this workload alone. */
		r = baseline_join_run(o->baseline, "devwl-run.connected", &b);
		if (r < 0) {
			if (unprivileged_why(r)) {
				warn_no_baseline(unprivileged_why(r));
			} else {
				fprintf(stderr,
					"devwl-run: cannot set up the kernel baseline (%s): %s\n"
					"devwl-run: --no-baseline runs without it, with deny-only "
					"enforcement\n",
					baseline_kind_name(o->baseline), strerror(-r));
				return EXIT_FAILURE;
			}
		}
	}
	warn_uncontained(o, &b);
	free(b.dir);
	r = restrict_command(o, b.kind, step, sizeof(step));
	if (r < 0) {
		fprintf(stderr, "devwl-run: %s: %s\n", step, strerror(-r));
		return EXIT_FAILURE;
	}
	/*
	 * --mode=kernel: only device mknod traps. devwld programs this run's own cgroup with
	 * its node (it does for every root runtime's workload); until it has, or if it
	 * cannot, the cgroup denies every device: nothing is granted that devwld did not.
	 */
	r = devwl_filter_install(filter_flags(o, o->mode == MODE_KERNEL), &notify_fd);
	if (r < 0) {
		fprintf(stderr, "devwl-run: installing the seccomp filter: %s\n", strerror(-r));
		return EXIT_FAILURE;
	}
	/*
	 * In kernel mode the opens do not trap: wait until devwld has taken this run on
	 * (programmed its cgroup), or the command would start with every device refused.
	 */
	r = devwl_handoff_send_wait(o->connect, notify_fd, o->node_path, o->id,
				    o->mode == MODE_KERNEL ? 5000 : 0);
	if (r == -ETIMEDOUT) {
		fprintf(stderr,
			"devwl-run: %s did not answer within 5 s: its cgroup may still "
			"refuse every device\n",
			o->connect);
		r = 0;
	}
	close(notify_fd);
	if (r < 0) {
		/* Our filter is installed and nobody serves it: trapped calls would fail
		 * ENOSYS. Stop here rather than run the command half-broken. */
		fprintf(stderr, "devwl-run: handing the notify fd to %s: %s\n", o->connect,
			strerror(-r));
		return EXIT_FAILURE;
	}
	execvp(o->argv[0], o->argv);
	r = errno;
	fprintf(stderr, "devwl-run: %s: %s\n", o->argv[0], strerror(r));
	return r == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}

/* ---- --learn -------------------------------------------------------------------------- */

static void warn_learn(void *userdata, const char *msg)
{
	(void)userdata;
	fprintf(stderr, "devwl-run: learn: %s\n", msg);
}

/*
 * The node a learning run is served with: the node's parent, which bounds what the node
 * could ever be given; the root, which has none, is its own (devwl-run(1), LEARN MODE).
 */
static struct devwl_node *learn_ceiling(struct devwl_node *node)
{
	struct devwl_node *parent = devwl_node_parent(node);

	return parent ? parent : node;
}

/* Write what was learnt. Returns -1 on success, or an exit status. */
static int write_learned(const struct options *o, const struct learn *learn,
			 struct devwl_policy *policy, struct devwl_node *node)
{
	struct devwl_node *ceiling = learn_ceiling(node);
	_cleanup_free_ char *json = NULL;
	int r;

	r = learn_advise(learn, policy, ceiling, devwl_node_path(node), NULL, warn_learn, NULL,
			 &json);
	if (r < 0) {
		fprintf(stderr, "devwl-run: learn: %s\n", strerror(-r));
		return EXIT_FAILURE;
	}
	if (strcmp(o->learn_file, "-") == 0) {
		fflush(stdout);
		r = devwl_write_all(STDOUT_FILENO, json, strlen(json));
	} else {
		r = devwl_write_file_atomic(o->learn_file, json, 0644);
	}
	if (r < 0) {
		fprintf(stderr, "devwl-run: learn: writing %s: %s\n", o->learn_file, strerror(-r));
		return EXIT_FAILURE;
	}
	fprintf(stderr, "devwl-run: learn: %zu device%s, the policy of node %s written to %s\n",
		learn_count(learn), learn_count(learn) == 1 ? "" : "s", devwl_node_path(node),
		strcmp(o->learn_file, "-") ? o->learn_file : "stdout");
	return -1;
}

int main(int argc, char **argv)
{
	struct options o = {0};
	struct devwl_policy *policy = NULL;
	struct devwl_node *node = NULL;
	struct learn *learn = NULL;
	bool ran = false;
	int ret, r;

	ret = parse_args(argc, argv, &o);
	if (ret >= 0)
		goto out;
	if (!(devwl_features() & DEVWL_FEATURE_USER_NOTIF)) {
		fputs("devwl-run: this kernel has no seccomp user notification (Linux 5.0+)\n",
		      stderr);
		ret = EXIT_FAILURE;
		goto out;
	}
	if (o.connect) {
		ret = run_connected(&o);
		goto out;
	}
	/* Every rule is checked here, before anything runs. */
	ret = build_policy(&o, &policy, &node);
	if (ret >= 0)
		goto out;
	if (o.learn) {
		learn = learn_new();
		if (!learn) {
			fputs("devwl-run: out of memory\n", stderr);
			ret = EXIT_FAILURE;
			goto out;
		}
		fprintf(stderr,
			"devwl-run: learn: the command runs under %s, the ceiling of node %s, "
			"every "
			"open trapped (authoritative mode)\n",
			devwl_node_path(learn_ceiling(node)), devwl_node_path(node));
	}
	ret = run_supervised(&o, learn ? learn_ceiling(node) : node, learn, &ran);
	/* What the command used is worth writing down however it ended, once it ran. */
	if (learn && ran && (r = write_learned(&o, learn, policy, node)) >= 0 && ret == 0)
		ret = r;
out:
	learn_free(learn);
	devwl_policy_free(policy);
	free(o.rules);
	free(o.drop_caps);
	return ret;
}
