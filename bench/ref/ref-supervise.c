/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The smallest correct supervisor loop: the thread sleeps in a blocking
 * SECCOMP_IOCTL_NOTIF_RECV (the notify fd's own wait queue, where SYNC_WAKE_UP keeps the
 * target and the supervisor on one CPU) and answers each call before the next RECV.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ref-filter.h"
#include "ref-supervise.h"

#define ROOT_CACHE 64

static pid_t child = -1;
int ref_poll_first;

/*
 * The workload's filter goes away only when it is reaped, and we are asleep in RECV:
 * reap it here and leave at once (nothing of ours needs cleaning up).
 */
static void on_sigchld(int sig)
{
	int status = 0;

	(void)sig;
	if (waitpid(child, &status, WNOHANG) == child)
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

void ref_send(struct ref_notif *n, int error, long long val, unsigned int flags)
{
	memset(n->resp, 0, n->resp_size);
	n->resp->id = n->req->id;
	n->resp->error = error;
	n->resp->val = val;
	n->resp->flags = flags;
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_SEND, n->resp) < 0 && errno != ENOENT)
		fprintf(stderr, "ref: SEND: %m\n");
}

int ref_read_path(pid_t pid, unsigned long long addr, char *buf, size_t size)
{
	size_t done = 0;

	while (done < size) {
		size_t chunk = 4096 - ((addr + done) & 4095);
		struct iovec local = {.iov_base = buf + done};
		struct iovec remote = {.iov_base = (void *)(unsigned long)(addr + done)};
		ssize_t got = 0;

		if (chunk > size - done)
			chunk = size - done;
		local.iov_len = remote.iov_len = chunk;
		got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (got <= 0)
			return -1;
		if (memchr(buf + done, '\0', (size_t)got))
			return 0;
		done += (size_t)got;
	}
	return -1;
}

int ref_root_fd(struct ref_notif *n)
{
	static struct {
		pid_t pid;
		int fd;
	} cache[ROOT_CACHE];
	static unsigned int next;
	pid_t pid = (pid_t)n->req->pid;
	char path[64];
	int fd = -1;

	for (unsigned int i = 0; i < ROOT_CACHE; i++)
		if (cache[i].pid == pid && cache[i].fd > 0)
			return cache[i].fd;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* The pid may have been reused before the open: only a pending call proves it. */
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &n->req->id) < 0) {
		close(fd);
		return -1;
	}
	if (cache[next].fd > 0)
		close(cache[next].fd);
	cache[next].pid = pid;
	cache[next].fd = fd;
	next = (next + 1) % ROOT_CACHE;
	return fd;
}

static pid_t spawn(char **argv, int *ret_sock)
{
	int sv[2] = {-1, -1};
	char num[16];
	pid_t pid = -1;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* The workload installs the filter once it is ready, then sends the fd. */
		int fd = dup(sv[1]);
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);

		if (fd < 0)
			_exit(127);
		snprintf(num, sizeof(num), "%d", fd);
		setenv(REF_NOTIFY_SOCK_ENV, num, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "ref: exec %s: %m\n", argv[0]);
		_exit(127);
	}
	close(sv[1]);
	*ret_sock = sv[0];
	return pid;
}

int ref_supervise(int argc, char **argv, ref_answer_fn fn)
{
	struct seccomp_notif_sizes sizes = {0};
	struct sigaction sa = {.sa_handler = on_sigchld};
	struct ref_notif n = {.fd = -1};
	size_t req_size = 0;
	sigset_t chld;
	int sock = -1, status = 0;

	if (argc > 1 && strcmp(argv[1], "--") == 0) {
		argc--;
		argv++;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: %s [--] WORKLOAD [ARG]...\n", argv[0]);
		return 2;
	}
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0) {
		fprintf(stderr, "ref: SECCOMP_GET_NOTIF_SIZES: %m\n");
		return 1;
	}
	req_size = sizes.seccomp_notif > sizeof(*n.req) ? sizes.seccomp_notif : sizeof(*n.req);
	n.resp_size = sizes.seccomp_notif_resp > sizeof(*n.resp) ? sizes.seccomp_notif_resp
								 : sizeof(*n.resp);
	n.req = calloc(1, req_size);
	n.resp = calloc(1, n.resp_size);
	if (!n.req || !n.resp)
		return 1;

	/* SIGCHLD waits until the handler is in place and the child's pid is known. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	child = spawn(argv + 1, &sock);
	if (child < 0) {
		fprintf(stderr, "ref: spawn: %m\n");
		return 1;
	}
	n.fd = ref_recv_fd(sock);
	close(sock);
	if (n.fd < 0) {
		/* It exited (or failed) before trapping anything. */
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	if (ioctl(n.fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0)
		fprintf(stderr, "ref: warning: no SYNC_WAKE_UP: %m\n");
	sigprocmask(SIG_UNBLOCK, &chld, NULL);

	for (;;) {
		struct pollfd pfd = {.fd = n.fd, .events = POLLIN};

		if (ref_poll_first && poll(&pfd, 1, -1) < 0 && errno != EINTR) {
			fprintf(stderr, "ref: poll: %m\n");
			return 1;
		}
		memset(n.req, 0, req_size); /* RECV refuses a dirty buffer */
		if (ioctl(n.fd, SECCOMP_IOCTL_NOTIF_RECV, n.req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			fprintf(stderr, "ref: RECV: %m\n");
			return 1;
		}
		fn(&n);
	}
}
