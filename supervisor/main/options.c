/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* devwld's command line (devwld(8), OPTIONS), into the daemon's configuration. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "devwl.h"
#include "kernelmode.h"
#include "mapping.h"
#include "metrics.h"
#include "options.h"
#include "serve.h"

static void usage(FILE *f)
{
	fputs("Usage: devwld [OPTIONS]\n"
	      "\n"
	      "  --listen PATH         OCI seccomp listenerPath socket [/run/devwl/listen.sock]\n"
	      "  --control PATH        devwlctl socket [/run/devwl/control.sock]\n"
	      "  --policy FILE         JSON policy (devwl-policy(5)); reloaded on SIGHUP\n"
	      "                        and when the file changes\n"
	      "  --no-watch            reload on SIGHUP only\n"
	      "  --state FILE          the live hierarchy and containers, kept across restarts\n"
	      "                        [state.json beside the control socket]\n"
	      "  --audit FILE          append decision records (JSON lines) to FILE [stderr]\n"
	      "  --no-audit            keep counters only\n"
	      "  --audit-all           also record CONTINUE answers for non-devices\n"
	      "  --allow-uid UID       also serve runtimes of this uid (repeatable), on nodes\n"
	      "                        under /users/UID only\n"
	      "  --k8s-template T      node for Kubernetes containers, over the policy's\n"
	      "                        [/k8s/{namespace}/{pod}/{container}]\n"
	      "  --default-template T  node for other containers, over the policy's\n"
	      "                        [/containers/{id}]\n"
	      "  --burst N             notifications per fd per round [16]\n"
	      "  --spin-us N           a handler thread keeps watching a quiet fd this long\n"
	      "                        before the ring watches it again [1000]\n"
	      "  --timeout-ms N        deadline for a runtime's message [5000]\n"
	      "  --max-message BYTES   size limit of a runtime's message [1048576]\n"
	      "  --handler-threads N   threads handling notifications [one per CPU, 2..16]\n"
	      "  --handler-timeout MS  answer a call stuck this long EPERM [3000]\n"
	      "  --kernel-mode WHEN    program containers' device cgroups with their node:\n"
	      "                        auto (root runtimes'; warn if mode=kernel fails),\n"
	      "                        always (warn wherever it fails), never [auto]\n"
	      "  --metrics WHERE       serve metrics (Prometheus text) over HTTP at\n"
	      "                        unix:PATH or a numeric HOST:PORT [not served]\n"
	      "  --metrics-depth N     node components in the subtree label [2]\n"
	      "  --metrics-containers  also a series per container (unbounded labels)\n"
	      "  --cdi-dir DIR         a CDI spec directory for cdi: selectors (repeatable,\n"
	      "                        later ones win) [/etc/cdi, /var/run/cdi]\n"
	      "  -h, --help            show this help\n"
	      "  -V, --version         show the version\n",
	      f);
}

static int parse_uint(const char *s, unsigned long max, unsigned long *ret)
{
	char *end = NULL;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v > max || s[0] == '-')
		return -EINVAL;
	*ret = v;
	return 0;
}

int options_parse(int argc, char **argv, struct options *o)
{
	enum {
		OPT_LISTEN = 256,
		OPT_CONTROL,
		OPT_POLICY,
		OPT_AUDIT,
		OPT_NO_AUDIT,
		OPT_AUDIT_ALL,
		OPT_ALLOW_UID,
		OPT_K8S,
		OPT_DEFAULT,
		OPT_BURST,
		OPT_SPIN,
		OPT_TIMEOUT,
		OPT_MAX_MESSAGE,
		OPT_NO_WATCH,
		OPT_STATE,
		OPT_HANDLER_THREADS,
		OPT_HANDLER_TIMEOUT,
		OPT_KERNEL_MODE,
		OPT_METRICS,
		OPT_METRICS_DEPTH,
		OPT_METRICS_CONTAINERS,
		OPT_CDI_DIR,
	};
	static const struct option opts[] = {
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"control", required_argument, NULL, OPT_CONTROL},
		{"policy", required_argument, NULL, OPT_POLICY},
		{"audit", required_argument, NULL, OPT_AUDIT},
		{"no-audit", no_argument, NULL, OPT_NO_AUDIT},
		{"audit-all", no_argument, NULL, OPT_AUDIT_ALL},
		{"allow-uid", required_argument, NULL, OPT_ALLOW_UID},
		{"k8s-template", required_argument, NULL, OPT_K8S},
		{"default-template", required_argument, NULL, OPT_DEFAULT},
		{"burst", required_argument, NULL, OPT_BURST},
		{"spin-us", required_argument, NULL, OPT_SPIN},
		{"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
		{"max-message", required_argument, NULL, OPT_MAX_MESSAGE},
		{"no-watch", no_argument, NULL, OPT_NO_WATCH},
		{"state", required_argument, NULL, OPT_STATE},
		{"handler-threads", required_argument, NULL, OPT_HANDLER_THREADS},
		{"handler-timeout", required_argument, NULL, OPT_HANDLER_TIMEOUT},
		{"kernel-mode", required_argument, NULL, OPT_KERNEL_MODE},
		{"metrics", required_argument, NULL, OPT_METRICS},
		{"metrics-depth", required_argument, NULL, OPT_METRICS_DEPTH},
		{"metrics-containers", no_argument, NULL, OPT_METRICS_CONTAINERS},
		{"cdi-dir", required_argument, NULL, OPT_CDI_DIR},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	unsigned long v = 0;
	int c;

	*o = (struct options){
		.cfg =
			{
				.listen_path = "/run/devwl/listen.sock",
				.control_path = "/run/devwl/control.sock",
				.watch_policy = true,
				.burst = 16,
				.spin_us = 1000,
				.conn_timeout_ms = 5000,
				.max_message = 1024 * 1024,
				.handler_timeout_ms = SERVE_TIMEOUT_DEFAULT_MS,
				.metrics_depth = 2,
			},
	};
	while ((c = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
		switch (c) {
		case OPT_LISTEN:
			o->cfg.listen_path = optarg;
			break;
		case OPT_CONTROL:
			o->cfg.control_path = optarg;
			break;
		case OPT_POLICY:
			o->cfg.policy_file = optarg;
			break;
		case OPT_AUDIT:
			o->cfg.audit_file = optarg;
			break;
		case OPT_NO_AUDIT:
			o->no_audit = true;
			break;
		case OPT_AUDIT_ALL:
			o->cfg.audit_all = true;
			break;
		case OPT_ALLOW_UID:
			if (parse_uint(optarg, UINT32_MAX - 1, &v) < 0) {
				fprintf(stderr, "devwld: bad uid '%s'\n", optarg);
				return 2;
			}
			if (ARRAY_RESERVE(o->uids, o->uids_cap, o->cfg.n_listen_uids + 1) < 0)
				return 1;
			o->uids[o->cfg.n_listen_uids++] = (uid_t)v;
			o->cfg.listen_uids = o->uids;
			break;
		case OPT_K8S:
		case OPT_DEFAULT: {
			struct devwl_error err = {0};

			if (template_check(optarg, c == OPT_K8S, &err) < 0) {
				fprintf(stderr, "devwld: --%s: %s\n",
					c == OPT_K8S ? "k8s-template" : "default-template",
					err.msg);
				return 2;
			}
			if (c == OPT_K8S)
				o->cfg.k8s_template = optarg;
			else
				o->cfg.default_template = optarg;
			break;
		}
		case OPT_NO_WATCH:
			o->cfg.watch_policy = false;
			break;
		case OPT_STATE:
			if (!*optarg) {
				fprintf(stderr, "devwld: --state needs a file name\n");
				return 2;
			}
			o->cfg.state_file = optarg;
			break;
		case OPT_BURST:
		case OPT_SPIN:
		case OPT_TIMEOUT:
		case OPT_MAX_MESSAGE:
			if (parse_uint(optarg, c == OPT_MAX_MESSAGE ? 1UL << 30 : 1000000, &v) <
				    0 ||
			    (v == 0 && c != OPT_SPIN)) {
				fprintf(stderr, "devwld: bad number '%s'\n", optarg);
				return 2;
			}
			if (c == OPT_BURST)
				o->cfg.burst = (unsigned int)v;
			else if (c == OPT_SPIN)
				o->cfg.spin_us = (unsigned int)v;
			else if (c == OPT_TIMEOUT)
				o->cfg.conn_timeout_ms = (unsigned int)v;
			else
				o->cfg.max_message = v;
			break;
		case OPT_HANDLER_THREADS:
		case OPT_HANDLER_TIMEOUT:
			if (parse_uint(optarg,
				       c == OPT_HANDLER_THREADS ? SERVE_THREADS_MAX : 3600000,
				       &v) < 0 ||
			    v == 0) {
				fprintf(stderr, "devwld: bad number '%s'\n", optarg);
				return 2;
			}
			if (c == OPT_HANDLER_THREADS)
				o->cfg.handler_threads = (unsigned int)v;
			else
				o->cfg.handler_timeout_ms = (unsigned int)v;
			break;
		case OPT_KERNEL_MODE:
			if (kernelmode_parse(optarg, &o->cfg.kernel_mode) < 0) {
				fprintf(stderr,
					"devwld: --kernel-mode=%s: expected auto, always or "
					"never\n",
					optarg);
				return 2;
			}
			break;
		case OPT_METRICS: {
			struct devwl_error err = {0};

			if (metrics_check(optarg, &err) < 0) {
				fprintf(stderr, "devwld: %s\n", err.msg);
				return 2;
			}
			o->cfg.metrics = optarg;
			break;
		}
		case OPT_METRICS_DEPTH:
			if (parse_uint(optarg, 16, &v) < 0) {
				fprintf(stderr, "devwld: --metrics-depth %s: expected 0 to 16\n",
					optarg);
				return 2;
			}
			o->cfg.metrics_depth = (unsigned int)v;
			break;
		case OPT_METRICS_CONTAINERS:
			o->cfg.metrics_containers = true;
			break;
		case OPT_CDI_DIR:
			if (optarg[0] != '/') {
				fprintf(stderr, "devwld: --cdi-dir %s: expected an absolute path\n",
					optarg);
				return 2;
			}
			if (ARRAY_RESERVE(o->cdi_dirs, o->cdi_cap, o->cfg.n_cdi_dirs + 1) < 0)
				return 1;
			o->cdi_dirs[o->cfg.n_cdi_dirs++] = optarg;
			o->cfg.cdi_dirs = o->cdi_dirs;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("devwld %s\n", devwl_version());
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "devwld: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	if (!o->cfg.state_file) {
		const char *slash = strrchr(o->cfg.control_path, '/');

		if (asprintf(&o->state_file, "%.*s%sstate.json",
			     slash ? (int)(slash - o->cfg.control_path) : 0, o->cfg.control_path,
			     slash ? "/" : "") < 0)
			return 1;
		o->cfg.state_file = o->state_file;
	}
	return -1;
}

void options_free(struct options *o)
{
	free(o->uids);
	free(o->cdi_dirs);
	free(o->state_file);
}
