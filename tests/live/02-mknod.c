/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mknod and mknodat: allowed nodes are made by devwl as the caller (its fsuid/fsgid,
 * umask, directory permissions), also inside an unprivileged user namespace where the
 * kernel alone always refuses; denied ones fail EPERM; fifos never trap; c 0:0 is not
 * checked; CAP_MKNOD is required unless the node waives it. The workload sits in a
 * devices cgroup denying everything, so every made device node was made by devwl.
 */
#include "livetest.h"

#define POLICY "deny a;allow c 1:5 rwm;allow c 1:3 rw"

static char dir[128];

static void run_case(const char *policy, bool waive, const char *prefix, const char *args,
		     const char *want, int want_traps, const struct lt_cgroup *cg)
{
	char line[1024];
	char *out = NULL;
	struct lt_sup s;
	char *argv[64];
	char *save = NULL;
	int argc = 0, status = 0;

	lt_sup_init(&s, policy);
	s.cgroup = cg;
	if (waive)
		devwl_node_set_mknod_needs_cap(s.node, false);
	{
		size_t len = (size_t)snprintf(line, sizeof(line), "%s%s%s ", prefix,
					      prefix[0] ? " " : "", lt_probe());

		for (const char *a = args; *a && len + strlen(dir) + 2 < sizeof(line); a++) {
			if (*a == '@') {
				strcpy(line + len, dir);
				len += strlen(dir);
			} else {
				line[len++] = *a;
			}
		}
		line[len] = '\0';
	}
	for (char *tok = strtok_r(line, " ", &save); tok && argc < 63;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	if (argv[0][0] != '/') {
		/* resolve the helper program (setpriv, unshare) on PATH via /usr/bin */
		static char prog[256];

		snprintf(prog, sizeof(prog), "/usr/bin/%s", argv[0]);
		argv[0] = prog;
	}
	out = lt_run(&s, argv, NULL, NULL, &status);
	LT_CHECK(lt_match(out, want), "%s %s\n  want: %s\n  got:  %s", prefix, args, want, out);
	if (want_traps >= 0)
		LT_CHECK(s.mknods == want_traps, "%s: %d mknod notifications, want %d", args,
			 s.mknods, want_traps);
	LT_CHECK(s.errors == 0, "%s: handler errors", args);
	free(out);
	lt_sup_free(&s);
}

int main(void)
{
	struct lt_nodes nodes;
	struct lt_cgroup cg;
	const struct lt_cgroup *cgp = NULL;
	bool have_tools =
		access("/usr/bin/setpriv", X_OK) == 0 && access("/usr/bin/unshare", X_OK) == 0;

	lt_need_root();
	lt_nodes_make(&nodes);
	snprintf(dir, sizeof(dir), "%s", nodes.dir);
	lt_cgroup_make(&cg);
	cgp = cg.ok ? &cg : NULL;
	umask(022);

	run_case(POLICY, false, "", "mknod @/m1 c 1 5 666 ; stat @/m1",
		 "ok|ok rdev=1:5 type=c mode=0644 uid=0 gid=0", 1, cgp);
	run_case(POLICY, false, "", "umask 077 ; mknod @/m2 c 1 5 666 ; stat @/m2",
		 "ok|ok|ok rdev=1:5 type=c mode=0600", 1, cgp);
	run_case(POLICY, false, "", "mknodat @ m3 c 1 5 640 ; stat @/m3", "ok|ok rdev=1:5", 1, cgp);
	run_case(POLICY, false, "", "mknodat @/sub m4 c 1 5 640 ; stat @/sub/m4", "ok|ok rdev=1:5",
		 1, cgp);
	run_case(POLICY, false, "", "chdir @/sub ; mknod ../m5 c 1 5 640 ; stat @/m5",
		 "ok|ok|ok rdev=1:5", 1, cgp);
	run_case(POLICY, false, "", "mknod @/d1 c 1 7 600 ; stat @/d1", "EPERM|ENOENT", 1, cgp);
	run_case(POLICY, false, "", "mknod @/d2 b 7 0 600", "EPERM", 1, cgp);
	run_case(POLICY, false, "", "mknod @/zero c 1 5 600", "EEXIST", 1, cgp);
	run_case(POLICY, false, "", "mknod @/nodir/x c 1 5 600", "ENOENT", 1, cgp);
	/* A fifo never traps; a whiteout (c 0:0) is not checked: the kernel makes it. */
	run_case(POLICY, false, "", "mknod @/p1 p 0 0 600 ; stat @/p1", "ok|ok *type=o", 0, cgp);
	run_case(POLICY, false, "", "mknod @/w1 c 0 0 600 ; stat @/w1", "ok|ok rdev=0:0 type=c", 1,
		 cgp);
	/* A large minor: the 12/20-bit split of the kernel's dev_t. */
	run_case("deny a;allow c 1:300000 m", false, "", "mknod @/big c 1 300000 600 ; stat @/big",
		 "ok|ok rdev=1:300000", 1, cgp);

	if (!have_tools) {
		fprintf(stderr, "note: setpriv/unshare missing: unprivileged cases skipped\n");
	} else {
		char p[256];

		snprintf(p, sizeof(p), "%s/nobody", dir);
		mkdir(p, 0777);
		chmod(p, 0777);
		/* No CAP_MKNOD: refused unless the node waives it; then made as the caller. */
		run_case(POLICY, false, "setpriv --reuid 65534 --regid 65534 --clear-groups",
			 "mknod @/nobody/n1 c 1 5 666", "EPERM", 1, cgp);
		run_case(POLICY, true, "setpriv --reuid 65534 --regid 65534 --clear-groups",
			 "mknod @/nobody/n2 c 1 5 666 ; stat @/nobody/n2",
			 "ok|ok rdev=1:5 type=c mode=0644 uid=65534 gid=65534", 1, cgp);
		/* Directory permissions apply to the caller. */
		run_case(POLICY, true, "setpriv --reuid 65534 --regid 65534 --clear-groups",
			 "mknod @/n3 c 1 5 666", "EACCES", 1, cgp);
		/* Root of an unprivileged user namespace: CAP_MKNOD in its own namespace. */
		run_case(POLICY, false,
			 "setpriv --reuid 65534 --regid 65534 --clear-groups unshare -Ur",
			 "mknod @/nobody/u1 c 1 5 666", "ok", 1, cgp);
		run_case(POLICY, false, "", "stat @/nobody/u1",
			 "ok rdev=1:5 type=c mode=0644 uid=65534 gid=65534", 0, NULL);
		run_case(POLICY, false,
			 "setpriv --reuid 65534 --regid 65534 --clear-groups unshare -Ur",
			 "mknod @/nobody/u2 c 1 7 666", "EPERM", 1, cgp);
	}
	if (cg.ok)
		lt_cgroup_remove(&cg);
	lt_nodes_remove(&nodes);
	printf("%d failures\n", lt_failures);
	return lt_failures ? 1 : 0;
}
