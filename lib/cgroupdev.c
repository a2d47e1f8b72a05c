/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Program a device cgroup with a node's allow list, so that the kernel enforces it at
 * native speed (see libdevwl(3), "KERNEL ENFORCEMENT").
 *
 * cgroup v2: the node compiled by lib/bpfdev.c, loaded and attached with ALLOW_MULTI;
 * every change replaces it in one BPF_PROG_ATTACH with BPF_F_REPLACE, so a task sees the
 * old program or the new one, never none. A program that cannot be built or loaded is
 * replaced by a deny-all one loaded at open: failure never leaves the old grants.
 *
 * cgroup v1: the model is the v1 controller, so the node is replayed as writes. The
 * kernel's state is mirrored in a devwl policy ("/p/w"), each write applied to it after
 * the kernel took it, so every diff starts from what the kernel really holds. The order
 * of writes keeps a running task at every moment within the old policy or within the new
 * one, never beyond both:
 *  - within one behaviour, narrowing writes first (removing grants of a DENY cgroup,
 *    adding denials to an ALLOW one), then the widening ones;
 *  - a behaviour change ("a" to devices.allow or devices.deny) is one write but not one
 *    step: the kernel empties the exception list under the old behaviour, then switches
 *    (an ALLOW cgroup is allow-all for that moment) and, for "a" allow, copies the
 *    parent's list in under DENY, where its denials grant. Measured by
 *    tests/live/65-cgroup-v1-order.c. So with a parent of devwl's own, the tasks first
 *    move into a sibling that grants only what both policies grant, the emptied cgroup
 *    changes (after an RCU grace period, see rcu_wait()), and they move back: each task is at every
 * moment in the old, the holding or the new state. Without one, DENY -> ALLOW is made only while
 * the cgroup has no tasks (refused otherwise); ALLOW -> DENY denies every block and char device
 * first, which leaves only the instant between the kernel's last removal and its switch. A write
 * the kernel refuses (a cgroup the workload gave children, which forbids "a" writes; a parent that
 * denies) leaves the cgroup denying every device.
 */
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <linux/membarrier.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>

#include "access.h"
#include "bpfdev.h"
#include "fileio.h"
#include "rules.h"
#include "util.h"

struct devwl_cgroup {
	int version; /* 1 or 2 */
	unsigned int flags;
	int dirfd;
	/* v2 */
	int deny_fd; /* {r0 = 0; exit}, loaded at open */
	int cur_fd;  /* the program attached now (may be deny_fd) */
	/* v2, DEVWL_CGROUP_RECORD_DENIALS: the ring the program writes its denials to (one
	 * per cgroup: a container that is refused without end fills its own ring, never
	 * another's; and it outlives every program swapped in), mapped as the kernel lays it
	 * out: the consumer's page (ours to write), then the producer's and the data twice
	 * over, so a record that wraps reads as one. */
	int ring_fd;
	int seen_fd; /* DEVWL_CGROUP_RECORD_ACCESSES: what was reported when (bpfdev.c) */
	uint64_t *cons_pos;
	void *prod_map; /* producer page, then the data */
	size_t prod_len, ring_size;
	unsigned int rec_level; /* index into rec_levels: the first one to try */
	bool recording;		/* the program attached now writes to the ring */
	uint32_t cur_id;	/* cur_fd's program id, 0 while cur_fd < 0 */
	bool taken;		/* TAKE_OVER: the runtime's programs are detached */
	bool taken_before;	/* TAKE_OVER: by a predecessor, whose programs are there */
	bool reporting;		/* ... its allowed accesses too */
	/* v1 with a reporter (devwl_cgroup_set_reporter()): the same workload's cgroup2
	 * directory, and the program attached there now (-1: none), which records into
	 * ring_fd what the v1 rules decide and allows everything. */
	int rep_dirfd;
	int rep_fd;
	uint32_t rep_id;
	/* v1 */
	int allow_fd, deny_fdw; /* devices.allow/deny */
	int pdirfd;		/* the parent, with DEVWL_CGROUP_OWN_PARENT */
	char *hold_name;	/* the sibling that holds the tasks through a behaviour change */
	struct devwl_policy *shadow;
	struct devwl_node *sw; /* the mirror, "/p/w" below an ALLOW "/p" */
};

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	long r = syscall(SYS_bpf, cmd, attr, sizeof(*attr));

	return r < 0 ? negerrno() : (int)r;
}

/* The name of every program libdevwl loads to enforce: how a supervisor that takes over a
 * cgroup its predecessor took (a restart) tells that one's programs from everyone else's. */
#define DEVWL_PROG_NAME "devwl_node"
/* The name of a v1 handle's reporter, which never refuses: never taken for an enforcer. */
#define DEVWL_REPORTER_NAME "devwl_report"

static int prog_load_named(const char *name, const struct bpf_insn *insns, size_t n)
{
	static const char license[] = "GPL";
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	strncpy(attr.prog_name, name, sizeof(attr.prog_name) - 1);
	attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uint64_t)(uintptr_t)license;
	return sys_bpf(BPF_PROG_LOAD, &attr); /* O_CLOEXEC by the kernel */
}

static int prog_load(const struct bpf_insn *insns, size_t n)
{
	return prog_load_named(DEVWL_PROG_NAME, insns, n);
}

/* Attach prog; with old >= 0 replace that one in the same step. */
static int prog_attach(int dirfd, int prog, int old)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)dirfd;
	attr.attach_bpf_fd = (uint32_t)prog;
	attr.attach_type = BPF_CGROUP_DEVICE;
	attr.attach_flags = BPF_F_ALLOW_MULTI | (old >= 0 ? BPF_F_REPLACE : 0);
	attr.replace_bpf_fd = old >= 0 ? (uint32_t)old : 0;
	return sys_bpf(BPF_PROG_ATTACH, &attr) < 0 ? negerrno() : 0;
}

/* Detach prog from the cgroup dirfd: 0 or -errno (-ENOENT: not attached there). */
static int prog_detach(int dirfd, int prog)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)dirfd;
	attr.attach_bpf_fd = (uint32_t)prog;
	attr.attach_type = BPF_CGROUP_DEVICE;
	return sys_bpf(BPF_PROG_DETACH, &attr);
}

static int prog_info(int fd, struct bpf_prog_info *info)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)fd;
	attr.info.info_len = sizeof(*info);
	attr.info.info = (uint64_t)(uintptr_t)info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr);
}

static int prog_id(int fd, uint32_t *ret_id)
{
	struct bpf_prog_info info;
	int r;

	memset(&info, 0, sizeof(info));
	r = prog_info(fd, &info);
	if (r < 0)
		return r;
	*ret_id = info.id;
	return 0;
}

/* fd is attached now in place of cur_fd (closed unless it is the deny-all one); -1: none
 * is. cur_id follows it, so a check needs no call to learn which program is ours. */
static void set_current(struct devwl_cgroup *cg, int fd)
{
	if (cg->cur_fd >= 0 && cg->cur_fd != cg->deny_fd && cg->cur_fd != fd)
		close(cg->cur_fd);
	cg->cur_fd = fd;
	cg->cur_id = 0;
	if (fd >= 0 && prog_id(fd, &cg->cur_id) < 0)
		cg->cur_id = 0; /* unknown: a check reports nothing rather than a false drift */
}

/* Put the deny-all program in place of whatever is attached. */
static int v2_deny_all(struct devwl_cgroup *cg)
{
	int r;

	if (cg->cur_fd == cg->deny_fd)
		return 0;
	r = prog_attach(cg->dirfd, cg->deny_fd, cg->cur_fd);
	if (r < 0)
		return r;
	set_current(cg, cg->deny_fd);
	return 0;
}

/* The ids of the device programs attached to the cgroup itself (not its ancestors'), at
 * most max (the first max where more are). Returns how many, or <0. */
static int v2_query(int dirfd, uint32_t *ids, uint32_t max)
{
	union bpf_attr attr;
	int r;

	memset(&attr, 0, sizeof(attr));
	attr.query.target_fd = (uint32_t)dirfd;
	attr.query.attach_type = BPF_CGROUP_DEVICE;
	attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
	attr.query.prog_cnt = max;
	r = sys_bpf(BPF_PROG_QUERY, &attr);
	if (r < 0 && r != -ENOSPC)
		return r;
	return (int)(attr.query.prog_cnt < max ? attr.query.prog_cnt : max);
}

/*
 * The name systemd gives the device program it attaches for a unit's DeviceAllow= and
 * DevicePolicy= (seen with BPF_OBJ_GET_INFO_BY_FD on systemd 252's). A runtime with
 * systemd's cgroup driver (runc --systemd-cgroup) hands its device rules to the
 * container's scope that way, and systemd attaches them again whenever it re-applies the
 * unit's settings (systemctl daemon-reload).
 */
#define SYSTEMD_DEVICES_PROG "sd_devices"

/*
 * TAKE_OVER's one rule of whose a program attached to the cgroup itself is: is it the
 * runtime's device rules, which the take-over detaches? Until the first apply has
 * detached them, every program but ours is (the runtime attached them as the container
 * started). After that, only the runtime's rules re-applied by its cgroup manager:
 * systemd's device program, known by its name, a plain device program (systemd's uses no
 * map). The query says the attach type (BPF_CGROUP_DEVICE), and the flags tell nothing
 * (every program beside ours is ALLOW_MULTI: the kernel lets no other mode join), so the
 * name is the fact that tells. It is a label anyone who may attach a program could give
 * (root alone may); detaching such a one leaves the node's program, the rules devwl
 * enforces anyway, never more. Any other program is another agent's, never detached.
 * Where a program of libdevwl's own name is there at the first apply, the cgroup was
 * taken over before, by a supervisor this one follows (devwld restarted): the runtime's
 * programs went then, and only that one's (and the cgroup manager's) are detached now.
 */
static bool devwl_program(const struct bpf_prog_info *info)
{
	return info->type == BPF_PROG_TYPE_CGROUP_DEVICE &&
	       !strncmp(info->name, DEVWL_PROG_NAME, sizeof(info->name));
}

static bool runtime_program(const struct devwl_cgroup *cg, const struct bpf_prog_info *info)
{
	if (!(cg->flags & DEVWL_CGROUP_TAKE_OVER))
		return false;
	if (!cg->taken && !cg->taken_before)
		return true;
	if (!cg->taken && devwl_program(info))
		return true;
	return info->type == BPF_PROG_TYPE_CGROUP_DEVICE && info->nr_map_ids == 0 &&
	       !strncmp(info->name, SYSTEMD_DEVICES_PROG, sizeof(info->name));
}

/* An fd of program id, and its info; NULL insns: none asked for. -ENOENT: gone. */
static int prog_by_id(uint32_t id, struct bpf_prog_info *info, struct bpf_insn *insns,
		      size_t n_insns)
{
	union bpf_attr a;
	int fd, r;

	memset(&a, 0, sizeof(a));
	a.prog_id = id;
	fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
	if (fd < 0)
		return fd;
	memset(info, 0, sizeof(*info));
	if (insns) {
		info->xlated_prog_len = (uint32_t)(n_insns * sizeof(*insns));
		info->xlated_prog_insns = (uint64_t)(uintptr_t)insns;
	}
	r = prog_info(fd, info);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/*
 * TAKE_OVER: detach every program attached to the cgroup itself (not its ancestors') that
 * runtime_program() says is the runtime's, after ours is in place: all of them must
 * allow, so until now the cgroup held the intersection, never more than either. Returns
 * how many were detached, or <0.
 */
static int v2_detach_runtime(struct devwl_cgroup *cg)
{
	uint32_t ids[64], own = cg->cur_id;
	int r, n, detached = 0;

	if (!own)
		return -EIO; /* cannot tell ours from theirs: detach nothing */
	n = v2_query(cg->dirfd, ids, ARRAY_SIZE(ids));
	if (n < 0)
		return n;
	for (int i = 0; !cg->taken && !cg->taken_before && i < n; i++) {
		struct bpf_prog_info info;
		int fd = ids[i] == own ? -ENOENT : prog_by_id(ids[i], &info, NULL, 0);

		if (fd >= 0) {
			cg->taken_before = devwl_program(&info);
			close(fd);
		}
	}
	for (int i = 0; i < n; i++) {
		struct bpf_prog_info info;
		int fd;

		if (ids[i] == own)
			continue;
		fd = prog_by_id(ids[i], &info, NULL, 0);
		if (fd == -ENOENT)
			continue; /* detached meanwhile */
		if (fd < 0)
			return fd;
		if (!runtime_program(cg, &info)) {
			close(fd);
			continue;
		}
		r = prog_detach(cg->dirfd, fd);
		close(fd);
		if (r < 0 && r != -ENOENT)
			return r;
		detached += r >= 0;
	}
	cg->taken = true;
	return detached;
}

/*
 * The helpers a recording program asks for, best first. cgroup device programs may call
 * bpf_ringbuf_output() (bpf_base_func_proto) wherever the ring exists (5.8); the
 * current task's pid and cgroup only where the kernel gives device programs
 * cgroup_current_func_proto (6.x): an older verifier refuses the program with them, and
 * the next level leaves the fields 0.
 */
static const unsigned int rec_levels[] = {
	BPFDEV_RECORD_ACCESSES | BPFDEV_RECORD_PID | BPFDEV_RECORD_CGROUP,
	BPFDEV_RECORD_ACCESSES | BPFDEV_RECORD_PID,
	BPFDEV_RECORD_ACCESSES,
	BPFDEV_RECORD_PID | BPFDEV_RECORD_CGROUP,
	BPFDEV_RECORD_PID,
	0,
};

/* The node's program, recording where the cgroup has a ring and the kernel takes it;
 * else the plain one: recording never costs enforcement. A reporter (report_only) has no
 * plain one: -EOPNOTSUPP where none records. Returns the fd, or <0. */
static int v2_load(struct devwl_cgroup *cg, const struct devwl_node *node, bool report_only,
		   size_t *ret_n, bool *ret_records)
{
	_cleanup_free_ struct bpf_insn *insns = NULL;
	size_t n = 0;
	int r;

	for (unsigned int i = cg->rec_level; cg->ring_fd >= 0 && i < ARRAY_SIZE(rec_levels); i++) {
		bool accesses = rec_levels[i] & BPFDEV_RECORD_ACCESSES;

		if (accesses && cg->seen_fd < 0)
			continue; /* not asked for, or no map */
		free(insns);
		insns = NULL;
		r = bpfdev_compile_record(node, cg->ring_fd, accesses ? cg->seen_fd : -1,
					  rec_levels[i] | (report_only ? BPFDEV_REPORT_ONLY : 0),
					  &insns, &n);
		if (r < 0)
			break; /* too big with the tail, or no memory: the plain one may do */
		r = prog_load_named(report_only ? DEVWL_REPORTER_NAME : DEVWL_PROG_NAME, insns, n);
		if (r >= 0) {
			cg->rec_level = i; /* a level refused once is not tried again */
			cg->reporting = accesses;
			*ret_records = true;
			*ret_n = n;
			return r;
		}
		if (r != -EINVAL)
			break; /* not the verifier refusing a helper: no reason to give one up */
	}
	free(insns);
	insns = NULL;
	*ret_records = false;
	if (report_only)
		return -EOPNOTSUPP;
	r = bpfdev_compile(node, &insns, &n);
	if (r < 0)
		return r;
	*ret_n = n;
	return prog_load(insns, n);
}

static int v2_apply(struct devwl_cgroup *cg, const struct devwl_node *node)
{
	bool records = false;
	size_t n = 0;
	int r, fd;

	fd = v2_load(cg, node, false, &n, &records);
	r = fd;
	if (r >= 0) {
		r = prog_attach(cg->dirfd, fd, cg->cur_fd);
		if (r < 0) {
			close(fd);
		} else {
			set_current(cg, fd);
			cg->recording = records;
			/* The runtime's programs, at every apply: all of them at the first,
			 * then what its cgroup manager attaches again (runtime_program()). */
			if (cg->flags & DEVWL_CGROUP_TAKE_OVER)
				r = v2_detach_runtime(cg);
			if (r >= 0)
				return n > INT32_MAX ? INT32_MAX : (int)n;
		}
	}
	/* Fail closed: never leave the old program's grants in force. */
	if (v2_deny_all(cg) >= 0)
		cg->recording = cg->reporting = false;
	return r;
}

/* ---- v2: the ring of denials ----------------------------------------------------------- */

/* 48-byte records with their 8-byte headers: about 290 wait before one is dropped. */
#define RING_SIZE (16 * 1024)
/* Keys of the seen map: more distinct (type, major, minor, access) than a container
 * touches, so that the LRU forgets none it still counts. 32 bytes each, and the map's own. */
#define SEEN_MAX 4096

static void ring_unmap(struct devwl_cgroup *cg)
{
	long page = sysconf(_SC_PAGESIZE);

	if (cg->cons_pos)
		munmap(cg->cons_pos, (size_t)page);
	if (cg->prod_map)
		munmap(cg->prod_map, cg->prod_len);
	cg->cons_pos = NULL;
	cg->prod_map = NULL;
}

/* Make the ring and map it; on any failure the cgroup just does not record (0). */
static void ring_open(struct devwl_cgroup *cg)
{
	static const char name[] = "devwl_denials";
	long page = sysconf(_SC_PAGESIZE);
	union bpf_attr attr;
	void *cons, *prod;
	int fd;

	if (page <= 0)
		return;
	cg->ring_size = RING_SIZE > (size_t)page ? RING_SIZE : (size_t)page;
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_RINGBUF;
	attr.max_entries = (uint32_t)cg->ring_size;
	memcpy(attr.map_name, name, sizeof(name));
	fd = sys_bpf(BPF_MAP_CREATE, &attr); /* O_CLOEXEC by the kernel */
	if (fd < 0)
		return; /* before 5.8: no ring buffers */
	cons = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cg->prod_len = (size_t)page + 2 * cg->ring_size;
	prod = mmap(NULL, cg->prod_len, PROT_READ, MAP_SHARED, fd, page);
	if (cons == MAP_FAILED || prod == MAP_FAILED) {
		if (cons != MAP_FAILED)
			munmap(cons, (size_t)page);
		if (prod != MAP_FAILED)
			munmap(prod, cg->prod_len);
		close(fd);
		return;
	}
	cg->cons_pos = cons;
	cg->prod_map = prod;
	cg->ring_fd = fd;
}

/* DEVWL_CGROUP_RECORD_ACCESSES: the map the program keeps its reports in; on failure
 * (no LRU maps, no memory) it reports denials only. */
static void seen_open(struct devwl_cgroup *cg)
{
	static const char name[] = "devwl_seen";
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_LRU_HASH;
	attr.key_size = sizeof(struct bpfdev_seen_key);
	attr.value_size = sizeof(struct bpfdev_seen);
	attr.max_entries = SEEN_MAX;
	memcpy(attr.map_name, name, sizeof(name));
	fd = sys_bpf(BPF_MAP_CREATE, &attr); /* O_CLOEXEC by the kernel */
	if (fd >= 0)
		cg->seen_fd = fd;
}

/* ---- v1: the reporter on the cgroup2 hierarchy ------------------------------------------ */

/*
 * On a hybrid host the kernel asks a cgroup's v2 device programs first and the v1
 * controller only where they allow (security/device_cgroup.c,
 * devcgroup_check_permission(); doc/KERNEL-NOTES.md). So a program on the workload's
 * cgroup2 directory sees every access the v1 rules judge: compiled from the same node it
 * records what they decide, and it allows always, so that the v1 rules alone decide (it
 * cannot grant either: under ALLOW_MULTI every program must allow). It is replaced at
 * each apply after the v1 writes, in one step as a v2 program is; where it cannot be
 * built or loaded it is detached rather than left to report an old node.
 */
static void rep_detach(struct devwl_cgroup *cg)
{
	if (cg->rep_fd >= 0) {
		(void)prog_detach(cg->rep_dirfd, cg->rep_fd);
		close(cg->rep_fd);
	}
	cg->rep_fd = -1;
	cg->rep_id = 0;
	cg->recording = cg->reporting = false;
}

/* Reporters on the directory that are not ours: a predecessor's (a supervisor restarted
 * without closing its handle), whose ring nobody reads. Each only allows, so detaching it
 * changes no decision. */
static void rep_detach_others(struct devwl_cgroup *cg)
{
	uint32_t ids[64];
	int n = v2_query(cg->rep_dirfd, ids, ARRAY_SIZE(ids));

	for (int i = 0; i < n; i++) {
		struct bpf_prog_info info;
		int fd;

		if (ids[i] == cg->rep_id)
			continue;
		fd = prog_by_id(ids[i], &info, NULL, 0);
		if (fd < 0)
			continue;
		if (info.type == BPF_PROG_TYPE_CGROUP_DEVICE &&
		    !strncmp(info.name, DEVWL_REPORTER_NAME, sizeof(info.name)))
			(void)prog_detach(cg->rep_dirfd, fd);
		close(fd);
	}
}

/* After the v1 rules took the node: the reporter of the same node. Never fails the apply:
 * the v1 rules enforce whether or not anything reports them. */
static void rep_apply(struct devwl_cgroup *cg, const struct devwl_node *node)
{
	bool records = false;
	size_t n = 0;
	int fd;

	fd = v2_load(cg, node, true, &n, &records);
	if (fd >= 0 && prog_attach(cg->rep_dirfd, fd, cg->rep_fd) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		rep_detach(cg);
		return;
	}
	if (cg->rep_fd >= 0)
		close(cg->rep_fd);
	cg->rep_fd = fd;
	if (prog_id(fd, &cg->rep_id) < 0)
		cg->rep_id = 0;
	cg->recording = true;
	if (cg->rep_id)
		rep_detach_others(cg);
}

DEVWL_EXPORT int devwl_cgroup_set_reporter(struct devwl_cgroup *cg, const char *dir)
{
	_cleanup_close_ int fd = -1;
	struct statfs sfs;

	if (!cg || !dir || cg->version != 1)
		return -EINVAL;
	if (cg->rep_dirfd >= 0)
		return -EBUSY;
	if (!(cg->flags & DEVWL_CGROUP_RECORD_DENIALS))
		return -EOPNOTSUPP;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	if (fstatfs(fd, &sfs) < 0)
		return negerrno();
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -ENOTDIR;
	if (cg->ring_fd < 0)
		ring_open(cg);
	if (cg->ring_fd < 0)
		return -EOPNOTSUPP; /* before 5.8: no ring buffers */
	if (cg->seen_fd < 0 && (cg->flags & DEVWL_CGROUP_RECORD_ACCESSES))
		seen_open(cg);
	cg->rep_dirfd = TAKE_FD(fd);
	return 0;
}

DEVWL_EXPORT int devwl_cgroup_denials_fd(const struct devwl_cgroup *cg)
{
	if (!cg)
		return -EINVAL;
	return cg->ring_fd >= 0 && cg->recording ? cg->ring_fd : -EOPNOTSUPP;
}

DEVWL_EXPORT int devwl_cgroup_recording(const struct devwl_cgroup *cg)
{
	if (!cg)
		return -EINVAL;
	if (cg->ring_fd < 0 || !cg->recording)
		return 0;
	return (int)(DEVWL_CGROUP_RECORD_DENIALS |
		     (cg->reporting ? DEVWL_CGROUP_RECORD_ACCESSES : 0));
}

DEVWL_EXPORT int devwl_cgroup_read_denials(struct devwl_cgroup *cg, struct devwl_denial *ret,
					   size_t max)
{
	const uint8_t *data;
	uint64_t cons, prod;
	size_t got = 0;

	if (!cg || (!ret && max))
		return -EINVAL;
	if (cg->ring_fd < 0)
		return -EOPNOTSUPP;
	if (max > INT32_MAX)
		max = INT32_MAX;
	data = (const uint8_t *)cg->prod_map + (cg->prod_len - 2 * cg->ring_size);
	cons = __atomic_load_n(cg->cons_pos, __ATOMIC_ACQUIRE);
	prod = __atomic_load_n((const uint64_t *)cg->prod_map, __ATOMIC_ACQUIRE);
	while (got < max && cons < prod) {
		const uint32_t *hdr = (const uint32_t *)(data + (cons & (cg->ring_size - 1)));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		uint64_t size = len & ~(uint32_t)(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		uint64_t total = (size + BPF_RINGBUF_HDR_SZ + 7) & ~(uint64_t)7;
		struct bpfdev_record rec;

		if (len & BPF_RINGBUF_BUSY_BIT)
			break; /* reserved, not yet committed: the next read takes it */
		if (total > cg->ring_size || total > prod - cons)
			return -EIO; /* not a ring our program wrote */
		if (!(len & BPF_RINGBUF_DISCARD_BIT) && size == sizeof(rec)) {
			memcpy(&rec, hdr + 2, sizeof(rec));
			ret[got++] = (struct devwl_denial){
				.type = (int)(rec.access_type & 0xffff),
				.access = (int)(rec.access_type >> 16),
				.major = rec.major,
				.minor = rec.minor,
				.pid = (pid_t)(rec.pid_tgid >> 32),
				.tid = (pid_t)(rec.pid_tgid & 0xffffffffu),
				.cgroup_id = rec.cgroup_id,
				.count = rec.count,
				.allowed = rec.allowed ? 1 : 0,
			};
		}
		cons += total;
		__atomic_store_n(cg->cons_pos, cons, __ATOMIC_RELEASE);
	}
	return (int)got;
}

/* ---- v1 -------------------------------------------------------------------------------- */

struct exlist {
	struct devwl_rule *v;
	size_t n;
};

/* The node's exceptions sorted by key (those with access, the others decide nothing). */
static int exlist_take(const struct devwl_node *node, struct exlist *l)
{
	size_t n = devwl_node_exception_count(node);

	l->n = 0;
	l->v = malloc((n ? n : 1) * sizeof(*l->v));
	if (!l->v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (devwl_node_exception(node, i, &l->v[l->n]) == 0 && l->v[l->n].access)
			l->n++;
	qsort(l->v, l->n, sizeof(*l->v), devwl_rule_key_cmp);
	return 0;
}

static unsigned exlist_access(const struct exlist *l, const struct devwl_rule *key)
{
	const struct devwl_rule *e = bsearch(key, l->v, l->n, sizeof(*l->v), devwl_rule_key_cmp);

	return e ? e->access : 0;
}

/* One write to the kernel, then the same to the mirror. */
static int v1_write(struct devwl_cgroup *cg, enum devwl_file file, const struct devwl_rule *rule)
{
	char text[DEVWL_RULE_STR_MAX];
	int fd = file == DEVWL_FILE_ALLOW ? cg->allow_fd : cg->deny_fdw;
	int len = devwl_rule_format(rule, text, sizeof(text));
	ssize_t n;

	if (len < 0)
		return len;
	n = write(fd, text, (size_t)len);
	if (n < 0)
		return negerrno();
	if (n != len)
		return -EIO;
	return devwl_node_update(cg->sw, file, rule);
}

static const struct devwl_rule rule_all = {
	.type = DEVWL_DEV_ALL, .access = DEVWL_ACC_MASK, .major = DEVWL_ANY, .minor = DEVWL_ANY};

/* On an ALLOW cgroup: deny every block and char device with two exceptions (each write
 * only narrows). Returns writes made, or <0. */
static int v1_deny_types(struct devwl_cgroup *cg)
{
	int n = 0;

	for (uint8_t t = DEVWL_DEV_BLOCK; t <= DEVWL_DEV_CHAR; t++) {
		struct devwl_rule r = rule_all;
		int ret;

		r.type = t;
		ret = v1_write(cg, DEVWL_FILE_DENY, &r);
		if (ret < 0)
			return ret;
		n++;
	}
	return n;
}

/* Deny every device with writes that are never refused: denials on an ALLOW cgroup, the
 * removal of every grant on a DENY one. */
static void v1_deny_all(struct devwl_cgroup *cg)
{
	struct exlist have = {0};

	if (devwl_node_behavior(cg->sw) == DEVWL_BEHAVIOR_ALLOW) {
		(void)v1_deny_types(cg);
		return;
	}
	if (exlist_take(cg->sw, &have) < 0) {
		(void)v1_write(cg, DEVWL_FILE_DENY, &rule_all); /* last resort */
		return;
	}
	for (size_t i = 0; i < have.n; i++) {
		struct devwl_rule r = have.v[i];
		r.access = DEVWL_ACC_MASK;
		(void)v1_write(cg, DEVWL_FILE_DENY, &r);
	}
	free(have.v);
}

/*
 * For every exception of `from` (a sorted snapshot) that has bits `against` lacks, write
 * to `file`: the whole exception (add), or only those bits (removal).
 */
static int v1_diff(struct devwl_cgroup *cg, enum devwl_file file, const struct exlist *from,
		   const struct exlist *against, bool add, int *writes)
{
	for (size_t i = 0; i < from->n; i++) {
		struct devwl_rule r = from->v[i];
		unsigned other = exlist_access(against, &r);
		int ret;

		if (!(r.access & ~other))
			continue;
		/* Adding ORs in the whole exception; removing clears just the extra bits. */
		if (!add)
			r.access = (uint8_t)(r.access & ~other);
		ret = v1_write(cg, file, &r);
		if (ret < 0)
			return ret;
		(*writes)++;
	}
	return 0;
}

/* Is the cgroup empty of tasks (cgroup.procs reads nothing)? */
static bool v1_no_tasks(int dirfd)
{
	_cleanup_close_ int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	char c;

	return fd >= 0 && read(fd, &c, 1) == 0;
}

/*
 * Make the cgroup the target in the plain order: narrowing first, then widening. Exact
 * for a change within one behaviour. A behaviour change ("a") is one write to the kernel
 * but not one step for a task running in the cgroup: it empties the exception list under
 * the old behaviour, then switches (so only a cgroup without tasks may take it).
 */
static int v1_steps(struct devwl_cgroup *cg, const struct exlist *target, bool allow, int *writes)
{
	bool deny_now = devwl_node_behavior(cg->sw) == DEVWL_BEHAVIOR_DENY;
	struct exlist have = {0};
	int r = 0;

	if (deny_now == allow) {
		r = v1_write(cg, allow ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY, &rule_all);
		if (r < 0)
			return r;
		(*writes)++;
	}
	/* DENY: drop the grants the target lacks, then add its own. ALLOW: add the
	 * target's denials, then lift those it lacks. */
	r = exlist_take(cg->sw, &have);
	if (r >= 0)
		r = allow ? v1_diff(cg, DEVWL_FILE_DENY, target, &have, true, writes)
			  : v1_diff(cg, DEVWL_FILE_DENY, &have, target, false, writes);
	free(have.v);
	have.v = NULL;
	if (r >= 0)
		r = exlist_take(cg->sw, &have);
	if (r >= 0)
		r = allow ? v1_diff(cg, DEVWL_FILE_ALLOW, &have, target, false, writes)
			  : v1_diff(cg, DEVWL_FILE_ALLOW, target, &have, true, writes);
	free(have.v);
	return r;
}

/* Could one device access be covered by both rules? */
static bool rules_overlap(const struct devwl_rule *a, const struct devwl_rule *b)
{
	return (a->type == b->type || a->type == DEVWL_DEV_ALL || b->type == DEVWL_DEV_ALL) &&
	       (a->major == b->major || a->major == DEVWL_ANY || b->major == DEVWL_ANY) &&
	       (a->minor == b->minor || a->minor == DEVWL_ANY || b->minor == DEVWL_ANY) &&
	       (a->access & b->access);
}

/* Move every task of one cgroup into another, until a round moves none (what is left is
 * exiting). A task forked meanwhile is found in the next round. */
static int move_tasks(int from_dirfd, int to_dirfd)
{
	_cleanup_close_ int procs = openat(to_dirfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);

	if (procs < 0)
		return negerrno();
	for (int round = 0; round < 10000; round++) {
		int fd = openat(from_dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC), moved = 0;
		FILE *f = fd < 0 ? NULL : fdopen(fd, "re");
		long pid;

		if (!f) {
			if (fd >= 0)
				close(fd);
			return -errno;
		}
		while (fscanf(f, "%ld", &pid) == 1) {
			char buf[24];
			int n = snprintf(buf, sizeof(buf), "%ld", pid);

			if (write(procs, buf, (size_t)n) == n)
				moved++;
			else if (errno != ESRCH) {
				fclose(f);
				return -errno;
			}
		}
		fclose(f);
		if (!moved)
			return 0;
	}
	return -EBUSY; /* forking faster than we move */
}

static int hold_write(int dirfd, const char *file, const struct devwl_rule *rule)
{
	_cleanup_close_ int fd = openat(dirfd, file, O_WRONLY | O_CLOEXEC);
	char text[DEVWL_RULE_STR_MAX];
	int len = devwl_rule_format(rule, text, sizeof(text));

	if (len < 0)
		return len;
	if (fd < 0)
		return negerrno();
	return write(fd, text, (size_t)len) == len ? 0 : errno ? negerrno() : -EIO;
}

/*
 * The holding cgroup, a sibling: DENY, granting what both the DENY side and the ALLOW
 * side grant (each grant of the DENY side that no denial of the ALLOW side overlaps).
 */
static int hold_make(struct devwl_cgroup *cg, const struct exlist *grants,
		     const struct exlist *denials, int *ret_dirfd)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (mkdirat(cg->pdirfd, cg->hold_name, 0755) < 0 && errno != EEXIST)
		return negerrno();
	fd = openat(cg->pdirfd, cg->hold_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	r = hold_write(fd, "devices.deny", &rule_all);
	for (size_t i = 0; r >= 0 && i < grants->n; i++) {
		bool denied = false;

		for (size_t j = 0; j < denials->n && !denied; j++)
			denied = rules_overlap(&grants->v[i], &denials->v[j]);
		if (!denied)
			r = hold_write(fd, "devices.allow", &grants->v[i]);
	}
	if (r < 0)
		return r;
	*ret_dirfd = TAKE_FD(fd);
	return 0;
}

static void hold_remove(struct devwl_cgroup *cg)
{
	/* A task that just left can hold the cgroup for a moment. */
	for (int i = 0; i < 200; i++) {
		if (unlinkat(cg->pdirfd, cg->hold_name, AT_REMOVEDIR) == 0 || errno != EBUSY)
			return;
		nanosleep(&(struct timespec){.tv_nsec = 5 * 1000 * 1000}, NULL);
	}
}

/*
 * The kernel's device check reads the task's cgroup and then that cgroup's rules in one
 * RCU read-side section: a check that began before its task was moved out would still
 * judge by the rules we are about to rewrite. Wait until every such check is over
 * (MEMBARRIER_CMD_GLOBAL is synchronize_rcu()); where the kernel refuses it (nohz_full),
 * a pause far longer than any such check.
 */
static void rcu_wait(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0)
		nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
}

/*
 * A behaviour change while tasks run: move them to a sibling that holds no more than both
 * policies, change the now empty cgroup, move them back. Every task is at every moment in
 * the old state, the holding one or the new one.
 */
static int v1_via_hold(struct devwl_cgroup *cg, const struct exlist *target, bool allow,
		       int *writes)
{
	struct exlist have = {0};
	_cleanup_close_ int hold = -1;
	int r, back;

	r = exlist_take(cg->sw, &have);
	if (r >= 0)
		r = allow ? hold_make(cg, &have, target, &hold)
			  : hold_make(cg, target, &have, &hold);
	free(have.v);
	if (r < 0) {
		hold_remove(cg);
		return r;
	}
	r = move_tasks(cg->dirfd, hold);
	if (r >= 0)
		r = v1_no_tasks(cg->dirfd) ? 0 : -EBUSY;
	if (r >= 0) {
		rcu_wait();
		r = v1_steps(cg, target, allow, writes);
	}
	if (r < 0)
		v1_deny_all(cg); /* before the tasks come back */
	back = move_tasks(hold, cg->dirfd);
	hold_remove(cg);
	return r < 0 ? r : back;
}

static int v1_apply(struct devwl_cgroup *cg, const struct devwl_node *node)
{
	bool allow = devwl_node_behavior(node) == DEVWL_BEHAVIOR_ALLOW;
	bool change = allow != (devwl_node_behavior(cg->sw) == DEVWL_BEHAVIOR_ALLOW);
	struct exlist target = {0};
	int r, writes = 0;

	r = exlist_take(node, &target);
	if (r >= 0 && change && !v1_no_tasks(cg->dirfd)) {
		if (cg->pdirfd >= 0) {
			r = v1_via_hold(cg, &target, allow, &writes);
			goto out;
		}
		/* No sibling of ours to hold the tasks. ALLOW -> DENY: narrow to nothing
		 * first, so the "a" write empties a list of denials that ends in two
		 * covering all, leaving the kernel's own non-atomic step as the only gap.
		 * DENY -> ALLOW would pass through allow-all: refused. */
		r = allow ? -EOPNOTSUPP : v1_deny_types(cg);
		if (r >= 0)
			writes += r;
	}
	if (r >= 0)
		r = v1_steps(cg, &target, allow, &writes);
out:
	free(target.v);
	if (r < 0) {
		v1_deny_all(cg);
		return r;
	}
	return writes;
}

/* ---- the handle ------------------------------------------------------------------------- */

static int open_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);

	return fd < 0 ? negerrno() : fd;
}

/* Does the parent allow everything, with nothing we cannot see? Only "a *:* rwm" in its
 * list says ALLOW; its hidden denials would only make us stricter, never wider. */
static bool parent_allows_all(int pdirfd)
{
	char buf[16] = {0};
	_cleanup_close_ int fd = openat(pdirfd, "devices.list", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	return n > 0 && strcmp(buf, "a *:* rwm\n") == 0;
}

/*
 * TAKE_OVER: start from what the cgroup holds (a runtime's rules, tasks running) rather
 * than from deny-all, so the first apply only narrows to and widens up to the node. Only
 * a DENY cgroup's devices.list says all it holds; an ALLOW one hides its denials, so that
 * one (1 returned) is reset to deny-all as without the flag.
 */
static int v1_adopt_list(struct devwl_cgroup *cg, char *buf)
{
	int r;

	if (strcmp(buf, "a *:* rwm\n") == 0)
		return 1;
	r = devwl_node_update(cg->sw, DEVWL_FILE_DENY, &rule_all);
	for (char *line = buf, *nl; r >= 0 && *line; line = nl + 1) {
		struct devwl_rule rule;

		nl = strchrnul(line, '\n');
		r = devwl_rule_parse(line, (size_t)(nl - line), &rule, NULL);
		if (r >= 0)
			r = devwl_node_update(cg->sw, DEVWL_FILE_ALLOW, &rule);
		if (!*nl)
			break;
	}
	return r < 0 ? r : 0;
}

/* The cgroup's devices.list, whole, into *ret_buf (NUL-terminated). */
static int v1_read_list(struct devwl_cgroup *cg, char **ret_buf)
{
	_cleanup_close_ int fd = openat(cg->dirfd, "devices.list", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return negerrno();
	/* Every exception is one line of at most DEVWL_RULE_STR_MAX bytes. */
	n = devwl_read_all(fd, (size_t)DEVWL_RULE_STR_MAX << 20, ret_buf);
	return n < 0 ? (int)n : 0;
}

static int v1_adopt(struct devwl_cgroup *cg)
{
	_cleanup_free_ char *buf = NULL;
	int r = v1_read_list(cg, &buf);

	return r < 0 ? r : v1_adopt_list(cg, buf);
}

static int v1_open(struct devwl_cgroup *cg, unsigned int flags)
{
	struct stat st;
	int r;

	cg->allow_fd = open_at(cg->dirfd, "devices.allow");
	cg->deny_fdw = open_at(cg->dirfd, "devices.deny");
	if (cg->allow_fd < 0 || cg->deny_fdw < 0)
		return cg->allow_fd < 0 ? cg->allow_fd : cg->deny_fdw;
	if (flags & DEVWL_CGROUP_OWN_PARENT) {
		_cleanup_close_ int pdir =
			openat(cg->dirfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pdir < 0)
			return negerrno();
		if (!parent_allows_all(pdir))
			return -EINVAL;
		if (fstat(cg->dirfd, &st) < 0)
			return negerrno();
		if (asprintf(&cg->hold_name, "devwl-hold.%llu", (unsigned long long)st.st_ino) <
		    0) {
			cg->hold_name = NULL;
			return -ENOMEM;
		}
		cg->pdirfd = TAKE_FD(pdir);
	}
	cg->shadow = devwl_policy_new();
	if (!cg->shadow)
		return -ENOMEM;
	r = devwl_policy_mkdir(cg->shadow, "/p");
	if (r >= 0)
		r = devwl_policy_mkdir(cg->shadow, "/p/w");
	if (r < 0)
		return r;
	cg->sw = devwl_policy_find(cg->shadow, "/p/w");
	if (flags & DEVWL_CGROUP_TAKE_OVER) {
		r = v1_adopt(cg);
		if (r <= 0)
			return r;
	}
	/* Start from a state we know: nothing allowed. */
	return v1_write(cg, DEVWL_FILE_DENY, &rule_all);
}

static int v2_open(struct devwl_cgroup *cg, unsigned int flags)
{
	static const struct bpf_insn deny[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int r;

	r = prog_load(deny, ARRAY_SIZE(deny));
	if (r < 0)
		return r == -EPERM || r == -EACCES ? -EPERM : r;
	cg->deny_fd = r;
	if (flags & DEVWL_CGROUP_RECORD_DENIALS)
		ring_open(cg);
	if (cg->ring_fd >= 0 && (flags & DEVWL_CGROUP_RECORD_ACCESSES))
		seen_open(cg);
	/* Taking over: the runtime's program stands until the first apply joins it. */
	if (flags & DEVWL_CGROUP_TAKE_OVER)
		return 0;
	r = prog_attach(cg->dirfd, cg->deny_fd, -1);
	if (r < 0)
		return r;
	set_current(cg, cg->deny_fd);
	return 0;
}

/* ---- drift: what another writer changed ------------------------------------------------ */

/* Append to what[0..size), cut where it ends. */
static void say(char *what, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(char *what, size_t size, const char *fmt, ...)
{
	size_t n = what ? strnlen(what, size) : size;
	va_list ap;

	if (n + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(what + n, size - n, fmt, ap);
	va_end(ap);
}

/* The rules of a as b lacks (same key and access), each as "c 1:3 rwm", after label. */
static unsigned int v1_lacking(const struct exlist *a, const struct exlist *b, const char *label,
			       char *what, size_t size)
{
	unsigned int n = 0;

	for (size_t i = 0; i < a->n; i++) {
		char text[DEVWL_RULE_STR_MAX];

		if (exlist_access(b, &a->v[i]) == a->v[i].access)
			continue;
		if (devwl_rule_format(&a->v[i], text, sizeof(text)) < 0)
			continue;
		say(what, size, "%s%s", n ? ", " : label, text);
		n++;
	}
	return n;
}

/*
 * v1: devices.list against the mirror, as sets (the kernel lists exceptions in the order
 * they were added, and merges the access of one device's). An ALLOW cgroup lists only
 * "a *:* rwm", so the mirror of one is that line: its denials are hidden from every
 * reader, and only a switch of its default shows.
 */
static int v1_check(struct devwl_cgroup *cg, char *what, size_t size)
{
	_cleanup_free_ char *buf = NULL;
	struct exlist have = {0}, want = {0};
	size_t lines = 1;
	unsigned int n;
	int r = v1_read_list(cg, &buf);

	if (r < 0)
		return r;
	for (const char *p = buf; *p; p++)
		lines += *p == '\n';
	have.v = malloc(lines * sizeof(*have.v));
	if (!have.v)
		return -ENOMEM;
	for (char *line = buf, *nl; *line; line = nl + 1) {
		nl = strchrnul(line, '\n');
		if (nl > line &&
		    devwl_rule_parse(line, (size_t)(nl - line), &have.v[have.n], NULL) >= 0)
			have.n++;
		if (!*nl)
			break;
	}
	qsort(have.v, have.n, sizeof(*have.v), devwl_rule_key_cmp);
	if (devwl_node_behavior(cg->sw) == DEVWL_BEHAVIOR_ALLOW) {
		want.v = malloc(sizeof(*want.v));
		if (want.v)
			want.v[want.n++] = rule_all;
		else
			r = -ENOMEM;
	} else {
		r = exlist_take(cg->sw, &want);
	}
	if (r >= 0) {
		n = v1_lacking(&want, &have, "missing ", what, size);
		if (n)
			say(what, size, "; ");
		n += v1_lacking(&have, &want, "extra ", what, size);
		r = n ? (int)DEVWL_CGROUP_DRIFT_RULES : 0;
	}
	free(have.v);
	free(want.v);
	if (r <= 0)
		return r;
	/* The kernel's list, as read above, is the handle's from here: the next apply diffs
	 * from it. An ALLOW cgroup's hidden denials are unknown, so it denies all first (as
	 * at open); so does one whose list could not be taken whole (the mirror would be
	 * wrong). */
	if (v1_adopt_list(cg, buf) != 0)
		(void)v1_write(cg, DEVWL_FILE_DENY, &rule_all); /* or not read whole: from none */
	return r;
}

/* What a program plainly does, where its n instructions are "r0 = K; exit" (an
 * allow-all or deny-all); else NULL. */
static const char *prog_plain(const struct bpf_insn *insns, uint32_t len)
{
	if (len != 2 * sizeof(insns[0]) ||
	    (insns[0].code != (BPF_ALU64 | BPF_MOV | BPF_K) &&
	     insns[0].code != (BPF_ALU | BPF_MOV | BPF_K)) ||
	    insns[0].dst_reg != BPF_REG_0 || insns[1].code != (BPF_JMP | BPF_EXIT))
		return NULL;
	return insns[0].imm ? "allows every device" : "denies every device";
}

/* Another's program id attached (where): its name and what it plainly does, where info
 * (and its first insns) could be read, else NULL. */
static void say_foreign(char *what, size_t size, const char *sep, uint32_t id,
			const struct bpf_prog_info *info, const struct bpf_insn *insns,
			const char *where)
{
	const char *plain = info ? prog_plain(insns, info->xlated_prog_len) : NULL;

	say(what, size, "%sforeign program %u \"%.*s\" attached%s: %s", sep, id,
	    info ? (int)sizeof(info->name) : 0, info ? info->name : "", where,
	    plain ? plain : "it may refuse what the node grants");
}

/* v2: is our program among the cgroup's own, and is anyone else's beside it? */
static int v2_check(struct devwl_cgroup *cg, char *what, size_t size)
{
	uint32_t ids[64];
	bool ours = false;
	int n, r = 0;

	if (cg->cur_fd < 0 || !cg->cur_id)
		return 0; /* nothing applied (TAKE_OVER before its first apply), or unknown */
	n = v2_query(cg->dirfd, ids, ARRAY_SIZE(ids));
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		ours |= ids[i] == cg->cur_id;
	if (!ours) {
		say(what, size, "program %u detached", cg->cur_id);
		/* Attached by nobody now: the next apply attaches beside whatever is there. */
		set_current(cg, -1);
		cg->recording = cg->reporting = false;
		r |= (int)DEVWL_CGROUP_DRIFT_DETACHED;
	}
	for (int i = 0; i < n; i++) {
		struct bpf_insn insns[3];
		struct bpf_prog_info info;
		_cleanup_close_ int fd = -1;

		/* Before the take-over is done, the others are the runtime's, going. */
		if (ids[i] == cg->cur_id || ((cg->flags & DEVWL_CGROUP_TAKE_OVER) && !cg->taken))
			continue;
		fd = prog_by_id(ids[i], &info, insns, ARRAY_SIZE(insns));
		if (fd == -ENOENT)
			continue; /* detached meanwhile */
		if (fd >= 0 && runtime_program(cg, &info)) {
			say(what, size,
			    "%sthe cgroup manager (systemd) re-applied the runtime's device rules"
			    " (program %u \"%.*s\")",
			    r ? "; " : "", ids[i], (int)sizeof(info.name), info.name);
			r |= (int)DEVWL_CGROUP_DRIFT_REAPPLIED;
			continue;
		}
		say_foreign(what, size, r ? "; " : "", ids[i], fd >= 0 ? &info : NULL, insns, "");
		r |= (int)DEVWL_CGROUP_DRIFT_FOREIGN;
	}
	return r;
}

/*
 * v1 with a reporter: is it still attached, and is another's device program on its
 * cgroup2 directory beside it? Such a program runs before the v1 rules, so it may refuse
 * what the node grants: FOREIGN, as on v2. Our own reporter is never foreign; a detached
 * one (DETACHED) is attached again by the next apply.
 */
static int rep_check(struct devwl_cgroup *cg, char *what, size_t size, bool more)
{
	uint32_t ids[64];
	bool ours = false;
	int n, r = 0;

	if (cg->rep_fd < 0 || !cg->rep_id)
		return 0; /* none attached (nothing applied, or none loads here) */
	n = v2_query(cg->rep_dirfd, ids, ARRAY_SIZE(ids));
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		ours |= ids[i] == cg->rep_id;
	if (!ours) {
		say(what, size, "%sreporter program %u on cgroup2 detached", more ? "; " : "",
		    cg->rep_id);
		close(cg->rep_fd); /* attached by nobody now: nothing to detach */
		cg->rep_fd = -1;
		cg->rep_id = 0;
		cg->recording = cg->reporting = false;
		r |= (int)DEVWL_CGROUP_DRIFT_DETACHED;
	}
	for (int i = 0; i < n; i++) {
		struct bpf_insn insns[3];
		struct bpf_prog_info info;
		_cleanup_close_ int fd = -1;

		if (ids[i] == cg->rep_id)
			continue;
		fd = prog_by_id(ids[i], &info, insns, ARRAY_SIZE(insns));
		if (fd == -ENOENT)
			continue; /* detached meanwhile */
		say_foreign(what, size, more || r ? "; " : "", ids[i], fd >= 0 ? &info : NULL,
			    insns, " to cgroup2");
		r |= (int)DEVWL_CGROUP_DRIFT_FOREIGN;
	}
	return r;
}

DEVWL_EXPORT int devwl_cgroup_check(struct devwl_cgroup *cg, char *ret_what, size_t size)
{
	int r;

	if (!cg || (size && !ret_what))
		return -EINVAL;
	if (size)
		ret_what[0] = '\0';
	if (cg->version == 2)
		return v2_check(cg, size ? ret_what : NULL, size);
	r = v1_check(cg, size ? ret_what : NULL, size);
	if (r >= 0 && cg->rep_dirfd >= 0) {
		int rr = rep_check(cg, size ? ret_what : NULL, size, r != 0);

		r = rr < 0 ? rr : r | rr;
	}
	return r;
}

DEVWL_EXPORT void devwl_cgroup_free(struct devwl_cgroup *cg)
{
	int fds[] = {0, 0, 0, 0, 0, 0, 0, 0};

	if (!cg)
		return;
	/* Nobody reads its ring any more: a reporter goes with its handle. */
	rep_detach(cg);
	if (cg->rep_dirfd >= 0)
		close(cg->rep_dirfd);
	ring_unmap(cg);
	fds[6] = cg->ring_fd;
	fds[7] = cg->seen_fd;
	fds[0] = cg->dirfd;
	fds[1] = cg->cur_fd != cg->deny_fd ? cg->cur_fd : -1;
	fds[2] = cg->deny_fd;
	fds[3] = cg->allow_fd;
	fds[4] = cg->deny_fdw;
	fds[5] = cg->pdirfd;
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(cg->hold_name);
	devwl_policy_free(cg->shadow);
	free(cg);
}

DEVWL_EXPORT int devwl_cgroup_open(const char *dir, unsigned int flags,
				   struct devwl_cgroup **ret_cgroup)
{
	struct devwl_cgroup *cg;
	struct statfs sfs;
	int r;

	if (!dir || !ret_cgroup ||
	    (flags & ~(DEVWL_CGROUP_OWN_PARENT | DEVWL_CGROUP_TAKE_OVER |
		       DEVWL_CGROUP_RECORD_DENIALS | DEVWL_CGROUP_RECORD_ACCESSES)))
		return -EINVAL;
	cg = calloc(1, sizeof(*cg));
	if (!cg)
		return -ENOMEM;
	cg->flags = flags;
	cg->dirfd = cg->deny_fd = cg->cur_fd = -1;
	cg->allow_fd = cg->deny_fdw = cg->pdirfd = cg->ring_fd = cg->seen_fd = -1;
	cg->rep_dirfd = cg->rep_fd = -1;
	cg->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->dirfd < 0) {
		r = negerrno();
		goto fail;
	}
	if (fstatfs(cg->dirfd, &sfs) < 0) {
		r = negerrno();
		goto fail;
	}
	if (sfs.f_type == CGROUP2_SUPER_MAGIC) {
		cg->version = 2;
		r = v2_open(cg, flags);
	} else if (sfs.f_type == CGROUP_SUPER_MAGIC) {
		cg->version = 1;
		r = v1_open(cg, flags);
		if (r == -ENOENT)
			r = -ENOTDIR; /* a v1 hierarchy without the devices controller */
	} else {
		r = -ENOTDIR;
	}
	if (r < 0)
		goto fail;
	*ret_cgroup = cg;
	return 0;
fail:
	devwl_cgroup_free(cg);
	return r;
}

DEVWL_EXPORT int devwl_cgroup_apply(struct devwl_cgroup *cg, const struct devwl_node *node)
{
	int r;

	if (!cg || !node)
		return -EINVAL;
	if (cg->version == 2)
		return v2_apply(cg, node);
	r = v1_apply(cg, node);
	if (cg->rep_dirfd < 0)
		return r;
	if (r < 0)
		rep_detach(cg); /* the cgroup denies all now: no node to report */
	else
		rep_apply(cg, node);
	return r;
}

DEVWL_EXPORT int devwl_cgroup_version(const struct devwl_cgroup *cg)
{
	return cg ? cg->version : -EINVAL;
}
