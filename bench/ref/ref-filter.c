/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hand-written BPF program with the shape of devwl's (lib/filter.c): the same calls
 * trap under the same register tests, so that a reference run and a devwl run pay the
 * same filter cost and differ only in the supervisor. x86_64 only: the workload never
 * enters another ABI, and any other arch is killed as libseccomp does by default.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "ref-filter.h"

#define NR_OFF	  offsetof(struct seccomp_data, nr)
#define ARCH_OFF  offsetof(struct seccomp_data, arch)
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define X32_BIT	  0x40000000U

#define RET(action)  BPF_STMT(BPF_RET | BPF_K, (action))
#define LD(off)	     BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define AND(k)	     BPF_STMT(BPF_ALU | BPF_AND | BPF_K, (k))
#define JEQ(k, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))

/*
 * Each block tests the call number (A) and, on a match, decides and returns; otherwise
 * it jumps past itself with A unchanged. BPF jumps count from the next instruction.
 */
/* open-like: trap unless O_PATH or O_DIRECTORY is set in the flags argument. */
#define OPEN_BLOCK(nr, arg)                                                                        \
	JEQ(nr, 0, 5), LD(ARG_LO(arg)), AND(O_PATH | O_DIRECTORY), JEQ(0, 0, 1),                   \
		RET(SECCOMP_RET_USER_NOTIF), RET(SECCOMP_RET_ALLOW)
/* mknod-like: trap char and block nodes only. */
#define MKNOD_BLOCK(nr, arg)                                                                       \
	JEQ(nr, 0, 6), LD(ARG_LO(arg)), AND(S_IFMT), JEQ(S_IFCHR, 2, 0), JEQ(S_IFBLK, 1, 0),       \
		RET(SECCOMP_RET_ALLOW), RET(SECCOMP_RET_USER_NOTIF)
#define ALWAYS_BLOCK(nr, action) JEQ(nr, 0, 1), RET(action)

int ref_filter_install(void)
{
	static struct sock_filter insns[] = {
		LD(ARCH_OFF),
		JEQ(AUDIT_ARCH_X86_64, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		LD(NR_OFF),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 1),
		RET(SECCOMP_RET_ALLOW),
		OPEN_BLOCK(__NR_open, 1),
		OPEN_BLOCK(__NR_openat, 2),
		MKNOD_BLOCK(__NR_mknod, 1),
		MKNOD_BLOCK(__NR_mknodat, 2),
		ALWAYS_BLOCK(__NR_creat, SECCOMP_RET_USER_NOTIF),
		ALWAYS_BLOCK(__NR_openat2, SECCOMP_RET_USER_NOTIF),
		ALWAYS_BLOCK(__NR_open_by_handle_at, SECCOMP_RET_USER_NOTIF),
		ALWAYS_BLOCK(__NR_io_uring_setup, SECCOMP_RET_ERRNO | EPERM),
		RET(SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(insns) / sizeof(insns[0]),
		.filter = insns,
	};
	int fd = -1;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	/* The same load flags as devwl asks for. */
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
			  &prog);
	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				  SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	return fd < 0 ? -errno : fd;
}

int ref_send_fd(int sock, int fd)
{
	char data = 'F';
	struct iovec iov = {.iov_base = &data, .iov_len = 1};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm = NULL;

	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

int ref_recv_fd(int sock)
{
	char data = 0;
	struct iovec iov = {.iov_base = &data, .iov_len = 1};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm = NULL;
	ssize_t n = 0;
	int fd = -1;

	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EBADMSG;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}
