/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seccomp filter devwl installs, and the kernel features it relies on.
 *
 * The filter traps only calls that can reach a device node: mknod* of a char or block
 * node (the mode is a register, so fifos, sockets and regular files never trap),
 * open/openat without O_PATH or O_DIRECTORY (neither opens a device), and creat,
 * openat2, open_by_handle_at always (their flags are in memory or irrelevant).
 * With DEVWL_FILTER_TWINS unlink* and rename* trap too, whatever their arguments.
 * io_uring_setup fails EPERM in the kernel: io_uring's OPENAT never passes seccomp.
 * On x86_64 the same calls through the x32 ABI (__X32_SYSCALL_BIT) fail EPERM in the
 * kernel, never trapped: x32 passes pointers in full 64-bit registers, and a handler
 * reading them as 32-bit would judge other memory than the kernel opens.
 *
 * libseccomp builds the program; we load it ourselves because libseccomp 2.5.4 cannot
 * ask for SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "devwl.h"
#include "filter.h"
#include "util.h"

/* Newer than Debian 12's headers (6.6+). The flag is passed by value. */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

static const struct {
	const char *name;
	enum devwl_call call;
} trapped[] = {
	{"open", DEVWL_CALL_OPEN},
	{"openat", DEVWL_CALL_OPENAT},
	{"openat2", DEVWL_CALL_OPENAT2},
	{"creat", DEVWL_CALL_CREAT},
	{"mknod", DEVWL_CALL_MKNOD},
	{"mknodat", DEVWL_CALL_MKNODAT},
	{"open_by_handle_at", DEVWL_CALL_OPEN_BY_HANDLE_AT},
	{"unlink", DEVWL_CALL_UNLINK},
	{"unlinkat", DEVWL_CALL_UNLINKAT},
	{"rename", DEVWL_CALL_RENAME},
	{"renameat", DEVWL_CALL_RENAMEAT},
	{"renameat2", DEVWL_CALL_RENAMEAT2},
};

/*
 * The ABIs a process may use on this architecture. On x86_64 a process can always enter
 * the i386 ABI (int $0x80), and x32 numbers arrive with the x86_64 audit arch; whether
 * the kernel has x32 or not, seccomp sees the number first. x32 calls are denied (the
 * filter answers EPERM; a handler given one by another filter answers EPERM).
 */
static const struct {
	uint32_t token;	     /* libseccomp's arch token */
	uint32_t audit_arch; /* what seccomp_data.arch says */
	bool compat32;
	bool x32;
} abis[] = {
#if defined(__x86_64__)
	{SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, false, false},
	{SCMP_ARCH_X86, AUDIT_ARCH_I386, true, false},
	{SCMP_ARCH_X32, AUDIT_ARCH_X86_64, false, true},
#else
	{SCMP_ARCH_NATIVE, 0, sizeof(long) == 4, false},
#endif
};

static struct devwl_syscall table[ARRAY_SIZE(trapped) * ARRAY_SIZE(abis)];
static size_t table_len;
static int table_err;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_build(void)
{
	for (size_t a = 0; a < ARRAY_SIZE(abis); a++) {
		uint32_t audit_arch = abis[a].audit_arch;

		if (!audit_arch)
			audit_arch = seccomp_arch_native();
		for (size_t i = 0; i < ARRAY_SIZE(trapped); i++) {
			int nr = seccomp_syscall_resolve_name_arch(abis[a].token, trapped[i].name);

			if (nr < 0)
				continue; /* not on this ABI (e.g. no open on arm64) */
			table[table_len++] = (struct devwl_syscall){
				.arch = audit_arch,
				.nr = nr,
				.call = (uint8_t)trapped[i].call,
				.compat32 = abis[a].compat32,
				.x32 = abis[a].x32,
				.name = trapped[i].name,
			};
		}
	}
	if (table_len == 0)
		table_err = -EOPNOTSUPP;
}

int filter_table_init(void)
{
	pthread_once(&table_once, table_build);
	return table_err;
}

const struct devwl_syscall *filter_syscall_lookup(uint32_t arch, int32_t nr)
{
	for (size_t i = 0; i < table_len; i++)
		if (table[i].nr == nr && table[i].arch == arch)
			return &table[i];
	return NULL;
}

static int seccomp_syscall(unsigned int op, unsigned int flags, void *args)
{
	return (int)syscall(SYS_seccomp, op, flags, args);
}

/* A program that allows everything, for probing flags on a throwaway thread. */
static int load_allow_all(unsigned int flags)
{
	struct sock_filter insn = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {.len = 1, .filter = &insn};

	return seccomp_syscall(SECCOMP_SET_MODE_FILTER, flags, &prog);
}

/*
 * A filter flag the kernel knows, asked without installing anything: with a NULL program
 * a known flag set fails EFAULT (the program is read after the flags are checked), an
 * unknown one EINVAL.
 */
static bool filter_flag_known(unsigned int flags)
{
	return seccomp_syscall(SECCOMP_SET_MODE_FILTER, flags, NULL) < 0 && errno == EFAULT;
}

/*
 * The ioctls need a notify fd, which needs a filter, which cannot be removed. Filters
 * belong to a thread, not to the process: a throwaway thread installs an allow-all
 * listener (no_new_privs too is per thread), probes, closes the fd and exits, and its
 * filter goes with it. No child process: an embedder's SIGCHLD handling or waitpid(-1)
 * loop sees nothing. Runs with every signal blocked.
 */
struct probe {
	unsigned int found;
	bool ran; /* the thread had a listener to probe with */
};

static void *probe_thread(void *arg)
{
	struct seccomp_notif_addfd addfd = {.id = 0, .flags = SECCOMP_ADDFD_FLAG_SEND};
	struct probe *p = arg;
	int fd = -1;

	/* Fails (EBUSY) under a filter that has a listener already: nothing to add then. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return NULL;
	fd = load_allow_all(SECCOMP_FILTER_FLAG_NEW_LISTENER);
	if (fd < 0)
		return NULL;
	p->ran = true;
	/* Unknown flags fail EINVAL before the id is looked up; known ones ENOENT. */
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd) < 0 && errno == ENOENT)
		p->found |= DEVWL_FEATURE_ADDFD_SEND;
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0)
		p->found |= DEVWL_FEATURE_SYNC_WAKE_UP;
	close(fd);
	return NULL;
}

/*
 * The features beyond USER_NOTIF; *ret_complete false when no thread could run or it had
 * no listener to probe with (retry).
 */
static unsigned int probe_features(bool *ret_complete)
{
	struct probe p = {.found = DEVWL_FEATURE_USER_NOTIF};
	sigset_t all, old;
	pthread_t th;
	int r = 0;

	*ret_complete = false;
	if (filter_flag_known(SECCOMP_FILTER_FLAG_NEW_LISTENER |
			      SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV))
		p.found |= DEVWL_FEATURE_WAIT_KILLABLE_RECV;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&th, NULL, probe_thread, &p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return p.found;
	pthread_join(th, NULL);
	*ret_complete = p.ran;
	return p.found;
}

static unsigned int features_cached;
static bool features_known;
static pthread_mutex_t features_lock = PTHREAD_MUTEX_INITIALIZER;

DEVWL_EXPORT unsigned int devwl_features(void)
{
	uint32_t action = SECCOMP_RET_USER_NOTIF;
	unsigned int found = 0;
	bool complete = true;

	if (__atomic_load_n(&features_known, __ATOMIC_ACQUIRE))
		return features_cached;
	pthread_mutex_lock(&features_lock);
	if (!features_known) {
		if (seccomp_syscall(SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0)
			found = probe_features(&complete);
		/* A probe that could not run (no thread, a listener above) is asked again. */
		if (complete) {
			features_cached = found;
			__atomic_store_n(&features_known, true, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&features_lock);
	return complete ? features_cached : found;
}

/* Trap an open-like call only when its flags, a register, leave a device possible. */
static int add_open_rule(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned int flags_arg)
{
	struct scmp_arg_cmp cmp = {
		.arg = flags_arg,
		.op = SCMP_CMP_MASKED_EQ,
		.datum_a = (uint32_t)(O_PATH | O_DIRECTORY),
		.datum_b = 0,
	};

	/* The mask's upper word is 0, so only the int the ABI defines is compared. */
	return seccomp_rule_add_array(ctx, action, nr, 1, &cmp);
}

static int add_mknod_rules(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned int mode_arg)
{
	static const uint32_t types[] = {S_IFCHR, S_IFBLK};
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		struct scmp_arg_cmp cmp = {
			.arg = mode_arg,
			.op = SCMP_CMP_MASKED_EQ,
			.datum_a = S_IFMT,
			.datum_b = types[i],
		};

		r = seccomp_rule_add_array(ctx, action, nr, 1, &cmp);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The calls that can reach a device, each given action (NOTIFY, or EPERM for x32). */
static int add_device_rules(scmp_filter_ctx ctx, uint32_t action, unsigned int flags)
{
	int r = 0;

	r = add_mknod_rules(ctx, action, SCMP_SYS(mknod), 1);
	if (r >= 0)
		r = add_mknod_rules(ctx, action, SCMP_SYS(mknodat), 2);
	/* A twin is a mount point: removing or renaming its node must reach devwl first. */
	static const int twin_calls[] = {SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rename),
					 SCMP_SYS(renameat), SCMP_SYS(renameat2)};

	for (size_t i = 0; r >= 0 && (flags & DEVWL_FILTER_TWINS) && i < ARRAY_SIZE(twin_calls);
	     i++)
		r = seccomp_rule_add(ctx, action, twin_calls[i], 0);
	/* With the policy in the device cgroup the kernel judges every open itself. */
	if (flags & DEVWL_FILTER_MKNOD_ONLY)
		goto io_uring;
	if (r >= 0)
		r = add_open_rule(ctx, action, SCMP_SYS(open), 1);
	if (r >= 0)
		r = add_open_rule(ctx, action, SCMP_SYS(openat), 2);
	if (r >= 0)
		r = seccomp_rule_add(ctx, action, SCMP_SYS(creat), 0);
	if (r >= 0)
		r = seccomp_rule_add(ctx, action, SCMP_SYS(openat2), 0);
	if (r >= 0)
		r = seccomp_rule_add(ctx, action, SCMP_SYS(open_by_handle_at), 0);
io_uring:
	if (r >= 0 && !(flags & DEVWL_FILTER_ALLOW_IO_URING))
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(io_uring_setup), 0);
	return r;
}

/*
 * One context per action: libseccomp adds a rule to every arch of a context, so the x32
 * rules (EPERM in the kernel) are built alone and merged in.
 */
static int build_filter(unsigned int flags, scmp_filter_ctx *ret_ctx)
{
	scmp_filter_ctx ctx = NULL, x32 = NULL;
	int r = 0;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	for (size_t a = 0; a < ARRAY_SIZE(abis); a++) {
		if (abis[a].x32 || abis[a].token == SCMP_ARCH_NATIVE ||
		    abis[a].token == seccomp_arch_native())
			continue;
		r = seccomp_arch_add(ctx, abis[a].token);
		if (r < 0 && r != -EEXIST)
			goto fail;
	}
	r = add_device_rules(ctx, SCMP_ACT_NOTIFY, flags);
	for (size_t a = 0; r >= 0 && a < ARRAY_SIZE(abis); a++) {
		if (!abis[a].x32)
			continue;
		x32 = seccomp_init(SCMP_ACT_ALLOW);
		if (!x32) {
			r = -ENOMEM;
			break;
		}
		r = seccomp_arch_remove(x32, SCMP_ARCH_NATIVE);
		if (r >= 0)
			r = seccomp_arch_add(x32, abis[a].token);
		if (r >= 0)
			r = add_device_rules(x32, SCMP_ACT_ERRNO(EPERM), flags);
		if (r >= 0)
			r = seccomp_merge(ctx, x32); /* frees x32 on success */
		if (r < 0)
			seccomp_release(x32);
		x32 = NULL;
	}
	if (r < 0)
		goto fail;
	*ret_ctx = ctx;
	return 0;
fail:
	seccomp_release(ctx);
	return r == -EDOM || r == -EFAULT ? -EINVAL : r;
}

/* The BPF program libseccomp generated, through a memfd (2.5.4 has no in-memory export). */
static int export_program(scmp_filter_ctx ctx, struct sock_filter **ret_insns, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ struct sock_filter *insns = NULL;
	struct stat st;
	size_t done = 0;
	int r = 0;

	fd = memfd_create("devwl-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return negerrno();
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return r;
	if (fstat(fd, &st) < 0)
		return negerrno();
	if (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) ||
	    st.st_size > (off_t)(BPF_MAXINSNS * sizeof(struct sock_filter)))
		return -EINVAL;
	insns = malloc((size_t)st.st_size);
	if (!insns)
		return -ENOMEM;
	while (done < (size_t)st.st_size) {
		ssize_t n = pread(fd, (char *)insns + done, (size_t)st.st_size - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? negerrno() : -EIO;
		done += (size_t)n;
	}
	*ret_len = (size_t)st.st_size / sizeof(struct sock_filter);
	*ret_insns = TAKE_PTR(insns);
	return 0;
}

DEVWL_EXPORT int devwl_filter_install(unsigned int flags, int *ret_notify_fd)
{
	_cleanup_free_ struct sock_filter *insns = NULL;
	unsigned int features = 0, load_flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
	struct sock_fprog prog = {0};
	scmp_filter_ctx ctx = NULL;
	size_t len = 0;
	int fd = -1, r = 0;

	if (!ret_notify_fd ||
	    (flags & ~(DEVWL_FILTER_ALLOW_IO_URING | DEVWL_FILTER_NO_WAIT_KILLABLE_RECV |
		       DEVWL_FILTER_MKNOD_ONLY | DEVWL_FILTER_TWINS)))
		return -EINVAL;
	features = devwl_features();
	if (!(features & DEVWL_FEATURE_USER_NOTIF))
		return -EOPNOTSUPP;
	r = filter_table_init();
	if (r < 0)
		return r;
	r = build_filter(flags, &ctx);
	if (r < 0)
		return r;
	r = export_program(ctx, &insns, &len);
	seccomp_release(ctx);
	if (r < 0)
		return r;
	prog.len = (unsigned short)len;
	prog.filter = insns;

	/*
	 * Killable wait: once the supervisor has received a call, a non-fatal signal no
	 * longer cancels it, so work done on the caller's behalf is not repeated.
	 * No TSYNC: the caller is documented to be single-threaded here.
	 */
	if ((features & DEVWL_FEATURE_WAIT_KILLABLE_RECV) &&
	    !(flags & DEVWL_FILTER_NO_WAIT_KILLABLE_RECV))
		load_flags |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	fd = seccomp_syscall(SECCOMP_SET_MODE_FILTER, load_flags, &prog);
	if (fd < 0 && errno == EINVAL && (load_flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV))
		fd = seccomp_syscall(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
				     &prog);
	if (fd < 0)
		return errno == EFAULT ? -EINVAL : negerrno();
	(void)devwl_notify_fd_prepare(fd);
	*ret_notify_fd = fd;
	return 0;
}

DEVWL_EXPORT int devwl_notify_fd_prepare(int notify_fd)
{
	if (notify_fd < 0)
		return -EBADF;
	/* Keep the target and the supervisor on one CPU across the round trip (6.6+). */
	if (!(devwl_features() & DEVWL_FEATURE_SYNC_WAKE_UP))
		return -EOPNOTSUPP;
	if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0)
		return negerrno();
	return 0;
}
