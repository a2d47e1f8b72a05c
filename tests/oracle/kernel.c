/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel side of the oracle: a scratch cgroup under the v1 devices hierarchy
 * stands for node "/", its subdirectories for the other nodes. Device nodes live in a
 * detached tmpfs (fsopen/fsmount: attached nowhere, gone with our last fd), and every
 * check is one short-lived probe process that moves itself into the node's cgroup and
 * asks the kernel once: faccessat() runs the device cgroup check without opening a
 * driver, mknodat() asks for 'm'.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>

#include "oracle.h"
#include "util.h"

#define DEVICES_ROOT   "/sys/fs/cgroup/devices"
#define SCRATCH_PREFIX "devwl-oracle."

struct kside {
	int devfd; /* root of the detached tmpfs holding the probe nodes */
	char scratch[256];
	bool active;
	unsigned generation;
	/* When a child of a node was last removed, to excuse the kernel's lag below. */
	struct {
		char path[ORACLE_PATH_MAX];
		struct timespec when;
	} last_rmdir[16];
	unsigned nrmdir;
};

static int read_file_at(const char *file, char **ret_text)
{
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *text = NULL;
	size_t len = 0, cap = 0;

	if (fd < 0)
		return negerrno();
	for (;;) {
		ssize_t n;
		if (len + 512 > cap) {
			char *p = realloc(text, cap = cap ? cap * 2 : 1024);
			if (!p)
				return -ENOMEM;
			text = p;
		}
		n = read(fd, text + len, cap - len - 1);
		if (n < 0)
			return negerrno();
		if (n == 0)
			break;
		len += (size_t)n;
	}
	text[len] = '\0';
	*ret_text = TAKE_PTR(text);
	return 0;
}

static void cg_path(const struct kside *ks, const char *node, const char *file, char *out,
		    size_t size)
{
	snprintf(out, size, "%s%s%s%s", ks->scratch, strcmp(node, "/") == 0 ? "" : node,
		 file ? "/" : "", file ? file : "");
}

static void dev_name(int type, uint32_t major, uint32_t minor, char *out, size_t size)
{
	snprintf(out, size, "%c-%u-%u", type == DEVWL_DEV_CHAR ? 'c' : 'b', major, minor);
}

int kside_new(struct kside **ret, char *reason, size_t size)
{
	_cleanup_free_ struct kside *ks = NULL;
	_cleanup_free_ char *list = NULL;
	_cleanup_close_ int fsfd = -1;
	int r;

	if (geteuid() != 0) {
		snprintf(reason, size, "needs root (writes to the devices cgroup, mknod)");
		return 77;
	}
	if (access(DEVICES_ROOT "/devices.allow", F_OK) < 0) {
		snprintf(reason, size, "no cgroup-v1 devices controller at %s (%m)", DEVICES_ROOT);
		return 77;
	}
	/*
	 * Our "/" is a child of the real root, which must allow everything with no
	 * exceptions: then it constrains no rule, exactly like having no parent.
	 */
	r = read_file_at(DEVICES_ROOT "/devices.list", &list);
	if (r < 0) {
		snprintf(reason, size, "cannot read %s/devices.list: %s", DEVICES_ROOT,
			 strerror(-r));
		return 77;
	}
	if (strcmp(list, "a *:* rwm\n") != 0) {
		snprintf(reason, size, "%s/devices.list is not \"a *:* rwm\" (a restricted root)",
			 DEVICES_ROOT);
		return 77;
	}
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	ks->devfd = -1;
	fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fsfd < 0) {
		snprintf(reason, size, "fsopen(tmpfs): %m");
		return 77;
	}
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return negerrno();
	ks->devfd = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
	if (ks->devfd < 0)
		return negerrno();
	for (int type = DEVWL_DEV_BLOCK; type <= DEVWL_DEV_CHAR; type++)
		for (uint32_t ma = PROBE_MAJOR_MIN; ma <= PROBE_MAJOR_MAX; ma++)
			for (uint32_t mi = PROBE_MINOR_MIN; mi <= PROBE_MINOR_MAX; mi++) {
				char name[32];
				dev_name(type, ma, mi, name, sizeof(name));
				if (mknodat(ks->devfd, name,
					    (type == DEVWL_DEV_CHAR ? S_IFCHR : S_IFBLK) | 0666,
					    makedev(ma, mi)) < 0) {
					r = negerrno();
					close(ks->devfd);
					return r;
				}
			}
	*ret = TAKE_PTR(ks);
	return 0;
}

void kside_free(struct kside *ks)
{
	if (!ks)
		return;
	kside_end(ks);
	if (ks->devfd >= 0)
		close(ks->devfd);
	free(ks);
}

/* rmdir a cgroup tree, children first; cgroup dirs hold only files besides subdirs. */
static int rmdir_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return errno == ENOENT ? 0 : negerrno();
	while ((e = readdir(d))) {
		char sub[512];
		if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		int r = rmdir_tree(sub);
		if (r < 0 && ret == 0)
			ret = r;
	}
	closedir(d);
	/* A probe we reaped a moment ago may still count as a member: retry briefly. */
	for (int tries = 0; rmdir(dir) < 0; tries++) {
		if (errno == ENOENT)
			break;
		if (errno != EBUSY || tries >= 200)
			return ret ? ret : negerrno();
		nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
	}
	return ret;
}

void kside_reap_stale(void)
{
	DIR *d = opendir(DEVICES_ROOT);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[512];
		long pid;
		if (e->d_type != DT_DIR ||
		    strncmp(e->d_name, SCRATCH_PREFIX, strlen(SCRATCH_PREFIX)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(SCRATCH_PREFIX), NULL, 10);
		if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", DEVICES_ROOT, e->d_name);
		rmdir_tree(path);
	}
	closedir(d);
}

int kside_begin(struct kside *ks)
{
	int r = kside_end(ks);

	if (r < 0)
		return r;
	/* A new name each time: a removed cgroup may linger in the kernel for a moment. */
	snprintf(ks->scratch, sizeof(ks->scratch), "%s/%s%d.%u", DEVICES_ROOT, SCRATCH_PREFIX,
		 (int)getpid(), ks->generation++);
	if (mkdir(ks->scratch, 0755) < 0)
		return negerrno();
	ks->active = true;
	ks->nrmdir = 0;
	return 0;
}

int kside_end(struct kside *ks)
{
	int r;

	if (!ks->active)
		return 0;
	r = rmdir_tree(ks->scratch);
	if (r == 0)
		ks->active = false;
	return r;
}

int kside_mkdir(struct kside *ks, const char *path)
{
	char p[512];

	cg_path(ks, path, NULL, p, sizeof(p));
	return mkdir(p, 0755) < 0 ? negerrno() : 0;
}

int kside_rmdir(struct kside *ks, const char *path)
{
	char p[512], parent[ORACLE_PATH_MAX];
	char *slash;

	cg_path(ks, path, NULL, p, sizeof(p));
	if (rmdir(p) < 0)
		return negerrno();
	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (slash == parent)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	unsigned i = ks->nrmdir++ % ARRAY_SIZE(ks->last_rmdir);
	snprintf(ks->last_rmdir[i].path, sizeof(ks->last_rmdir[i].path), "%s", parent);
	clock_gettime(CLOCK_MONOTONIC, &ks->last_rmdir[i].when);
	return 0;
}

static double seconds_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

/* Was a child of path removed within the last 5 s (a loaded machine takes it offline
 * late: seen past 200 ms with the live tests running beside)? */
static bool child_just_removed(const struct kside *ks, const char *path)
{
	unsigned n = ks->nrmdir < ARRAY_SIZE(ks->last_rmdir) ? ks->nrmdir
							     : (unsigned)ARRAY_SIZE(ks->last_rmdir);

	for (unsigned i = 0; i < n; i++)
		if (strcmp(ks->last_rmdir[i].path, path) == 0 &&
		    seconds_since(&ks->last_rmdir[i].when) < 5.0)
			return true;
	return false;
}

static bool has_subdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d)))
		found = e->d_type == DT_DIR && strcmp(e->d_name, ".") != 0 &&
			strcmp(e->d_name, "..") != 0;
	closedir(d);
	return found;
}

/* Does the kernel read this write as an "a" rule (first byte after leading spaces)? */
static bool is_a_rule(const char *buf, size_t len)
{
	static const char spaces[] = " \t\n\v\f\r\xa0";
	size_t i = 0;

	while (i < len && buf[i] && strchr(spaces, buf[i]))
		i++;
	return i < len && buf[i] == 'a';
}

static int write_once(const char *file, const char *buf, size_t len)
{
	_cleanup_close_ int fd = open(file, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return negerrno();
	n = write(fd, buf, len);
	if (n < 0)
		return negerrno();
	return (size_t)n == len ? 0 : -EIO;
}

int kside_write(struct kside *ks, const char *path, enum devwl_file file, const char *buf,
		size_t len)
{
	char p[512], dir[512];
	int r;

	cg_path(ks, path, file == DEVWL_FILE_ALLOW ? "devices.allow" : "devices.deny", p,
		sizeof(p));
	r = write_once(p, buf, len);
	/*
	 * Right after rmdir of its last child, an "a" write on a node may still see the
	 * child (EINVAL) until the kernel has taken it offline. Retry briefly, only then:
	 * an EINVAL write changes nothing, so repeating it is harmless.
	 */
	cg_path(ks, path, NULL, dir, sizeof(dir));
	for (int tries = 0; r == -EINVAL && tries < 1000 && is_a_rule(buf, len) &&
			    child_just_removed(ks, path) && !has_subdir(dir);
	     tries++) {
		nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
		r = write_once(p, buf, len);
	}
	return r;
}

int kside_list(struct kside *ks, const char *path, char **ret_text)
{
	char p[512];

	cg_path(ks, path, "devices.list", p, sizeof(p));
	return read_file_at(p, ret_text);
}

/* The probe: join the cgroup, ask once, report errno as the exit status. */
static _Noreturn void probe(const char *procs, int devfd, int type, uint32_t major, uint32_t minor,
			    int access)
{
	char name[32];
	int fd, r;

	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1)
		_exit(255);
	close(fd);
	if (access & DEVWL_ACC_MKNOD) {
		char tmp[48];
		snprintf(tmp, sizeof(tmp), "probe.%d", (int)getpid());
		r = mknodat(devfd, tmp, (type == DEVWL_DEV_CHAR ? S_IFCHR : S_IFBLK) | 0600,
			    makedev(major, minor));
		if (r == 0)
			unlinkat(devfd, tmp, 0);
	} else {
		int mode = (access & DEVWL_ACC_READ ? R_OK : 0) |
			   (access & DEVWL_ACC_WRITE ? W_OK : 0);
		dev_name(type, major, minor, name, sizeof(name));
		r = faccessat(devfd, name, mode ? mode : F_OK, 0);
	}
	_exit(r == 0 ? 0 : (errno > 0 && errno < 250 ? errno : 250));
}

int kside_check(struct kside *ks, const char *path, int type, uint32_t major, uint32_t minor,
		int access)
{
	char procs[512];
	int status = 0;
	pid_t pid;

	/* Only what one syscall can ask: {}, r, w, rw (faccessat) and m (mknod). */
	if (access != DEVWL_ACC_MKNOD && (access & DEVWL_ACC_MKNOD))
		return -EINVAL;
	cg_path(ks, path, "cgroup.procs", procs, sizeof(procs));
	pid = fork();
	if (pid < 0)
		return negerrno();
	if (pid == 0)
		probe(procs, ks->devfd, type, major, minor, access);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return negerrno();
	if (!WIFEXITED(status))
		return -ECHILD;
	switch (WEXITSTATUS(status)) {
	case 0:
	case ENXIO:
	case ENODEV:
		return 1;
	case EPERM:
		return 0;
	case 255:
		return -ESRCH; /* could not join the cgroup */
	default:
		return -WEXITSTATUS(status);
	}
}
