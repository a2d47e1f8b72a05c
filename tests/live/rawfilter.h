/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A child under a hand-written filter that notifies chosen (arch, nr) pairs, as another
 * program's filter (an OCI runtime's profile) would, for feeding devwl_notify_handle()
 * calls devwl's own filter never traps. The child runs fn and writes what it prints to
 * stdout through a pipe.
 */
#ifndef DEVWL_RAWFILTER_H
#define DEVWL_RAWFILTER_H

#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#include "livetest.h"

struct lt_raw {
	int nfd;
	int out;
	pid_t pid;
};

static inline int lt_raw_install(uint32_t arch, const uint32_t *nrs, size_t n)
{
	struct sock_filter insns[64];
	struct sock_fprog prog = {0};
	size_t k = 0;

	if (n > 50)
		return -1;
	insns[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						  offsetof(struct seccomp_data, arch));
	insns[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 0,
						  (unsigned char)(n + 1));
	insns[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						  offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < n; i++)
		insns[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nrs[i],
							  (unsigned char)(n - i), 0);
	insns[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	insns[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	prog.len = (unsigned short)k;
	prog.filter = insns;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			    &prog);
}

static inline void lt_raw_start(struct lt_raw *r, uint32_t arch, const uint32_t *nrs, size_t n,
				int (*fn)(void *), void *arg)
{
	int sv[2], out[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(out, O_CLOEXEC) < 0)
		LT_DIE("setup: %m");
	r->pid = fork();
	if (r->pid < 0)
		LT_DIE("fork: %m");
	if (r->pid == 0) {
		int fd = -1;

		dup2(out[1], 1);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(123);
		fd = lt_raw_install(arch, nrs, n);
		if (fd < 0)
			_exit(122);
		if (fdpass_send(sv[1], fd) < 0)
			_exit(125);
		close(fd);
		fd = fn(arg);
		fflush(stdout);
		_exit(fd);
	}
	close(sv[1]);
	close(out[1]);
	r->nfd = fdpass_recv(sv[0]);
	close(sv[0]);
	r->out = out[0];
	if (r->nfd < 0)
		LT_DIE("no notify fd from the child");
}

/* Handle one notification within 10 s; false when none came. */
static inline bool lt_raw_handle(struct lt_raw *r, struct devwl_notify *n,
				 const struct devwl_node *node, struct devwl_event *e)
{
	struct pollfd p = {.fd = r->nfd, .events = POLLIN};
	int rc = 0;

	if (poll(&p, 1, 10000) <= 0 || !(p.revents & POLLIN))
		return false;
	rc = devwl_notify_handle(n, r->nfd, node, e);
	if (rc < 0)
		LT_DIE("devwl_notify_handle: %s", strerror(-rc));
	return true;
}

/* The child's output; waits for it. Caller frees. */
static inline char *lt_raw_finish(struct lt_raw *r)
{
	char *buf = lt_read_all(r->out);

	while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(r->nfd);
	return buf;
}

#endif
