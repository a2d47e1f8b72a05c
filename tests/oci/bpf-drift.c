/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bpf-drift: another agent's hand on a cgroup's device programs, for tests/oci/200 (no
 * bpftool needed). Every program it loads is "r0 = K; exit", named drift_allow or
 * drift_deny, and it detaches only what it is told to.
 *   bpf-drift query CGDIR                 the ids attached to CGDIR itself, one a line
 *   bpf-drift attach CGDIR allow|deny     attach one beside the others (ALLOW_MULTI),
 *                                         print its id
 *   bpf-drift replace CGDIR ID allow|deny put one in place of program ID (BPF_F_REPLACE),
 *                                         print its id
 *   bpf-drift detach CGDIR ID             detach program ID
 *   bpf-drift detach-all CGDIR            detach every program attached to CGDIR itself
 * Exit 0, or 1 with the failing call on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int load(const char *verdict)
{
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K,
		 .dst_reg = BPF_REG_0,
		 .imm = !strcmp(verdict, "allow")},
		{.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t) "GPL";
	snprintf(a.prog_name, sizeof(a.prog_name), "drift_%s", verdict);
	return sys_bpf(BPF_PROG_LOAD, &a);
}

static int by_id(const char *id)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_id = (uint32_t)strtoul(id, NULL, 10);
	return sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
}

static int detach(int cg, int prog)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.target_fd = (uint32_t)cg;
	a.attach_bpf_fd = (uint32_t)prog;
	a.attach_type = BPF_CGROUP_DEVICE;
	return sys_bpf(BPF_PROG_DETACH, &a);
}

static int query(int cg, uint32_t *ids, uint32_t max)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.query.target_fd = (uint32_t)cg;
	a.query.attach_type = BPF_CGROUP_DEVICE;
	a.query.prog_ids = (uint64_t)(uintptr_t)ids;
	a.query.prog_cnt = max;
	if (sys_bpf(BPF_PROG_QUERY, &a) < 0)
		return -1;
	return (int)(a.query.prog_cnt < max ? a.query.prog_cnt : max);
}

static int die(const char *what)
{
	fprintf(stderr, "bpf-drift: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	uint32_t ids[64];
	union bpf_attr a;
	int cg, prog, old, n;

	if (argc < 3)
		return fprintf(stderr, "usage: see tests/oci/bpf-drift.c\n"), 2;
	cg = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0)
		return die(argv[2]);
	if (!strcmp(argv[1], "query") || !strcmp(argv[1], "detach-all")) {
		n = query(cg, ids, 64);
		if (n < 0)
			return die("BPF_PROG_QUERY");
		for (int i = 0; i < n; i++) {
			if (argv[1][0] == 'q') {
				printf("%u\n", ids[i]);
				continue;
			}
			memset(&a, 0, sizeof(a));
			a.prog_id = ids[i];
			prog = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
			if (prog >= 0 && detach(cg, prog) < 0 && errno != ENOENT)
				return die("BPF_PROG_DETACH");
			if (prog >= 0)
				close(prog);
		}
		return 0;
	}
	if (!strcmp(argv[1], "detach") && argc == 4) {
		prog = by_id(argv[3]);
		if (prog < 0 || detach(cg, prog) < 0)
			return die("detach");
		return 0;
	}
	memset(&a, 0, sizeof(a));
	if (!strcmp(argv[1], "attach") && argc == 4) {
		prog = load(argv[3]);
		old = -1;
	} else if (!strcmp(argv[1], "replace") && argc == 5) {
		prog = load(argv[4]);
		old = by_id(argv[3]);
		if (old < 0)
			return die("the program to replace");
	} else {
		return fprintf(stderr, "usage: see tests/oci/bpf-drift.c\n"), 2;
	}
	if (prog < 0)
		return die("BPF_PROG_LOAD");
	a.target_fd = (uint32_t)cg;
	a.attach_bpf_fd = (uint32_t)prog;
	a.attach_type = BPF_CGROUP_DEVICE;
	a.attach_flags = BPF_F_ALLOW_MULTI | (old >= 0 ? BPF_F_REPLACE : 0);
	a.replace_bpf_fd = old >= 0 ? (uint32_t)old : 0;
	if (sys_bpf(BPF_PROG_ATTACH, &a) < 0)
		return die("BPF_PROG_ATTACH");
	/* The new program's id, for the test to tell it from devwld's. */
	{
		struct bpf_prog_info info;

		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (uint32_t)prog;
		a.info.info_len = sizeof(info);
		a.info.info = (uint64_t)(uintptr_t)&info;
		if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0)
			return die("BPF_OBJ_GET_INFO_BY_FD");
		printf("%u\n", info.id);
	}
	return 0;
}
