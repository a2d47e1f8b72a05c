/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fds.h"

void set_cloexec(int fd, bool on)
{
	if (fd >= 0)
		(void)fcntl(fd, F_SETFD, on ? FD_CLOEXEC : 0);
}

size_t scm_rights_take(struct msghdr *msg, int *fds, size_t max, size_t *nfds)
{
	size_t carried = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			/* CMSG_DATA need not be aligned for int. */
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*nfds < max)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
		carried += n;
	}
	return carried;
}

void scm_rights_put(struct msghdr *msg, void *buf, const int *fds, size_t n)
{
	struct cmsghdr *c;

	if (n == 0)
		return;
	memset(buf, 0, CMSG_SPACE(n * sizeof(int)));
	msg->msg_control = buf;
	msg->msg_controllen = CMSG_SPACE(n * sizeof(int));
	c = CMSG_FIRSTHDR(msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
}
