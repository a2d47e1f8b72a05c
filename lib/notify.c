/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One notification: read the call from the target, resolve what it names as the caller
 * would, decide against the node, answer. No allocation and no formatting here.
 *
 * Answers (DESIGN.md, "Answers" and "Grants"): not a device, O_PATH, or anything the kernel
 * would refuse by itself → CONTINUE (sound only over a kernel baseline that denies
 * devices); denied → EPERM; allowed open → CONTINUE wherever the kernel can open it in the
 * caller's own context (its device cgroup holds the node's allow list, or there is no
 * baseline at all), else opened here with the caller's whole credential and injected with
 * SECCOMP_IOCTL_NOTIF_ADDFD + SECCOMP_ADDFD_FLAG_SEND; allowed mknod → made here as the
 * caller, and bound over by a node the kernel will open where the caller's mount is nodev.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>

#include "caller.h"
#include "clock.h"
#include "devwl.h"
#include "event.h"
#include "filter.h"
#include "gate.h"
#include "util.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
/* Resolve flags openat2 knows (6.x); others make the kernel answer EINVAL itself. */
#define KNOWN_RESOLVE                                                                              \
	(RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH |         \
	 RESOLVE_IN_ROOT | RESOLVE_CACHED)
#ifndef OPEN_HOW_SIZE_VER0
#define OPEN_HOW_SIZE_VER0 24
#endif
/* The kernel's O_LARGEFILE (glibc says 0 on x86_64) and its VALID_OPEN_FLAGS for openat2. */
#if defined(__x86_64__) || defined(__i386__)
#define KERNEL_O_LARGEFILE 0100000
#else
#define KERNEL_O_LARGEFILE __O_LARGEFILE
#endif
#define VALID_OPEN_FLAGS                                                                           \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_SYNC |      \
	 O_DSYNC | FASYNC | O_DIRECT | KERNEL_O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | \
	 O_CLOEXEC | O_PATH | __O_TMPFILE)
#define O_PATH_FLAGS (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)
#define HANDLE_MAX   128 /* MAX_HANDLE_SZ */
#define MADE_MAX     16

/* A node made on a caller's behalf, to recognise a restarted mknod (signal, no SEND). */
struct made_node {
	pid_t tid;
	dev_t dev;
	ino_t ino;
};

struct devwl_notify {
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	devwl_notify_recv_fn recv_fn;
	void *recv_userdata;
	bool baseline;	    /* devwl_notify_set_baseline */
	bool enforced;	    /* devwl_notify_set_enforced */
	const char *reason; /* devwl_notify_reason: static text, or NULL */
	unsigned int features;
	size_t page_size;
	struct made_node made[MADE_MAX];
	unsigned int made_next;
	/*
	 * Nodes made with no baseline, on nodev mounts: devwl opens them for the caller. The
	 * embedder's set for the workload (devwl_notify_set_nodeset), else own_nodes.
	 */
	struct devwl_nodeset *nodes, *own_nodes;
	/*
	 * Some of the call's memory could only be read through /proc/TID/mem (FOLL_FORCE):
	 * PROT_NONE, where the kernel faults, or exec-/write-only pages, which it reads.
	 */
	bool forced;
	struct devwl_target target;
	struct devwl_caller caller;
	unsigned char mem[4096]; /* open_how or file_handle read from the target */
	char path[PATH_MAX];
	char path2[PATH_MAX]; /* rename's new name */
};

/* The call's arguments as the ABI defines them. */
struct call {
	int dirfd;
	uint64_t path;
	int flags;
	uint64_t resolve;
	mode_t mode;
	uint32_t dev;
};

enum answer_kind { ANSWER_CONTINUE, ANSWER_ERROR, ANSWER_FD, ANSWER_VALUE };

struct answer {
	enum answer_kind kind;
	int error; /* positive errno for ANSWER_ERROR */
	int fd;	   /* ANSWER_FD: ours, to inject */
	bool cloexec;
	const char *reason; /* for devwl_notify_reason(), where only the answer knows it */
};

DEVWL_EXPORT struct devwl_notify *devwl_notify_new(void)
{
	struct seccomp_notif_sizes sizes = {0};
	struct devwl_notify *n = NULL;

	if (!(devwl_features() & DEVWL_FEATURE_USER_NOTIF) || filter_table_init() < 0)
		return NULL;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->features = devwl_features();
	n->page_size = (size_t)sysconf(_SC_PAGESIZE);
	/* The kernel may grow the structs: size them as it says, never below ours. */
	n->req_size = sizes.seccomp_notif > sizeof(*n->req) ? sizes.seccomp_notif : sizeof(*n->req);
	n->resp_size = sizes.seccomp_notif_resp > sizeof(*n->resp) ? sizes.seccomp_notif_resp
								   : sizeof(*n->resp);
	n->req = calloc(1, n->req_size);
	n->resp = calloc(1, n->resp_size);
	n->target.root_fd = n->target.start_fd = -1;
	n->own_nodes = n->nodes = devwl_nodeset_new();
	if (!n->req || !n->resp || !n->own_nodes || caller_init(&n->caller) < 0) {
		devwl_nodeset_unref(n->own_nodes);
		free(n->req);
		free(n->resp);
		free(n);
		return NULL;
	}
	return n;
}

DEVWL_EXPORT void devwl_notify_set_recv_hook(struct devwl_notify *n, devwl_notify_recv_fn fn,
					     void *userdata)
{
	if (!n)
		return;
	n->recv_fn = fn;
	n->recv_userdata = userdata;
}

DEVWL_EXPORT void devwl_notify_set_baseline(struct devwl_notify *n, bool baseline)
{
	if (n)
		n->baseline = baseline;
}

DEVWL_EXPORT void devwl_notify_set_enforced(struct devwl_notify *n, bool enforced)
{
	if (n)
		n->enforced = enforced;
}

DEVWL_EXPORT void devwl_notify_set_nodeset(struct devwl_notify *n, struct devwl_nodeset *set)
{
	if (!n)
		return;
	if (n->nodes != n->own_nodes)
		devwl_nodeset_unref(n->nodes);
	n->nodes = set ? devwl_nodeset_ref(set) : n->own_nodes;
}

DEVWL_EXPORT const char *devwl_notify_reason(const struct devwl_notify *n)
{
	return n ? n->reason : NULL;
}

DEVWL_EXPORT void devwl_notify_free(struct devwl_notify *n)
{
	if (!n)
		return;
	target_close(&n->target);
	caller_done(&n->caller);
	devwl_notify_set_nodeset(n, NULL);
	devwl_nodeset_unref(n->own_nodes);
	free(n->req);
	free(n->resp);
	free(n);
}

static uint64_t arg(const struct devwl_syscall *sc, const struct seccomp_notif *req, int i)
{
	return sc->compat32 ? (uint32_t)req->data.args[i] : req->data.args[i];
}

/*
 * What process_vm_readv refused: unmapped memory (the kernel faults too), PROT_NONE (it
 * faults), or exec-only and write-only pages (on x86 the kernel reads them). Only
 * /proc/TID/mem tells the last two from the first; the data it reads is marked forced.
 * A slow path: never taken for ordinary memory.
 */
static int read_forced(struct devwl_notify *n, pid_t tid, int *mem_fd, uint64_t addr, void *buf,
		       size_t len)
{
	char p[32];
	ssize_t got = 0;

	if (*mem_fd < 0) {
		snprintf(p, sizeof(p), "%d/mem", (int)tid);
		*mem_fd = openat(n->caller.host_proc, p, O_RDONLY | O_CLOEXEC);
		if (*mem_fd < 0)
			return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? -EPERM
										     : -EFAULT;
	}
	/* mem takes the address as an unsigned offset (FMODE_UNSIGNED_OFFSET). */
	got = pread(*mem_fd, buf, len, (off_t)addr);
	if (got != (ssize_t)len)
		return -EFAULT;
	n->forced = true;
	return 0;
}

/*
 * Target memory, page by page so that an unmapped page after the data does not matter.
 * Errors: -EFAULT as the kernel would give it, -EPERM when we could not look.
 */
static int read_mem(struct devwl_notify *n, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	_cleanup_close_ int mem_fd = -1;
	size_t done = 0;

	while (done < len) {
		size_t chunk = n->page_size - ((addr + done) & (n->page_size - 1));
		struct iovec local = {.iov_base = (char *)buf + done};
		struct iovec remote = {.iov_base = (void *)(uintptr_t)(addr + done)};
		ssize_t got = 0;
		int r = 0;

		if (chunk > len - done)
			chunk = len - done;
		local.iov_len = remote.iov_len = chunk;
		got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		if (got <= 0) {
			r = read_forced(n, tid, &mem_fd, addr + done, local.iov_base, chunk);
			if (r < 0)
				return r;
			got = (ssize_t)chunk;
		}
		done += (size_t)got;
	}
	return 0;
}

/*
 * The NUL-terminated path, read as the kernel's getname() reads it: at most PATH_MAX bytes
 * including the NUL (-ENAMETOOLONG beyond), -EFAULT where it runs into memory the kernel
 * cannot read (checked page by page: it may end right before an unmapped page), -EPERM
 * when we could not look.
 */
static int read_path_into(struct devwl_notify *n, pid_t tid, uint64_t addr, char buf[PATH_MAX])
{
	_cleanup_close_ int mem_fd = -1;
	size_t done = 0;

	while (done < PATH_MAX) {
		size_t chunk = n->page_size - ((addr + done) & (n->page_size - 1));
		struct iovec local = {.iov_base = buf + done};
		struct iovec remote = {.iov_base = (void *)(uintptr_t)(addr + done)};
		ssize_t got = 0;
		int r = 0;

		if (chunk > PATH_MAX - done)
			chunk = PATH_MAX - done;
		local.iov_len = remote.iov_len = chunk;
		got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		if (got <= 0) {
			r = read_forced(n, tid, &mem_fd, addr + done, local.iov_base, chunk);
			if (r < 0) {
				buf[0] = '\0';
				return r;
			}
			got = (ssize_t)chunk;
		}
		if (memchr(buf + done, '\0', (size_t)got))
			return 0;
		done += (size_t)got;
	}
	buf[0] = '\0';
	return -ENAMETOOLONG;
}

static int read_path(struct devwl_notify *n, pid_t tid, uint64_t addr)
{
	return read_path_into(n, tid, addr, n->path);
}

/* Is the notification still pending, i.e. is tid still the task that made the call? */
static int id_valid(int fd, uint64_t id)
{
	return ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0 ? negerrno() : 0;
}

static int access_of(int flags)
{
	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		return DEVWL_ACC_READ;
	case O_WRONLY:
		return DEVWL_ACC_WRITE;
	default: /* O_RDWR, and 3 which needs both */
		return DEVWL_ACC_READ | DEVWL_ACC_WRITE;
	}
}

/* Fill the event from a resolved object; false when it is not a device devwl checks. */
static bool device_of(const struct stat *st, struct devwl_event *e)
{
	if (S_ISCHR(st->st_mode)) {
		e->type = DEVWL_DEV_CHAR;
	} else if (S_ISBLK(st->st_mode)) {
		e->type = DEVWL_DEV_BLOCK;
	} else {
		e->type = 0;
		return false;
	}
	e->major = major(st->st_rdev);
	e->minor = minor(st->st_rdev);
	/* The kernel does not check char 0:0 (overlayfs whiteouts); block 0:0 it does. */
	if (e->type == DEVWL_DEV_CHAR && st->st_rdev == 0) {
		e->type = 0;
		return false;
	}
	return true;
}

static int answer_error(struct answer *a, int err)
{
	a->kind = ANSWER_ERROR;
	a->error = err;
	return 0;
}

/*
 * The one fail-closed rule: wherever devwl cannot decide — a lookup or /proc read of its
 * own failed, a syscall number or ABI it does not read, a handle it cannot resolve — the
 * answer is EPERM, never CONTINUE: a CONTINUE lets the kernel act on memory and state
 * devwl did not judge, and without a kernel baseline (unprivileged devwl-run) that can
 * reach a denied device. Every decide path below ends here when it cannot decide.
 */
static int cannot_decide(struct answer *a)
{
	a->reason = "cannot decide";
	return answer_error(a, EPERM);
}

/*
 * A lookup of ours that failed for our own reasons (our fd table, memory), not for the
 * caller's: we do not know what the path names, so neither CONTINUE (the kernel might open
 * a device) nor pass the error on (it is not the caller's). Answer EPERM.
 */
static bool our_trouble(int r)
{
	return caller_own_trouble(-r);
}

/*
 * Our lookup was refused (caller_refused): the caller may hold rights we lack, so the kernel
 * might let it through — to a device, with no baseline. Look again as the caller; what
 * still fails is answered with that error, never CONTINUE'd. A caller whose rights we
 * cannot mirror (root in its own user namespace over its own files, the owner of a FUSE
 * mount without allow_other) is refused where the kernel alone would let it through: an
 * under-grant, the safe side (libdevwl(3), Failing closed).
 */
static int lookup_refused(struct devwl_notify *n, const struct call *c, uint64_t resolve,
			  int refusal, int *ret_fd, bool *ret_walked)
{
	struct devwl_caller *cl = &n->caller;
	struct devwl_target *t = &n->target;
	int r = 0;

	r = target_read_creds(cl, t);
	if (r >= 0)
		r = caller_become(cl, t, 0);
	if (r < 0)
		return -EAGAIN; /* ours: cannot decide */
	if (!caller_switched(cl))
		return refusal; /* the same lookup again */
	return caller_lookup(cl, t, n->path, c->flags, resolve, ret_fd, ret_walked);
}

/*
 * May the kernel run the open itself, in the caller's own context — its capabilities, its
 * LSM and Landlock domain, its user namespace in the file's f_cred — now that devwl has
 * refused what the policy denies? (DESIGN.md, "Grants": a grant lifts the device policy and
 * nothing else, and only the kernel opening for the caller carries everything else.)
 * Always, but for a granted device under a deny baseline that devwl does not program,
 * which the kernel would refuse: that one devwl opens on the caller's behalf.
 * - The caller's device cgroup holds this node's allow list (enforced): whatever the
 *   kernel reaches when it reads the path again, its cgroup judges as devwl does.
 * - A deny baseline: a non-device, or whatever a racing thread swaps in, the kernel
 *   opens only if it is no device.
 * - No baseline: a racing thread can swap a path under any CONTINUE (devwl-run(1) says
 *   so); an open of devwl's would not keep it out, and would lose the caller's domain.
 *   Only a node devwl made itself on a nodev mount (decide_mknod), which nobody opens,
 *   devwl opens for the caller.
 */
static bool kernel_opens(struct devwl_notify *n, bool device, const struct stat *st)
{
	if (n->enforced || !device)
		return true;
	if (n->baseline)
		return false;
	/* No baseline: but for a node devwl made on a nodev mount, which nobody opens. */
	return !devwl_nodeset_has(n->nodes, st->st_dev, st->st_ino);
}

/*
 * Opening on the caller's behalf carries its credential; a security module's domain
 * (AppArmor, SELinux, Smack label) it cannot carry: such a caller is refused, never opened
 * for outside its domain. Returns 0 to go on, else the answer.
 */
static int carry_refused(struct devwl_notify *n, struct answer *a)
{
	int r = caller_foreign_lsm(&n->caller, &n->target);

	if (r == 0)
		return 0;
	n->reason = r > 0 ? "the caller runs under another LSM label, which devwl cannot carry"
			  : "the caller's LSM label could not be read";
	return answer_error(a, EPERM) ?: 1;
}

/*
 * The caller may open its node, yet nobody can: a nodev mount (any filesystem mounted in a
 * user namespace). The policy allows the device, so it is opened, still as the caller,
 * through a node devwl made on its own tmpfs (DESIGN.md, "nodev mounts"); making that node
 * takes our own credentials, between leaving the caller's and taking them again.
 */
static int open_nodev(struct devwl_notify *n, const struct stat *st, int oflags, int *ret_fd)
{
	struct devwl_caller *cl = &n->caller;
	int r = 0;

	caller_leave(cl);
	r = caller_private_node(cl, st->st_mode & S_IFMT, st->st_rdev);
	if (r == 0)
		r = caller_become(cl, &n->target, 0);
	if (r == 0)
		r = caller_open_private(cl, st->st_mode & S_IFMT, st->st_rdev, oflags, ret_fd);
	return r;
}

/* A FUSE server that stops answering costs the call that named it this much, then EPERM. */
#define UNRESOLVED_TIMEOUT_MS 2000

/*
 * What the call names could not be looked at: the caller's root or cwd refuses devwl
 * (a FUSE mount of the caller's user namespace answers EACCES to anyone outside it). Where
 * the caller's device cgroup holds the node's allow list, whatever the kernel's own walk
 * reaches is judged by it exactly as devwl would: left to the kernel, and the audit says
 * it was not resolved. Anywhere else it is looked up by a child that is the caller as far
 * as the filesystem can tell (caller_stat_as), and judged by what that finds.
 */
static int unresolved(struct devwl_notify *n, const struct devwl_node *node, const struct call *c,
		      uint64_t resolve, int refusal, struct devwl_event *e, struct answer *a)
{
	struct stat st;
	int r;

	if (n->enforced) {
		n->reason = "not resolved by devwl (its root or cwd refused devwl's lookup): "
			    "left to the caller's device cgroup, which enforces the policy";
		return 0;
	}
	r = target_read_creds(&n->caller, &n->target);
	if (r >= 0)
		r = caller_stat_as(&n->caller, &n->target, c->dirfd, n->path, c->flags, resolve,
				   UNRESOLVED_TIMEOUT_MS, &st);
	/* A child that could not be the caller (an unprivileged devwl): the answer without
	 * it, the lookup's refusal where there was one. */
	if (r == -EOPNOTSUPP)
		return refusal ? answer_error(a, refusal) : cannot_decide(a);
	/* Ours (a magic link, a child that did not answer, memory): nothing judged it. */
	if (r == -ELOOP || r == -ETIMEDOUT || (r < 0 && our_trouble(r)))
		return cannot_decide(a);
	/* The caller's own lookup error is the kernel's answer; a file it creates, the
	 * kernel's to make (no device comes of O_CREAT). */
	n->reason = "looked up as the caller (its root or cwd refused devwl)";
	if (r < 0)
		return r == -ENOENT && (c->flags & O_CREAT) ? 0 : answer_error(a, -r);
	if (!device_of(&st, e))
		return 0;
	if (devwl_node_check(node, e->type, e->major, e->minor, e->access) != 1) {
		n->reason = "policy";
		return answer_error(a, EPERM);
	}
	if (kernel_opens(n, true, &st))
		return 0;
	/* A granted device only devwl could open, from where devwl cannot reach it. */
	return cannot_decide(a);
}

/* The /dev/tty node: it opens the opener's controlling terminal, so not as ourselves. */
#define DEV_TTY makedev(5, 0)

/*
 * open, openat, openat2, creat. Returns -ENOENT when the target is gone.
 *
 * A path that reached a magic link was walked by devwl (caller_lookup), so that the
 * object judged is the caller's (its /proc/self/fd/N, not ours): a denied device there is
 * refused, a lookup error answered; what is granted goes as kernel_opens() says.
 */
static int decide_open(struct devwl_notify *n, int nfd, const struct devwl_node *node,
		       const struct call *c, struct devwl_event *e, struct answer *a)
{
	struct devwl_caller *cl = &n->caller;
	struct devwl_target *t = &n->target;
	uint64_t resolve = c->resolve & ~(uint64_t)RESOLVE_CACHED;
	_cleanup_close_ int pfd = -1;
	struct stat st;
	bool need_start = false, walked = false, device = false, entered = false;
	int r = 0;

	/* O_PATH and O_DIRECTORY never open a device; __O_TMPFILE alone is EINVAL here. */
	if (c->flags & (O_PATH | O_DIRECTORY | __O_TMPFILE))
		return 0;
	e->access = access_of(c->flags);
	/*
	 * What the kernel refuses on reading the path it is answered here, not CONTINUE'd:
	 * by the time the kernel reads it again the memory may name a device.
	 */
	r = read_path(n, (pid_t)n->req->pid, c->path);
	if (r < 0)
		return answer_error(a, -r);
	if (n->path[0] == '\0')
		return answer_error(a, ENOENT);
	need_start = n->path[0] != '/' || (c->resolve & (RESOLVE_IN_ROOT | RESOLVE_BENEATH));
	r = target_open(cl, t, (pid_t)n->req->pid, c->dirfd, need_start);
	/* One check covers the path read above and the /proc fds just opened. */
	if (id_valid(nfd, n->req->id) < 0)
		return -ENOENT;
	/*
	 * A bad dirfd is answered as the kernel would, not CONTINUE'd: a racing thread could
	 * put a directory of devices at that number first. Anything else we cannot inspect is
	 * denied: without a baseline (unprivileged devwl-run) a CONTINUE could reach a device.
	 */
	if (r < 0)
		return r == -EBADF ? answer_error(a, EBADF)
				   : unresolved(n, node, c, resolve, 0, e, a);
	/*
	 * First as ourselves: most opens are not of devices and need nothing more. A lookup
	 * that fails the caller's way is the kernel's to answer; one that fails ours is not,
	 * and one refused to us is tried again as the caller (lookup_refused).
	 * RESOLVE_CACHED only says "may fail EAGAIN": we resolve fully. An absolute path with
	 * no resolve flags (most opens) is looked up from the caller's root by RESOLVE_IN_ROOT,
	 * with no chroot in and out (5 system calls of 17); what that lookup cannot answer
	 * for the caller takes the chrooted one.
	 */
	r = resolve ? 1 : caller_lookup_in_root(cl, t, n->path, c->flags, &pfd);
	if (r < 0 && !caller_refused(-r))
		return 0;
	if (r != 0) {
		if (caller_enter(cl, t) < 0)
			return unresolved(n, node, c, resolve, 0, e, a);
		entered = true;
		r = caller_lookup(cl, t, n->path, c->flags, resolve, &pfd, &walked);
		if (r < 0 && !walked && caller_refused(-r))
			r = lookup_refused(n, c, resolve, r, &pfd, &walked);
		/* What the kernel reaches, its cgroup judges: its own answer is the exact one. */
		if (r < 0 && n->enforced)
			return 0;
		/* Refused to the caller's fsuid too: FUSE, which asks for all of its ids. */
		if (r < 0 && !walked && caller_refused(-r)) {
			caller_leave(cl); /* the child starts from our own credentials */
			return unresolved(n, node, c, resolve, -r, e, a);
		}
		if (r < 0 && our_trouble(r))
			return cannot_decide(a);
		/* A file created through a magic link is no device: the kernel's to make. */
		if (r < 0 && walked && r == -ENOENT && (c->flags & O_CREAT))
			return 0;
		if (r < 0)
			return walked || caller_refused(-r) ? answer_error(a, -r) : 0;
	}
	if (fstat(pfd, &st) < 0)
		return n->enforced ? 0 : cannot_decide(a);
	device = device_of(&st, e);
	/* Never opens what exists: the kernel answers EEXIST (a symlink counts as existing). */
	if ((c->flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return 0;
	if (device && devwl_node_check(node, e->type, e->major, e->minor, e->access) != 1) {
		n->reason = "policy";
		return answer_error(a, EPERM);
	}
	if (kernel_opens(n, device, &st))
		return 0;
	/* What follows acts in the caller's root, on its behalf. */
	if (!entered && caller_enter(cl, t) < 0)
		return cannot_decide(a);

	/*
	 * Again as the caller, so that its directory and file permissions apply; when
	 * become() switched nothing (a caller with our ids and file capabilities) the
	 * lookup would be the same, and the object already judged is kept.
	 */
	if (target_read_creds(cl, t) < 0)
		return cannot_decide(a);
	if (carry_refused(n, a))
		return 0;
	if (caller_become(cl, t, 0) < 0)
		return cannot_decide(a);
	if (caller_switched(cl)) {
		closep(&pfd);
		pfd = -1;
		r = caller_lookup(cl, t, n->path, c->flags, resolve, &pfd, &walked);
		if (r < 0)
			return our_trouble(r) ? cannot_decide(a) : answer_error(a, -r);
		if (fstat(pfd, &st) < 0)
			return cannot_decide(a);
		device = device_of(&st, e);
	}
	if (kernel_opens(n, device, &st))
		return 0; /* swapped under us for a non-device: the baseline judges it */
	if (devwl_node_check(node, e->type, e->major, e->minor, e->access) != 1) {
		n->reason = "policy";
		return answer_error(a, EPERM);
	}
	/* Read only by force: PROT_NONE (kernel: EFAULT) or stranger; do not grant on it. */
	if (n->forced)
		return answer_error(a, EFAULT);
	if (S_ISCHR(st.st_mode) && st.st_rdev == DEV_TTY) {
		/* Reopened by us it would be our terminal: the caller's, or what it gets. */
		r = caller_open_ctty(cl, t, c->flags, &a->fd);
	} else {
		r = caller_reopen(cl, pfd, c->flags, &a->fd);
		if (r == -EACCES && caller_may_open(pfd, c->flags) == 0)
			r = open_nodev(n, &st, c->flags, &a->fd);
	}
	if (r < 0)
		return our_trouble(r) ? cannot_decide(a) : answer_error(a, -r);
	a->kind = ANSWER_FD;
	a->cloexec = c->flags & O_CLOEXEC;
	return 0;
}

static bool made_here(struct devwl_notify *n, pid_t tid, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < MADE_MAX; i++)
		if (n->made[i].tid == tid && n->made[i].dev == dev && n->made[i].ino == ino)
			return true;
	return false;
}

/*
 * A node made for a caller in another user namespace sits, most likely, on a filesystem
 * mounted there, which is nodev: nobody could open it. The node gate says whether a twin,
 * which the kernel opens, is bound over it (gate_twin()). The node is made either way; a
 * bind that fails is said in the reason.
 */
static bool binds_made(const struct devwl_notify *n)
{
	return gate_twin(n->enforced, !n->target.creds.same_userns);
}

static void bind_made(struct devwl_notify *n, int made_fd, const struct stat *made)
{
	if (!binds_made(n))
		return;
	caller_leave(&n->caller);
	if (caller_bind_node(&n->caller, &n->target, made_fd, made, n->path) < 0)
		n->reason = "node made, but no node the kernel opens could be bound over it";
}

static int decide_mknod(struct devwl_notify *n, int nfd, const struct devwl_node *node,
			const struct call *c, struct devwl_event *e, struct answer *a)
{
	struct devwl_caller *cl = &n->caller;
	struct devwl_target *t = &n->target;
	const char *last = NULL, *name = NULL, *why = NULL;
	_cleanup_close_ int made_fd = -1, dir = -1;
	struct stat made = {0};
	size_t len = 0;
	int r = 0, gate = 0;

	if ((c->mode & S_IFMT) == S_IFCHR)
		e->type = DEVWL_DEV_CHAR;
	else if ((c->mode & S_IFMT) == S_IFBLK)
		e->type = DEVWL_DEV_BLOCK;
	else
		return 0;
	/* mknod's dev is a u32 in the kernel's "new" encoding: 12-bit major, 20-bit minor. */
	e->major = (c->dev & 0xfff00) >> 8;
	e->minor = (c->dev & 0xff) | ((c->dev >> 12) & 0xfff00);
	e->access = DEVWL_ACC_MKNOD;
	if (e->type == DEVWL_DEV_CHAR && e->major == 0 && e->minor == 0) {
		e->type = 0; /* whiteout */
		return 0;
	}
	/* Answered here, not CONTINUE'd: the memory may name another place by then. */
	r = read_path(n, (pid_t)n->req->pid, c->path);
	if (r < 0)
		return answer_error(a, -r);
	len = strlen(n->path);
	if (len == 0)
		return answer_error(a, ENOENT);
	last = strrchr(n->path, '/');
	last = last ? last + 1 : n->path;
	/*
	 * Trailing slash, "." or "..": the kernel refuses them itself (EEXIST, ENOENT), and
	 * a CONTINUE cannot make a node the policy denies: dev and mode are registers.
	 */
	if (n->path[len - 1] == '/' || strcmp(last, ".") == 0 || strcmp(last, "..") == 0) {
		if (devwl_node_check(node, e->type, e->major, e->minor, DEVWL_ACC_MKNOD) == 1)
			return 0;
		n->reason = "policy";
		return answer_error(a, EPERM);
	}
	r = target_open(cl, t, (pid_t)n->req->pid, c->dirfd, n->path[0] != '/');
	if (r >= 0)
		r = target_read_creds(cl, t);
	if (id_valid(nfd, n->req->id) < 0)
		return -ENOENT;
	/* A CONTINUE would let a caller holding CAP_MKNOD make any node: answer instead. */
	if (r < 0)
		return r == -EBADF ? answer_error(a, EBADF) : cannot_decide(a);
	if (devwl_node_check(node, e->type, e->major, e->minor, DEVWL_ACC_MKNOD) != 1) {
		n->reason = "policy";
		return answer_error(a, EPERM);
	}
	if (n->forced)
		return answer_error(a, EFAULT);
	if (devwl_node_mknod_needs_cap(node) && !(t->creds.cap_eff & (1ULL << CAP_MKNOD))) {
		n->reason = "no CAP_MKNOD";
		return answer_error(a, EPERM);
	}
	if (carry_refused(n, a))
		return 0;
	/*
	 * An absolute path's parent is looked up as the caller from its root by
	 * RESOLVE_IN_ROOT, with no chroot in and out (5 system calls); what that lookup
	 * cannot answer for the caller takes the chrooted one, entered as ourselves.
	 */
	if (caller_become(cl, t, 1ULL << CAP_MKNOD) < 0)
		return cannot_decide(a);
	r = caller_parent_in_root(cl, t, n->path, &name, &dir);
	if (r > 0) {
		caller_leave(cl);
		if (caller_enter(cl, t) < 0 || caller_become(cl, t, 1ULL << CAP_MKNOD) < 0)
			return cannot_decide(a);
		dir = caller_parent(cl, n->path, &name);
	} else if (r < 0) {
		dir = r;
	}
	/* A magic link on the way: the kernel's to make, where a cgroup confines the node. */
	if (dir == -ELOOP && (n->baseline || n->enforced))
		return 0;
	if (dir < 0)
		return our_trouble(dir) ? cannot_decide(a) : answer_error(a, -dir);
	/* The node gate (gate.h), on the directory the node is then made in. */
	gate = gate_node_dir(caller_proc(cl), dir,
			     n->baseline || n->enforced ? GATE_CONFINED : GATE_UNCONFINED, &why);
	if (gate == -EPERM)
		n->reason = why;
	if (gate < 0 && our_trouble(gate))
		return cannot_decide(a);
	/* Where the caller could make no node at all, its own error is the answer. */
	if (gate < 0)
		return answer_error(a, -gate);
	/* An fd of the node only where bind_made() binds over it (2 system calls more). */
	r = caller_mknod(dir, name, c->mode, makedev(e->major, e->minor), &made,
			 binds_made(n) ? &made_fd : NULL);
	if (r == -EEXIST && made_here(n, t->tid, made.st_dev, made.st_ino))
		r = 0; /* the same call again after a signal restart */
	else if (r == 0) {
		n->made[n->made_next] =
			(struct made_node){.tid = t->tid, .dev = made.st_dev, .ino = made.st_ino};
		n->made_next = (n->made_next + 1) % MADE_MAX;
	}
	if (r == -ELOOP)
		return 0;
	if (r < 0)
		return answer_error(a, -r);
	if (made_fd >= 0)
		bind_made(n, made_fd, &made);
	if (r == 0 && gate == GATE_NODEV &&
	    devwl_nodeset_add(n->nodes, made.st_dev, made.st_ino) < 0)
		n->reason = "node made on a nodev mount, but not recorded: it will not open";
	a->kind = ANSWER_VALUE;
	return 0;
}

/*
 * DEVWL_FILTER_TWINS: unlink and rename of a node with a twin of devwl's bound over it
 * (bind_made), which the kernel refuses (EBUSY: a mount point). Whatever is not such a
 * node, or cannot be looked at, is CONTINUE'd: the kernel then answers as without devwl,
 * and nothing devwl grants hangs on it. A name no twin is bound at (caller_twin_named())
 * is not looked up, and twins are bound only for callers in another user namespace: the
 * others are answered at once.
 *
 * Inside: the caller's name path, looked up as the caller without following a last
 * symlink, into *ret_fd (O_PATH), and its parent into *ret_dir / *ret_name where asked.
 */
static int twin_lookup(struct devwl_notify *n, const char *path, int *ret_fd, int *ret_dir,
		       const char **ret_name)
{
	bool walked = false;
	int r = caller_lookup(&n->caller, &n->target, path, O_NOFOLLOW, 0, ret_fd, &walked);

	if (r < 0 || !ret_dir)
		return r;
	*ret_dir = caller_parent(&n->caller, path, ret_name);
	return *ret_dir < 0 ? *ret_dir : 0;
}

/* Read the path at addr into buf: 1 it may name a twin, 0 it cannot, -1 unreadable. */
static int twin_named(struct devwl_notify *n, uint64_t addr, char *buf)
{
	if (read_path_into(n, (pid_t)n->req->pid, addr, buf) < 0 || buf[0] == '\0')
		return -1;
	return caller_twin_named(buf);
}

/* Open the target (buf: the path read) and read its credentials; 0 to go on. */
static int twin_target(struct devwl_notify *n, int nfd, int dirfd, const char *buf)
{
	struct devwl_target *t = &n->target;
	int r = target_open(&n->caller, t, (pid_t)n->req->pid, dirfd, buf[0] != '/');

	if (r >= 0)
		r = target_read_creds(&n->caller, t);
	if (id_valid(nfd, n->req->id) < 0)
		return -ENOENT;
	return r < 0 || t->creds.same_userns ? 1 : 0;
}

static int decide_unlink(struct devwl_notify *n, int nfd, const struct call *c)
{
	struct devwl_caller *cl = &n->caller;
	_cleanup_close_ int fd = -1;
	int r = 0;

	if (c->flags & AT_REMOVEDIR)
		return 0; /* a twin is never a directory */
	if (twin_named(n, c->path, n->path) <= 0)
		return 0;
	r = twin_target(n, nfd, c->dirfd, n->path);
	if (r != 0)
		return r < 0 ? r : 0;
	if (caller_enter(cl, &n->target) < 0 || caller_become(cl, &n->target, 0) < 0)
		return 0;
	r = twin_lookup(n, n->path, &fd, NULL, NULL);
	caller_leave(cl);
	if (r < 0)
		return 0;
	/* Then the caller's unlink runs on its own node, no longer a mount point. */
	r = caller_unbind_twin(cl, &n->target, fd);
	if (r > 0)
		n->reason = "a twin of devwl's unmounted from the node first";
	else if (r < 0)
		n->reason = "the node's twin could not be unmounted";
	return 0;
}

/*
 * A twin renamed: unmounted, the node renamed as the caller (its root, cwd or dirfds, its
 * credentials: the parents resolved without magic links, before anything is unmounted)
 * and a twin bound over it at its new name, so that it keeps opening. A twin at the new
 * name, which the rename replaces, is unmounted first as for unlink. RENAME_EXCHANGE and
 * RENAME_WHITEOUT with a twin are left to the kernel (EBUSY, as before): an exchange
 * would need two twins moved at once, and a whiteout is an overlay's.
 */
static int decide_rename(struct devwl_notify *n, int nfd, const struct call *c, int newdirfd,
			 uint64_t newpath, unsigned int flags, struct answer *a)
{
	struct devwl_caller *cl = &n->caller;
	struct devwl_target *t = &n->target;
	_cleanup_close_ int ofd = -1, nfd2 = -1, odir = -1, ndir = -1, nstart = -1, moved = -1;
	const char *oname = NULL, *nname = NULL;
	char buf[PROC_LINK_MAX];
	struct stat before = {0}, after;
	int r = 0, rn = 0;

	if (flags & (RENAME_EXCHANGE | RENAME_WHITEOUT))
		return 0;
	r = twin_named(n, c->path, n->path);
	rn = r < 0 ? -1 : twin_named(n, newpath, n->path2);
	if (r < 0 || rn < 0 || (!r && !rn))
		return 0;
	r = twin_target(n, nfd, c->dirfd, n->path);
	if (r != 0)
		return r < 0 ? r : 0;
	/* The twin is bound again where the node goes: only for whom mknod would bind one. */
	if (!binds_made(n))
		return 0;
	/* The new name's own start, where it is another than the old name's. */
	if (n->path2[0] != '/' && newdirfd != c->dirfd) {
		if (!proc_link(buf, t->tid, newdirfd, true))
			return 0;
		nstart = openat(caller_proc(cl), buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (id_valid(nfd, n->req->id) < 0)
			return -ENOENT;
		if (nstart < 0)
			return 0;
	}
	if (caller_enter(cl, t) < 0 || caller_become(cl, t, 0) < 0)
		return 0;
	r = twin_lookup(n, n->path, &ofd, &odir, &oname);
	if (r == 0 && nstart >= 0 && fchdir(nstart) < 0)
		r = -errno;
	if (r == 0) {
		rn = twin_lookup(n, n->path2, &nfd2, &ndir, &nname);
		if (rn == -ENOENT) /* the new name need not exist, its parent must */
			ndir = caller_parent(cl, n->path2, &nname);
	}
	caller_leave(cl);
	if (r < 0 || ndir < 0)
		return 0;
	if (nfd2 >= 0 && caller_unbind_twin(cl, t, nfd2) > 0)
		n->reason = "the twin of devwl's at the new name unmounted first";
	if (caller_unbind_twin(cl, t, ofd) <= 0)
		return 0; /* not a twin: the kernel's rename */
	/* Now a plain node: rename it as the caller, and bind a twin over it where it went. */
	if (caller_enter(cl, t) < 0 || caller_become(cl, t, 0) < 0)
		return cannot_decide(a);
	r = fstatat(odir, oname, &before, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	if (r == 0 && syscall(SYS_renameat2, odir, oname, ndir, nname, flags) < 0)
		r = -errno;
	/* Where the node is now: at its new name, or, the rename refused, at its old one. */
	moved = r == 0 ? openat(ndir, nname, O_PATH | O_NOFOLLOW | O_CLOEXEC)
		       : openat(odir, oname, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (moved >= 0 && (fstat(moved, &after) < 0 || after.st_dev != before.st_dev ||
			   after.st_ino != before.st_ino))
		closep(&moved);
	caller_leave(cl);
	/* The twin goes with the node, wherever it is: a refused rename keeps it opening. */
	if (moved < 0 || caller_bind_node(cl, t, moved, &after, r == 0 ? n->path2 : n->path) < 0)
		n->reason = "no twin could be bound over the node again after its rename";
	else
		n->reason = "a twin of devwl's moved with the node";
	if (r < 0)
		return answer_error(a, -r);
	a->kind = ANSWER_VALUE;
	return 0;
}

/* The mount fd argument, as a real (not O_PATH) fd of ours, or -errno. */
static int handle_mount_fd(struct devwl_notify *n, struct devwl_target *t, int mount_fd)
{
	_cleanup_close_ int pidfd = -1;
	char buf[32];
	int fd = -1;

	if (mount_fd == AT_FDCWD) {
		/* /proc/TID/cwd is a directory: opening it cannot reach a driver. */
		snprintf(buf, sizeof(buf), "%d/cwd", (int)t->tid);
		fd = openat(n->caller.host_proc, buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? negerrno() : fd;
	}
	if (mount_fd < 0)
		return -EBADF;
	pidfd = (int)syscall(SYS_pidfd_open, t->tid, PIDFD_THREAD);
	if (pidfd < 0)
		pidfd = (int)syscall(SYS_pidfd_open, t->creds.tgid, 0);
	if (pidfd < 0)
		return negerrno();
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, mount_fd, 0);
	return fd < 0 ? negerrno() : fd;
}

/*
 * open_by_handle_at is never CONTINUE'd unless its flags keep it from opening a driver:
 * the handle is memory the kernel would read again, so whatever devwl judged is what it
 * opens itself — the device under the policy, anything else too — and a handle it cannot
 * resolve is refused.
 */
static int decide_by_handle(struct devwl_notify *n, int nfd, const struct devwl_node *node,
			    const struct devwl_syscall *sc, struct devwl_event *e, struct answer *a)
{
	struct devwl_caller *cl = &n->caller;
	struct devwl_target *t = &n->target;
	struct file_handle *fh = (struct file_handle *)n->mem;
	_cleanup_close_ int mfd = -1;
	_cleanup_close_ int ofd = -1;
	int flags = (int)(uint32_t)n->req->data.args[2];
	unsigned int bytes = 0;
	struct stat st;
	bool device = false;
	int r = 0;

	if (flags & (O_PATH | O_DIRECTORY))
		return 0;
	e->access = access_of(flags);
	r = target_open(cl, t, (pid_t)n->req->pid, AT_FDCWD, false);
	if (r >= 0)
		r = target_read_creds(cl, t);
	if (id_valid(nfd, n->req->id) < 0)
		return -ENOENT;
	if (r < 0)
		return cannot_decide(a);
	/*
	 * The kernel refuses it (EPERM) without CAP_DAC_READ_SEARCH; newer kernels also let
	 * a caller with it in the mount's user namespace in: devwl does not, it refuses.
	 */
	if (!t->creds.same_userns || !(t->creds.cap_eff & (1ULL << CAP_DAC_READ_SEARCH)))
		return answer_error(a, EPERM);
	/* The kernel's own errors for the handle, answered here: the memory may change. */
	r = read_mem(n, t->tid, arg(sc, n->req, 1), fh, sizeof(*fh));
	if (r < 0)
		return answer_error(a, -r);
	bytes = fh->handle_bytes;
	if (bytes == 0 || bytes > HANDLE_MAX)
		return answer_error(a, EINVAL);
	r = read_mem(n, t->tid, arg(sc, n->req, 1), fh, sizeof(*fh) + bytes);
	if (r < 0)
		return answer_error(a, -r);
	fh->handle_bytes = bytes; /* as the kernel does: the first read's size counts */
	mfd = handle_mount_fd(n, t, (int)(int32_t)n->req->data.args[0]);
	if (id_valid(nfd, n->req->id) < 0)
		return -ENOENT;
	if (mfd < 0)
		return mfd == -EBADF ? answer_error(a, EBADF) : cannot_decide(a);
	ofd = open_by_handle_at(mfd, fh, O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW));
	if (ofd < 0)
		return errno == ESTALE ? answer_error(a, ESTALE) : cannot_decide(a);
	if (fstat(ofd, &st) < 0)
		return cannot_decide(a);
	device = device_of(&st, e);
	if (device && devwl_node_check(node, e->type, e->major, e->minor, e->access) != 1) {
		n->reason = "policy";
		return answer_error(a, EPERM);
	}
	if (kernel_opens(n, device, &st))
		return 0;
	if (n->forced)
		return answer_error(a, EFAULT);
	if (carry_refused(n, a))
		return 0;
	if (caller_enter(cl, t) < 0 || caller_become(cl, t, 0) < 0)
		return cannot_decide(a);
	r = caller_reopen(cl, ofd, flags, &a->fd);
	if (r < 0)
		return our_trouble(r) ? cannot_decide(a) : answer_error(a, -r);
	a->kind = ANSWER_FD;
	a->cloexec = flags & O_CLOEXEC;
	return 0;
}

/*
 * openat2's own refusals, in the kernel's order (build_open_flags): negative errno, or 1
 * for a valid O_PATH / O_DIRECTORY / O_TMPFILE open, which never opens a device node.
 */
static int open_how_check(const struct open_how *how)
{
	uint64_t flags = how->flags;

	if ((flags & ~(uint64_t)VALID_OPEN_FLAGS) || (how->resolve & ~(uint64_t)KNOWN_RESOLVE))
		return -EINVAL;
	if ((how->resolve & RESOLVE_BENEATH) && (how->resolve & RESOLVE_IN_ROOT))
		return -EINVAL;
	if (flags & (O_CREAT | __O_TMPFILE)) {
		if (how->mode & ~(uint64_t)07777)
			return -EINVAL;
	} else if (how->mode) {
		return -EINVAL;
	}
	if ((flags & O_CREAT) && (flags & O_DIRECTORY))
		return -EINVAL;
	if (flags & __O_TMPFILE) {
		if ((flags & (__O_TMPFILE | O_DIRECTORY | O_CREAT)) != O_TMPFILE)
			return -EINVAL;
		if ((flags & O_ACCMODE) == O_RDONLY)
			return -EINVAL;
	}
	if ((flags & O_PATH) && (flags & ~(uint64_t)O_PATH_FLAGS))
		return -EINVAL;
	if ((how->resolve & RESOLVE_CACHED) && (flags & (O_TRUNC | O_CREAT | __O_TMPFILE)))
		return -EAGAIN;
	return flags & (O_PATH | O_DIRECTORY | __O_TMPFILE) ? 1 : 0;
}

static int decide(struct devwl_notify *n, int nfd, const struct devwl_node *node,
		  const struct devwl_syscall *sc, struct devwl_event *e, struct answer *a)
{
	const struct seccomp_notif *req = n->req;
	struct call c = {.dirfd = AT_FDCWD};

	switch (sc->call) {
	case DEVWL_CALL_OPEN:
		c.path = arg(sc, req, 0);
		c.flags = (int)(uint32_t)req->data.args[1];
		return decide_open(n, nfd, node, &c, e, a);
	case DEVWL_CALL_OPENAT:
		c.dirfd = (int)(int32_t)req->data.args[0];
		c.path = arg(sc, req, 1);
		c.flags = (int)(uint32_t)req->data.args[2];
		return decide_open(n, nfd, node, &c, e, a);
	case DEVWL_CALL_CREAT:
		c.path = arg(sc, req, 0);
		c.flags = O_CREAT | O_WRONLY | O_TRUNC;
		return decide_open(n, nfd, node, &c, e, a);
	case DEVWL_CALL_OPENAT2: {
		struct open_how how = {0};
		uint64_t size = arg(sc, req, 3);
		int r = 0;

		/* The size is a register: the kernel's answer to it cannot change. */
		if (size < OPEN_HOW_SIZE_VER0)
			return answer_error(a, EINVAL);
		if (size > n->page_size)
			return answer_error(a, E2BIG);
		if (size > sizeof(n->mem))
			return cannot_decide(a);
		/* The rest is memory the kernel reads again: answer its errors ourselves. */
		r = read_mem(n, (pid_t)req->pid, arg(sc, req, 2), n->mem, (size_t)size);
		if (r < 0)
			return answer_error(a, -r);
		memcpy(&how, n->mem, size < sizeof(how) ? (size_t)size : sizeof(how));
		for (uint64_t i = sizeof(how); i < size; i++)
			if (n->mem[i])
				return answer_error(a, E2BIG);
		r = open_how_check(&how);
		if (r != 0)
			return r < 0 ? answer_error(a, -r) : 0;
		c.dirfd = (int)(int32_t)req->data.args[0];
		c.path = arg(sc, req, 1);
		c.flags = (int)how.flags;
		c.resolve = how.resolve;
		return decide_open(n, nfd, node, &c, e, a);
	}
	case DEVWL_CALL_MKNOD:
		c.path = arg(sc, req, 0);
		c.mode = (mode_t)(uint32_t)req->data.args[1];
		c.dev = (uint32_t)req->data.args[2];
		return decide_mknod(n, nfd, node, &c, e, a);
	case DEVWL_CALL_MKNODAT:
		c.dirfd = (int)(int32_t)req->data.args[0];
		c.path = arg(sc, req, 1);
		c.mode = (mode_t)(uint32_t)req->data.args[2];
		c.dev = (uint32_t)req->data.args[3];
		return decide_mknod(n, nfd, node, &c, e, a);
	case DEVWL_CALL_OPEN_BY_HANDLE_AT:
		return decide_by_handle(n, nfd, node, sc, e, a);
	case DEVWL_CALL_UNLINK:
		c.path = arg(sc, req, 0);
		return decide_unlink(n, nfd, &c);
	case DEVWL_CALL_UNLINKAT:
		c.dirfd = (int)(int32_t)req->data.args[0];
		c.path = arg(sc, req, 1);
		c.flags = (int)(uint32_t)req->data.args[2];
		return decide_unlink(n, nfd, &c);
	case DEVWL_CALL_RENAME:
		c.path = arg(sc, req, 0);
		return decide_rename(n, nfd, &c, AT_FDCWD, arg(sc, req, 1), 0, a);
	case DEVWL_CALL_RENAMEAT:
	case DEVWL_CALL_RENAMEAT2:
		c.dirfd = (int)(int32_t)req->data.args[0];
		c.path = arg(sc, req, 1);
		return decide_rename(
			n, nfd, &c, (int)(int32_t)req->data.args[2], arg(sc, req, 3),
			sc->call == DEVWL_CALL_RENAMEAT2 ? (uint32_t)req->data.args[4] : 0, a);
	default:
		return cannot_decide(a);
	}
}

static int send_resp(struct devwl_notify *n, int nfd, int error, int64_t val, bool cont)
{
	memset(n->resp, 0, n->resp_size);
	n->resp->id = n->req->id;
	n->resp->error = error ? -error : 0;
	n->resp->val = val;
	n->resp->flags = cont ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
	return ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, n->resp) < 0 ? negerrno() : 0;
}

/*
 * Inject our fd as the call's result. With FLAG_SEND the install and the answer are one
 * step, so no fd can land in a target that never learns of it. Not for a supervisor with
 * a receive hook (one that may die mid-call, whose fd someone inherits): a SIGKILL in
 * ADDFD+SEND's wait leaves the call marked answered with the fd never installed, and the
 * target's call returns 0, an fd it never got (the kernel drops the queued install but
 * not the answer). In two steps, a kill before the install leaves the call unanswered
 * for the heir to fail closed; one between install and answer leaves the target an fd
 * of a device it was granted, which it never learns of.
 */
static int inject(struct devwl_notify *n, int nfd, struct answer *a, struct devwl_event *e)
{
	struct seccomp_notif_addfd addfd = {
		.id = n->req->id,
		.flags = 0,
		.srcfd = (uint32_t)a->fd,
		.newfd = 0,
		.newfd_flags = a->cloexec ? O_CLOEXEC : 0,
	};
	int r = 0;

	if ((n->features & DEVWL_FEATURE_ADDFD_SEND) && !n->recv_fn) {
		sigset_t all, old;

		/*
		 * ADDFD+SEND waits for the target interruptibly. Interrupted, it leaves the
		 * notification marked answered while the fd was never installed: the restarted
		 * ioctl fails EINPROGRESS and the target's call returns 0 (an fd it never got).
		 * So no signal may interrupt it; io_uring task work still can, which is why
		 * io_uring users must create their ring with IORING_SETUP_DEFER_TASKRUN.
		 */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		addfd.flags = SECCOMP_ADDFD_FLAG_SEND;
		r = ioctl(nfd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
		if (r < 0)
			r = negerrno();
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (r >= 0)
			return 0;
		errno = -r;
		if (errno == ENOENT)
			return -ENOENT;
		e->verdict = DEVWL_VERDICT_ERROR;
		e->error = errno; /* e.g. EMFILE in the target: the call is still pending */
		return send_resp(n, nfd, errno, 0, false);
	}
	r = ioctl(nfd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
	if (r < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		e->verdict = DEVWL_VERDICT_ERROR;
		e->error = errno;
		return send_resp(n, nfd, errno, 0, false);
	}
	return send_resp(n, nfd, 0, r, false);
}

DEVWL_EXPORT void devwl_notify_forget(struct devwl_notify *n)
{
	if (n)
		caller_forget(&n->caller);
}

/* Decide and answer the notification in n->req, received at start. */
static int handle_received(struct devwl_notify *n, int notify_fd, const struct devwl_node *node,
			   uint64_t start, struct devwl_event *ret_event)
{
	struct answer a = {.kind = ANSWER_CONTINUE, .fd = -1};
	const struct devwl_syscall *sc = NULL;
	struct devwl_event e;
	int r = 0;

	n->path[0] = '\0';
	n->forced = false;
	n->reason = NULL;
	sc = filter_syscall_lookup(n->req->data.arch, n->req->data.nr);
	devwl_event_init(&e, n->req->id, (pid_t)n->req->pid, n->req->data.nr, sc ? sc->name : NULL);
	e.path = n->path;

	/*
	 * A number devwl does not trap (another filter's notify fd, an OCI profile that
	 * notifies more) or an x32 call (devwl would read 32-bit pointers the kernel takes as
	 * 64-bit): devwl cannot decide it.
	 */
	if (!sc || sc->x32)
		r = cannot_decide(&a);
	else
		r = decide(n, notify_fd, node, sc, &e, &a);
	if (a.reason)
		n->reason = a.reason;
	caller_leave(&n->caller);
	if (n->target.have_creds) {
		e.pid = n->target.creds.tgid;
		e.userns_ino = n->target.creds.userns_ino;
	}
	target_close(&n->target);
	if (r == 0) {
		switch (a.kind) {
		case ANSWER_CONTINUE:
			/* A granted device the kernel opens itself is a grant all the same. */
			e.verdict = e.type ? DEVWL_VERDICT_ALLOW : DEVWL_VERDICT_CONTINUE;
			e.error = 0;
			r = send_resp(n, notify_fd, 0, 0, true);
			break;
		case ANSWER_ERROR:
			e.verdict = a.error == EPERM ? DEVWL_VERDICT_DENY : DEVWL_VERDICT_ERROR;
			e.error = a.error;
			r = send_resp(n, notify_fd, a.error, 0, false);
			break;
		case ANSWER_VALUE:
			e.verdict = DEVWL_VERDICT_ALLOW;
			e.error = 0;
			r = send_resp(n, notify_fd, 0, 0, false);
			break;
		case ANSWER_FD:
			e.verdict = DEVWL_VERDICT_ALLOW;
			e.error = 0;
			r = inject(n, notify_fd, &a, &e);
			break;
		}
	}
	closep(&a.fd);
	e.handling_ns = now_ns() - start;
	if (ret_event)
		*ret_event = e;
	return r;
}

DEVWL_EXPORT int devwl_notify_handle(struct devwl_notify *n, int notify_fd,
				     const struct devwl_node *node, struct devwl_event *ret_event)
{
	if (!n || notify_fd < 0 || !node)
		return -EINVAL;
	memset(n->req, 0, n->req_size); /* RECV refuses a dirty buffer */
	if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_RECV, n->req) < 0)
		return negerrno();
	if (n->recv_fn)
		n->recv_fn(notify_fd, n->req->id, n->recv_userdata);
	return handle_received(n, notify_fd, node, now_ns(), ret_event);
}

DEVWL_EXPORT int devwl_notify_handle_request(struct devwl_notify *n, int notify_fd,
					     const struct seccomp_notif *req, size_t req_size,
					     const struct devwl_node *node,
					     struct devwl_event *ret_event)
{
	uint64_t start = now_ns();

	/* Shorter than the kernel's first struct: not a notification the kernel wrote. */
	if (!n || notify_fd < 0 || !req || !node || req_size < sizeof(*req))
		return -EINVAL;
	/* The fields devwl reads are the first struct's; a longer one's tail is not read. */
	memset(n->req, 0, n->req_size);
	memcpy(n->req, req, sizeof(*req));
	return handle_received(n, notify_fd, node, start, ret_event);
}
