/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for an OCI runtime talking to devwld's listenerPath, well behaved or not.
 *
 *   oci-client SOCKET good ID PATH EXPECT   hand over a real notify fd the way runc does,
 *                                           then open PATH: exit 0 if the result is EXPECT
 *                                           ("ok" or an errno name such as EPERM)
 *   oci-client SOCKET BAD-MODE              misbehave, then wait for devwld to drop us:
 *                                           exit 0 once it closes the connection
 *   oci-client SOCKET hold N SECONDS        keep N silent connections open for SECONDS,
 *                                           each made again as soon as devwld closes or
 *                                           refuses it; prints how many connects it made
 *   oci-client SOCKET run ID DIR            hand over a notify fd, print "UP", then run
 *                                           until DIR/stop-ID exists, opening /dev/null
 *                                           (a trapped call: a decision) and printing
 *                                           "OPENED" whenever DIR/go-ID appears (removed)
 *   oci-client SOCKET relay LISTEN          a runtime's hand-off forged on its way: take
 *                                           one hand-off on LISTEN (devwl-run --connect
 *                                           LISTEN), put OCI_CLIENT_ANNOTATIONS in its
 *                                           state, pass it on to SOCKET as our own (our
 *                                           uid is the runtime's devwld sees), and close
 *                                           the sender's connection once devwld has
 *                                           closed ours, as devwld would have
 *
 * Bad modes: malformed truncated nofds extrafds wrongfd nostate huge slow silent nonroot.
 * OCI_CLIENT_PID=N sends N as the process's pid (0: none, as crun exec does).
 * OCI_CLIENT_ANNOTATIONS='{"k":"v",...}' sends the state with those annotations;
 * OCI_CLIENT_METADATA=WORDS sends them as the listenerMetadata [node=/clients].
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int die(const char *what)
{
	fprintf(stderr, "oci-client: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* A genuine notify fd for a filter trapping calls in `names` (NULL-terminated). */
static int notify_fd(const char *const *names)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int fd;

	if (!ctx || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("seccomp_init");
	for (; *names; names++)
		if (seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, seccomp_syscall_resolve_name(*names),
				     0) < 0)
			die("seccomp_rule_add");
	if (seccomp_load(ctx) < 0)
		die("seccomp_load");
	fd = seccomp_notify_fd(ctx);
	if (fd < 0)
		die("seccomp_notify_fd");
	seccomp_release(ctx);
	return fd;
}

static int connect_to(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket");
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		die("connect");
	return fd;
}

static void send_with_fds(int sock, const char *buf, size_t len, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} cmsg = {0};
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds > 0) {
		struct cmsghdr *c;

		msg.msg_control = cmsg.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0)
		die("sendmsg");
}

static int state(char *buf, size_t size, const char *id)
{
	/* OCI_CLIENT_PID=0: what crun exec sends, no pid. */
	const char *env = getenv("OCI_CLIENT_PID");
	const char *annos = getenv("OCI_CLIENT_ANNOTATIONS");
	bool has_annos = annos && *annos;
	const char *meta = getenv("OCI_CLIENT_METADATA");
	int pid = env ? atoi(env) : (int)getpid();

	/* runc's shape, compact. */
	return snprintf(buf, size,
			"{\"ociVersion\":\"1.0.2\",\"fds\":[\"seccompFd\"],\"pid\":%d,"
			"\"metadata\":\"%s\",\"state\":{\"ociVersion\":\"1.0.2\","
			"\"id\":\"%s\",\"status\":\"creating\",\"pid\":%d,\"bundle\":\"/x\"%s%s}}",
			pid, meta ? meta : "node=/clients", id, pid,
			has_annos ? ",\"annotations\":" : "", has_annos ? annos : "");
}

/* Wait until devwld closes the connection; 0 if it does within secs. */
static int wait_dropped(int sock, int secs)
{
	struct pollfd pfd = {.fd = sock, .events = POLLIN};
	char c;

	for (;;) {
		int r = poll(&pfd, 1, secs * 1000);
		if (r <= 0)
			return 1;
		r = (int)recv(sock, &c, 1, 0);
		if (r <= 0)
			return 0;
	}
}

static int good(const char *sock_path, const char *id, const char *path, const char *expect)
{
	static const char *const names[] = {"open", "openat", NULL};
	char buf[4096];
	int sock, fd, n, r;
	const char *got;

	sock = connect_to(sock_path);
	fd = notify_fd(names);
	n = state(buf, sizeof(buf), id);
	send_with_fds(sock, buf, (size_t)n, &fd, 1);
	close(fd);
	/* Like a runtime, keep the connection open while the process runs. */
	r = open(path, O_RDWR | O_CLOEXEC);
	got = r >= 0 ? "ok" : strerrorname_np(errno);
	if (r >= 0) {
		struct stat want, have;

		/* The injected fd must be the device asked for, not whatever fd r names. */
		if (stat(path, &want) < 0 || fstat(r, &have) < 0 || r <= 2 ||
		    want.st_rdev != have.st_rdev || (want.st_mode ^ have.st_mode) & S_IFMT) {
			fprintf(stderr, "oci-client %s: open %s returned fd %d, not the device\n",
				id, path, r);
			return 1;
		}
	}
	if (strcmp(got, expect)) {
		fprintf(stderr, "oci-client %s: open %s: %s, expected %s\n", id, path, got, expect);
		return 1;
	}
	return 0;
}

/* A container's process that lives until told to stop, making a call when told to. */
static int run(const char *sock_path, const char *id, const char *dir)
{
	static const char *const names[] = {"open", "openat", NULL};
	char buf[4096], go[4096], stop[4096];
	int sock, fd, n;

	snprintf(go, sizeof(go), "%s/go-%s", dir, id);
	snprintf(stop, sizeof(stop), "%s/stop-%s", dir, id);
	sock = connect_to(sock_path);
	fd = notify_fd(names);
	n = state(buf, sizeof(buf), id);
	send_with_fds(sock, buf, (size_t)n, &fd, 1);
	close(fd);
	printf("UP\n");
	fflush(stdout);
	/* access() and unlink() are not trapped: only the open is devwld's to answer. */
	while (access(stop, F_OK) < 0) {
		struct timespec ts = {0, 50 * 1000 * 1000};

		if (access(go, F_OK) == 0) {
			int r = open("/dev/null", O_RDONLY | O_CLOEXEC);

			unlink(go);
			printf("OPENED %s\n", r >= 0 ? "ok" : strerrorname_np(errno));
			fflush(stdout);
			if (r >= 0)
				close(r);
		}
		nanosleep(&ts, NULL);
	}
	close(sock);
	return 0;
}

/* The length of the JSON value at the start of buf[0..n), or 0 while it is incomplete. */
static size_t json_end(const char *buf, size_t n)
{
	bool str = false, esc = false;
	int depth = 0;

	for (size_t i = 0; i < n; i++) {
		char c = buf[i];

		if (esc)
			esc = false;
		else if (str && c == '\\')
			esc = true;
		else if (c == '"')
			str = !str;
		else if (!str && (c == '{' || c == '['))
			depth++;
		else if (!str && (c == '}' || c == ']') && --depth == 0)
			return i + 1;
	}
	return 0;
}

static int relay(const char *sock_path, const char *listen_path)
{
	static const char empty[] = "\"annotations\":{}";
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	const char *annos = getenv("OCI_CLIENT_ANNOTATIONS");
	char in[8192], out[16384], *at;
	size_t len = 0, end = 0;
	int lsock, conn, sock, fd = -1, n;

	if (!annos || !*annos || strlen(listen_path) >= sizeof(addr.sun_path)) {
		fputs("oci-client relay: needs OCI_CLIENT_ANNOTATIONS and a short LISTEN\n",
		      stderr);
		return 2;
	}
	strcpy(addr.sun_path, listen_path);
	unlink(listen_path);
	lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lsock < 0 || bind(lsock, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(lsock, 1) < 0)
		die("listen");
	printf("LISTENING\n");
	fflush(stdout);
	conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0)
		die("accept");
	/* The fd rides on the first byte; the text may come in parts. */
	while (!end) {
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} cmsg = {0};
		struct iovec iov = {.iov_base = in + len, .iov_len = sizeof(in) - 1 - len};
		struct msghdr msg = {.msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = cmsg.buf,
				     .msg_controllen = sizeof(cmsg.buf)};
		struct cmsghdr *c;
		ssize_t got;

		if (!iov.iov_len)
			die("hand-off too long");
		got = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
		if (got <= 0)
			die("recvmsg");
		c = CMSG_FIRSTHDR(&msg);
		if (c && c->cmsg_type == SCM_RIGHTS && fd < 0)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
		len += (size_t)got;
		end = json_end(in, len);
	}
	in[end] = '\0';
	at = strstr(in, empty);
	if (fd < 0 || !at) {
		fprintf(stderr, "oci-client relay: no fd, or no empty annotations in: %s\n", in);
		return 1;
	}
	n = snprintf(out, sizeof(out), "%.*s\"annotations\":%s%s", (int)(at - in), in, annos,
		     at + strlen(empty));
	if (n < 0 || (size_t)n >= sizeof(out))
		die("annotations too long");
	sock = connect_to(sock_path);
	send_with_fds(sock, out, (size_t)n, &fd, 1);
	close(fd);
	if (wait_dropped(sock, 20)) {
		fputs("oci-client relay: devwld kept the connection open\n", stderr);
		return 1;
	}
	close(conn);
	printf("RELAYED\n");
	return 0;
}

/* A connect that may fail (devwld refusing, the backlog full): the fd or -1. */
static int try_connect(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		die("socket");
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* What one user of --allow-uid can do to the listener: hold as many connections as it
 * is given, and reconnect at once whenever one is dropped. */
static int hold(const char *path, int n, int secs)
{
	struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
	time_t end = time(NULL) + secs;
	unsigned long connects = 0;
	char c;

	if (!pfd)
		die("calloc");
	for (int i = 0; i < n; i++)
		pfd[i].fd = -1;
	while (time(NULL) < end) {
		for (int i = 0; i < n; i++) {
			if (pfd[i].fd >= 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    recv(pfd[i].fd, &c, 1, MSG_DONTWAIT) <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
			}
			if (pfd[i].fd < 0) {
				pfd[i].fd = try_connect(path);
				pfd[i].events = POLLIN;
				connects++;
			}
			pfd[i].revents = 0;
		}
		if (poll(pfd, (nfds_t)n, 20) < 0)
			die("poll");
	}
	for (int i = 0; i < n; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	free(pfd);
	printf("%lu\n", connects);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const trap_unused[] = {"mknodat", NULL};
	const char *mode;
	char buf[4096];
	int sock, fd, n;

	if (argc < 3) {
		fputs("usage: oci-client SOCKET MODE [ARGS]\n", stderr);
		return 2;
	}
	mode = argv[2];
	if (!strcmp(mode, "good"))
		return argc == 6 ? good(argv[1], argv[3], argv[4], argv[5]) : 2;
	if (!strcmp(mode, "hold"))
		return argc == 5 ? hold(argv[1], atoi(argv[3]), atoi(argv[4])) : 2;
	if (!strcmp(mode, "run"))
		return argc == 5 ? run(argv[1], argv[3], argv[4]) : 2;
	if (!strcmp(mode, "relay"))
		return argc == 4 ? relay(argv[1], argv[3]) : 2;
	if (!strcmp(mode, "nonroot") && setresuid(65534, 65534, 65534) < 0)
		die("setresuid");

	sock = connect_to(argv[1]);
	fd = notify_fd(trap_unused);
	n = state(buf, sizeof(buf), "hostile");
	if (!strcmp(mode, "malformed")) {
		static const char bad[] = "{\"ociVersion\": \"1.0.2\", \"fds\": [\"seccompFd\"],,}";
		send_with_fds(sock, bad, sizeof(bad) - 1, &fd, 1);
	} else if (!strcmp(mode, "truncated")) {
		send_with_fds(sock, buf, (size_t)n / 2, &fd, 1);
		shutdown(sock, SHUT_WR);
	} else if (!strcmp(mode, "nofds")) {
		send_with_fds(sock, buf, (size_t)n, NULL, 0);
	} else if (!strcmp(mode, "extrafds")) {
		int fds[3] = {fd, fd, fd};
		send_with_fds(sock, buf, (size_t)n, fds, 3);
	} else if (!strcmp(mode, "wrongfd")) {
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0)
			die("pipe");
		send_with_fds(sock, buf, (size_t)n, p, 1);
	} else if (!strcmp(mode, "nostate")) {
		static const char bad[] = "{\"ociVersion\":\"1.0.2\",\"fds\":[\"seccompFd\"]}";
		send_with_fds(sock, bad, sizeof(bad) - 1, &fd, 1);
	} else if (!strcmp(mode, "huge")) {
		static char chunk[65536];
		memset(chunk, 'x', sizeof(chunk));
		send_with_fds(sock, "{\"ociVersion\":\"", 15, &fd, 1);
		/* Until devwld stops reading: it must give up at its limit. */
		for (int i = 0; i < 64; i++)
			if (send(sock, chunk, sizeof(chunk), MSG_NOSIGNAL) < 0)
				break;
	} else if (!strcmp(mode, "slow")) {
		/* One byte every 50 ms: complete only long after devwld's deadline. */
		send_with_fds(sock, buf, 1, &fd, 1);
		for (int i = 1; i < n; i++) {
			struct timespec ts = {0, 50 * 1000 * 1000};
			if (send(sock, buf + i, 1, MSG_NOSIGNAL) < 0)
				break;
			nanosleep(&ts, NULL);
		}
	} else if (!strcmp(mode, "silent") || !strcmp(mode, "nonroot")) {
		/* Nothing at all. */
	} else {
		fprintf(stderr, "oci-client: unknown mode %s\n", mode);
		return 2;
	}
	return wait_dropped(sock, 20);
}
