/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwl_cgroup_check() against another writer (libdevwl(3); devwld(8), KERNEL MODE:
 * drift), on scratch cgroups of this host. v1: a grant and a revocation written behind
 * the handle are RULES, named missing and extra; the handle takes the kernel's list, so
 * the next check is 0 and the next apply makes devices.list the node again; so does a
 * switch to allow-all. v2, taken over from a "runtime" program: the first apply detaches
 * it; a deny-all program attached afterwards is FOREIGN ("denies every device") and stays
 * through an apply; devwl's program detached is DETACHED, and the apply attaches it again
 * beside the foreign one. Either kind is skipped (77 if both) where the host has none.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../hostprobe.h"

#include "devwl.h"

static int failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL: " __VA_ARGS__);                                              \
			putchar('\n');                                                             \
			failed = 1;                                                                \
		}                                                                                  \
	} while (0)

static int sys_bpf(int cmd, union bpf_attr *a)
{
	return (int)syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static bool put(const char *dir, const char *file, const char *text)
{
	char path[400];
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok;
}

/* devices.list, its lines sorted, into buf. */
static void list_sorted(const char *dir, char *buf, size_t size)
{
	char cmd[500];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "sort %s/devices.list", dir);
	p = popen(cmd, "r");
	n = p ? fread(buf, 1, size - 1, p) : 0;
	buf[n] = '\0';
	if (p)
		pclose(p);
}

/* "r0 = verdict; exit" attached to dir with ALLOW_MULTI; its id, or 0. */
static uint32_t attach_plain(int dirfd, int verdict)
{
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = verdict},
		{.code = BPF_JMP | BPF_EXIT},
	};
	struct bpf_prog_info info;
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t) "GPL";
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0)
		return 0;
	memset(&a, 0, sizeof(a));
	a.target_fd = (uint32_t)dirfd;
	a.attach_bpf_fd = (uint32_t)fd;
	a.attach_type = BPF_CGROUP_DEVICE;
	a.attach_flags = BPF_F_ALLOW_MULTI;
	memset(&info, 0, sizeof(info));
	if (sys_bpf(BPF_PROG_ATTACH, &a) < 0)
		info.id = 0;
	else {
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (uint32_t)fd;
		a.info.info_len = sizeof(info);
		a.info.info = (uint64_t)(uintptr_t)&info;
		if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0)
			info.id = 0;
	}
	close(fd);
	return info.id;
}

/* The programs attached to dir itself; how many, ids in ids[0..4). */
static int query(int dirfd, uint32_t *ids)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.query.target_fd = (uint32_t)dirfd;
	a.query.attach_type = BPF_CGROUP_DEVICE;
	a.query.prog_ids = (uint64_t)(uintptr_t)ids;
	a.query.prog_cnt = 4;
	return sys_bpf(BPF_PROG_QUERY, &a) < 0 ? -1 : (int)a.query.prog_cnt;
}

static bool detach_id(int dirfd, uint32_t id)
{
	union bpf_attr a;
	int fd, r;

	memset(&a, 0, sizeof(a));
	a.prog_id = id;
	fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
	if (fd < 0)
		return false;
	memset(&a, 0, sizeof(a));
	a.target_fd = (uint32_t)dirfd;
	a.attach_bpf_fd = (uint32_t)fd;
	a.attach_type = BPF_CGROUP_DEVICE;
	r = sys_bpf(BPF_PROG_DETACH, &a);
	close(fd);
	return r == 0;
}

static bool has(const uint32_t *ids, int n, uint32_t id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static struct devwl_node *make_node(struct devwl_policy **ret)
{
	static const char *const rules[] = {"c 1:3 rwm", "c 1:5 rwm"};
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node = p ? devwl_policy_find(p, "/") : NULL;

	if (!node)
		exit(1);
	devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL);
	for (size_t i = 0; i < 2; i++)
		devwl_node_write(node, DEVWL_FILE_ALLOW, rules[i], strlen(rules[i]), NULL);
	*ret = p;
	return node;
}

static bool v1(const struct devwl_node *node)
{
	char mnt[256], dir[320], what[512], seen[512], before[256], after[256];
	struct devwl_cgroup *cg = NULL;
	int r;

	if (hp_cgroup_mount("devices", mnt, sizeof(mnt)) < 0)
		return false;
	snprintf(dir, sizeof(dir), "%s/devwl-live-85.%d", mnt, (int)getpid());
	if (mkdir(dir, 0755) < 0)
		return false;
	if (devwl_cgroup_open(dir, 0, &cg) < 0 || devwl_cgroup_apply(cg, node) < 0) {
		devwl_cgroup_free(cg);
		rmdir(dir);
		return false;
	}
	list_sorted(dir, before, sizeof(before));
	CHECK(!strcmp(before, "c 1:3 rwm\nc 1:5 rwm\n"), "v1: applied: %s", before);
	r = devwl_cgroup_check(cg, what, sizeof(what));
	CHECK(r == 0, "v1: check after apply: %d (%s)", r, what);

	CHECK(put(dir, "devices.allow", "c 1:7 rwm") && put(dir, "devices.deny", "c 1:5 rwm"),
	      "v1: writes behind the handle");
	r = devwl_cgroup_check(cg, what, sizeof(what));
	CHECK(r == (int)DEVWL_CGROUP_DRIFT_RULES &&
		      !strcmp(what, "missing c 1:5 rwm; extra c 1:7 rwm"),
	      "v1: after a grant and a revocation: %d (%s)", r, what);
	snprintf(seen, sizeof(seen), "%s", what);
	r = devwl_cgroup_check(cg, what, sizeof(what));
	CHECK(r == 0, "v1: the handle holds the kernel's list now: %d (%s)", r, what);
	CHECK(devwl_cgroup_apply(cg, node) > 0, "v1: re-apply wrote nothing");
	list_sorted(dir, after, sizeof(after));
	CHECK(!strcmp(after, before), "v1: re-applied: %s", after);
	printf("ok - v1: a grant and a revocation behind the handle: RULES (%s), re-applied\n",
	       seen);

	CHECK(put(dir, "devices.allow", "a"), "v1: allow-all behind the handle");
	r = devwl_cgroup_check(cg, what, sizeof(what));
	CHECK(r == (int)DEVWL_CGROUP_DRIFT_RULES && strstr(what, "extra a *:* rwm"),
	      "v1: after allow-all: %d (%s)", r, what);
	snprintf(seen, sizeof(seen), "%s", what);
	CHECK(devwl_cgroup_apply(cg, node) > 0, "v1: re-apply after allow-all");
	list_sorted(dir, after, sizeof(after));
	CHECK(!strcmp(after, before), "v1: re-applied after allow-all: %s", after);
	r = devwl_cgroup_check(cg, what, sizeof(what));
	CHECK(r == 0, "v1: check after the repair: %d (%s)", r, what);
	printf("ok - v1: allow-all behind the handle: RULES (%s), re-applied to the node\n", seen);
	devwl_cgroup_free(cg);
	rmdir(dir);
	return true;
}

static bool v2(const struct devwl_node *node)
{
	char mnt[256], dir[320], what[512], why[256];
	struct devwl_cgroup *cg = NULL;
	uint32_t ids[4], runtime, foreign, ours;
	int dirfd, n, r;

	if (hp_bpf_device(why, sizeof(why)) < 0 || hp_cgroup_mount(NULL, mnt, sizeof(mnt)) < 0)
		return false;
	snprintf(dir, sizeof(dir), "%s/devwl-live-85.%d", mnt, (int)getpid());
	if (mkdir(dir, 0755) < 0)
		return false;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	runtime = attach_plain(dirfd, 1);
	CHECK(runtime, "v2: the runtime's program");
	CHECK(devwl_cgroup_open(dir, DEVWL_CGROUP_TAKE_OVER, &cg) == 0, "v2: open");
	r = devwl_cgroup_check(cg, what, sizeof(what));
	CHECK(r == 0, "v2: before the first apply: %d (%s)", r, what);
	CHECK(devwl_cgroup_apply(cg, node) > 0, "v2: apply");
	n = query(dirfd, ids);
	CHECK(n == 1 && ids[0] != runtime, "v2: after the take-over: %d programs", n);
	ours = ids[0];
	r = devwl_cgroup_check(cg, what, sizeof(what));
	CHECK(r == 0, "v2: check after the take-over: %d (%s)", r, what);

	foreign = attach_plain(dirfd, 0);
	r = devwl_cgroup_check(cg, what, sizeof(what));
	CHECK(r == (int)DEVWL_CGROUP_DRIFT_FOREIGN && strstr(what, "denies every device"),
	      "v2: a deny-all beside ours: %d (%s)", r, what);
	printf("ok - v2: a deny-all program beside devwl's: FOREIGN (%s)\n", what);
	CHECK(devwl_cgroup_apply(cg, node) > 0, "v2: apply beside a foreign program");
	n = query(dirfd, ids);
	CHECK(n == 2 && has(ids, n, foreign), "v2: the foreign program after an apply: %d", n);
	ours = ids[0] == foreign ? ids[1] : ids[0];

	CHECK(detach_id(dirfd, ours), "v2: detaching devwl's program");
	r = devwl_cgroup_check(cg, what, sizeof(what));
	CHECK(r == (int)(DEVWL_CGROUP_DRIFT_DETACHED | DEVWL_CGROUP_DRIFT_FOREIGN),
	      "v2: devwl's detached: %d (%s)", r, what);
	printf("ok - v2: devwl's program detached: DETACHED (%s)\n", what);
	CHECK(devwl_cgroup_apply(cg, node) > 0, "v2: re-apply after the detach");
	n = query(dirfd, ids);
	CHECK(n == 2 && has(ids, n, foreign) && !has(ids, n, ours),
	      "v2: after the repair: %d programs", n);
	r = devwl_cgroup_check(cg, what, sizeof(what));
	CHECK(r == (int)DEVWL_CGROUP_DRIFT_FOREIGN, "v2: after the repair: %d (%s)", r, what);
	printf("ok - v2: re-attached beside the foreign program, which stays\n");
	devwl_cgroup_free(cg);
	close(dirfd);
	rmdir(dir);
	return true;
}

int main(void)
{
	struct devwl_policy *p = NULL;
	const struct devwl_node *node;
	bool any;

	if (geteuid() != 0) {
		puts("SKIP: needs root");
		return 77;
	}
	node = make_node(&p);
	any = v1(node);
	if (!any)
		puts("# v1: no devices hierarchy to program here");
	if (!v2(node))
		puts("# v2: no cgroup2 device program possible here");
	else
		any = true;
	devwl_policy_free(p);
	if (!any) {
		puts("SKIP: neither v1 nor v2 device cgroups here");
		return 77;
	}
	return failed;
}
