/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A runtime's side of the seccomp-notify plugin ABI (crun's and conmon's, version 1), and
 * no more, for tests/oci/206: the plugin under test without a runtime's own quirks about
 * the host's cgroup layout (crun 1.8.1 refuses a hybrid host whose cgroup2 mount lists a
 * controller, and needs CAP_SYS_RESOURCE on cgroup v2).
 *
 *   plugin-host PLUGIN CONFIG ID STATEDIR [CGROUPDIR...] -- CMD [ARG...]
 *
 * A child joins each CGROUPDIR (writing itself to its cgroup.procs), installs devwl's
 * mknod-only filter (the kernel-mode profile) and hands its notify fd over; the plugin is
 * started as a runtime starts it (CONFIG the container's config.json, ID its name,
 * STATEDIR/status naming the child's pid, as crun's state does); then the child runs CMD,
 * each notification goes to the plugin, and once the child has exited the plugin is
 * stopped. Exit status: CMD's, or 125 when the host itself failed (said on stderr).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <devwl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fdpass.h"

struct run_oci_conf {
	const char *runtime_root_path;
	const char *name;
	const char *bundle_path;
	const char *oci_config_path;
};

typedef int (*start_fn)(void **opaque, struct run_oci_conf *conf, size_t size);
typedef int (*handle_fn)(void *opaque, struct seccomp_notif_sizes *sizes,
			 struct seccomp_notif *sreq, struct seccomp_notif_resp *sresp,
			 int seccomp_fd, int *handled);
typedef int (*stop_fn)(void *opaque);

enum { HANDLE_NOT_HANDLED, HANDLE_SEND_RESPONSE, HANDLE_DELAYED_RESPONSE };

static void die(const char *what)
{
	fprintf(stderr, "plugin-host: %s: %s\n", what, strerror(errno));
	exit(125);
}

static void join_cgroup(const char *dir)
{
	char file[4096];
	int fd = -1;

	snprintf(file, sizeof(file), "%s/cgroup.procs", dir);
	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1)
		die(file);
	close(fd);
}

/* The child: into its cgroups, under the filter, its notify fd handed over, then CMD once
 * the plugin has started. */
static void child(int sock, char **cgroups, int ncgroups, char **cmd)
{
	char go = 0;
	int fd = -1, r = 0;

	for (int i = 0; i < ncgroups; i++)
		join_cgroup(cgroups[i]);
	r = devwl_filter_install(DEVWL_FILTER_MKNOD_ONLY, &fd);
	if (r < 0) {
		errno = -r;
		die("devwl_filter_install");
	}
	if (fdpass_send(sock, fd) < 0)
		die("sending the notify fd");
	close(fd);
	if (read(sock, &go, 1) != 1)
		_exit(125);
	close(sock);
	execvp(cmd[0], cmd);
	die(cmd[0]);
}

int main(int argc, char **argv)
{
	struct seccomp_notif_sizes sizes = {0};
	struct run_oci_conf conf = {0};
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	char status[4096], pidtext[32];
	void *so = NULL, *opaque = NULL;
	int sv[2], fd = -1, sfd = -1, dash = 0, wstatus = 0;
	start_fn start;
	handle_fn handle;
	stop_fn stop;
	pid_t pid = 0;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dash = i;
			break;
		}
	if (dash < 5 || dash + 1 >= argc) {
		fprintf(stderr, "usage: plugin-host PLUGIN CONFIG ID STATEDIR [CGROUPDIR...] -- "
				"CMD [ARG...]\n");
		return 125;
	}
	so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!so) {
		fprintf(stderr, "plugin-host: %s\n", dlerror());
		return 125;
	}
	start = (start_fn)dlsym(so, "run_oci_seccomp_notify_start");
	handle = (handle_fn)dlsym(so, "run_oci_seccomp_notify_handle_request");
	stop = (stop_fn)dlsym(so, "run_oci_seccomp_notify_stop");
	if (!start || !handle || !stop) {
		fprintf(stderr, "plugin-host: %s lacks the plugin ABI\n", argv[1]);
		return 125;
	}
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		die("SECCOMP_GET_NOTIF_SIZES");
	req = calloc(1, sizes.seccomp_notif > sizeof(*req) ? sizes.seccomp_notif : sizeof(*req));
	resp = calloc(1, sizes.seccomp_notif_resp > sizeof(*resp) ? sizes.seccomp_notif_resp
								  : sizeof(*resp));
	if (!req || !resp)
		die("calloc");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(sv[0]);
		child(sv[1], argv + 5, dash - 5, argv + dash + 1);
	}
	close(sv[1]);
	fd = fdpass_recv(sv[0]);
	if (fd < 0) {
		waitpid(pid, &wstatus, 0);
		fprintf(stderr, "plugin-host: the child handed over no notify fd\n");
		return 125;
	}
	/* crun's state: the container's process, read by the plugin at start. */
	snprintf(status, sizeof(status), "%s/status", argv[4]);
	sfd = open(status, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	snprintf(pidtext, sizeof(pidtext), "{\"pid\":%d}\n", (int)pid);
	if (sfd < 0 || write(sfd, pidtext, strlen(pidtext)) != (ssize_t)strlen(pidtext))
		die(status);
	close(sfd);
	conf = (struct run_oci_conf){.runtime_root_path = argv[4],
				     .name = argv[3],
				     .bundle_path = argv[4],
				     .oci_config_path = argv[2]};
	if (start(&opaque, &conf, sizeof(conf)) < 0) {
		fprintf(stderr, "plugin-host: the plugin failed to start\n");
		kill(pid, SIGKILL);
		waitpid(pid, &wstatus, 0);
		return 125;
	}
	if (write(sv[0], "g", 1) != 1)
		die("go");
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int handled = HANDLE_NOT_HANDLED;

		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (!(pfd.revents & POLLIN))
			break; /* POLLHUP: no process left under the filter */
		memset(req, 0, sizes.seccomp_notif);
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			die("SECCOMP_IOCTL_NOTIF_RECV");
		}
		memset(resp, 0, sizes.seccomp_notif_resp);
		if (handle(opaque, &sizes, req, resp, fd, &handled) < 0)
			handled = HANDLE_NOT_HANDLED;
		if (handled == HANDLE_NOT_HANDLED) {
			/* As crun answers a call no plugin took. */
			resp->id = req->id;
			resp->error = -ENOTSUP;
			handled = HANDLE_SEND_RESPONSE;
		}
		if (handled == HANDLE_SEND_RESPONSE &&
		    ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
			die("SECCOMP_IOCTL_NOTIF_SEND");
	}
	if (waitpid(pid, &wstatus, 0) != pid)
		die("waitpid");
	stop(opaque);
	close(fd);
	dlclose(so);
	free(req);
	free(resp);
	return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}
