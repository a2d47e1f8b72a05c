/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Taking over a runtime's device cgroup (DEVWL_CGROUP_TAKE_OVER, devwld's kernel mode),
 * v2 and v1. The cgroup carries a runtime's rules (v2: a device program attached with
 * ALLOW_MULTI, as runc and crun attach theirs; v1: "a" denied and three devices allowed,
 * as runc writes them) and a task runs in it. Opening the cgroup changes nothing (the
 * task keeps its devices while devwld looks the cgroup up); after the first apply the
 * cgroup enforces exactly the node: a device the runtime allowed and the node denies is
 * refused, one the node grants beyond the runtime's rules opens, and v2 has one program
 * left on the cgroup, devwl's (the runtime's is detached), v1 lists exactly the node.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../hostprobe.h"

#include "devwl.h"

static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/urandom"};
#define NDEVS 4

/* What a task in the cgroup gets for each of devs: 0 opened, else errno. */
struct seen {
	int err[NDEVS];
};

static int write_file(const char *dir, const char *file, const char *text)
{
	char path[600];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/* The task: joins dir, then for each byte k opens devs[k] and answers its errno. */
static pid_t task(const char *dir, int *to, int *from)
{
	int a[2], b[2];
	pid_t pid;

	if (pipe2(a, O_CLOEXEC) < 0 || pipe2(b, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		unsigned char k;

		if (write_file(dir, "cgroup.procs", "0") < 0)
			_exit(2);
		while (read(a[0], &k, 1) == 1 && k < NDEVS) {
			int fd = open(devs[k], O_RDONLY | O_CLOEXEC), e = fd < 0 ? errno : 0;

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

static int look(int to, int from, struct seen *s)
{
	for (unsigned char k = 0; k < NDEVS; k++)
		if (write(to, &k, 1) != 1 || read(from, &s->err[k], sizeof(int)) != sizeof(int))
			return -1;
	return 0;
}

static int check(const char *name, const char *when, const struct seen *got,
		 const struct seen *want)
{
	int fails = 0;

	for (int k = 0; k < NDEVS; k++) {
		if (got->err[k] != want->err[k]) {
			fprintf(stderr, "FAIL %s: %s: %s: errno %d, want %d\n", name, when, devs[k],
				got->err[k], want->err[k]);
			fails++;
		}
	}
	return fails;
}

/* Device programs attached to the cgroup itself, or -errno. */
static int v2_programs(const char *dir)
{
	uint32_t ids[16];
	union bpf_attr attr;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	memset(&attr, 0, sizeof(attr));
	attr.query.target_fd = (uint32_t)fd;
	attr.query.attach_type = BPF_CGROUP_DEVICE;
	attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
	attr.query.prog_cnt = 16;
	r = (int)syscall(SYS_bpf, BPF_PROG_QUERY, &attr, sizeof(attr));
	close(fd);
	return r < 0 ? -errno : (int)attr.query.prog_cnt;
}

static int wr(struct devwl_node *n, enum devwl_file f, const char *rule)
{
	return devwl_node_write(n, f, rule, strlen(rule), NULL);
}

/* The runtime's rules on dir: 1:3, 1:5 and 1:7, nothing else. */
static int runtime_rules(int version, const char *dir)
{
	static const char *const allow[] = {"c 1:3 rw", "c 1:5 rw", "c 1:7 rw"};
	struct devwl_policy *p;
	struct devwl_cgroup *cg = NULL;
	int r;

	if (version == 1) {
		if (write_file(dir, "devices.deny", "a") < 0)
			return -errno;
		for (size_t i = 0; i < 3; i++)
			if (write_file(dir, "devices.allow", allow[i]) < 0)
				return -errno;
		return 0;
	}
	/* A program attached ALLOW_MULTI, left there when its loader goes, as runc's is:
	 * libdevwl without TAKE_OVER attaches just so. */
	p = devwl_policy_new();
	if (!p || devwl_policy_mkdir(p, "/rt") < 0)
		return -ENOMEM;
	wr(devwl_policy_find(p, "/rt"), DEVWL_FILE_DENY, "a");
	for (size_t i = 0; i < 3; i++)
		wr(devwl_policy_find(p, "/rt"), DEVWL_FILE_ALLOW, allow[i]);
	r = devwl_cgroup_open(dir, 0, &cg);
	if (r >= 0)
		r = devwl_cgroup_apply(cg, devwl_policy_find(p, "/rt"));
	devwl_cgroup_free(cg);
	devwl_policy_free(p);
	return r < 0 ? r : 0;
}

/* devices.list holds exactly the node's two grants. */
static int v1_list_is_node(const char *dir)
{
	char path[600], buf[256] = "";
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/devices.list", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return !strcmp(buf, "c 1:3 rw\nc 1:9 rw\n") || !strcmp(buf, "c 1:9 rw\nc 1:3 rw\n");
}

/* One cgroup: 0 pass, 1 fail, 77 cannot run here. */
static int run(int version, const char *dir)
{
	const struct seen runtime = {{0, 0, 0, EPERM}}, node_only = {{0, EPERM, EPERM, 0}};
	char name[8];
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node;
	struct devwl_cgroup *cg = NULL;
	struct seen s;
	int to = -1, from = -1, fails = 0, r;
	pid_t pid;

	snprintf(name, sizeof(name), "v%d", version);
	r = runtime_rules(version, dir);
	if (r < 0) {
		fprintf(stderr, "FAIL %s: the runtime's rules: %s\n", name, strerror(-r));
		devwl_policy_free(p);
		return 1;
	}
	devwl_policy_mkdir(p, "/km");
	node = devwl_policy_find(p, "/km");
	wr(node, DEVWL_FILE_DENY, "a");
	wr(node, DEVWL_FILE_ALLOW, "c 1:3 rw");
	wr(node, DEVWL_FILE_ALLOW, "c 1:9 rw");
	pid = task(dir, &to, &from);
	if (pid < 0 || look(to, from, &s) < 0) {
		fprintf(stderr, "FAIL %s: the task in %s did not start\n", name, dir);
		fails++;
		goto out;
	}
	fails += check(name, "the runtime's rules", &s, &runtime);
	r = devwl_cgroup_open(dir, DEVWL_CGROUP_TAKE_OVER, &cg);
	if (r < 0) {
		fprintf(stderr, "FAIL %s: devwl_cgroup_open(TAKE_OVER): %s\n", name, strerror(-r));
		fails++;
		goto out;
	}
	if (look(to, from, &s) < 0)
		fails++;
	fails += check(name, "taken over, not applied yet", &s, &runtime);
	r = devwl_cgroup_apply(cg, node);
	if (r < 0 || look(to, from, &s) < 0) {
		fprintf(stderr, "FAIL %s: apply: %s\n", name, strerror(-r));
		fails++;
		goto out;
	}
	fails += check(name, "the node applied", &s, &node_only);
	if (version == 2 && (r = v2_programs(dir)) != 1) {
		fprintf(stderr, "FAIL v2: %d device programs on the cgroup, want 1 (devwl's)\n", r);
		fails++;
	}
	if (version == 1 && !v1_list_is_node(dir)) {
		fprintf(stderr, "FAIL v1: devices.list is not the node's c 1:3 rw, c 1:9 rw\n");
		fails++;
	}
	/* Applied again (a policy change): still exactly the node. */
	wr(node, DEVWL_FILE_DENY, "c 1:3 rw");
	r = devwl_cgroup_apply(cg, node);
	if (r < 0 || look(to, from, &s) < 0) {
		fprintf(stderr, "FAIL %s: second apply: %s\n", name, strerror(-r));
		fails++;
		goto out;
	}
	fails += check(name, "1:3 revoked", &s, &(struct seen){{EPERM, EPERM, EPERM, 0}});
out:
	if (pid > 0) {
		close(to);
		close(from);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	devwl_cgroup_free(cg);
	devwl_policy_free(p);
	if (!fails)
		fprintf(stderr,
			"%s: taken over: the runtime's rules until the apply, then exactly "
			"the node\n",
			name);
	return fails ? 1 : 0;
}

static void rmdir_retry(const char *dir)
{
	for (int i = 0; i < 200 && rmdir(dir) < 0 && errno == EBUSY; i++)
		nanosleep(&(struct timespec){0, 5000000}, NULL);
}

int main(void)
{
	char v2[320], v1[320], mnt[256], why[512] = "";
	int fails = 0, ran = 0, r;

	if (geteuid() != 0) {
		fputs("SKIP: needs root (device cgroups)\n", stderr);
		return 77;
	}
	/* Each kind runs where the host can (asked without devwl), wherever it is mounted. */
	if (hp_bpf_device(why, sizeof(why)) < 0 || hp_cgroup_mount(NULL, mnt, sizeof(mnt)) < 0) {
		fprintf(stderr, "v2: the host cannot: %s\n", why);
	} else {
		snprintf(v2, sizeof(v2), "%s/devwl-live66.%d", mnt, (int)getpid());
		r = mkdir(v2, 0755) == 0 ? run(2, v2)
					 : (fprintf(stderr, "FAIL: mkdir %s: %m\n", v2), 1);
		ran += r != 77;
		fails += r == 1;
		rmdir_retry(v2);
	}
	if (hp_v1_devices(why, sizeof(why)) < 0 ||
	    hp_cgroup_mount("devices", mnt, sizeof(mnt)) < 0) {
		fprintf(stderr, "v1: the host cannot: %s\n", why);
	} else {
		snprintf(v1, sizeof(v1), "%s/devwl-live66.%d", mnt, (int)getpid());
		r = mkdir(v1, 0755) == 0 ? run(1, v1)
					 : (fprintf(stderr, "FAIL: mkdir %s: %m\n", v1), 1);
		ran += r != 77;
		fails += r == 1;
		rmdir_retry(v1);
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
