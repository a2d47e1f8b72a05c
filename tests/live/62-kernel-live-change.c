/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A policy change reaches a running workload in the kernel mode within one
 * devwl_cgroup_apply(): a task already in the cgroup (v2 device program, v1 devices
 * cgroup) opens /dev/zero, the node's grant is revoked and applied, the task's very next
 * open fails EPERM; granted again, the next one succeeds. Also through DENY -> ALLOW ->
 * DENY behaviour changes, which v1 makes through its own parent cgroup.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "devwl.h"
#include "util.h"

#include "../hostprobe.h"

static int join(const char *dir)
{
	char path[600];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* The workload: on each byte, open /dev/zero and report errno (0 = opened). */
static pid_t workload(const char *dir, int *to, int *from)
{
	int a[2], b[2];
	pid_t pid;

	if (pipe2(a, O_CLOEXEC) < 0 || pipe2(b, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;
		if (join(dir) < 0)
			_exit(2);
		while (read(a[0], &c, 1) == 1) {
			int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC), e = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
			if (write(b[1], &e, sizeof(e)) != sizeof(e))
				_exit(1);
		}
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	*to = a[1];
	*from = b[0];
	return pid;
}

static int ask(int to, int from)
{
	int e = -1;

	if (write(to, "x", 1) != 1 || read(from, &e, sizeof(e)) != sizeof(e))
		return -1;
	return e;
}

static int wr(struct devwl_node *n, enum devwl_file f, const char *rule)
{
	return devwl_node_write(n, f, rule, strlen(rule), NULL);
}

/* One cgroup: returns 0 pass, 1 fail. */
static int run(const char *name, const char *dir, unsigned flags)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *root = devwl_policy_find(p, "/"), *node;
	struct devwl_cgroup *cg = NULL;
	int to = -1, from = -1, fails = 0, r;
	pid_t pid;

	devwl_policy_mkdir(p, "/w");
	node = devwl_policy_find(p, "/w");
	wr(node, DEVWL_FILE_DENY, "a");
	wr(node, DEVWL_FILE_ALLOW, "c 1:5 r");
	r = devwl_cgroup_open(dir, flags, &cg);
	if (r < 0) {
		fprintf(stderr, "%s: open: %s\n", name, strerror(-r));
		return 1;
	}
	pid = workload(dir, &to, &from);
#define STEP(what, want)                                                                           \
	do {                                                                                       \
		int got;                                                                           \
		r = devwl_cgroup_apply(cg, node);                                                  \
		got = ask(to, from);                                                               \
		if (r < 0 || got != (want)) {                                                      \
			fprintf(stderr, "FAIL %s: %s: apply %d, open errno %d, want %d\n", name,   \
				what, r, got, want);                                               \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)
	STEP("granted", 0);
	wr(node, DEVWL_FILE_DENY, "c 1:5 r");
	STEP("revoked", EPERM);
	wr(node, DEVWL_FILE_ALLOW, "c 1:* r");
	STEP("granted by wildcard", 0);
	/* A revocation on the ancestor propagates: the kernel follows. */
	wr(root, DEVWL_FILE_DENY, "c *:5 r");
	STEP("revoked on the parent", EPERM);
	/* Behaviour changes: DENY -> ALLOW (a partial-overlap denial) -> ALLOW all. */
	devwl_policy_free(p);
	p = devwl_policy_new();
	devwl_policy_mkdir(p, "/w");
	node = devwl_policy_find(p, "/w");
	wr(node, DEVWL_FILE_DENY, "c 1:* rw");
	STEP("ALLOW with a partly overlapping denial", EPERM);
	wr(node, DEVWL_FILE_ALLOW, "c 1:* rw");
	STEP("ALLOW all", 0);
	wr(node, DEVWL_FILE_DENY, "a");
	STEP("DENY all", EPERM);
	close(to);
	close(from);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	devwl_cgroup_free(cg);
	devwl_policy_free(p);
	if (!fails)
		fprintf(stderr, "%s: every change reached the running task\n", name);
	return fails ? 1 : 0;
}

static void rmdir_retry(const char *dir)
{
	for (int i = 0; i < 200 && rmdir(dir) < 0 && errno == EBUSY; i++)
		nanosleep(&(struct timespec){0, 5000000}, NULL);
}

int main(void)
{
	char v2[320], v1p[320], v1[340], mnt[256], why[512] = "";
	int fails = 0, ran = 0;

	if (geteuid() != 0) {
		fputs("SKIP: needs root (device cgroups)\n", stderr);
		return 77;
	}
	/* Each kind runs where the host can (asked without devwl), wherever it is mounted. */
	if (hp_bpf_device(why, sizeof(why)) < 0 || hp_cgroup_mount(NULL, mnt, sizeof(mnt)) < 0) {
		fprintf(stderr, "v2: the host cannot: %s\n", why);
	} else {
		snprintf(v2, sizeof(v2), "%s/devwl-live62.%d", mnt, (int)getpid());
		if (mkdir(v2, 0755) < 0) {
			fprintf(stderr, "FAIL: mkdir %s: %m\n", v2);
			fails++;
		} else {
			fails += run("v2", v2, 0);
			rmdir_retry(v2);
		}
		ran++;
	}
	if (hp_v1_devices(why, sizeof(why)) < 0 ||
	    hp_cgroup_mount("devices", mnt, sizeof(mnt)) < 0) {
		fprintf(stderr, "v1: the host cannot: %s\n", why);
	} else {
		snprintf(v1p, sizeof(v1p), "%s/devwl-live62.%d", mnt, (int)getpid());
		snprintf(v1, sizeof(v1), "%s/w", v1p);
		if (mkdir(v1p, 0755) < 0 || mkdir(v1, 0755) < 0) {
			fprintf(stderr, "FAIL: mkdir %s: %m\n", v1);
			fails++;
		} else {
			fails += run("v1", v1, DEVWL_CGROUP_OWN_PARENT);
			rmdir_retry(v1);
		}
		rmdir_retry(v1p);
		ran++;
	}
	if (!ran) {
		fputs("SKIP: the host can make neither a cgroup-v2 device program nor a v1 "
		      "devices cgroup\n",
		      stderr);
		return 77;
	}
	puts(fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
