/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a runtime does with libdevwl, whole (libdevwl(3), EMBEDDING): fork the workload,
 * have it install devwl's filter and pass the notify fd back, then serve its notifications
 * from the runtime's own poll loop until it exits.
 *
 *   devwl-embed [--policy FILE --node PATH] [--allow RULE]... -- COMMAND [ARG]...
 *
 * With no policy the workload's node allows what --allow lists and nothing else. It
 * uses include/devwl.h and libc only: build it with
 *   cc devwl-embed.c $(pkg-config --cflags --libs devwl)
 * There is no device cgroup here, so the kernel opens a granted device in the workload's
 * own context (a runtime that programs one says so: devwl_notify_set_baseline()).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <devwl.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Pass one fd over a socket (SCM_RIGHTS), as a runtime's child passes its notify fd. */
static int send_fd(int sock, int fd)
{
	char byte = 0, cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = NULL;
	int fd = -1;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The workload: filter, fd to the parent, exec. Nothing it does after is trusted. */
static void __attribute__((noreturn)) child(int sock, char **argv)
{
	int notify_fd = -1, r;

	/* Unprivileged filters need no_new_privs; a runtime sets it for its containers too. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(126);
	r = devwl_filter_install(0, &notify_fd);
	if (r < 0) {
		fprintf(stderr, "devwl-embed: installing the filter: %s\n", strerror(-r));
		_exit(126);
	}
	if (send_fd(sock, notify_fd) < 0)
		_exit(126);
	close(notify_fd);
	close(sock);
	execvp(argv[0], argv);
	fprintf(stderr, "devwl-embed: %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static const char *verdict_name(enum devwl_verdict v)
{
	switch (v) {
	case DEVWL_VERDICT_CONTINUE:
		return "continue";
	case DEVWL_VERDICT_ALLOW:
		return "allow";
	case DEVWL_VERDICT_DENY:
		return "deny";
	default:
		return "error";
	}
}

/*
 * The runtime's loop: the notify fd and the child's pidfd. It serves until no task holds
 * the filter any more (POLLHUP), which the kernel says only once the child is reaped: the
 * workload's own children may still call after it exits.
 */
static int serve(struct devwl_notify *notify, int notify_fd, pid_t pid, int pidfd,
		 const struct devwl_node *node, int *ret_status)
{
	struct pollfd fds[2] = {{.fd = notify_fd, .events = POLLIN},
				{.fd = pidfd, .events = POLLIN}};

	for (;;) {
		struct devwl_event ev = {0};
		int r;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (fds[1].revents) {
			waitpid(pid, ret_status, 0);
			fds[1].fd = -1;
		}
		if (fds[0].revents & POLLIN) {
			r = devwl_notify_handle(notify, notify_fd, node, &ev);
			if (r == -ENOENT || r == -EAGAIN)
				continue; /* the caller went away, or another reader took it */
			if (r < 0)
				fprintf(stderr, "devwl-embed: handling: %s\n", strerror(-r));
			else if (ev.type)
				fprintf(stderr, "devwl-embed: %s %s %c %u:%u: %s\n", ev.syscall,
					ev.path ? ev.path : "?",
					ev.type == DEVWL_DEV_BLOCK ? 'b' : 'c', ev.major, ev.minor,
					verdict_name(ev.verdict));
		} else if (fds[0].revents & (POLLHUP | POLLERR)) {
			return 0;
		}
	}
}

int main(int argc, char **argv)
{
	struct devwl_policy *policy = NULL;
	struct devwl_node *node = NULL;
	struct devwl_notify *notify = NULL;
	struct devwl_error err = {0};
	const char *file = NULL, *path = "/";
	int sv[2], notify_fd = -1, pidfd = -1, status = 0, i, r;
	pid_t pid;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--policy") && i + 1 < argc)
			file = argv[++i];
		else if (!strcmp(argv[i], "--node") && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "--allow") || i + 1 >= argc)
			goto usage;
		else
			i++; /* applied below, once the node exists */
	if (i + 1 >= argc)
		goto usage;

	if (file) {
		r = devwl_policy_load_file(file, &policy, &err);
	} else {
		policy = devwl_policy_new();
		/* "/" starts as the kernel's root cgroup, allow-all: make it deny-all. */
		r = policy ? devwl_policy_write(policy, "/", DEVWL_FILE_DENY, "a", 1, &err)
			   : -ENOMEM;
	}
	node = r >= 0 ? devwl_policy_find(policy, path) : NULL;
	if (r >= 0 && !node)
		snprintf(err.msg, sizeof(err.msg), "no node %s", path), r = -ENOENT;
	for (int j = 1; r >= 0 && j < i; j++)
		if (!strcmp(argv[j], "--allow"))
			r = devwl_node_write(node, DEVWL_FILE_ALLOW, argv[j + 1],
					     strlen(argv[j + 1]), &err);
	if (r < 0) {
		fprintf(stderr, "devwl-embed: %s\n", err.msg[0] ? err.msg : strerror(-r));
		devwl_policy_free(policy);
		return 2;
	}
	notify = devwl_notify_new();
	if (!notify || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		fputs("devwl-embed: no seccomp user notification, or out of resources\n", stderr);
		return 1;
	}

	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(sv[0]);
		child(sv[1], argv + i + 1);
	}
	close(sv[1]);
	notify_fd = recv_fd(sv[0]);
	close(sv[0]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (notify_fd >= 0 && pidfd >= 0) {
		r = serve(notify, notify_fd, pid, pidfd, node, &status);
		if (r < 0)
			fprintf(stderr, "devwl-embed: %s\n", strerror(-r));
	} else {
		r = -EIO; /* the child failed before it passed the fd: it said why */
		waitpid(pid, &status, 0);
	}
	devwl_notify_free(notify);
	devwl_policy_free(policy);
	return r < 0 ? 1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
usage:
	fputs("usage: devwl-embed [--policy FILE --node PATH] [--allow RULE]... -- COMMAND "
	      "[ARG]...\n",
	      stderr);
	return 2;
}
