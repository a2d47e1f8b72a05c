/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for systemd's file descriptor store (systemd.service(5)
 * FileDescriptorStoreMax=, sd_notify(3) FDSTORE=1): fdstore SOCKET STOPFILE CMD...
 * runs CMD with NOTIFY_SOCKET=SOCKET and keeps the fds its messages store (FDSTORE=1,
 * FDNAME=) until one removes them (FDSTOREREMOVE=1). When CMD exits and STOPFILE does
 * not exist, it runs CMD again with the stored fds from 3 on and LISTEN_PID, LISTEN_FDS
 * and LISTEN_FDNAMES, as systemd does at a restart; when STOPFILE exists it exits with
 * CMD's status, and the store goes with it. It prints "start PID NFDS", "store NAME" and
 * "remove NAME" lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FDS 4096

static struct {
	int fd;
	char name[256];
} store[MAX_FDS];
static int nstore;

static void take(char *text, int *fds, int nfds)
{
	const char *name = "stored";
	char *p = strstr(text, "FDNAME=");
	int keep = 0;

	if (p) {
		name = p + 7;
		p[7 + strcspn(p + 7, "\n")] = '\0';
	}
	if (strstr(text, "FDSTOREREMOVE=1")) {
		for (int i = 0; i < nstore; i++)
			if (!strcmp(store[i].name, name)) {
				close(store[i].fd);
				store[i--] = store[--nstore];
			}
		printf("remove %s\n", name);
	} else if (strstr(text, "FDSTORE=1")) {
		for (; keep < nfds && nstore < MAX_FDS; keep++) {
			store[nstore].fd = fds[keep];
			snprintf(store[nstore++].name, sizeof(store[0].name), "%s", name);
		}
		printf("store %s\n", name);
	}
	for (int i = keep; i < nfds; i++)
		close(fds[i]);
}

static pid_t start(char **cmd, const char *sock)
{
	pid_t pid = fork();

	if (pid == 0) {
		static char names[MAX_FDS * 257];
		char buf[32];
		size_t len = 0;

		/* A test that fails kills us: the service must not outlive its manager. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
			_exit(127);
		setenv("NOTIFY_SOCKET", sock, 1);
		if (nstore) {
			/* Out of the way first: a stored fd may sit where another must go. */
			for (int i = 0; i < nstore; i++)
				store[i].fd = fcntl(store[i].fd, F_DUPFD_CLOEXEC, 3 + nstore);
			for (int i = 0; i < nstore; i++) {
				dup2(store[i].fd, 3 + i);
				len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
							i ? ":" : "", store[i].name);
			}
			snprintf(buf, sizeof(buf), "%d", (int)getpid());
			setenv("LISTEN_PID", buf, 1);
			snprintf(buf, sizeof(buf), "%d", nstore);
			setenv("LISTEN_FDS", buf, 1);
			setenv("LISTEN_FDNAMES", names, 1);
		}
		execvp(cmd[0], cmd);
		_exit(127);
	}
	printf("start %d %d\n", (int)pid, nstore);
	return pid;
}

int main(int argc, char **argv)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int sock, status = 0;
	pid_t child;

	if (argc < 4 || strlen(argv[1]) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "usage: fdstore SOCKET STOPFILE CMD...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	strcpy(addr.sun_path, argv[1]);
	unlink(argv[1]);
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0 || bind(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		perror("fdstore: bind");
		return 2;
	}
	child = start(argv + 3, argv[1]);
	for (;;) {
		struct pollfd pfd = {.fd = sock, .events = POLLIN};
		pid_t pid;

		if (poll(&pfd, 1, 50) > 0) {
			union {
				char buf[CMSG_SPACE(16 * sizeof(int))];
				struct cmsghdr align;
			} cmsg;
			char text[4096];
			struct iovec iov = {.iov_base = text, .iov_len = sizeof(text) - 1};
			struct msghdr msg = {.msg_iov = &iov,
					     .msg_iovlen = 1,
					     .msg_control = cmsg.buf,
					     .msg_controllen = sizeof(cmsg.buf)};
			int fds[16], nfds = 0;
			ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);

			if (n < 0)
				continue;
			text[n] = '\0';
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
					int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

					for (int i = 0; i < k && nfds < 16; i++)
						memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int),
						       sizeof(int));
				}
			take(text, fds, nfds);
			continue;
		}
		pid = waitpid(child, &status, WNOHANG);
		if (pid != child)
			continue;
		if (access(argv[2], F_OK) == 0)
			break;
		child = start(argv + 3, argv[1]);
	}
	printf("stopped\n");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
