/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The node gate's table (tests/oci/168) through the embedding API: include/devwl.h and
 * libc only (and tests/fdpass.h, libc too), as an embedder builds it
 * (examples/embed/devwl-embed.c).
 *
 *   gate-embed ROW DIR [CGROUP]
 *
 * ROW is the caller's confinement: enf (CGROUP, a device cgroup directory, programmed
 * with the node: devwl_cgroup_apply, devwl_notify_set_enforced), base (CGROUP opened and
 * left denying every device, a deny baseline: devwl_notify_set_baseline) or none (no
 * cgroup). A child of ours, in a mount namespace of its own with a nodev tmpfs on DIR/nd
 * and a device-capable one on DIR/dv, in CGROUP, under devwl's filter, makes c 1:5 (the
 * node grants it) on both by a trapped mknod and opens each; then we place c 1:5 at
 * DIR/nd/a and DIR/dv/a into it by devwl_node_place() (the embedder's hot-plug, CONFINED
 * where a cgroup confines it), and it opens those. One line on stdout:
 *   mknod nd=ok dv=EPERM open nd=ok dv=ENOENT place nd=made dv=refused opened nd=ok dv=ENOENT
 * (an errno name for a call that failed). Exit status 0 when that line is printed, 1 when
 * the run itself failed (said on stderr).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <devwl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fdpass.h"

static const char *dir, *cgroup_dir;

static const char *answer(int r)
{
	return r >= 0 ? "ok" : strerrorname_np(errno);
}

/* open DIR/nd/NAME and DIR/dv/NAME read-write: "nd=A dv=B" into buf. */
static void open_both(const char *name, char *buf, size_t size)
{
	char nd[4096], dv[4096];
	int a, b;
	const char *an, *bn;

	snprintf(nd, sizeof(nd), "%s/nd/%s", dir, name);
	snprintf(dv, sizeof(dv), "%s/dv/%s", dir, name);
	a = open(nd, O_RDWR | O_CLOEXEC);
	an = answer(a);
	b = open(dv, O_RDWR | O_CLOEXEC);
	bn = answer(b);
	snprintf(buf, size, "nd=%s dv=%s", an, bn);
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

static void __attribute__((noreturn)) child_fail(const char *what)
{
	fprintf(stderr, "gate-embed: child: %s: %s\n", what, strerror(errno));
	_exit(126);
}

/* The workload: its mounts, its cgroup, the filter; then the calls the table asks. */
static void __attribute__((noreturn)) child(int sock)
{
	char nd[4096], dv[4096], msg[512], a[128], b[128], go;
	int notify_fd = -1, r, m1, m2;
	const char *n1, *n2;

	snprintf(nd, sizeof(nd), "%s/nd", dir);
	snprintf(dv, sizeof(dv), "%s/dv", dir);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		child_fail("a mount namespace");
	if (mount("none", nd, "tmpfs", MS_NODEV, "mode=0755") < 0 ||
	    mount("none", dv, "tmpfs", 0, "mode=0755") < 0)
		child_fail("tmpfs on nd and dv");
	if (cgroup_dir) {
		char procs[4096];
		int fd;

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup_dir);
		fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1)
			child_fail(procs);
		close(fd);
	}
	umask(0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail("no_new_privs");
	r = devwl_filter_install(0, &notify_fd);
	if (r < 0) {
		errno = -r;
		child_fail("the filter");
	}
	if (fdpass_send(sock, notify_fd) < 0)
		child_fail("passing the notify fd");
	close(notify_fd);

	strcat(nd, "/m");
	strcat(dv, "/m");
	m1 = mknod(nd, S_IFCHR | 0666, makedev(1, 5));
	n1 = answer(m1);
	m2 = mknod(dv, S_IFCHR | 0666, makedev(1, 5));
	n2 = answer(m2);
	open_both("m", a, sizeof(a));
	snprintf(msg, sizeof(msg), "mknod nd=%s dv=%s open %s", n1, n2, a);
	if (send(sock, msg, strlen(msg), 0) < 0)
		child_fail("send");
	/* The parent places DIR/nd/a and DIR/dv/a meanwhile. */
	if (recv(sock, &go, 1, 0) != 1)
		child_fail("recv");
	open_both("a", b, sizeof(b));
	if (send(sock, b, strlen(b), 0) < 0)
		child_fail("send");
	_exit(0);
}

/* devwl_node_place() of c 1:5 at DIR/MOUNT/a into pid's root: "made" or "refused". */
static const char *place(int pidfd, const char *mount, unsigned int flags,
			 struct devwl_nodeset *set)
{
	char path[4096];
	struct devwl_error err = {0};
	struct devwl_place p = {0};
	int r;

	snprintf(path, sizeof(path), "%s/%s/a", dir, mount);
	p.path = path;
	p.type = DEVWL_DEV_CHAR;
	p.major = 1;
	p.minor = 5;
	p.mode = 0666;
	p.uid = (uid_t)-1;
	p.gid = (gid_t)-1;
	p.flags = flags;
	p.nodeset = set;
	r = devwl_node_place(pidfd, &p, &err);
	/* Made unconfined says so: only a nodev mount takes it. */
	if (r == (flags & DEVWL_PLACE_CONFINED ? 0 : DEVWL_PLACE_MADE_NODEV))
		return "made";
	if (r == -EPERM)
		return "refused";
	fprintf(stderr, "gate-embed: placing %s: %d %s (%s)\n", path, r, strerror(r < 0 ? -r : 0),
		err.msg);
	return "error";
}

int main(int argc, char **argv)
{
	static const char rules[] = "a\n";
	struct devwl_policy *policy = NULL;
	struct devwl_node *node = NULL;
	struct devwl_notify *notify = NULL;
	struct devwl_nodeset *set = NULL;
	struct devwl_cgroup *cg = NULL;
	struct devwl_error err = {0};
	char first[512] = "", second[256] = "";
	const char *row, *pnd = NULL, *pdv = NULL;
	unsigned int flags = DEVWL_PLACE_MKDIR;
	int sv[2], notify_fd = -1, pidfd = -1, status = 0, r;
	pid_t pid;

	if (argc < 3 || argc > 4) {
		fputs("usage: gate-embed enf|base|none DIR [CGROUP]\n", stderr);
		return 2;
	}
	row = argv[1];
	dir = argv[2];
	cgroup_dir = argc == 4 ? argv[3] : NULL;
	if (strcmp(row, "none") ? !cgroup_dir : cgroup_dir != NULL) {
		fputs("gate-embed: enf and base need a CGROUP, none takes none\n", stderr);
		return 2;
	}

	/* The node: every device denied but c 1:5, as oci-168's nodes. */
	policy = devwl_policy_new();
	r = policy ? devwl_policy_write(policy, "/", DEVWL_FILE_DENY, rules, strlen(rules), &err)
		   : -ENOMEM;
	node = policy ? devwl_policy_find(policy, "/") : NULL;
	if (r >= 0)
		r = devwl_node_write(node, DEVWL_FILE_ALLOW, "c 1:5 rwm", 9, &err);
	notify = devwl_notify_new();
	set = devwl_nodeset_new();
	if (r < 0 || !notify || !set) {
		fprintf(stderr, "gate-embed: %s\n",
			err.msg[0] ? err.msg : strerror(r < 0 ? -r : ENOMEM));
		return 1;
	}
	devwl_notify_set_nodeset(notify, set);
	if (cgroup_dir) {
		/* Denies every device from here on: a deny baseline, until an apply. */
		r = devwl_cgroup_open(cgroup_dir, 0, &cg);
		if (r >= 0 && !strcmp(row, "enf"))
			r = devwl_cgroup_apply(cg, node);
		if (r < 0) {
			fprintf(stderr, "gate-embed: cgroup %s: %s\n", cgroup_dir, strerror(-r));
			return 1;
		}
		devwl_notify_set_baseline(notify, true);
		devwl_notify_set_enforced(notify, !strcmp(row, "enf"));
		flags |= DEVWL_PLACE_CONFINED;
		if (!strcmp(row, "enf"))
			flags |= DEVWL_PLACE_TWIN;
	}

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(sv[0]);
		child(sv[1]);
	}
	close(sv[1]);
	notify_fd = fdpass_recv(sv[0]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (notify_fd < 0 || pidfd < 0) {
		waitpid(pid, &status, 0);
		fputs("gate-embed: the child failed before it passed its notify fd\n", stderr);
		return 1;
	}
	/* Serve its calls; between its two messages, place the nodes. */
	while (!second[0]) {
		struct pollfd fds[2] = {{.fd = notify_fd, .events = POLLIN},
					{.fd = sv[0], .events = POLLIN}};

		if (poll(fds, 2, 20000) <= 0) {
			fputs("gate-embed: the child neither called nor answered in 20 s\n",
			      stderr);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return 1;
		}
		if (fds[0].revents & POLLIN) {
			r = devwl_notify_handle(notify, notify_fd, node, NULL);
			if (r < 0 && r != -ENOENT && r != -EAGAIN)
				fprintf(stderr, "gate-embed: handling: %s\n", strerror(-r));
			continue;
		}
		if (fds[1].revents & (POLLHUP | POLLERR) && !(fds[1].revents & POLLIN))
			break;
		if (fds[1].revents & POLLIN) {
			char *buf = first[0] ? second : first;
			size_t size = first[0] ? sizeof(second) : sizeof(first);
			ssize_t n = recv(sv[0], buf, size - 1, 0);

			if (n <= 0)
				break;
			buf[n] = '\0';
			if (buf == first) {
				pnd = place(pidfd, "nd", flags, set);
				pdv = place(pidfd, "dv", flags, set);
				if (send(sv[0], "g", 1, 0) != 1)
					break;
			}
		}
	}
	waitpid(pid, &status, 0);
	if (!second[0] || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "gate-embed: the child ended early (status 0x%x)\n", status);
		return 1;
	}
	printf("%s place nd=%s dv=%s opened %s\n", first, pnd, pdv, second);
	devwl_cgroup_free(cg);
	devwl_nodeset_unref(set);
	devwl_notify_free(notify);
	devwl_policy_free(policy);
	return 0;
}
