/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every open-like row of doc/DESIGN.md §3 against real processes: open, openat, openat2,
 * creat, open_by_handle_at (i386 open: 23-i386); allowed and denied, char and block, absolute,
 * relative, dirfd and symlink paths, O_PATH, O_CLOEXEC, O_NOFOLLOW, RESOLVE_IN_ROOT,
 * magic links, a non-leader thread, io_uring_setup. The workload sits in a devices
 * cgroup denying everything, so "read=00000000" from the zero device proves the fd was
 * opened and injected by devwl, not by the kernel for the workload.
 */
#include "livetest.h"

struct tcase {
	const char *policy;
	const char *args; /* '@' is replaced by the node directory */
	const char *want; /* '|'-separated line prefixes, '*' matches anything before the rest */
};

#define P_MAIN "deny a;allow c 1:5 rw;allow c 1:3 r;allow b 7:0 r"
#define P_RO   "deny a;allow c 1:5 r"

static const struct tcase cases[] = {
	{P_MAIN, "open @/zero rdonly", "ok *rdev=1:5 type=c cloexec=0 read=00000000"},
	{P_MAIN, "open @/zero rdwr", "ok *read=00000000"},
	{P_MAIN, "open @/zero accmode3", "ok *rdev=1:5"},
	{P_MAIN, "open @/null rdonly", "ok *rdev=1:3 type=c"},
	{P_MAIN, "open @/null wronly", "EPERM"},
	{P_MAIN, "open @/null rdwr", "EPERM"},
	{P_MAIN, "open @/full rdonly", "EPERM"},
	{P_MAIN, "open @/loop0 rdonly", "ok *rdev=7:0 type=b"},
	{P_MAIN, "open @/loop0 wronly", "EPERM"},
	{P_MAIN, "open @/file rdonly", "ok *type=f"},
	{P_MAIN, "open @/nonexistent rdonly", "ENOENT"},
	{P_MAIN, "open @/zero rdonly,cloexec", "ok *cloexec=1 read=00000000"},
	{P_MAIN, "open @/lnk-zero rdonly", "ok *rdev=1:5"},
	{P_MAIN, "open @/lnk-zero rdonly,nofollow", "ELOOP"},
	{P_MAIN, "open @/sub/lnk-up rdonly", "EPERM"},
	{P_MAIN, "open @/full path", "ok *rdev=1:7 type=c"},
	{P_MAIN, "open @/zero/ rdonly", "ENOTDIR"},
	{P_MAIN, "openat @ zero rdonly", "ok *rdev=1:5 *read=00000000"},
	{P_MAIN, "openat @/sub zero2 rdonly", "ok *rdev=1:5"},
	{P_MAIN, "openat @/sub ../full rdonly", "EPERM"},
	{P_MAIN, "openat @/sub lnk-up rdonly", "EPERM"},
	{P_MAIN, "chdir @ ; openat . zero rdonly", "ok|ok *read=00000000"},
	{P_MAIN, "chdir @/sub ; open ../zero rdonly", "ok|ok *read=00000000"},
	{P_MAIN, "chdir @/sub ; open ../full rdonly", "ok|EPERM"},
	{P_MAIN, "openat2 @ zero rdonly -", "ok *read=00000000"},
	{P_MAIN, "openat2 @ full rdonly -", "EPERM"},
	{P_MAIN, "openat2 @ full path -", "ok *rdev=1:7"},
	{P_MAIN, "openat2 @ /zero rdonly in_root", "ok *read=00000000"},
	{P_MAIN, "openat2 @ ../../../../zero rdonly in_root", "ok *rdev=1:5"},
	{P_MAIN, "openat2 @ /full rdonly in_root", "EPERM"},
	{P_MAIN, "openat2 @/sub lnk-up rdonly beneath", "EXDEV"},
	{P_MAIN, "openat2 @ sub/lnk-up rdonly beneath", "EPERM"},
	{P_MAIN, "openat2 @ lnk-zero rdonly no_symlinks", "ELOOP"},
	{P_MAIN, "openat2 @ zero rdonly,cloexec -", "ok *cloexec=1"},
	{P_MAIN, "creat @/zero 644", "ok *rdev=1:5"},
	{P_MAIN, "creat @/null 644", "EPERM"},
	{P_MAIN, "handle @/zero rdonly", "ok *rdev=1:5 *read=00000000"},
	{P_MAIN, "handle @/full rdonly", "EPERM"},
	{P_MAIN, "handle @/file rdonly", "ok *type=f"},
	{P_MAIN, "iouring", "EPERM"},
	{P_MAIN, "thread open @/zero rdonly", "ok *read=00000000"},
	{P_MAIN, "thread open @/full rdonly", "EPERM"},
	/* Magic links name the caller's fds, and a read-only grant is not upgraded. */
	{P_RO, "open @/zero rdonly ; open /proc/self/fd/%L rdonly", "ok |ok *read=00000000"},
	{P_RO, "open @/zero rdonly ; open /proc/self/fd/%L wronly", "ok |EPERM"},
	{P_RO, "open @/zero rdonly ; open /proc/thread-self/fd/%L rdwr", "ok |EPERM"},
	{P_RO, "open @/zero rdonly ; open /dev/fd/%L rdonly", "ok |ok *rdev=1:5"},
	{P_RO, "open @/zero rdonly ; thread open /proc/thread-self/fd/%L rdonly",
	 "ok |ok *rdev=1:5"},
};

int main(void)
{
	struct lt_nodes nodes;
	struct lt_cgroup cg;
	char args[1024];
	int run = 0;

	lt_need_root();
	lt_nodes_make(&nodes);
	lt_cgroup_make(&cg);
	if (!cg.ok)
		fprintf(stderr, "note: no v1 devices cgroup here: injection not isolated\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lt_sup s;
		char *out = NULL;

		lt_sup_init(&s, cases[i].policy);
		s.cgroup = cg.ok ? &cg : NULL;
		lt_subst(args, sizeof(args), cases[i].args, nodes.dir);
		out = lt_probe_run(&s, args);
		LT_CHECK(lt_match(out, cases[i].want), "probe %s\n  want: %s\n  got:  %s", args,
			 cases[i].want, out);
		LT_CHECK(s.errors == 0, "probe %s: handler errors", args);
		free(out);
		lt_sup_free(&s);
		run++;
	}
	if (cg.ok)
		lt_cgroup_remove(&cg);
	lt_nodes_remove(&nodes);
	printf("%d cases, %d failures\n", run, lt_failures);
	return lt_failures ? 1 : 0;
}
