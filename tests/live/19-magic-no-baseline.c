/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reopening through magic links with no kernel baseline (as under unprivileged
 * devwl-run): the workload holds an O_PATH fd of a device (O_PATH is never trapped) and
 * opens it again through /proc/self/fd/N, /proc/PID/fd/N, /dev/stdin or a symlink to one.
 * devwl walks the link as the caller, so the object judged is the caller's: a denied
 * device is refused, never upgraded beyond the policy (read-only stays read-only); a
 * granted device and a non-device are the kernel's to open, in the caller's own context
 * (doc/DESIGN.md, "Grants"), a blocking fifo writer included, which the kernel may wait
 * for. Another process's fds are refused (EACCES).
 */
#include "livetest.h"

struct tcase {
	const char *args; /* '@' is replaced by the node directory */
	const char *want;
	enum devwl_verdict last; /* the answer to the last call */
};

#define RO "deny a;allow c 1:5 r"

static const struct tcase cases[] = {
	/* Denied device, each magic route. */
	{"open @/full path ; open /proc/self/fd/%L rdonly", "ok |EPERM", DEVWL_VERDICT_DENY},
	{"open @/full path ; open /proc/%P/fd/%L rdonly", "ok |EPERM", DEVWL_VERDICT_DENY},
	{"open @/full path ; open /proc/%P/task/%P/fd/%L rdonly", "ok |EPERM", DEVWL_VERDICT_DENY},
	{"close 0 ; open @/full path ; open /dev/stdin rdonly", "ok|ok *fd=0 |EPERM",
	 DEVWL_VERDICT_DENY},
	{"close 0 ; open @/full path ; open @/lnk-fd0 rdonly", "ok|ok *fd=0 |EPERM",
	 DEVWL_VERDICT_DENY},
	{"close 0 ; open @/full path ; open @/lnk-stdin rdonly", "ok|ok *fd=0 |EPERM",
	 DEVWL_VERDICT_DENY},
	{"open @/full path ; openat @ ../../proc/self/fd/%L rdonly", "ok |EPERM",
	 DEVWL_VERDICT_DENY},
	{"open @/full path ; openat2 . /proc/self/fd/%L rdonly -", "ok |EPERM", DEVWL_VERDICT_DENY},
	{"open @ path,directory ; open /proc/self/fd/%L/full rdonly", "ok |EPERM",
	 DEVWL_VERDICT_DENY},
	{"chdir @ ; open /proc/self/cwd/full rdonly", "ok|EPERM", DEVWL_VERDICT_DENY},
	{"open @/full path ; chdir /proc ; open self/fd/%L rdonly", "ok |ok|EPERM",
	 DEVWL_VERDICT_DENY},
	{"open @/full path ; open /proc/self/fd/../fd/%L rdonly", "ok |EPERM", DEVWL_VERDICT_DENY},
	/* Allowed device: granted with the caller's flags, not upgraded. */
	{"close 0 ; open @/zero path ; open /dev/stdin rdonly", "ok|ok *fd=0 |ok *read=00000000",
	 DEVWL_VERDICT_ALLOW},
	{"close 0 ; open @/zero path ; open /dev/stdin wronly", "ok|ok *fd=0 |EPERM",
	 DEVWL_VERDICT_DENY},
	{"open @/zero path ; open /proc/%P/fd/%L rdonly", "ok |ok *read=00000000",
	 DEVWL_VERDICT_ALLOW},
	{"open @/zero path ; open /proc/%P/fd/%L rdwr", "ok |EPERM", DEVWL_VERDICT_DENY},
	{"close 0 ; open @/zero path ; open @/lnk-fd0 rdonly", "ok|ok *fd=0 |ok *read=00000000",
	 DEVWL_VERDICT_ALLOW},
	/* Not a device: the kernel's, as the caller (devwl opens nothing for it). */
	{"open @/file path ; open /proc/self/fd/%L rdonly", "ok |ok *type=f",
	 DEVWL_VERDICT_CONTINUE},
	{"open @/file path ; open /proc/self/fd/%L wronly,trunc", "ok |ok *type=f",
	 DEVWL_VERDICT_CONTINUE},
	{"open @/fifo path ; open /proc/self/fd/%L rdonly,nonblock", "ok |ok *type=o",
	 DEVWL_VERDICT_CONTINUE},
	/* A writer with no reader: the kernel's answer, as the caller would have it. */
	{"open @/fifo path ; open /proc/self/fd/%L wronly,nonblock", "ok |ENXIO",
	 DEVWL_VERDICT_CONTINUE},
	{"open /proc/self/fd/99 rdonly", "ENOENT", DEVWL_VERDICT_ERROR},
	/* Somebody else's fds: an unprivileged caller could not, so neither does devwl. */
	{"open /proc/1/fd/0 rdonly", "EACCES", DEVWL_VERDICT_ERROR},
};

int main(void)
{
	struct lt_nodes nodes;
	char args[1024], p[256];
	int run = 0;

	lt_need_root();
	lt_watchdog(240);
	lt_nodes_make(&nodes);
	snprintf(p, sizeof(p), "%s/lnk-fd0", nodes.dir);
	if (symlink("/proc/self/fd/0", p) < 0)
		LT_DIE("symlink: %m");
	snprintf(p, sizeof(p), "%s/fifo", nodes.dir);
	if (mkfifo(p, 0666) < 0)
		LT_DIE("mkfifo: %m");
	snprintf(p, sizeof(p), "%s/lnk-stdin", nodes.dir);
	if (symlink("/dev/stdin", p) < 0)
		LT_DIE("symlink: %m");
	for (size_t i = 0; i < ARRAY_SIZE_LT(cases); i++) {
		struct lt_sup s;
		char *out = NULL;
		int answered = 0;

		lt_sup_init(&s, RO);
		s.cgroup = NULL; /* no baseline: what devwl answers is all there is */
		lt_subst(args, sizeof(args), cases[i].args, nodes.dir);
		out = lt_probe_run(&s, args);
		LT_CHECK(lt_match(out, cases[i].want), "probe %s\n  want: %s\n  got:  %s", args,
			 cases[i].want, out);
		/* Counted, not the last answer: a sanitizer's exit-time opens come after it. */
		answered = s.count - s.allowed - s.denied - s.continued - s.gone - s.errors;
		if (cases[i].last == DEVWL_VERDICT_ALLOW)
			LT_CHECK(s.allowed == 1 && !s.denied, "probe %s: %d allowed, %d denied",
				 args, s.allowed, s.denied);
		else if (cases[i].last == DEVWL_VERDICT_DENY)
			LT_CHECK(s.denied == 1 && !s.allowed, "probe %s: %d allowed, %d denied",
				 args, s.allowed, s.denied);
		else if (cases[i].last == DEVWL_VERDICT_CONTINUE)
			LT_CHECK(!s.denied && !s.allowed && answered == 0,
				 "probe %s: %d allowed, %d denied, %d errors: want the kernel's",
				 args, s.allowed, s.denied, answered);
		else
			LT_CHECK(answered == 1, "probe %s: %d answered with an error, want 1", args,
				 answered);
		LT_CHECK(s.errors == 0, "probe %s: handler errors", args);
		free(out);
		lt_sup_free(&s);
		run++;
	}
	lt_nodes_remove(&nodes);
	printf("%d cases, %d failures\n", run, lt_failures);
	return lt_failures ? 1 : 0;
}
