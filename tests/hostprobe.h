/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What this host can do, found out without devwl: the tests decide whether to skip from
 * these answers, so that a devwl that fails where the host can makes the test fail instead
 * of skip. Nothing here uses libdevwl or common/: a bug there must not turn into a skip.
 * tests/host-probe.c makes the same answers a program for the shell tests
 * (tests/host-probe.sh).
 */
#ifndef DEVWL_TESTS_HOSTPROBE_H
#define DEVWL_TESTS_HOSTPROBE_H

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* a comma-separated list (super options) holds item */
static inline bool hp_list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, item, n) == 0)
			return true;
		p += len + (end ? 1 : 0);
	}
	return false;
}

/*
 * The mount point of the first cgroup2 mount (ctrl NULL) or of the cgroup-v1 hierarchy
 * with controller ctrl, from /proc/self/mountinfo. Returns 0, or -ENOENT.
 */
static inline int hp_cgroup_mount(const char *ctrl, char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (r < 0 && fgets(line, sizeof(line), f)) {
		char mnt[4096], fstype[64], super[1024];
		const char *dash = strstr(line, " - ");

		/* id parent dev root mountpoint opts [optional...] - fstype source super */
		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(dash, " - %63s %*s %1023s", fstype, super) != 2)
			continue;
		if (ctrl ? strcmp(fstype, "cgroup") == 0 && hp_list_has(super, ctrl)
			 : strcmp(fstype, "cgroup2") == 0) {
			r = strlen(mnt) < size ? 0 : -ENAMETOOLONG;
			if (r == 0)
				memcpy(buf, mnt, strlen(mnt) + 1);
		}
	}
	fclose(f);
	return r;
}

/*
 * Can a cgroup-v1 devices cgroup deny here: a scratch cgroup under the devices
 * hierarchy's mount, "a" written to its devices.deny, removed. 0, or -errno with why.
 */
static inline int hp_v1_devices(char *why, size_t size)
{
	char mnt[4096], dir[4200], file[4300];
	int fd, r = 0;

	if (hp_cgroup_mount("devices", mnt, sizeof(mnt)) < 0)
		return snprintf(why, size, "no cgroup-v1 devices controller mounted"), -ENOENT;
	snprintf(dir, sizeof(dir), "%s/devwl-host-probe.%d", mnt, (int)getpid());
	if (mkdir(dir, 0755) < 0)
		return r = -errno, snprintf(why, size, "mkdir %.200s: %s", dir, strerror(-r)), r;
	snprintf(file, sizeof(file), "%s/devices.deny", dir);
	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "a", 1) != 1) {
		r = -errno;
		snprintf(why, size, "writing a to %.200s: %s", file, strerror(-r));
	}
	if (fd >= 0)
		close(fd);
	rmdir(dir);
	return r;
}

/*
 * Can a cgroup-v2 device program be attached here: BPF_PROG_LOAD of the smallest
 * BPF_PROG_TYPE_CGROUP_DEVICE program (r0 = 0; exit) and BPF_PROG_ATTACH of it, with
 * BPF_F_ALLOW_MULTI as devwl attaches, to a scratch cgroup under the first cgroup2 mount.
 * 0, or -errno with why.
 */
static inline int hp_bpf_device(char *why, size_t size)
{
	struct bpf_insn prog[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	char mnt[4096], dir[4200], log[256] = "";
	union bpf_attr a;
	int pfd, cfd, r = 0;

	if (hp_cgroup_mount(NULL, mnt, sizeof(mnt)) < 0)
		return snprintf(why, size, "no cgroup2 mounted"), -ENOENT;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t) "GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	pfd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (pfd < 0)
		return r = -errno, snprintf(why, size, "BPF_PROG_LOAD: %s %s", strerror(-r), log),
		       r;
	snprintf(dir, sizeof(dir), "%s/devwl-host-probe.%d", mnt, (int)getpid());
	if (mkdir(dir, 0755) < 0) {
		r = -errno;
		snprintf(why, size, "mkdir %.200s: %s", dir, strerror(-r));
		close(pfd);
		return r;
	}
	cfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	memset(&a, 0, sizeof(a));
	a.target_fd = (uint32_t)cfd;
	a.attach_bpf_fd = (uint32_t)pfd;
	a.attach_type = BPF_CGROUP_DEVICE;
	a.attach_flags = BPF_F_ALLOW_MULTI;
	if (cfd < 0 || syscall(SYS_bpf, BPF_PROG_ATTACH, &a, sizeof(a)) < 0) {
		r = -errno;
		snprintf(why, size, "BPF_PROG_ATTACH to %.200s: %s", dir, strerror(-r));
	} else {
		syscall(SYS_bpf, BPF_PROG_DETACH, &a, sizeof(a));
	}
	if (cfd >= 0)
		close(cfd);
	close(pfd);
	rmdir(dir);
	return r;
}

/*
 * Can a cgroup-v2 device program record what it refuses: a BPF ring buffer map is made
 * and a device program that writes to it with bpf_ringbuf_output() loads, and (pid) one
 * that also calls bpf_get_current_pid_tgid(). Written here, not devwl's. 0, or -errno
 * with why.
 */
static inline int hp_bpf_ringbuf(bool pid, char *why, size_t size)
{
	struct bpf_insn prog[] = {
		{.code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_pid_tgid},
		{.code = BPF_LD | BPF_DW | BPF_IMM,
		 .dst_reg = BPF_REG_1,
		 .src_reg = BPF_PSEUDO_MAP_FD},
		{0},
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -8},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 8},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4, .imm = 0},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ringbuf_output},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	char log[512] = "";
	union bpf_attr a;
	int map, pfd, r;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_RINGBUF;
	a.max_entries = 64 * 1024;
	map = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	if (map < 0)
		return r = -errno, snprintf(why, size, "no BPF ring buffer: %s", strerror(-r)), r;
	prog[2].imm = map;
	if (!pid) /* the helper's call made a no-op jump */
		prog[1] = (struct bpf_insn){.code = BPF_JMP | BPF_JA};
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	a.license = (uint64_t)(uintptr_t) "GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	pfd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	r = pfd < 0 ? -errno : 0;
	if (r < 0)
		snprintf(why, size, "a device program calling %s: %s %s",
			 pid ? "bpf_get_current_pid_tgid" : "bpf_ringbuf_output", strerror(-r),
			 log);
	else
		close(pfd);
	close(map);
	return r;
}

/* Does the kernel have the seccomp user-notification action. */
static inline bool hp_user_notif(void)
{
	uint32_t action = SECCOMP_RET_USER_NOTIF;

	return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/*
 * Is int $0x80 a system call here (the i386 entry, ia32 emulation): a child makes getpid
 * through it; without the entry the kernel kills it with SIGSEGV.
 */
static inline bool hp_ia32(void)
{
#if defined(__x86_64__)
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		long ret;
		/* 20 is getpid in the i386 table */
		__asm__ volatile("int $0x80"
				 : "=a"(ret)
				 : "a"(20L)
				 : "memory", "r8", "r9", "r10", "r11");
		_exit(ret == (long)getpid() ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
#else
	return false;
#endif
}

#endif
