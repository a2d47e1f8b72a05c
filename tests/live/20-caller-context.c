/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every open devwl performs on a caller's behalf names what the caller's own open would
 * have named: /dev/tty is the caller's controlling terminal (ENXIO when it has none, as
 * after setsid), not the supervisor's; /proc/self/root/proc/self/fd/N reaches the
 * caller's fd N, the inner "self" too. The supervisor here runs in a session of its own
 * with a pseudo-terminal as its controlling terminal, and the workload has no baseline.
 */
#include <sys/ioctl.h>
#include <termios.h>

#include "livetest.h"

/*
 * Which terminal fd is: "ours" when it is the caller's controlling terminal (TIOCGSID
 * answers only for that one), else the errno. The rdev is no guide: an fd opened through
 * /dev/tty shows 5:0 whichever terminal it is.
 */
static void describe_tty(const char *label, int fd)
{
	pid_t sid = 0;

	if (fd < 0)
		printf("%s: %s\n", label, strerrorname_np(errno));
	else if (ioctl(fd, TIOCGSID, &sid) < 0)
		printf("%s: TIOCGSID=%s\n", label, strerrorname_np(errno));
	else
		printf("%s: %s\n", label, sid == getsid(0) ? "ours" : "another session");
}

/* After setsid the caller has no controlling terminal: the kernel says ENXIO. */
static int no_ctty(void *arg)
{
	(void)arg;
	if (setsid() < 0)
		printf("setsid: %s\n", strerrorname_np(errno));
	describe_tty("tty", open("/dev/tty", O_RDWR | O_CLOEXEC));
	return 0;
}

/* A terminal of its own: /dev/tty is that one. */
static int own_ctty(void *arg)
{
	int m = -1, sl = -1;

	(void)arg;
	if (setsid() < 0)
		printf("setsid: %s\n", strerrorname_np(errno));
	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0) {
		printf("pty: %s\n", strerrorname_np(errno));
		return 0;
	}
	sl = open(ptsname(m), O_RDWR | O_CLOEXEC);
	if (sl < 0 || ioctl(sl, TIOCSCTTY, 0) < 0) {
		printf("ctty: %s\n", strerrorname_np(errno));
		return 0;
	}
	describe_tty("own", sl);
	describe_tty("tty", open("/dev/tty", O_RDWR | O_CLOEXEC));
	return 0;
}

/* In a session of its own with a pty as controlling terminal: the supervisor's side. */
static int supervise(const char *dir)
{
	char args[512];
	struct lt_sup s;
	int m = -1, sl = -1, fd = -1;
	char *out = NULL;

	signal(SIGHUP, SIG_IGN); /* closing the pty at the end hangs it up */
	if (setsid() < 0)
		LT_DIE("setsid: %m");
	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
		LT_SKIP("no pseudo-terminals here: %m");
	sl = open(ptsname(m), O_RDWR | O_CLOEXEC);
	if (sl < 0 || ioctl(sl, TIOCSCTTY, 0) < 0)
		LT_SKIP("cannot take a controlling terminal: %m");
	fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		LT_SKIP("no /dev/tty for the supervisor: %m");
	close(fd);

	lt_sup_init(&s, "allow a");
	out = lt_run(&s, NULL, no_ctty, NULL, NULL);
	LT_CHECK(strcmp(lt_result_of(out, "tty"), "ENXIO") == 0,
		 "after setsid: /dev/tty gave '%s' (the supervisor's terminal), want ENXIO",
		 lt_result_of(out, "tty"));
	free(out);
	lt_sup_free(&s);

	lt_sup_init(&s, "allow a");
	out = lt_run(&s, NULL, own_ctty, NULL, NULL);
	LT_CHECK(strcmp(lt_result_of(out, "own"), "ours") == 0 &&
			 strcmp(lt_result_of(out, "tty"), "ours") == 0,
		 "own terminal: /dev/tty gave '%s', want its own terminal ('%s')",
		 lt_result_of(out, "tty"), lt_result_of(out, "own"));
	free(out);
	lt_sup_free(&s);

	/* The inner "self" of /proc/self/root/proc/self is the caller too. */
	static const struct {
		const char *fmt, *want;
	} magic[] = {
		{"open @/full path ; open /proc/self/root/proc/self/fd/%L rdonly", "ok |EPERM"},
		{"open @/full path ; open /proc/thread-self/root/proc/self/fd/%L rdonly",
		 "ok |EPERM"},
		{"open @/full path ; open /proc/self/root/proc/thread-self/fd/%L rdonly",
		 "ok |EPERM"},
		{"open @/zero path ; open /proc/self/root/proc/self/fd/%L rdonly",
		 "ok |ok *rdev=1:5 *read=00000000"},
		{"open @/zero path ; open /proc/self/cwd/proc/self/fd/%L rdonly",
		 "ok |ok *rdev=1:5 *read=00000000"},
	};
	for (size_t i = 0; i < ARRAY_SIZE_LT(magic); i++) {
		lt_sup_init(&s, "deny a;allow c 1:5 r");
		s.chdir_to = "/";
		lt_subst(args, sizeof(args), magic[i].fmt, dir);
		out = lt_probe_run(&s, args);
		LT_CHECK(lt_match(out, magic[i].want), "probe %s\n  want: %s\n  got:  %s", args,
			 magic[i].want, out);
		free(out);
		lt_sup_free(&s);
	}
	close(sl);
	close(m);
	return lt_failures ? 1 : 0;
}

int main(void)
{
	struct lt_nodes nodes;
	int status = 0;
	pid_t pid = -1;

	lt_need_root();
	lt_watchdog(120);
	lt_nodes_make(&nodes);
	pid = fork();
	if (pid < 0)
		LT_DIE("fork: %m");
	if (pid == 0)
		exit(supervise(nodes.dir));
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	lt_nodes_remove(&nodes);
	if (!WIFEXITED(status))
		LT_DIE("supervisor side died: %#x", status);
	if (WEXITSTATUS(status) == 0)
		printf("PASS\n");
	return WEXITSTATUS(status);
}
