/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel baseline itself (common/baseline.c), v1 and v2: a process moved into it is
 * refused every device by the kernel (EPERM), O_PATH still works, an fd opened outside
 * keeps working; after kill + destroy nothing is left.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/* The baseline is program code, not library code: test it as it is compiled there. */
#include "../../common/baseline.c"
#include "../hostprobe.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* In the child: what the kernel says. Exit code bits: 1 open not EPERM, 2 O_PATH failed,
 * 4 the inherited fd stopped working, 8 mknod-ed node open not EPERM. */
static int child_checks(int inherited, const char *node)
{
	char c = 0;
	int rc = 0, fd;

	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (!(fd < 0 && errno == EPERM))
		rc |= 1;
	fd = open("/dev/zero", O_PATH | O_CLOEXEC);
	if (fd < 0)
		rc |= 2;
	if (read(inherited, &c, 1) != 1 || c != 0)
		rc |= 4;
	fd = open(node, O_RDONLY | O_CLOEXEC);
	if (!(fd < 0 && errno == EPERM))
		rc |= 8;
	return rc;
}

static int run_kind(enum baseline_kind kind, const char *node)
{
	struct baseline b = BASELINE_INIT;
	char name[64], dir[4096];
	int go[2] = {-1, -1}, zero, status = 0, r;
	pid_t pid;

	/* Whether the host can is asked without devwl: where it can, the baseline must work. */
	char why1[512] = "", why2[512] = "";
	bool v1 = kind != BASELINE_V2 && hp_v1_devices(why1, sizeof(why1)) == 0;
	bool v2 = kind != BASELINE_V1 && hp_bpf_device(why2, sizeof(why2)) == 0;
	if (!v1 && !v2) {
		fprintf(stderr, "%s: the host cannot: %s%s%s\n", baseline_kind_name(kind), why1,
			why1[0] && why2[0] ? "; " : "", why2);
		return 0;
	}
	snprintf(name, sizeof(name), "devwl-test-45.%d", (int)getpid());
	r = baseline_create(kind, name, 0, &b);
	CHECK(r == 0, "%s: create: %s", baseline_kind_name(kind), strerror(-r));
	if (r < 0)
		return 0;
	CHECK(kind == BASELINE_AUTO ? b.kind == BASELINE_V1 || b.kind == BASELINE_V2
				    : b.kind == kind,
	      "kind %d, wanted %d", b.kind, kind);
	snprintf(dir, sizeof(dir), "%s", b.dir);
	CHECK(access(dir, F_OK) == 0, "%s missing", dir);

	zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	CHECK(zero >= 0 && pipe2(go, O_CLOEXEC) == 0, "setup: %m");
	pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(100);
		_exit(child_checks(zero, node));
	}
	close(go[0]);
	r = baseline_add(&b, pid);
	CHECK(r == 0, "add: %s", strerror(-r));
	CHECK(write(go[1], "g", 1) == 1, "go");
	close(go[1]);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "%s: child checks failed, status %#x (1 open!=EPERM, 2 O_PATH, 4 inherited fd, 8 "
	      "node)",
	      baseline_kind_name(kind), status);
	close(zero);

	/* A process still inside: kill finds and kills it, destroy then removes the dir. */
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	CHECK(baseline_add(&b, pid) == 0, "add sleeper");
	/* How many pids it still lists is a race (v2's cgroup.kill may have emptied the
	 * list already; a task just reaped may linger): what counts is that it dies. */
	r = baseline_kill(&b);
	CHECK(r == 0 || r == 1, "kill: %d", r);
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "sleeper not killed");
	for (int i = 0; i < 400 && (r = baseline_kill(&b)) > 0; i++)
		nanosleep(&(struct timespec){.tv_nsec = 5 * 1000 * 1000}, NULL);
	CHECK(r == 0, "still listed 2 s after the last task was reaped: %d", r);
	r = baseline_destroy(&b);
	CHECK(r == 0, "destroy: %s", strerror(-r));
	CHECK(access(dir, F_OK) < 0 && errno == ENOENT, "%s left behind", dir);
	CHECK(b.dir == NULL && b.kind == BASELINE_NONE, "destroy did not reset");
	return 1;
}

int main(void)
{
	char tmpl[] = "/tmp/devwl-45.XXXXXX", node[64];
	int ran = 0;
	enum baseline_kind k;

	if (geteuid() != 0) {
		fputs("SKIP: needs root (cgroups, bpf)\n", stderr);
		return 77;
	}
	if (!mkdtemp(tmpl))
		return 1;
	snprintf(node, sizeof(node), "%s/null", tmpl);
	if (mknod(node, S_IFCHR | 0666, makedev(1, 3)) < 0) {
		fprintf(stderr, "SKIP: mknod: %m\n");
		rmdir(tmpl);
		return 77;
	}
	CHECK(baseline_kind_parse("v1", &k) == 0 && k == BASELINE_V1, "parse v1");
	CHECK(baseline_kind_parse("v2", &k) == 0 && k == BASELINE_V2, "parse v2");
	CHECK(baseline_kind_parse("none", &k) == 0 && k == BASELINE_NONE, "parse none");
	CHECK(baseline_kind_parse("auto", &k) == 0 && k == BASELINE_AUTO, "parse auto");
	CHECK(baseline_kind_parse("v3", &k) == -EINVAL, "parse v3");
	CHECK(baseline_create(BASELINE_V1, "a/b", 0, &(struct baseline)BASELINE_INIT) == -EINVAL,
	      "a name with a slash");

	ran += run_kind(BASELINE_V1, node);
	ran += run_kind(BASELINE_V2, node);
	ran += run_kind(BASELINE_AUTO, node);
	unlink(node);
	rmdir(tmpl);
	if (failures)
		return 1;
	if (ran == 0) {
		fputs("SKIP: the host can make neither a v1 devices cgroup nor a cgroup-v2 device "
		      "program\n",
		      stderr);
		return 77;
	}
	printf("PASS (%d kinds)\n", ran);
	return 0;
}
