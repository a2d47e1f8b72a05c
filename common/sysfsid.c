/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "fileio.h"
#include "sysfsid.h"
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

static bool loop_matches(const char *disk, const char *file, const char *real)
{
	_cleanup_free_ char *b = attr(disk, "loop/backing_file");

	return b && (!strcmp(b, file) || (real && !strcmp(b, real)));
}

static const char *const serial_keys[] = {"ID_SERIAL", "ID_SERIAL_SHORT"};

static bool matches(const char *devpath, size_t root_len, bool block, const char *mm,
		    const char *udev, const struct sysfsid_query *q, const char *real)
{
	char disk[PATH_MAX];

	switch (q->kind) {
	case SYSFSID_USB:
		return usb_matches(devpath, root_len, q);
	case SYSFSID_SUBSYSTEM:
		return subsystem_is(devpath, q->value);
	case SYSFSID_WWID:
		disk_of(devpath, root_len, disk, sizeof(disk));
		return block && (attr_is(disk, "wwid", q->value, false) ||
				 attr_is(disk, "device/wwid", q->value, false));
	case SYSFSID_SERIAL:
		disk_of(devpath, root_len, disk, sizeof(disk));
		return block &&
		       (attr_is(disk, "serial", q->value, false) ||
			attr_is(disk, "device/serial", q->value, false) ||
			udev_is(udev, 'b', mm, serial_keys, ARRAY_SIZE(serial_keys), q->value));
	case SYSFSID_LOOP:
		disk_of(devpath, root_len, disk, sizeof(disk));
		return block && loop_matches(disk, q->value, real);
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

static int scan(const char *root, bool block, const char *udev, const struct sysfsid_query *q,
		const char *real, uint8_t access, struct rulevec *rv, struct devwl_error *ret_err)
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
		if (matches(devpath, root_len, block, de->d_name, udev, q, real)) {
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

int sysfsid_find(const char *sysfs, const char *udev, const struct sysfsid_query *q, uint8_t access,
		 struct rulevec *rv, struct devwl_error *ret_err)
{
	char root[PATH_MAX], real_buf[PATH_MAX];
	const char *real = NULL;
	int r;

	if (!realpath(sysfs, root)) {
		r = negerrno();
		return devwl_error_set(ret_err, r, 0, "%s: %s", sysfs, strerror(-r));
	}
	/* The kernel records the backing file as it resolved it. */
	if (q->kind == SYSFSID_LOOP && realpath(q->value, real_buf))
		real = real_buf;
	if (q->kind != SYSFSID_WWID && q->kind != SYSFSID_SERIAL && q->kind != SYSFSID_LOOP) {
		r = scan(root, false, udev, q, real, access, rv, ret_err);
		if (r < 0)
			return r;
	}
	r = scan(root, true, udev, q, real, access, rv, ret_err);
	if (r < 0)
		return r;
	rulevec_sort(rv);
	return 0;
}
