/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-selector [--quick] [--dir DIR] [--cdi M] [N...]: what selector_resolve() costs when
 * a host has many devices. For each N (default 100, 1000 and 10000) it builds a fake sysfs
 * tree of about N devices, laid out as the kernel lays them out, with udev's database,
 * udev's by-id/by-path links and a CDI directory of N/10 devices (M with --cdi), then times
 * one selector of each kind: p50, p99 and mean ns per resolution (wall clock), the mean CPU
 * time, and the mean per device (per CDI device for cdi:). Every resolution's rule count is
 * checked; a wrong one aborts. Then the same code on this host's own /sys, for scale, and
 * how each kind grows from the smallest N to the largest.
 *
 * bench-selector --row KIND N [--quick] [--dir DIR] [--cdi M]: one kind at one N, printed as
 * "ns_per_op=P50 ops_per_s=..." for bench/run.
 *
 * The mix, per ten devices: a USB serial adapter (the USB device, 189:x, with idVendor,
 * idProduct and serial, and its ttyUSB, 188:x, three levels below it), a USB receiver
 * (USB device and hidraw), a SCSI disk with a wwid on its SCSI device and udev's
 * ID_SERIAL, and its partition, a loop device with a backing file (and no node, so that
 * loop:FILE matches none: selector_text()), a virtio disk with a serial, a virtual tty
 * and a misc device; plus a root hub per 100 USB devices and one watchdog. Links are
 * relative, as sysfs writes them. The tree is removed at the end, also when the benchmark
 * is interrupted or fails (a parent process waits for it).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "selector.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

#define PATH_LEN 1024

static char top[PATH_LEN];

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("bench-selector: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static unsigned long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static unsigned long long now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* --- the tree ---------------------------------------------------------------------- */

/* The tree of the current N: top itself, rebuilt for each N, so that paths are as short
 * as the temporary directory allows (every lookup walks them from /). */
static char base[PATH_LEN];

/* snprintf into a PATH_LEN buffer; a path that does not fit stops the benchmark. */
static void fmt(char *out, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void fmt(char *out, const char *f, ...)
{
	va_list ap;
	int len;

	va_start(ap, f);
	len = vsnprintf(out, PATH_LEN, f, ap);
	va_end(ap);
	if (len < 0 || len >= PATH_LEN)
		die("%s: path too long", f);
}

static void path_of(char *out, const char *rel)
{
	if ((size_t)snprintf(out, PATH_LEN, "%s/%s", base, rel) >= PATH_LEN)
		die("%s: path too long", rel);
}

/* mkdir -p of an absolute path; only the missing part costs system calls. */
static void mkdirs(char *path)
{
	char *slash;

	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return;
	if (errno != ENOENT || !(slash = strrchr(path, '/')) || slash == path)
		die("mkdir %s: %s", path, strerror(errno));
	*slash = '\0';
	mkdirs(path);
	*slash = '/';
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die("mkdir %s: %s", path, strerror(errno));
}

static void mkdir_rel(const char *rel)
{
	char p[PATH_LEN];

	path_of(p, rel);
	mkdirs(p);
}

static void put(const char *rel, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(const char *rel, const char *fmt, ...)
{
	char p[PATH_LEN], text[512];
	va_list ap;
	int fd, len;

	va_start(ap, fmt);
	len = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	path_of(p, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT) {
		char *slash = strrchr(p, '/');

		*slash = '\0';
		mkdirs(p);
		*slash = '/';
		fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	}
	if (fd < 0 || write(fd, text, (size_t)len) != len)
		die("%s: %s", p, strerror(errno));
	close(fd);
}

static void link_rel(const char *rel, const char *target)
{
	char p[PATH_LEN];

	path_of(p, rel);
	if (symlink(target, p) < 0) {
		char *slash = strrchr(p, '/');

		if (errno != ENOENT)
			die("symlink %s: %s", p, strerror(errno));
		*slash = '\0';
		mkdirs(p);
		*slash = '/';
		if (symlink(target, p) < 0)
			die("symlink %s: %s", p, strerror(errno));
	}
}

/* "../" once per component of dir (relative to sys/), then what: a link from inside dir
 * to sys/what, as the kernel writes it. */
static void up_to_sys(char *out, size_t size, const char *dir, const char *what)
{
	size_t len = 0;

	out[0] = '\0';
	for (const char *c = dir; c; c = strchr(c + 1, '/'))
		len += (size_t)snprintf(out + len, size - len, "../");
	snprintf(out + len, size - len, "%s", what);
}

static unsigned n_devices;

/* A device at sys/DIR: its dev file, its subsystem link (class/NAME, or bus/NAME when
 * bus) and /sys/dev/{char,block}/MAJOR:MINOR. */
static void device(const char *dir, bool block, unsigned ma, unsigned mi, const char *subsystem,
		   bool bus)
{
	char rel[PATH_LEN], to[PATH_LEN], what[64];

	fmt(rel, "sys/%s", dir);
	mkdir_rel(rel);
	fmt(rel, "sys/%s/dev", dir);
	put(rel, "%u:%u\n", ma, mi);
	fmt(rel, "sys/%s/subsystem", dir);
	snprintf(what, sizeof(what), "%s/%s", bus ? "bus" : "class", subsystem);
	up_to_sys(to, sizeof(to), dir, what);
	link_rel(rel, to);
	fmt(rel, "sys/dev/%s/%u:%u", block ? "block" : "char", ma, mi);
	fmt(to, "../../%s", dir);
	link_rel(rel, to);
	n_devices++;
}

/* sd names as the kernel gives them: sda..sdz, sdaa... */
static void disk_name(char *out, size_t size, const char *prefix, unsigned k)
{
	char letters[8];
	int i = (int)sizeof(letters) - 1;

	letters[i] = '\0';
	k++;
	do {
		k--;
		letters[--i] = (char)('a' + k % 26);
		k /= 26;
	} while (k && i > 0);
	snprintf(out, size, "%s%s", prefix, letters + i);
}

struct tree {
	unsigned devices, cycles, ttys, cdi_devs;
	unsigned target; /* the cycle whose devices the one-device selectors name */
};

static unsigned usb_count;

/* The next USB device on a bus of 100 behind root hub usbB; its sysfs dir into dir
 * (PATH_LEN). */
static void usb_device(char *dir, const char *vid, const char *pid, const char *serial)
{
	unsigned bus = usb_count / 100 + 1, port = usb_count % 100 + 1;
	char rel[PATH_LEN];

	if (usb_count % 100 == 0) {
		fmt(dir, "devices/pci0000:00/0000:00:14.0/usb%u", bus);
		device(dir, false, 189, (bus - 1) * 128, "usb", true);
		fmt(rel, "sys/%s/idVendor", dir);
		put(rel, "1d6b\n");
		fmt(rel, "sys/%s/idProduct", dir);
		put(rel, "0002\n");
	}
	fmt(dir, "devices/pci0000:00/0000:00:14.0/usb%u/%u-%u", bus, bus, port);
	device(dir, false, 189, (bus - 1) * 128 + port, "usb", true);
	fmt(rel, "sys/%s/idVendor", dir);
	put(rel, "%s\n", vid);
	fmt(rel, "sys/%s/idProduct", dir);
	put(rel, "%s\n", pid);
	if (serial) {
		fmt(rel, "sys/%s/serial", dir);
		put(rel, "%s\n", serial);
	}
	usb_count++;
}

static void cycle(unsigned c)
{
	char usb[PATH_LEN], dir[PATH_LEN], rel[PATH_LEN], to[PATH_LEN], name[32], scsi[PATH_LEN];

	/* An FTDI adapter and its ttyUSB; udev's by-id link for it. */
	snprintf(name, sizeof(name), "FT%06u", c);
	usb_device(usb, "0403", "6001", name);
	fmt(dir, "%s/%s:1.0/ttyUSB%u/tty/ttyUSB%u", usb, strrchr(usb, '/') + 1, c, c);
	device(dir, false, 188, c, "tty", false);
	fmt(rel, "dev/serial/by-id/usb-FTDI_FT232R_USB_UART_%s-if00-port0", name);
	link_rel(rel, "/dev/null");
	/* A Logitech receiver and its hidraw. */
	usb_device(usb, "046d", "c52b", NULL);
	fmt(dir, "%s/%s:1.2/0003:046D:C52B.%04X/hidraw/hidraw%u", usb, strrchr(usb, '/') + 1, c, c);
	device(dir, false, 240, c, "hidraw", false);
	/* A SCSI disk and its partition: wwid on the SCSI device, udev's serial, links. */
	disk_name(name, sizeof(name), "sd", c);
	fmt(scsi, "devices/pci0000:00/0000:00:17.0/ata%u/host%u/target%u:0:0/%u:0:0:0", c + 1, c, c,
	    c);
	fmt(rel, "sys/%s/wwid", scsi);
	put(rel, "naa.5000c500%08x\n", c);
	fmt(dir, "%s/block/%s", scsi, name);
	device(dir, true, 8, 16 * c, "block", false);
	fmt(rel, "sys/%s/device", dir);
	fmt(to, "../../../%u:0:0:0", c);
	link_rel(rel, to);
	fmt(rel, "udev/b8:%u", 16 * c);
	put(rel,
	    "S:disk/by-id/ata-ST1000DM003_Z1D%05u\nE:ID_SERIAL=ST1000DM003_Z1D%05u\n"
	    "E:ID_SERIAL_SHORT=Z1D%05u\nE:ID_WWN=0x5000c500%08x\n",
	    c, c, c, c);
	fmt(rel, "dev/disk/by-id/ata-ST1000DM003_Z1D%05u", c);
	link_rel(rel, "/dev/null");
	fmt(rel, "dev/disk/by-id/wwn-0x5000c500%08x", c);
	link_rel(rel, "/dev/null");
	fmt(rel, "dev/disk/by-path/pci-0000:00:17.0-ata-%u", c + 1);
	link_rel(rel, "/dev/null");
	fmt(to, "%s/%s1", dir, name);
	device(to, true, 8, 16 * c + 1, "block", false);
	fmt(rel, "sys/%s/partition", to);
	put(rel, "1\n");
	fmt(rel, "udev/b8:%u", 16 * c + 1);
	put(rel, "E:ID_SERIAL=ST1000DM003_Z1D%05u\nE:ID_SERIAL_SHORT=Z1D%05u\nE:PARTN=1\n", c, c);
	/* A loop device with its backing file. */
	fmt(dir, "devices/virtual/block/loop%u", c);
	device(dir, true, 7, c, "block", false);
	fmt(rel, "sys/%s/loop/backing_file", dir);
	put(rel, "/var/lib/snapd/snaps/app%u_1.snap\n", c);
	/* A virtio disk with its serial as an attribute. */
	disk_name(name, sizeof(name), "vd", c);
	fmt(dir, "devices/pci0000:00/0000:01:%02x.%x/virtio%u/block/%s", c / 8 % 32, c % 8, c,
	    name);
	device(dir, true, 254, 16 * c, "block", false);
	fmt(rel, "sys/%s/serial", dir);
	put(rel, "VIRTIO%06u\n", c);
	/* A virtual tty and a misc device. */
	fmt(dir, "devices/virtual/tty/tty%u", c);
	device(dir, false, 4, c, "tty", false);
	fmt(dir, "devices/virtual/misc/misc%u", c);
	device(dir, false, 10, c, "misc", false);
}

/* CDI: files of 8 devices of example.com/gpu, JSON and YAML in turn. */
static void cdi_specs(unsigned m)
{
	char rel[PATH_LEN], path[PATH_LEN];

	mkdir_rel("cdi");
	for (unsigned f = 0; f * 8 < m; f++) {
		char text[8192];
		size_t len = 0;
		bool yaml = f % 2;
		int fd;

		len += (size_t)snprintf(
			text + len, sizeof(text) - len,
			yaml ? "cdiVersion: 0.6.0\nkind: example.com/gpu\ndevices:\n"
			     : "{\"cdiVersion\": \"0.6.0\", \"kind\": "
			       "\"example.com/gpu\", \"devices\": [");
		for (unsigned d = f * 8; d < m && d < f * 8 + 8; d++)
			len += (size_t)snprintf(
				text + len, sizeof(text) - len,
				yaml ? "%s- name: gpu%u\n  containerEdits:\n    deviceNodes:\n"
				       "    - {path: /dev/gpu%u, type: c, major: 195, minor: %u}\n"
				     : "%s{\"name\": \"gpu%u\", \"containerEdits\": "
				       "{\"deviceNodes\": "
				       "[{\"path\": \"/dev/gpu%u\", \"type\": \"c\", \"major\": "
				       "195, "
				       "\"minor\": %u}]}}",
				yaml ? "" : (d == f * 8 ? "" : ", "), d, d, d);
		if (!yaml)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "]}\n");
		fmt(rel, "cdi/gpu-%04u.%s", f, yaml ? "yaml" : "json");
		path_of(path, rel);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, text, len) != (ssize_t)len)
			die("%s: %s", rel, strerror(errno));
		close(fd);
	}
}

static unsigned cdi_override; /* --cdi M; 0: N/10 */

static void build(unsigned n, struct tree *t)
{
	static const char *const classes[] = {"class/tty",  "class/hidraw",   "class/block",
					      "class/misc", "class/watchdog", "bus/usb"};
	char rel[PATH_LEN];

	fmt(base, "%s", top);
	mkdirs(base);
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		fmt(rel, "sys/%s", classes[i]);
		mkdir_rel(rel);
	}
	mkdir_rel("sys/dev/char");
	mkdir_rel("sys/dev/block");
	mkdir_rel("udev");
	n_devices = 0;
	usb_count = 0;
	device("devices/platform/iTCO_wdt/watchdog/watchdog0", false, 248, 0, "watchdog", false);
	/* Ten devices a cycle, and a root hub every 50 cycles. */
	t->cycles = 0;
	while (n_devices < n)
		cycle(t->cycles++);
	t->devices = n_devices;
	t->ttys = 2 * t->cycles;
	t->target = t->cycles / 2;
	t->cdi_devs = cdi_override ? cdi_override : n / 10 ? n / 10 : 1;
	cdi_specs(t->cdi_devs);
	/* The file loop: names: it must exist, or the resolution stops at its stat. */
	put("snap.img", "%s", "");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
		fprintf(stderr, "bench-selector: %s: %s\n", path, strerror(errno));
	return 0;
}

static void remove_tree(const char *dir)
{
	nftw(dir, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* --- the cases ----------------------------------------------------------------------- */

enum kind {
	K_USB,
	K_SUBSYS_ONE,
	K_SUBSYS_TTY,
	K_BY_ID,
	K_BY_PATH,
	K_WWID,
	K_SERIAL,
	K_LOOP,
	K_CDI,
	K_COUNT
};

static const char *const kind_names[K_COUNT] = {
	"usb",	"subsystem-one", "subsystem-tty", "by-id", "by-path",
	"wwid", "serial",	 "loop",	  "cdi",
};

static const char *const kind_about[K_COUNT] = {
	"usb:VID:PID:SERIAL (one adapter)", "subsystem:watchdog (one device)",
	"subsystem:tty (every tty)",	    "by-id:NAME (one link)",
	"by-path:NAME (one link)",	    "wwid:WWID (one disk)",
	"serial:SERIAL (one disk, udev)",   "loop:FILE (no node: none)",
	"cdi:VENDOR/CLASS=NAME (one)",
};

/* The selector text of kind k in tree t, and the number of rules it must resolve to. */
static size_t selector_text(enum kind k, const struct tree *t, char *out, size_t size)
{
	unsigned c = t->target;

	switch (k) {
	case K_USB:
		snprintf(out, size, "usb:0403:6001:FT%06u rw", c);
		return 2;
	case K_SUBSYS_ONE:
		snprintf(out, size, "subsystem:watchdog rw");
		return 1;
	case K_SUBSYS_TTY:
		snprintf(out, size, "subsystem:tty rw");
		return t->ttys;
	case K_BY_ID:
		snprintf(out, size, "by-id:usb-FTDI_FT232R_USB_UART_FT%06u-if00-port0 rw", c);
		return 1;
	case K_BY_PATH:
		snprintf(out, size, "by-path:pci-0000:00:17.0-ata-%u r", c + 1);
		return 1;
	case K_WWID:
		snprintf(out, size, "wwid:naa.5000c500%08x rw", c);
		return 2;
	case K_SERIAL:
		snprintf(out, size, "serial:Z1D%05u r", c);
		return 2;
	case K_LOOP:
		/* A loop device is FILE's by the kernel's answer to LOOP_GET_STATUS64 on its
		 * node, and the tree's have none: no rule, but the walk, a stat of FILE and of
		 * each loop device's node candidates are the cost. */
		snprintf(out, size, "loop:%s/snap.img r", base);
		return 0;
	case K_CDI:
		snprintf(out, size, "cdi:example.com/gpu=gpu%u rw", t->cdi_devs / 2);
		return 1;
	case K_COUNT:
		break;
	}
	return 0;
}

struct result {
	double p50, p99, mean;
	double cpu; /* mean CPU time of this thread: what other jobs on the machine leave out */
	size_t runs, rules;
};

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* Resolve text in env for budget_ns (at least min_runs, at most max_runs times); each
 * resolution must give want rules (any number when want is SIZE_MAX). */
static struct result run_text(const struct selector_env *env, const char *text, size_t want,
			      unsigned long long budget_ns, size_t min_runs, size_t max_runs)
{
	unsigned long long *ns = calloc(max_runs, sizeof(*ns)), start, total = 0, cpu = 0;
	struct result res = {0};
	size_t runs = 0;

	if (!ns)
		die("out of memory");
	/* One resolution unmeasured first, to warm the dentry cache as a running host has it. */
	for (int warm = 1; warm >= 0; warm--) {
		start = now_ns();
		while (warm || runs < min_runs || (runs < max_runs && total < budget_ns)) {
			struct devwl_rule *rules = NULL;
			struct devwl_error err = {0};
			size_t n = 0;
			unsigned long long c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = now_ns(),
					   t1;
			int r = selector_resolve(env, text, strlen(text), &rules, &n, &err);

			t1 = now_ns();
			c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
			free(rules);
			if (r < 0)
				die("%s: %s", text, err.msg);
			if (want != SIZE_MAX && n != want)
				die("%s: %zu rules, want %zu", text, n, want);
			res.rules = n;
			if (warm)
				break;
			ns[runs++] = t1 - t0;
			cpu += c0;
			total = t1 - start;
		}
	}
	qsort(ns, runs, sizeof(*ns), cmp_ull);
	res.runs = runs;
	res.p50 = (double)ns[(runs - 1) / 2];
	/* Nearest rank: with fewer than 100 runs, p99 is the slowest. */
	res.p99 = (double)ns[(runs * 99 + 99) / 100 - 1];
	for (size_t i = 0; i < runs; i++)
		res.mean += (double)ns[i];
	res.mean /= (double)runs;
	res.cpu = (double)cpu / (double)runs;
	free(ns);
	return res;
}

/* Kind k in the fake tree t. */
static struct result run_case(enum kind k, const struct tree *t, unsigned long long budget_ns,
			      size_t min_runs, size_t max_runs)
{
	char cdi_dir[PATH_LEN], sysfs[PATH_LEN], udev[PATH_LEN], dev[PATH_LEN], text[PATH_LEN + 64];
	const char *dirs[] = {cdi_dir};
	struct selector_env env = {
		.sysfs = sysfs, .udev = udev, .dev = dev, .cdi_dirs = dirs, .n_cdi_dirs = 1};
	size_t want = selector_text(k, t, text, sizeof(text));

	path_of(cdi_dir, "cdi");
	path_of(sysfs, "sys");
	path_of(udev, "udev");
	path_of(dev, "dev");
	return run_text(&env, text, want, budget_ns, min_runs, max_runs);
}

static unsigned count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	unsigned n = 0;

	if (!d)
		return 0;
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The same code on this host's /sys, /run/udev/data and /dev, for scale: selectors that
 * walk every device and match none, or every tty. */
static void host_rows(unsigned long long budget, size_t min_runs, size_t max_runs)
{
	static const char *const texts[] = {"usb:0000:0000 rw", "subsystem:tty rw", "wwid:none r",
					    "loop:/none r", "by-id:none r"};
	unsigned n = count_entries("/sys/dev/char") + count_entries("/sys/dev/block");

	printf("\nthe host's own /sys (%u devices), selectors that match nothing but the ttys\n",
	       n);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct result r = run_text(NULL, texts[i], SIZE_MAX, budget, min_runs, max_runs);

		printf("%7u %6s  %-34s %6zu %6zu %11.0f %11.0f %11.0f %11.0f %10.1f\n", n, "-",
		       texts[i], r.rules, r.runs, r.p50, r.p99, r.mean, r.cpu, n ? r.mean / n : 0);
	}
}

/* --- main ------------------------------------------------------------------------------ */

static void usage(void)
{
	fputs("usage: bench-selector [--quick] [--dir DIR] [--cdi M] [N...]\n"
	      "       bench-selector --row KIND N [--quick] [--dir DIR] [--cdi M]\n"
	      "KIND: usb subsystem-one subsystem-tty by-id by-path wwid serial loop cdi\n",
	      stderr);
	exit(2);
}

static unsigned parse_n(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end || v < 10 || v > 60000)
		die("%s: N must be a number from 10 to 60000", s);
	return (unsigned)v;
}

static void group_digits(char *out, size_t size, unsigned long long v)
{
	if (v >= 1000)
		snprintf(out, size, "%llu,%03llu", v / 1000, v % 1000);
	else
		snprintf(out, size, "%llu", v);
}

static int bench(bool quick, int row_kind, unsigned *ns_list, size_t n_ns)
{
	/* Per case: this much time, and 3 to 2,000 resolutions (5 to 20,000 without --quick). */
	unsigned long long budget = quick ? 100000000ULL : 1000000000ULL;
	size_t min_runs = quick ? 3 : 7, max_runs = quick ? 2000 : 20000;
	static struct result res[8][K_COUNT];
	struct tree trees[8];

	if (row_kind >= 0) {
		struct tree t;
		struct result r;

		build(ns_list[0], &t);
		r = run_case((enum kind)row_kind, &t, budget, min_runs, max_runs);
		printf("ns_per_op=%.0f ops_per_s=%.1f p99_ns=%.0f mean_ns=%.0f cpu_ns=%.0f "
		       "runs=%zu "
		       "devices=%u cdi_devices=%u\n",
		       r.p50, 1e9 / r.p50, r.p99, r.mean, r.cpu, r.runs, t.devices, t.cdi_devs);
		return 0;
	}
	printf("selector_resolve() in a fake sysfs tree (%s); CDI: %s devices of "
	       "example.com/gpu, 8 a spec file, JSON and YAML in turn\n",
	       top, cdi_override ? "--cdi" : "N/10");
	printf("%7s %6s  %-34s %6s %6s %11s %11s %11s %11s %10s\n", "devices", "cdi", "selector",
	       "rules", "runs", "p50 ns", "p99 ns", "mean ns", "cpu ns", "ns/device");
	for (size_t i = 0; i < n_ns; i++) {
		unsigned long long t0 = now_ns();

		build(ns_list[i], &trees[i]);
		fprintf(stderr, "bench-selector: %u devices built in %.2f s\n", trees[i].devices,
			(double)(now_ns() - t0) / 1e9);
		for (int k = 0; k < K_COUNT; k++) {
			struct result *r = &res[i][k];
			unsigned per = k == K_CDI ? trees[i].cdi_devs : trees[i].devices;

			*r = run_case((enum kind)k, &trees[i], budget, min_runs, max_runs);
			printf("%7u %6u  %-34s %6zu %6zu %11.0f %11.0f %11.0f %11.0f %10.1f\n",
			       trees[i].devices, trees[i].cdi_devs, kind_about[k], r->rules,
			       r->runs, r->p50, r->p99, r->mean, r->cpu, r->mean / per);
			fflush(stdout);
		}
		remove_tree(base);
	}
	host_rows(budget, min_runs, max_runs);
	if (n_ns < 2)
		return 0;
	printf("\nscaling: mean ns per device (per CDI device for cdi:); the mean and the CPU "
	       "time at the largest N against the smallest\n");
	printf("%-34s", "selector");
	for (size_t i = 0; i < n_ns; i++) {
		char num[32];

		group_digits(num, sizeof(num), trees[i].devices);
		printf(" %10s", num);
	}
	printf(" %9s %9s\n", "mean x", "cpu x");
	for (int k = 0; k < K_COUNT; k++) {
		printf("%-34s", kind_about[k]);
		for (size_t i = 0; i < n_ns; i++)
			printf(" %10.1f", res[i][k].mean / (k == K_CDI ? trees[i].cdi_devs
								       : trees[i].devices));
		printf(" %9.1f %9.1f\n", res[n_ns - 1][k].mean / res[0][k].mean,
		       res[n_ns - 1][k].cpu / res[0][k].cpu);
	}
	printf("(devices x%.0f from the first column to the last)\n",
	       (double)trees[n_ns - 1].devices / trees[0].devices);
	return 0;
}

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* Where the tree goes: --dir, else /dev/shm when it is a tmpfs (sysfs is in memory too),
 * else $TMPDIR or /tmp. */
static const char *tree_parent(const char *dir)
{
	struct statfs sf;
	const char *tmp = getenv("TMPDIR");

	if (dir)
		return dir;
	if (statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
	    access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	return tmp && *tmp ? tmp : "/tmp";
}

int main(int argc, char **argv)
{
	unsigned ns_list[8] = {100, 1000, 10000};
	size_t n_ns = 0;
	const char *dir = NULL;
	bool quick = false;
	int row_kind = -1, status = 0;
	struct sigaction sa = {.sa_handler = forward};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = true;
		} else if (!strcmp(argv[i], "--cdi") && i + 1 < argc) {
			cdi_override = parse_n(argv[++i]);
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--row") && i + 1 < argc) {
			for (row_kind = 0; row_kind < K_COUNT; row_kind++)
				if (!strcmp(argv[i + 1], kind_names[row_kind]))
					break;
			if (row_kind == K_COUNT)
				usage();
			i++;
		} else if (argv[i][0] == '-' || n_ns == sizeof(ns_list) / sizeof(ns_list[0])) {
			usage();
		} else {
			ns_list[n_ns++] = parse_n(argv[i]);
		}
	}
	if (row_kind >= 0 && n_ns != 1)
		usage();
	if (!n_ns)
		n_ns = 3;
	if ((size_t)snprintf(top, sizeof(top), "%s/devwl-sel.XXXXXX", tree_parent(dir)) >=
		    sizeof(top) ||
	    !mkdtemp(top))
		die("%s: %s", top, strerror(errno));
	child = fork();
	if (child < 0) {
		remove_tree(top);
		die("fork: %s", strerror(errno));
	}
	if (child == 0)
		return bench(quick, row_kind, ns_list, n_ns);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	remove_tree(top);
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "bench-selector: stopped by signal %d; tree removed\n",
			WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
