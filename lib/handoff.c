/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hand a notify fd to devwld the way an OCI runtime does (runtime-spec config-linux.md,
 * "seccomp listener"): one connection, the container process state as JSON, the fd by
 * SCM_RIGHTS in the same message. devwld then cannot tell us from runc.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "clock.h"
#include "devwl.h"
#include "fileio.h"
#include "jsonutil.h"
#include "util.h"

#define OCI_VERSION "1.0.2"

static void json_putp(struct json_object **o)
{
	json_object_put(*o);
}

/* The state JSON; the caller frees the string. */
static int build_state(pid_t pid, const char *node, const char *id, char **ret_text)
{
	__attribute__((cleanup(json_putp))) struct json_object *msg = json_object_new_object();
	struct json_object *state = json_object_new_object(), *fds = json_object_new_array();
	char default_id[64], *meta = NULL;
	const char *text;
	int r = 0;

	if (!msg || !state || !fds) {
		json_object_put(state);
		json_object_put(fds);
		return -ENOMEM;
	}
	if (!id) {
		snprintf(default_id, sizeof(default_id), "devwl-run-%d", (int)pid);
		id = default_id;
	}
	if (json_object_array_add(fds, json_object_new_string("seccompFd")) < 0 ||
	    json_object_array_length(fds) != 1) {
		json_object_put(state);
		json_object_put(fds);
		return -ENOMEM;
	}
	r = json_add(msg, "ociVersion", json_object_new_string(OCI_VERSION));
	if (r >= 0)
		r = json_add(msg, "fds", fds);
	else
		json_object_put(fds);
	if (r >= 0)
		r = json_add(msg, "pid", json_object_new_int(pid));
	if (r >= 0 && node) {
		if (asprintf(&meta, "node=%s", node) < 0)
			r = -ENOMEM;
		else
			r = json_add(msg, "metadata", json_object_new_string(meta));
		free(meta);
	}
	if (r >= 0)
		r = json_add(state, "ociVersion", json_object_new_string(OCI_VERSION));
	if (r >= 0)
		r = json_add(state, "id", json_object_new_string(id));
	if (r >= 0)
		r = json_add(state, "status", json_object_new_string("running"));
	if (r >= 0)
		r = json_add(state, "pid", json_object_new_int(pid));
	if (r >= 0)
		r = json_add(state, "bundle", json_object_new_string("/"));
	if (r >= 0)
		r = json_add(state, "annotations", json_object_new_object());
	if (r >= 0)
		r = json_add(msg, "state", state);
	else
		json_object_put(state);
	if (r < 0)
		return r;
	text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text)
		return -ENOMEM;
	*ret_text = strdup(text);
	return *ret_text ? 0 : -ENOMEM;
}

/* All of buf, the fd riding on the first byte; a stream socket may take it in parts. */
static int send_with_fd(int sock, const char *buf, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm;
	size_t off = 0;
	ssize_t n;

	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return negerrno();
	for (off = (size_t)n; off < len; off += (size_t)n) {
		n = send(sock, buf + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n < 0)
			return negerrno();
	}
	return 0;
}

/* Until the supervisor closes the connection (EOF) or timeout_ms pass: 0 or -errno. */
static int await_close(int sock, int timeout_ms)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	char byte;

	if (shutdown(sock, SHUT_WR) < 0)
		return negerrno();
	for (;;) {
		struct pollfd p = {.fd = sock, .events = POLLIN};
		uint64_t now = now_ns();
		ssize_t n;
		int r;

		if (now >= end)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)((end - now) / 1000000ULL) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return negerrno();
		if (r == 0)
			continue;
		n = recv(sock, &byte, 1, MSG_DONTWAIT);
		if (n == 0)
			return 0;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return errno == ECONNRESET ? 0 : negerrno();
	}
}

DEVWL_EXPORT int devwl_handoff_send_wait(const char *socket_path, int notify_fd, const char *node,
					 const char *id, int timeout_ms)
{
	_cleanup_close_ int sock = -1;
	_cleanup_free_ char *text = NULL;
	int r;

	if (!socket_path || timeout_ms < 0)
		return -EINVAL;
	if (notify_fd < 0 || fcntl(notify_fd, F_GETFD) < 0)
		return -EBADF;
	r = build_state(getpid(), node, id, &text);
	if (r < 0)
		return r;
	sock = devwl_unix_connect(socket_path);
	if (sock < 0)
		return sock;
	r = send_with_fd(sock, text, strlen(text), notify_fd);
	if (r < 0 || timeout_ms == 0)
		return r;
	return await_close(sock, timeout_ms);
}

DEVWL_EXPORT int devwl_handoff_send(const char *socket_path, int notify_fd, const char *node,
				    const char *id)
{
	return devwl_handoff_send_wait(socket_path, notify_fd, node, id, 0);
}
