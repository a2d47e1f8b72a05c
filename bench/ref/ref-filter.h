/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The trap the reference programs measure against: devwl's filter shape, kernel only. */
#ifndef REF_FILTER_H
#define REF_FILTER_H

/* Older than the running kernel: Debian 12 headers lack the 6.6 ioctl. */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1UL
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* The environment variable naming the socket a trapped workload sends its notify fd on. */
#define REF_NOTIFY_SOCK_ENV "BENCH_NOTIFY_SOCK"

/*
 * Install, on the calling process, a filter trapping what devwl's traps: open/openat
 * without O_PATH or O_DIRECTORY, mknod/mknodat of char and block nodes, creat, openat2,
 * open_by_handle_at; io_uring_setup fails EPERM. Returns the notify fd or -errno.
 */
int ref_filter_install(void);

/* Send fd over the unix socket sock (SCM_RIGHTS). Returns 0 or -errno. */
int ref_send_fd(int sock, int fd);

/* Receive one fd from sock. Returns it, -EPIPE at EOF, or -errno. */
int ref_recv_fd(int sock);

#endif
