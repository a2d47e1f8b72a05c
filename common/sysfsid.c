/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/loop.h>
#include <linux/major.h>

#include "fileio.h"
#include "sysfsid.h"
#include "thread.h"
#include "util.h"

static void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

/* An attribute's text without its trailing newline and blanks, or NULL. Attributes are
 * small; a longer one is no identity this matches. */
static char *attr(const char *dir, const char *name)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	char *text = NULL;
	ssize_t len;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return NULL;
	/* O_NONBLOCK: a FIFO in a tree of the caller's must not hang the resolution. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	len = devwl_read_all(fd, 4096, &text);
	if (len < 0)
		return NULL;
	while (len > 0 && isspace((unsigned char)text[len - 1]))
		text[--len] = '\0';
	return text;
}

static bool attr_is(const char *dir, const char *name, const char *want, bool nocase)
{
	_cleanup_free_ char *v = attr(dir, name);

	return v && (nocase ? strcasecmp(v, want) : strcmp(v, want)) == 0;
}

static bool has(const char *dir, const char *name)
{
	char path[PATH_MAX];

	return (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) < sizeof(path) &&
	       access(path, F_OK) == 0;
}

/* Cut the last component of path in place; false at root's directory. */
static bool up(char *path, size_t root_len)
{
	char *slash = strrchr(path, '/');

	if (!slash || (size_t)(slash - path) <= root_len)
		return false;
	*slash = '\0';
	return true;
}

/*
 * Is there a root hub above devpath? The kernel names every root hub usbN and puts every
 * USB device below one, so a path without such a component (a disk, a virtual tty) has
 * no USB device above it: told without the system call per level the walk up makes.
 */
static bool below_root_hub(const char *devpath)
{
	for (const char *c = devpath; (c = strstr(c, "/usb")); c += 4) {
		const char *d = c + 4;

		if (!isdigit((unsigned char)*d))
			continue;
		while (isdigit((unsigned char)*d))
			d++;
		if (*d == '/' || !*d)
			return true;
	}
	return false;
}

/* The nearest USB device at or above devpath (it has idVendor), below the root. */
static bool usb_matches(const char *devpath, size_t root_len, const struct sysfsid_query *q)
{
	char dir[PATH_MAX];

	if (!below_root_hub(devpath + root_len))
		return false;
	snprintf(dir, sizeof(dir), "%s", devpath);
	do {
		if (has(dir, "idVendor"))
			return attr_is(dir, "idVendor", q->vid, true) &&
			       attr_is(dir, "idProduct", q->pid, true) &&
			       (!q->serial || attr_is(dir, "serial", q->serial, false));
	} while (up(dir, root_len));
	return false;
}

static bool subsystem_is(const char *devpath, const char *name)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/subsystem", devpath) >= sizeof(path))
		return false;
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	base = strrchr(target, '/');
	return strcmp(base ? base + 1 : target, name) == 0;
}

/* Does udev's database hold an E:KEY=want line for the device, KEY one of keys[0..n)? One
 * read of the file for all the keys. */
static bool udev_is(const char *udev, char type, const char *mm, const char *const *keys, size_t n,
		    const char *want)
{
	char path[PATH_MAX], line[4096];
	_cleanup_(fclosep) FILE *f = NULL;
	int fd;

	if (!udev ||
	    (size_t)snprintf(path, sizeof(path), "%s/%c%s", udev, type, mm) >= sizeof(path))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return false;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "E:", 2))
			continue;
		for (size_t i = 0; i < n; i++) {
			size_t klen = strlen(keys[i]);

			if (!strncmp(line + 2, keys[i], klen) && line[2 + klen] == '=' &&
			    !strcmp(line + 3 + klen, want))
				return true;
		}
	}
	return false;
}

/* A partition answers for its disk: the directory above it. */
static void disk_of(const char *devpath, size_t root_len, char *disk, size_t size)
{
	snprintf(disk, size, "%s", devpath);
	if (has(disk, "partition"))
		up(disk, root_len);
}

/*
 * Is disk (a sysfs directory) a loop device, the loop driver's major in its dev (its
 * numbers into *ret_rdev)? Its content is whoever writes its backing file's, and so is
 * every name udev derives from what it holds (lvm-pv-uuid-, an ID_SERIAL a rule
 * imports): loop:FILE alone names it.
 */
static bool loop_disk_dev(const char *disk, dev_t *ret_rdev)
{
	_cleanup_free_ char *mm = attr(disk, "dev");
	unsigned int ma, mi;
	char tail;

	if (!mm || sscanf(mm, "%u:%u%c", &ma, &mi, &tail) != 2 || ma != LOOP_MAJOR)
		return false;
	*ret_rdev = makedev(ma, mi);
	return true;
}

static bool is_loop_disk(const char *disk)
{
	dev_t rdev;

	return loop_disk_dev(disk, &rdev);
}

/*
 * The kernel's huge_encode_dev() (new_encode_dev(): the minor's low byte, the 12-bit
 * major, the minor's upper 12 bits; include/linux/kdev_t.h), which LOOP_GET_STATUS64
 * reports lo_device in. doc/KERNEL-NOTES.md.
 */
static dev_t huge_decode(uint64_t v)
{
	return makedev((unsigned int)((v & 0xfff00) >> 8),
		       (unsigned int)((v & 0xff) | ((v >> 12) & 0xfff00)));
}

/*
 * The loop disk rdev, whose sysfs directory is disk, opened read-only through a node
 * under dev_root that stat(2), and fstat(2) once open, say is that very block device:
 * DEV/NAME, the name devtmpfs gives it, or udev's DEV/block/MAJOR:MINOR. What a path
 * holds is no identity, so a node that is something else (a what-if tree's file, a link
 * elsewhere) is not opened. Read-only: a close after writing is a change udev hears, and
 * its uevent would resolve the selector again. -1 when no node is the disk.
 */
static int open_loop_disk(const char *dev_root, const char *disk, dev_t rdev)
{
	const char *name = strrchr(disk, '/');

	if (!name)
		return -1;
	for (int i = 0; i < 2; i++) {
		char path[PATH_MAX];
		struct stat st;
		int fd;

		if ((size_t)(i == 0 ? snprintf(path, sizeof(path), "%s/%s", dev_root, name + 1)
				    : snprintf(path, sizeof(path), "%s/block/%u:%u", dev_root,
					       major(rdev), minor(rdev))) >= sizeof(path) ||
		    stat(path, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != rdev)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			continue;
		/* The same again on the fd: the path may have changed since. */
		if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == rdev)
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * LOOP_GET_STATUS64 waits on the backing file's file system (vfs_getattr(): a FUSE
 * server that never answers), and in some kernels the open waits on the device's lock,
 * held while a queue freeze waits on that file system; both are killable only: a
 * workload allowed /dev/fuse and /dev/loop-control could stall whoever asks, devwld's
 * loop thread among them. So a thread of its own asks, LOOP_ASK_MS at most is waited for
 * its answer, and a loop device whose question is still pending matches nothing and is
 * not asked again until that question returns (one thread per stalled device, never
 * more). doc/KERNEL-NOTES.md, section 11.
 */
#define LOOP_ASK_MS 1000

struct loop_question {
	struct loop_question *next;
	char dev_root[PATH_MAX], disk[PATH_MAX];
	dev_t rdev;
	bool done, abandoned, answered;
	struct loop_info64 info;
};

static pthread_mutex_t questions_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t question_answered = PTHREAD_COND_INITIALIZER;
static struct loop_question *questions; /* pending, and answered but not yet read */

/* Under questions_lock. */
static void question_unlink(struct loop_question *q)
{
	for (struct loop_question **p = &questions; *p; p = &(*p)->next)
		if (*p == q) {
			*p = q->next;
			return;
		}
}

static void *ask_loop(void *arg)
{
	struct loop_question *q = arg;
	_cleanup_close_ int fd = open_loop_disk(q->dev_root, q->disk, q->rdev);
	bool answered = fd >= 0 && ioctl(fd, LOOP_GET_STATUS64, &q->info) == 0;

	pthread_mutex_lock(&questions_lock);
	q->answered = answered;
	q->done = true;
	if (q->abandoned) {
		question_unlink(q);
		free(q);
	}
	pthread_cond_broadcast(&question_answered);
	pthread_mutex_unlock(&questions_lock);
	return NULL;
}

/*
 * What the loop disk (its sysfs directory) says backs it, into *ret_info: false when it
 * cannot say (no node of its own under dev_root, unbound, no answer in LOOP_ASK_MS).
 */
static bool loop_status(const char *dev_root, const char *disk, struct loop_info64 *ret_info)
{
	struct loop_question *q = NULL;
	struct timespec deadline;
	pthread_t thread;
	bool answered = false;
	dev_t rdev;

	if (!loop_disk_dev(disk, &rdev))
		return false;
	pthread_mutex_lock(&questions_lock);
	for (q = questions; q && q->rdev != rdev; q = q->next)
		;
	if (q) {
		pthread_mutex_unlock(&questions_lock);
		return false;
	}
	q = calloc(1, sizeof(*q));
	if (!q ||
	    (size_t)snprintf(q->dev_root, sizeof(q->dev_root), "%s", dev_root) >=
		    sizeof(q->dev_root) ||
	    (size_t)snprintf(q->disk, sizeof(q->disk), "%s", disk) >= sizeof(q->disk)) {
		pthread_mutex_unlock(&questions_lock);
		free(q);
		return false;
	}
	q->rdev = rdev;
	q->next = questions;
	questions = q;
	if (devwl_thread_start(&thread, ask_loop, q) < 0) {
		question_unlink(q);
		pthread_mutex_unlock(&questions_lock);
		free(q);
		return false;
	}
	pthread_detach(thread);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += LOOP_ASK_MS / 1000;
	deadline.tv_nsec += (LOOP_ASK_MS % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	while (!q->done && pthread_cond_clockwait(&question_answered, &questions_lock,
						  CLOCK_MONOTONIC, &deadline) != ETIMEDOUT)
		;
	if (!q->done) {
		/* The thread frees it when the answer comes, if ever. */
		q->abandoned = true;
		pthread_mutex_unlock(&questions_lock);
		return false;
	}
	question_unlink(q);
	pthread_mutex_unlock(&questions_lock);
	if (q->answered) {
		*ret_info = q->info;
		answered = true;
	}
	free(q);
	return answered;
}

/*
 * Is the loop disk (its sysfs directory) backed by file, stat(2)'s answer for FILE in
 * this process's mount namespace? A loop device's identity is its backing file's device
 * and inode as the kernel reports them (LOOP_GET_STATUS64), never the backing_file
 * attribute: the kernel writes that path relative to the root of whatever mount
 * namespace holds the file, so a workload allowed /dev/loop-control could bind a loop
 * device to a file of its own at FILE's path and have it named as FILE. doc/DESIGN.md,
 * "What a selector's identity rests on".
 */
static bool loop_backed_by(const char *dev_root, const char *disk, const struct stat *file)
{
	struct loop_info64 info = {0};

	/* Only a bound loop device has loop/: the others are not asked at all. */
	return has(disk, "loop") && loop_status(dev_root, disk, &info) &&
	       huge_decode(info.lo_device) == file->st_dev && info.lo_inode == file->st_ino;
}

static const char *const serial_keys[] = {"ID_SERIAL", "ID_SERIAL_SHORT"};

/* Does a kind name block devices only (a disk and its partitions)? Else character devices
 * are scanned too. */
static bool block_only(enum sysfsid_kind kind)
{
	switch (kind) {
	case SYSFSID_WWID:
	case SYSFSID_SERIAL:
	case SYSFSID_LOOP:
		return true;
	case SYSFSID_USB:
	case SYSFSID_SUBSYSTEM:
		return false;
	}
	return false;
}

static bool matches(const char *devpath, size_t root_len, bool block, const char *mm,
		    const char *udev, const char *dev_root, const struct sysfsid_query *q,
		    const struct stat *file)
{
	char disk[PATH_MAX];

	switch (q->kind) {
	case SYSFSID_USB:
		return usb_matches(devpath, root_len, q);
	case SYSFSID_SUBSYSTEM:
		return subsystem_is(devpath, q->value);
	case SYSFSID_WWID:
		disk_of(devpath, root_len, disk, sizeof(disk));
		return block && !is_loop_disk(disk) &&
		       (attr_is(disk, "wwid", q->value, false) ||
			attr_is(disk, "device/wwid", q->value, false));
	case SYSFSID_SERIAL:
		disk_of(devpath, root_len, disk, sizeof(disk));
		return block && !is_loop_disk(disk) &&
		       (attr_is(disk, "serial", q->value, false) ||
			attr_is(disk, "device/serial", q->value, false) ||
			udev_is(udev, 'b', mm, serial_keys, ARRAY_SIZE(serial_keys), q->value));
	case SYSFSID_LOOP:
		disk_of(devpath, root_len, disk, sizeof(disk));
		return block && loop_backed_by(dev_root, disk, file);
	}
	return false;
}

/*
 * realpath(3) of a /sys/dev link, in one lookup: open it O_PATH and read back the path the
 * kernel resolved. glibc's realpath reads a link at every component of every prefix,
 * about 15 system calls for a sysfs device, each walking from "/" again: per device that
 * was most of what a selector costs. realpath stays for when /proc cannot answer (not
 * mounted, a path the process root cannot reach).
 */
static bool resolve_link(const char *link, char *out)
{
	char proc[64];
	ssize_t n;
	int fd = open(link, O_PATH | O_CLOEXEC);

	if (fd < 0)
		return false;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, out, PATH_MAX);
	close(fd);
	if (n > 0 && n < PATH_MAX && out[0] == '/') {
		out[n] = '\0';
		return true;
	}
	return realpath(link, out) != NULL;
}

static int scan(const char *root, bool block, const char *udev, const char *dev_root,
		const struct sysfsid_query *q, const struct stat *file, uint8_t access,
		struct rulevec *rv, struct devwl_error *ret_err)
{
	char dir[PATH_MAX];
	_cleanup_(closedirp) DIR *d = NULL;
	size_t root_len = strlen(root);
	struct dirent *de;
	int r;

	snprintf(dir, sizeof(dir), "%s/dev/%s", root, block ? "block" : "char");
	d = opendir(dir);
	if (!d) {
		r = negerrno();
		return devwl_error_set(ret_err, r, 0, "%s: %s", dir, strerror(-r));
	}
	while ((de = readdir(d))) {
		char link[PATH_MAX], devpath[PATH_MAX];
		unsigned int ma, mi;
		char tail;

		if (sscanf(de->d_name, "%u:%u%c", &ma, &mi, &tail) != 2 || ma >= DEVWL_ANY ||
		    mi >= DEVWL_ANY)
			continue;
		if ((size_t)snprintf(link, sizeof(link), "%s/%s", dir, de->d_name) >=
			    sizeof(link) ||
		    !resolve_link(link, devpath))
			continue;
		/* A link out of the tree names nothing of it. */
		if (strncmp(devpath, root, root_len) || devpath[root_len] != '/')
			continue;
		if (matches(devpath, root_len, block, de->d_name, udev, dev_root, q, file)) {
			struct devwl_rule rule = {.type = block ? DEVWL_DEV_BLOCK : DEVWL_DEV_CHAR,
						  .access = access,
						  .major = ma,
						  .minor = mi};

			if (rulevec_add(rv, &rule) < 0)
				return devwl_error_set(ret_err, -ENOMEM, 0, "out of memory");
		}
	}
	return 0;
}

int sysfsid_find(const char *sysfs, const char *udev, const char *dev,
		 const struct sysfsid_query *q, uint8_t access, struct rulevec *rv,
		 struct devwl_error *ret_err)
{
	char root[PATH_MAX];
	struct stat file = {0};
	int r;

	if (!realpath(sysfs, root)) {
		r = negerrno();
		return devwl_error_set(ret_err, r, 0, "%s: %s", sysfs, strerror(-r));
	}
	/* A FILE this namespace does not hold is no loop device's. */
	if (q->kind == SYSFSID_LOOP && stat(q->value, &file) < 0)
		return 0;
	if (!block_only(q->kind)) {
		r = scan(root, false, udev, dev, q, &file, access, rv, ret_err);
		if (r < 0)
			return r;
	}
	r = scan(root, true, udev, dev, q, &file, access, rv, ret_err);
	if (r < 0)
		return r;
	rulevec_sort(rv);
	return 0;
}

bool sysfsid_is_loop(const char *sysfs, unsigned int major, unsigned int minor)
{
	char link[PATH_MAX], devpath[PATH_MAX], root[PATH_MAX], disk[PATH_MAX];

	if (major == LOOP_MAJOR)
		return true;
	/* A partition (259:N, blkext) is its disk's. */
	if (!realpath(sysfs, root) ||
	    (size_t)snprintf(link, sizeof(link), "%s/dev/block/%u:%u", root, major, minor) >=
		    sizeof(link) ||
	    !resolve_link(link, devpath) || strncmp(devpath, root, strlen(root)) ||
	    devpath[strlen(root)] != '/')
		return false;
	disk_of(devpath, strlen(root), disk, sizeof(disk));
	return is_loop_disk(disk);
}
