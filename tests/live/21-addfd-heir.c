/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A supervisor with a receive hook (one whose notify fd an heir holds, as devwld's keeper
 * does) SIGKILLed while it injects a granted open: the target's call is left for the heir
 * to answer, never completed with 0. With ADDFD_FLAG_SEND the kernel marks the call
 * answered before the target installs the fd and drops only the install when the
 * supervisor dies in its wait, so the target's open "succeeds" with 0, an fd it never
 * got (it would write to its stdin). libdevwl injects in two steps once a hook is set.
 *
 * The window is held open for real: the target is pinned to CPU 1, where a SCHED_FIFO
 * task spins while the supervisor (on CPU 0) receives, decides and starts the ADDFD, so
 * the target cannot install the fd until the supervisor is dead. The heir (this process,
 * holding a copy of the notify fd) then answers EPERM. Outcomes: EPERM (the window was
 * held) or the device itself (it was not: the install ran first); never 0 or another fd.
 */
#include <sched.h>
#include <sys/ioctl.h>
#include <linux/seccomp.h>
#include <time.h>

#include "livetest.h"

#define HOG_MS 400
#define TRIES  5

static char zero_path[256];

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		LT_DIE("sched_setaffinity %d: %m", cpu);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The target (under the filter): one open of the granted node, then what it got. */
static int target(void *arg)
{
	int go = *(int *)arg, fd;
	char c;
	struct stat st;

	pin(1);
	if (read(go, &c, 1) != 1)
		return 1;
	errno = 0;
	fd = open(zero_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		printf("errno %d\n", errno);
	else if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 5))
		printf("device fd %d\n", fd);
	else
		printf("other fd %d\n", fd);
	return 0;
}

static void on_recv(int nfd, uint64_t id, void *userdata)
{
	(void)nfd;
	if (write(*(int *)userdata, &id, sizeof(id)) != sizeof(id))
		_exit(3);
}

/* The supervisor: on CPU 0, handles one notification with a receive hook, or dies. */
static pid_t supervisor(int nfd, int ids)
{
	pid_t pid = fork();

	if (pid < 0)
		LT_DIE("fork: %m");
	if (pid == 0) {
		struct devwl_policy *p = devwl_policy_new();
		struct devwl_notify *n = devwl_notify_new();

		pin(0);
		if (!p || !n)
			_exit(4);
		devwl_notify_set_recv_hook(n, on_recv, &ids);
		/* As devwld serving a runtime's container: a deny baseline devwl does not
		 * program, so a granted open is injected (DESIGN.md, "Grants"). */
		devwl_notify_set_baseline(n, true);
		devwl_notify_handle(n, nfd, devwl_policy_find(p, "/"), NULL);
		_exit(0);
	}
	return pid;
}

/* A SCHED_FIFO task spinning on CPU 1 for HOG_MS. */
static pid_t hog(void)
{
	pid_t pid = fork();

	if (pid < 0)
		LT_DIE("fork: %m");
	if (pid == 0) {
		struct sched_param sp = {.sched_priority = 50};
		uint64_t end;

		pin(1);
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			_exit(5);
		end = mono_ms() + HOG_MS;
		while (mono_ms() < end)
			;
		_exit(0);
	}
	return pid;
}

/* The target's state letter (R, S, ...) from /proc/PID/stat. */
static char state_of(pid_t pid)
{
	char path[64], buf[512];
	char *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* One try: 1 the window was held (the heir answered), 0 not, failures counted. */
static int try_once(void)
{
	int gop[2], idp[2], nfd = -1, out = -1, held = 0, status;
	pid_t tpid, spid, hpid;
	uint64_t id = 0;
	char *seen;
	struct seccomp_notif_resp resp;

	if (pipe2(gop, O_CLOEXEC) < 0 || pipe2(idp, O_CLOEXEC) < 0)
		LT_DIE("pipe: %m");
	tpid = lt_spawn(target, &gop[0], &nfd, &out);
	close(gop[0]);
	/* Into the filter's wait first: go, then until it sleeps there. */
	if (write(gop[1], "g", 1) != 1)
		LT_DIE("write: %m");
	for (int i = 0; i < 200 && state_of(tpid) != 'S'; i++)
		usleep(5000);
	usleep(20000);
	hpid = hog();
	usleep(50000); /* the hog holds CPU 1 */
	spid = supervisor(nfd, idp[1]);
	if (read(idp[0], &id, sizeof(id)) != sizeof(id))
		LT_DIE("the supervisor received nothing");
	usleep(100000); /* long enough to decide and be in ADDFD's wait */
	kill(spid, SIGKILL);
	waitpid(spid, &status, 0);
	/* The heir answers what the dead one took, as devwld's keeper does. */
	memset(&resp, 0, sizeof(resp));
	resp.id = id;
	resp.error = -EPERM;
	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0)
		held = 1;
	else
		LT_CHECK(errno == ENOENT, "the heir's answer: %m");
	waitpid(hpid, NULL, 0);
	seen = lt_read_all(out);
	waitpid(tpid, NULL, 0);
	close(nfd);
	close(out);
	close(gop[1]);
	close(idp[0]);
	close(idp[1]);
	if (held)
		LT_CHECK(!strcmp(seen, "errno 1\n"),
			 "window held: the target got \"%s\", want EPERM", seen);
	else
		LT_CHECK(!strncmp(seen, "device fd ", 10),
			 "the call was answered before the heir: the target got \"%s\", want the "
			 "device",
			 seen);
	fprintf(stderr, "try: %s: the target got %s", held ? "window held" : "install first", seen);
	free(seen);
	return held;
}

int main(void)
{
	struct lt_nodes nodes;
	int held = 0;

	lt_need_root();
	pin(0); /* and so the supervisor; the target and the hog move to CPU 1 */
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		LT_SKIP("needs 2 CPUs (the target is held off its CPU while the supervisor runs)");
	lt_nodes_make(&nodes);
	snprintf(zero_path, sizeof(zero_path), "%s/zero", nodes.dir);
	for (int i = 0; i < TRIES && !held && !lt_failures; i++)
		held += try_once();
	lt_nodes_remove(&nodes);
	if (lt_failures) {
		puts("FAIL");
		return 1;
	}
	if (!held)
		LT_SKIP("the target could not be held off its CPU in %d tries", TRIES);
	puts("PASS");
	return 0;
}
