/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probe: issue one device-related system call (or several, separated by ";" words) and
 * print what came back, one line per call, so live tests can compare outcomes.
 *
 *   probe open PATH FLAGS [MODE]            open(2) (the raw syscall, not glibc's openat)
 *   probe openat DIR PATH FLAGS             DIR opened O_PATH|O_DIRECTORY, "." = AT_FDCWD
 *   probe openat2 DIR PATH FLAGS RESOLVE    RESOLVE: in_root,beneath,no_symlinks,
 *                                           no_magiclinks,no_xdev or "-"
 *   probe creat PATH MODE
 *   probe mknod PATH c|b MAJOR MINOR MODE   MODE octal permission bits
 *   probe mknodat DIR PATH c|b MAJOR MINOR MODE
 *   probe handle PATH FLAGS                 name_to_handle_at + open_by_handle_at
 *   probe iouring                           io_uring_setup(2)
 * Extras for tests:
 *   probe open32 PATH FLAGS                 open(2) through the i386 ABI (int $0x80)
 *   probe chdir DIR                         chdir(2), prints ok/ERRNO
 *   probe close FD                          close(2)
 *   probe thread OP ARGS...                 run one op in a new thread (not the leader)
 *   probe umask MODE                        set the umask (octal), prints ok
 *   probe sleep MS                          stay alive a while, prints ok
 *   probe gethandle PATH                    name_to_handle_at: "TYPE HEX" (or the errno)
 *   probe openhandle MOUNTDIR TYPE HEX FLAGS open_by_handle_at of that handle
 *   probe clone-into DIR CMD [ARG]...       clone3(CLONE_INTO_CGROUP) into the cgroup2
 *                                           directory DIR, the child runs CMD; prints
 *                                           ok and CMD's exit status, or the errno name
 * In any argument "%L" stands for the fd the previous operation returned, so tests can
 * name it in /proc/self/fd/%L whatever fds the process started with; "%P" for its pid.
 *   probe landlock DIR...                   confine the process with Landlock: from then on
 *                                           files are read (and run) only beneath the
 *                                           DIRs, written nowhere; ok or the errno name
 *   probe stat PATH                         lstat: "ok rdev=MAJ:MIN type=X mode=OOOO
 *                                           uid=U gid=G"
 *   probe poke PATH ADDR                    open PATH O_RDWR (a /proc/PID/mem) and write
 *                                           back the byte at hex ADDR: the errno name, or
 *                                           "ok write=ok" (or write=ERRNO) if it opened
 *   probe userns                            unshare user and mount namespaces, root in
 *                                           the new one mapped to the caller: ok or errno
 *   probe fusemount DEV DIR                 open DEV O_RDWR and mount FUSE on DIR with it
 *                                           (no server: unmounted at once): ok,
 *                                           open=ERRNO or mount=ERRNO
 *   probe pty                               a pty as a terminal program opens one: the
 *                                           master (/dev/ptmx), unlocked, then its
 *                                           /dev/pts/N: ok, ptmx=, ioctl= or pts=ERRNO
 *
 * FLAGS: comma list of rdonly,wronly,rdwr,path,cloexec,nofollow,creat,excl,trunc,
 * directory,nonblock (or "-" for 0).
 * Output: "ok" plus, for a returned fd, " fd=N rdev=MAJ:MIN type=c|b|f|d|o cloexec=0|1"
 * and, for a readable char device, " read=HEX" (first 4 bytes; "read=EOF" when none,
 * read=ERRNAME on error); on failure the errno name. Exit 0, or 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <linux/io_uring.h>
#include <linux/sched.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sched.h>
#include <signal.h>

static long last_fd = -1; /* what the previous operation returned, for "%L" */

/* The file rights of Landlock's first ABI: every one of them handled, so denied unless a
 * rule allows it. */
#define LANDLOCK_FS_ALL ((1ULL << 13) - 1)
#define LANDLOCK_FS_READ                                                                           \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

/* Confine this process: read and execute beneath dirs only. 0 or -errno. */
static long landlock_beneath(char **dirs, int n)
{
	struct landlock_ruleset_attr attr = {.handled_access_fs = LANDLOCK_FS_ALL};
	long rs = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	long r = 0;

	if (rs < 0)
		return -errno;
	for (int i = 0; i < n && r == 0; i++) {
		struct landlock_path_beneath_attr pb = {.allowed_access = LANDLOCK_FS_READ};
		int fd = open(dirs[i], O_PATH | O_CLOEXEC);

		if (fd < 0)
			r = -errno;
		pb.parent_fd = fd;
		if (r == 0 &&
		    syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
			r = -errno;
		if (fd >= 0)
			close(fd);
	}
	if (r == 0 && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		       syscall(SYS_landlock_restrict_self, rs, 0) < 0))
		r = -errno;
	close((int)rs);
	return r;
}

/* Write back one byte of an opened file (a /proc/PID/mem) at addr: what a writable fd
 * on another process's memory allows, shown without changing it. */
static void poke(char *out, size_t size, const char *path, const char *addr)
{
	char *end = NULL;
	unsigned long long at = strtoull(addr, &end, 16);
	unsigned char b = 0;
	long fd = -1;

	if (!*addr || *end) {
		fprintf(stderr, "probe: poke: bad address %s\n", addr);
		exit(2);
	}
	fd = syscall(SYS_open, path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(out, size, "%s", strerrorname_np(errno));
		return;
	}
	if (pread((int)fd, &b, 1, (off_t)at) != 1)
		snprintf(out, size, "ok fd=%ld read=%s", fd, strerrorname_np(errno));
	else if (pwrite((int)fd, &b, 1, (off_t)at) != 1)
		snprintf(out, size, "ok fd=%ld write=%s", fd, strerrorname_np(errno));
	else
		snprintf(out, size, "ok fd=%ld write=ok", fd);
	close((int)fd);
}

/* Write text to a /proc/self file: 0 or -errno. */
static long write_proc(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	ssize_t len = (ssize_t)strlen(text);
	long r = fd < 0 ? -errno : write(fd, text, (size_t)len) == len ? 0 : -errno;

	if (fd >= 0)
		close(fd);
	return r;
}

/* Root of new user and mount namespaces, mapped to the caller's ids. 0 or -errno. */
static long enter_userns(void)
{
	char uid_map[32], gid_map[32];
	long r = 0;

	snprintf(uid_map, sizeof(uid_map), "0 %u 1", (unsigned int)getuid());
	snprintf(gid_map, sizeof(gid_map), "0 %u 1", (unsigned int)getgid());
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -errno;
	r = write_proc("/proc/self/setgroups", "deny");
	if (r == 0)
		r = write_proc("/proc/self/uid_map", uid_map);
	if (r == 0)
		r = write_proc("/proc/self/gid_map", gid_map);
	return r;
}

/* Mount FUSE with an fd on dev opened here: the kernel takes it only from an opener in the
 * mounter's user namespace. No server answers; the mount goes at once. */
static void fuse_mount(char *out, size_t size, const char *dev, const char *dir)
{
	char opts[128];
	long fd = syscall(SYS_open, dev, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		snprintf(out, size, "open=%s", strerrorname_np(errno));
		return;
	}
	snprintf(opts, sizeof(opts), "fd=%ld,rootmode=40000,user_id=0,group_id=0", fd);
	if (mount("devwl-probe", dir, "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
		snprintf(out, size, "mount=%s", strerrorname_np(errno));
	} else {
		snprintf(out, size, "ok");
		umount2(dir, MNT_DETACH);
	}
	close((int)fd);
}

static void pty_open(char *out, size_t size)
{
	int unlock = 0, n = -1, master, other;
	char name[32];

	master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0) {
		snprintf(out, size, "ptmx=%s", strerrorname_np(errno));
		return;
	}
	if (ioctl(master, TIOCSPTLCK, &unlock) < 0 || ioctl(master, TIOCGPTN, &n) < 0) {
		snprintf(out, size, "ioctl=%s", strerrorname_np(errno));
		close(master);
		return;
	}
	snprintf(name, sizeof(name), "/dev/pts/%d", n);
	other = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (other < 0)
		snprintf(out, size, "pts=%s", strerrorname_np(errno));
	else
		snprintf(out, size, "ok");
	if (other >= 0)
		close(other);
	close(master);
}

struct flagname {
	const char *name;
	uint64_t value;
};

static const struct flagname open_flags[] = {
	{"rdonly", O_RDONLY},	    {"wronly", O_WRONLY},     {"rdwr", O_RDWR},
	{"path", O_PATH},	    {"cloexec", O_CLOEXEC},   {"nofollow", O_NOFOLLOW},
	{"creat", O_CREAT},	    {"excl", O_EXCL},	      {"trunc", O_TRUNC},
	{"directory", O_DIRECTORY}, {"nonblock", O_NONBLOCK}, {"accmode3", 3},
};

static const struct flagname resolve_flags[] = {
	{"in_root", RESOLVE_IN_ROOT},	      {"beneath", RESOLVE_BENEATH},
	{"no_symlinks", RESOLVE_NO_SYMLINKS}, {"no_magiclinks", RESOLVE_NO_MAGICLINKS},
	{"no_xdev", RESOLVE_NO_XDEV},
};

static __attribute__((noreturn)) void usage(const char *why)
{
	fprintf(stderr, "probe: %s\n", why);
	exit(2);
}

static uint64_t parse_list(const char *text, const struct flagname *names, size_t n)
{
	char buf[256];
	char *save = NULL;
	uint64_t value = 0;

	if (strcmp(text, "-") == 0)
		return 0;
	if (strlen(text) >= sizeof(buf))
		usage("flag list too long");
	strcpy(buf, text);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i = 0;

		for (i = 0; i < n; i++)
			if (strcmp(tok, names[i].name) == 0)
				break;
		if (i == n)
			usage("unknown flag");
		value |= names[i].value;
	}
	return value;
}

static int parse_flags(const char *text)
{
	return (int)parse_list(text, open_flags, sizeof(open_flags) / sizeof(open_flags[0]));
}

static unsigned long parse_num(const char *text, int base)
{
	char *end = NULL;
	unsigned long v = 0;

	errno = 0;
	v = strtoul(text, &end, base);
	if (errno || !*text || *end)
		usage("bad number");
	return v;
}

static int open_dir(const char *dir)
{
	int fd = -1;

	if (strcmp(dir, ".") == 0)
		return AT_FDCWD;
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "probe: %s: %m\n", dir);
		exit(2);
	}
	return fd;
}

static void put_dir(int fd)
{
	if (fd >= 0)
		close(fd);
}

static char type_char(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFCHR:
		return 'c';
	case S_IFBLK:
		return 'b';
	case S_IFREG:
		return 'f';
	case S_IFDIR:
		return 'd';
	default:
		return 'o';
	}
}

/* One line for the result of a call returning an fd (or -1/errno). */
static void report_fd(char *out, size_t size, long ret, int err)
{
	struct stat st;
	int fl = 0, fdfl = 0;
	size_t len = 0;

	if (ret < 0) {
		snprintf(out, size, "%s", strerrorname_np(err) ?: "E?");
		return;
	}
	last_fd = ret;
	if (fstat((int)ret, &st) < 0) {
		snprintf(out, size, "ok fd=%ld fstat=%s", ret, strerrorname_np(errno));
		return;
	}
	fl = fcntl((int)ret, F_GETFL);
	fdfl = fcntl((int)ret, F_GETFD);
	len = (size_t)snprintf(out, size, "ok fd=%ld rdev=%u:%u type=%c cloexec=%d", ret,
			       major(st.st_rdev), minor(st.st_rdev), type_char(st.st_mode),
			       (fdfl & FD_CLOEXEC) ? 1 : 0);
	if (S_ISCHR(st.st_mode) && !(fl & O_PATH) && (fl & O_ACCMODE) != O_WRONLY) {
		unsigned char b[4];
		struct pollfd pfd = {.fd = (int)ret, .events = POLLIN};
		ssize_t n = 0;

		if (poll(&pfd, 1, 200) <= 0) {
			snprintf(out + len, size - len, " read=EAGAIN");
			return;
		}
		n = read((int)ret, b, sizeof(b));
		if (n < 0)
			snprintf(out + len, size - len, " read=%s", strerrorname_np(errno));
		else if (n == 0)
			snprintf(out + len, size - len, " read=EOF");
		else
			for (ssize_t i = 0; i < n && len + 3 < size; i++)
				len += (size_t)snprintf(out + len, size - len, "%s%02x",
							i ? "" : " read=", b[i]);
	}
}

/* Build an i386 open(2) in memory the 32-bit ABI can address. */
static long open32(const char *path, int flags)
{
	static char *low;
	long ret = 0;

	if (!low) {
		low = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
		if (low == MAP_FAILED)
			return -ENOMEM;
	}
	snprintf(low, 8192, "%s", path);
	/* i386 __NR_open is 5; ebx, ecx, edx carry the arguments. */
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(5L), "b"((long)(uintptr_t)low), "c"((long)flags), "d"(0L)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

struct op {
	char **argv;
	int argc;
	char out[256];
	int usage_error;
};

static int run_op(struct op *op);

static void *thread_main(void *arg)
{
	run_op(arg);
	return NULL;
}

#define NEED(n)                                                                                    \
	do {                                                                                       \
		if (argc < (n))                                                                    \
			usage("missing arguments");                                                \
	} while (0)

static int run_op(struct op *op)
{
	char **argv = op->argv;
	int argc = op->argc;
	const char *cmd = argv[0];
	long ret = -1;
	int err = 0;

	if (strcmp(cmd, "open") == 0) {
		NEED(3);
		ret = syscall(SYS_open, argv[1], parse_flags(argv[2]),
			      argc > 3 ? (mode_t)parse_num(argv[3], 8) : 0);
		err = errno;
		report_fd(op->out, sizeof(op->out), ret, err);
	} else if (strcmp(cmd, "open32") == 0) {
		NEED(3);
		ret = open32(argv[1], parse_flags(argv[2]));
		if (ret < 0)
			err = (int)-ret;
		report_fd(op->out, sizeof(op->out), ret < 0 ? -1 : ret, err);
	} else if (strcmp(cmd, "openat") == 0) {
		int dfd = -1;

		NEED(4);
		dfd = open_dir(argv[1]);
		ret = syscall(SYS_openat, dfd, argv[2], parse_flags(argv[3]), 0);
		err = errno;
		put_dir(dfd);
		report_fd(op->out, sizeof(op->out), ret, err);
	} else if (strcmp(cmd, "openat2") == 0) {
		struct open_how how = {0};
		int dfd = -1;

		NEED(5);
		dfd = open_dir(argv[1]);
		how.flags = (uint64_t)(unsigned int)parse_flags(argv[3]);
		how.resolve = parse_list(argv[4], resolve_flags,
					 sizeof(resolve_flags) / sizeof(resolve_flags[0]));
		ret = syscall(SYS_openat2, dfd, argv[2], &how, sizeof(how));
		err = errno;
		put_dir(dfd);
		report_fd(op->out, sizeof(op->out), ret, err);
	} else if (strcmp(cmd, "creat") == 0) {
		NEED(3);
		ret = syscall(SYS_creat, argv[1], (mode_t)parse_num(argv[2], 8));
		err = errno;
		report_fd(op->out, sizeof(op->out), ret, err);
	} else if (strcmp(cmd, "mknod") == 0 || strcmp(cmd, "mknodat") == 0) {
		int at = cmd[5] == 'a', dfd = AT_FDCWD;
		mode_t mode = 0;

		NEED(at ? 7 : 6);
		if (at) {
			dfd = open_dir(argv[1]);
			argv++;
		}
		if (strcmp(argv[2], "c") == 0)
			mode = S_IFCHR;
		else if (strcmp(argv[2], "b") == 0)
			mode = S_IFBLK;
		else if (strcmp(argv[2], "p") == 0)
			mode = S_IFIFO;
		else
			usage("type must be c or b");
		mode |= (mode_t)parse_num(argv[5], 8);
		if (at)
			ret = syscall(SYS_mknodat, dfd, argv[1], mode,
				      makedev(parse_num(argv[3], 10), parse_num(argv[4], 10)));
		else
			ret = syscall(SYS_mknod, argv[1], mode,
				      makedev(parse_num(argv[3], 10), parse_num(argv[4], 10)));
		err = errno;
		put_dir(dfd);
		snprintf(op->out, sizeof(op->out), "%s", ret < 0 ? strerrorname_np(err) : "ok");
	} else if (strcmp(cmd, "handle") == 0) {
		struct file_handle *fh = NULL;
		char dir[4096];
		char *slash = NULL;
		int mount_id = 0, mfd = -1;

		NEED(3);
		fh = calloc(1, sizeof(*fh) + MAX_HANDLE_SZ);
		if (!fh)
			usage("out of memory");
		fh->handle_bytes = MAX_HANDLE_SZ;
		if (name_to_handle_at(AT_FDCWD, argv[1], fh, &mount_id, 0) < 0) {
			snprintf(op->out, sizeof(op->out), "name_to_handle_at=%s",
				 strerrorname_np(errno));
			free(fh);
			return 0;
		}
		snprintf(dir, sizeof(dir), "%s", argv[1]);
		slash = strrchr(dir, '/');
		if (!slash)
			strcpy(dir, ".");
		else if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
		/* open_by_handle_at refuses an O_PATH mount fd; O_DIRECTORY never traps. */
		mfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (mfd < 0) {
			snprintf(op->out, sizeof(op->out), "mountfd=%s", strerrorname_np(errno));
			free(fh);
			return 0;
		}
		ret = syscall(SYS_open_by_handle_at, mfd, fh, parse_flags(argv[2]));
		err = errno;
		close(mfd);
		free(fh);
		report_fd(op->out, sizeof(op->out), ret, err);
	} else if (strcmp(cmd, "gethandle") == 0 || strcmp(cmd, "openhandle") == 0) {
		struct file_handle *fh = calloc(1, sizeof(*fh) + MAX_HANDLE_SZ);
		int mount_id = 0, mfd = -1;
		size_t n = 0, len = 0;

		if (!fh)
			usage("out of memory");
		fh->handle_bytes = MAX_HANDLE_SZ;
		if (cmd[0] == 'g') {
			NEED(2);
			if (name_to_handle_at(AT_FDCWD, argv[1], fh, &mount_id, 0) < 0) {
				snprintf(op->out, sizeof(op->out), "%s", strerrorname_np(errno));
				free(fh);
				return 0;
			}
			len = (size_t)snprintf(op->out, sizeof(op->out), "%d ", fh->handle_type);
			for (unsigned int i = 0; i < fh->handle_bytes && len + 3 < sizeof(op->out);
			     i++)
				len += (size_t)snprintf(op->out + len, sizeof(op->out) - len,
							"%02x", fh->f_handle[i]);
			free(fh);
			return 0;
		}
		NEED(5);
		fh->handle_type = (int)parse_num(argv[2], 10);
		n = strlen(argv[3]) / 2;
		if (n > MAX_HANDLE_SZ)
			usage("handle too long");
		for (size_t i = 0; i < n; i++)
			if (sscanf(argv[3] + 2 * i, "%2hhx", &fh->f_handle[i]) != 1)
				usage("bad handle");
		fh->handle_bytes = (unsigned int)n;
		mfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (mfd < 0)
			usage("cannot open the mount directory");
		ret = syscall(SYS_open_by_handle_at, mfd, fh, parse_flags(argv[4]));
		err = errno;
		close(mfd);
		free(fh);
		report_fd(op->out, sizeof(op->out), ret, err);
	} else if (strcmp(cmd, "iouring") == 0) {
		struct io_uring_params p = {0};

		ret = syscall(SYS_io_uring_setup, 1, &p);
		err = errno;
		if (ret < 0)
			snprintf(op->out, sizeof(op->out), "%s", strerrorname_np(err));
		else
			snprintf(op->out, sizeof(op->out), "ok fd=%ld", ret);
	} else if (strcmp(cmd, "chdir") == 0) {
		NEED(2);
		ret = chdir(argv[1]);
		snprintf(op->out, sizeof(op->out), "%s", ret < 0 ? strerrorname_np(errno) : "ok");
	} else if (strcmp(cmd, "close") == 0) {
		NEED(2);
		ret = close((int)parse_num(argv[1], 10));
		snprintf(op->out, sizeof(op->out), "%s", ret < 0 ? strerrorname_np(errno) : "ok");
	} else if (strcmp(cmd, "sleep") == 0) {
		struct timespec ts;

		NEED(2);
		ret = parse_num(argv[1], 10);
		ts = (struct timespec){.tv_sec = ret / 1000, .tv_nsec = ret % 1000 * 1000000L};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		snprintf(op->out, sizeof(op->out), "ok");
	} else if (strcmp(cmd, "umask") == 0) {
		NEED(2);
		umask((mode_t)parse_num(argv[1], 8));
		snprintf(op->out, sizeof(op->out), "ok");
	} else if (strcmp(cmd, "landlock") == 0) {
		NEED(2);
		ret = landlock_beneath(argv + 1, argc - 1);
		snprintf(op->out, sizeof(op->out), "%s",
			 ret < 0 ? strerrorname_np((int)-ret) : "ok");
	} else if (strcmp(cmd, "stat") == 0) {
		struct stat st;

		NEED(2);
		if (lstat(argv[1], &st) < 0)
			snprintf(op->out, sizeof(op->out), "%s", strerrorname_np(errno));
		else
			snprintf(op->out, sizeof(op->out),
				 "ok rdev=%u:%u type=%c mode=%04o uid=%u gid=%u", major(st.st_rdev),
				 minor(st.st_rdev), type_char(st.st_mode),
				 (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid,
				 (unsigned int)st.st_gid);
	} else if (strcmp(cmd, "poke") == 0) {
		NEED(3);
		poke(op->out, sizeof(op->out), argv[1], argv[2]);
	} else if (strcmp(cmd, "userns") == 0) {
		ret = enter_userns();
		snprintf(op->out, sizeof(op->out), "%s",
			 ret < 0 ? strerrorname_np((int)-ret) : "ok");
	} else if (strcmp(cmd, "fusemount") == 0) {
		NEED(3);
		fuse_mount(op->out, sizeof(op->out), argv[1], argv[2]);
	} else if (strcmp(cmd, "pty") == 0) {
		pty_open(op->out, sizeof(op->out));
	} else if (strcmp(cmd, "thread") == 0) {
		struct op sub = {.argv = argv + 1, .argc = argc - 1};
		pthread_t t;

		NEED(2);
		if (pthread_create(&t, NULL, thread_main, &sub) != 0)
			usage("pthread_create");
		pthread_join(t, NULL);
		memcpy(op->out, sub.out, sizeof(op->out));
	} else {
		usage("unknown operation");
	}
	return 0;
}

/* clone-into takes the rest of the command line: it is never one of several. */
static int clone_into(int argc, char **argv)
{
	struct clone_args args = {.flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD};
	int status = 0, dfd;
	long pid;

	if (argc < 4)
		usage("clone-into DIR CMD [ARG]...");
	dfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		printf("open=%s\n", strerrorname_np(errno));
		return 0;
	}
	args.cgroup = (uint64_t)dfd;
	fflush(stdout);
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		printf("%s\n", strerrorname_np(errno));
		return 0;
	}
	if (pid == 0) {
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	if (waitpid((pid_t)pid, &status, 0) < 0)
		usage("waitpid");
	printf("ok status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}

int main(int argc, char **argv)
{
	int start = 1;

	if (argc < 2)
		usage("usage: probe OP ARGS... [; OP ARGS...]...");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[1], "clone-into") == 0)
		return clone_into(argc, argv);
	while (start < argc) {
		int end = start;
		struct op op = {0};

		while (end < argc && strcmp(argv[end], ";") != 0)
			end++;
		if (end == start)
			usage("empty operation");
		for (int i = start; i < end; i++) {
			/* Substituted arguments live until exit, reachable from here. */
			static char *subs[256];
			static size_t nsubs;
			char *at = NULL;

			while (((at = strstr(argv[i], "%L")) && last_fd >= 0) ||
			       (at = strstr(argv[i], "%P"))) {
				char *sub = NULL;
				long v = at[1] == 'L' ? last_fd : (long)getpid();

				*at = '\0';
				if (nsubs == sizeof(subs) / sizeof(subs[0]) ||
				    asprintf(&sub, "%s%ld%s", argv[i], v, at + 2) < 0)
					usage("out of memory");
				argv[i] = subs[nsubs++] = sub;
			}
		}
		op.argv = argv + start;
		op.argc = end - start;
		run_op(&op);
		printf("%s\n", op.out);
		start = end + 1;
	}
	return 0;
}
