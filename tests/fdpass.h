/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One fd over a unix socket (SCM_RIGHTS), for the test programs that hand a notify fd
 * from the child that installed a filter to the process that serves it. libc only.
 */
#ifndef DEVWL_TESTS_FDPASS_H
#define DEVWL_TESTS_FDPASS_H

#include <string.h>
#include <sys/socket.h>

/* 0, or -1 with errno. */
static inline int fdpass_send(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0}, byte = 'F';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

/* The fd (close-on-exec), or -1. */
static inline int fdpass_recv(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0}, byte = 0;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = NULL;
	int fd = -1;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) <= 0)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

#endif
