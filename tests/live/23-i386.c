/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The i386 rows of doc/DESIGN.md §3: open(2) through int $0x80 (seccomp_data.arch i386, its
 * own syscall numbers) is judged like the native call, allowed and denied. Split from
 * 01-open-rows because not every x86_64 kernel offers that entry: with ia32 emulation
 * off (ia32_emulation=0, or a hypervisor without the gate) int $0x80 faults, and then no
 * compat call can reach the filter at all, so there is nothing to test.
 */
#include "livetest.h"

#include <signal.h>
#include <sys/wait.h>

#define P_MAIN "deny a;allow c 1:5 rw"

#if defined(__x86_64__)
/* Whether int $0x80 is a system call here: a child tries i386 getpid (20). */
static bool have_i386_entry(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		LT_DIE("fork: %m");
	if (pid == 0) {
		long ret = 0;

		__asm__ volatile("int $0x80"
				 : "=a"(ret)
				 : "a"(20L)
				 : "memory", "r8", "r9", "r10", "r11");
		_exit(ret == getpid() ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid)
		LT_DIE("waitpid: %m");
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static const struct {
	const char *args; /* '@' is replaced by the node directory */
	const char *want;
} cases[] = {
	{"open32 @/zero rdonly", "ok *rdev=1:5 *read=00000000"},
	{"open32 @/zero rdwr", "ok *rdev=1:5 *read=00000000"},
	{"open32 @/full rdonly", "EPERM"},
	{"open32 @/file rdonly", "ok *type=f"},
};

int main(void)
{
	struct lt_nodes nodes;
	struct lt_cgroup cg;
	char args[1024];

	lt_need_root();
	if (!have_i386_entry())
		LT_SKIP("int $0x80 is no system call on this kernel (ia32 emulation off): "
			"no i386 call can reach a filter here");
	lt_nodes_make(&nodes);
	lt_cgroup_make(&cg);
	if (!cg.ok)
		fprintf(stderr, "note: no v1 devices cgroup here: injection not isolated\n");
	for (size_t i = 0; i < ARRAY_SIZE_LT(cases); i++) {
		struct lt_sup s;
		char *out = NULL;

		lt_sup_init(&s, P_MAIN);
		s.cgroup = cg.ok ? &cg : NULL;
		lt_subst(args, sizeof(args), cases[i].args, nodes.dir);
		out = lt_probe_run(&s, args);
		LT_CHECK(lt_match(out, cases[i].want), "probe %s\n  want: %s\n  got:  %s", args,
			 cases[i].want, out);
		LT_CHECK(s.count >= 1, "probe %s: no notification reached the supervisor", args);
		LT_CHECK(s.errors == 0, "probe %s: handler errors", args);
		free(out);
		lt_sup_free(&s);
	}
	if (cg.ok)
		lt_cgroup_remove(&cg);
	lt_nodes_remove(&nodes);
	printf("%zu cases, %d failures\n", ARRAY_SIZE_LT(cases), lt_failures);
	return lt_failures ? 1 : 0;
}
#else
int main(void)
{
	LT_SKIP("the i386 entry is an x86_64 matter");
}
#endif
