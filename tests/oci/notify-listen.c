/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for systemd's side of sd_notify: notify-listen SOCKET SECONDS [PATH...]
 * binds a datagram socket at SOCKET and prints each message on one line. When a
 * message says READY=1 it also reports whether every PATH is a socket at that moment
 * ("sockets ok" or "sockets missing PATH"). Exits 0 after STOPPING=1, 1 on timeout.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd, timeout_ms;

	if (argc < 3 || strlen(argv[1]) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "usage: notify-listen SOCKET SECONDS [PATH...]\n");
		return 2;
	}
	timeout_ms = atoi(argv[2]) * 1000;
	strcpy(addr.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	unlink(argv[1]);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		perror("notify-listen: bind");
		return 2;
	}
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		char buf[4096];
		ssize_t n;

		if (poll(&pfd, 1, timeout_ms) <= 0) {
			printf("timeout\n");
			return 1;
		}
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			continue;
		buf[n] = '\0';
		if (strstr(buf, "READY=1")) {
			const char *missing = NULL;
			struct stat st;

			for (int i = 3; i < argc && !missing; i++)
				if (stat(argv[i], &st) < 0 || !S_ISSOCK(st.st_mode))
					missing = argv[i];
			printf("sockets %s%s\n", missing ? "missing " : "ok",
			       missing ? missing : "");
		}
		for (char *p = buf; *p; p++)
			if (*p == '\n')
				*p = ' ';
		printf("message %s\n", buf);
		fflush(stdout);
		if (strstr(buf, "STOPPING=1"))
			return 0;
	}
}
