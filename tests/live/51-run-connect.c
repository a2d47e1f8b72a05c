/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwl-run --connect against a fake devwld: the listener receives one connection with
 * the OCI "container process state" JSON and exactly one fd by SCM_RIGHTS; the JSON has
 * the fields runc sends, and the fd is a live seccomp notify fd (ID_VALID on a bogus id
 * gives ENOENT, where any other fd gives ENOTTY). devwl-run execs in place (the pid in the
 * JSON is the command's) inside the shared baseline cgroup. With no listener it fails
 * before running the command.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int64_t num(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return -1;
	return json_object_get_int64(v);
}

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Accept one connection; read it to EOF; return the text and the fds it carried. */
static char *receive(int lsock, int *fds, int *nfds)
{
	size_t len = 0, cap = 65536;
	char *text = calloc(1, cap + 1);
	int conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);

	*nfds = 0;
	if (conn < 0 || !text)
		return NULL;
	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * 8)];
			struct cmsghdr align;
		} u;
		struct iovec iov = {.iov_base = text + len, .iov_len = cap - len};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = u.buf,
				    .msg_controllen = sizeof(u.buf)};
		ssize_t n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);

		if (n <= 0)
			break;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
				size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				for (size_t i = 0; i < k && *nfds < 8; i++)
					memcpy(&fds[(*nfds)++], CMSG_DATA(cm) + i * sizeof(int),
					       sizeof(int));
			}
		len += (size_t)n;
		if (len == cap)
			break;
	}
	close(conn);
	text[len] = '\0';
	return text;
}

int main(void)
{
	const char *build = getenv("DEVWL_BUILD");
	char tmpl[] = "/tmp/devwl-51.XXXXXX", sockpath[128], run[4096], cgfile[64], cg[4096] = "";
	const char *busybox = "/bin/busybox";
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct json_object *msg = NULL, *state = NULL, *fds = NULL, *ann = NULL;
	int lsock, fdv[8], nfds = 0, status = 0;
	uint64_t bogus = 0x123456789abcdefULL;
	char *text;
	FILE *f;
	pid_t pid;

	if (geteuid() != 0) {
		fputs("SKIP: needs root (the baseline cgroup)\n", stderr);
		return 77;
	}
	if (!build) {
		fputs("FAIL: DEVWL_BUILD not set (ctest sets it)\n", stderr);
		return 1;
	}
	snprintf(run, sizeof(run), "%s/tools/devwl-run", build);
	if (access(run, X_OK) < 0) {
		fprintf(stderr, "FAIL: no %s: the build should have made it\n", run);
		return 1;
	}
	/* A static command: it needs no trapped open to start, so the fake listener need not
	 * answer anything. */
	if (access(busybox, X_OK) < 0) {
		fputs("SKIP: needs busybox-static as /bin/busybox\n", stderr);
		return 77;
	}
	if (!mkdtemp(tmpl))
		return 1;
	snprintf(sockpath, sizeof(sockpath), "%s/listen.sock", tmpl);
	memcpy(sa.sun_path, sockpath, strlen(sockpath));
	lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lsock < 0 || bind(lsock, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lsock, 4) < 0) {
		perror("listener");
		return 1;
	}

	pid = spawn((char *[]){run, "--connect", sockpath, "--node", "/k8s/ns/pod", "--id",
			       "ctr-51", "--", (char *)busybox, "sleep", "1", NULL});
	text = receive(lsock, fdv, &nfds);
	CHECK(text && *text, "nothing received");
	/* While the command sleeps: it is in a baseline of its own, below the shared top. */
	snprintf(cgfile, sizeof(cgfile), "/proc/%d/cgroup", (int)pid);
	f = fopen(cgfile, "re");
	if (f) {
		size_t n = fread(cg, 1, sizeof(cg) - 1, f);
		cg[n] = '\0';
		fclose(f);
	}
	snprintf(cgfile, sizeof(cgfile), "/devwl-run.connected/run-%d\n", (int)pid);
	CHECK(strstr(cg, cgfile), "the command is not in the baseline: %s", cg);
	CHECK(nfds == 1, "%d fds received, expected 1", nfds);
	if (nfds >= 1) {
		int r = ioctl(fdv[0], SECCOMP_IOCTL_NOTIF_ID_VALID, &bogus);
		CHECK(r < 0 && errno == ENOENT, "ID_VALID on a bogus id: %d %s (not a notify fd?)",
		      r, strerror(errno));
	}
	for (int i = 0; i < nfds; i++)
		close(fdv[i]);

	msg = text ? json_tokener_parse(text) : NULL;
	CHECK(msg && json_object_is_type(msg, json_type_object), "not a JSON object: %s",
	      text ? text : "");
	if (msg) {
		CHECK(str(msg, "ociVersion") && strcmp(str(msg, "ociVersion"), "1.0.2") == 0,
		      "ociVersion");
		CHECK(json_object_object_get_ex(msg, "fds", &fds) &&
			      json_object_is_type(fds, json_type_array) &&
			      json_object_array_length(fds) == 1 &&
			      strcmp(json_object_get_string(json_object_array_get_idx(fds, 0)),
				     "seccompFd") == 0,
		      "fds");
		CHECK(num(msg, "pid") == pid, "pid %lld, expected %d (exec in place)",
		      (long long)num(msg, "pid"), (int)pid);
		CHECK(str(msg, "metadata") && strcmp(str(msg, "metadata"), "node=/k8s/ns/pod") == 0,
		      "metadata");
		CHECK(json_object_object_get_ex(msg, "state", &state) &&
			      json_object_is_type(state, json_type_object),
		      "state");
	}
	if (state) {
		CHECK(str(state, "ociVersion") && strcmp(str(state, "ociVersion"), "1.0.2") == 0,
		      "state.ociVersion");
		CHECK(str(state, "id") && strcmp(str(state, "id"), "ctr-51") == 0, "state.id");
		CHECK(str(state, "status") && strcmp(str(state, "status"), "running") == 0,
		      "state.status");
		CHECK(num(state, "pid") == pid, "state.pid");
		CHECK(str(state, "bundle") && strcmp(str(state, "bundle"), "/") == 0, "bundle");
		CHECK(json_object_object_get_ex(state, "annotations", &ann) &&
			      json_object_is_type(ann, json_type_object),
		      "state.annotations");
	}
	json_object_put(msg);
	free(text);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the command: status %#x", status);

	/* No --node, no --id: no metadata, the default id. */
	pid = spawn((char *[]){run, "--connect", sockpath, "--", (char *)busybox, "true", NULL});
	text = receive(lsock, fdv, &nfds);
	for (int i = 0; i < nfds; i++)
		close(fdv[i]);
	msg = text ? json_tokener_parse(text) : NULL;
	CHECK(msg && !json_object_object_get_ex(msg, "metadata", NULL), "metadata without --node");
	if (msg && json_object_object_get_ex(msg, "state", &state)) {
		char want[64];
		snprintf(want, sizeof(want), "devwl-run-%d", (int)pid);
		CHECK(str(state, "id") && strcmp(str(state, "id"), want) == 0, "default id %s",
		      str(state, "id"));
	}
	json_object_put(msg);
	free(text);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "second command: status %#x", status);

	/* Nobody listening: devwl-run fails before running the command. */
	close(lsock);
	unlink(sockpath);
	snprintf(cgfile, sizeof(cgfile), "%s/ran", tmpl);
	pid = spawn((char *[]){run, "--connect", sockpath, "--", (char *)busybox, "touch", cgfile,
			       NULL});
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 1,
	      "no listener: status %#x, expected exit 1", status);
	CHECK(access(cgfile, F_OK) < 0, "no listener: the command ran");
	rmdir(tmpl);
	if (failures)
		return 1;
	puts("PASS");
	return 0;
}
