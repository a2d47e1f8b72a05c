/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The workload of the soak test (95-soak.sh), run under devwl-run --connect:
 *
 *   soak-work [--final] --gen FILE --flip DEV --allow DEV --deny DEV --file PATH
 *             --dir DIR --mknod-allow MAJ:MIN --mknod-deny MAJ:MIN
 *             [--stop FILE] [--ms N] [--pause-ms N]
 *
 * Each cycle opens an allowed device (and checks the fd is that device), a denied one
 * (EPERM), a regular file, and the device whose rule the test flips; creates an allowed
 * node in a private directory under DIR (checks it, unlinks it) and tries a denied one
 * (EPERM). It stops after N ms or once the stop file exists, removes its directory and
 * prints one line
 *
 *   RES cycles C ops O checked K unchecked U enosys E wrong W lost L
 *
 * preceded by a "BAD ..." line per wrong answer (the first 20) and a "NOSYS op" line per
 * ENOSYS. ENOSYS is counted apart: it is what the kernel answers for a call a killed
 * devwld worker held, and the test decides whether one was expected then.
 *
 * The flip device's correct answer changes while we run. The test writes a sequence
 * number to the generation file (renamed into place): odd while devwlctl is changing
 * the rule, even once it has returned; even 2m means "allowed" when m is even. A flip
 * open is checked only when the file read the same even number before the open started
 * and after it returned, i.e. the decision was made entirely within a stable window.
 *
 * --final: one allowed open, one denied open and one flip open (the file must be
 * stable), printed as "FINAL allow ERR deny ERR flip ERR expect ERR" (ERR: OK or the
 * errno name); exit 0 only if each is what the policy says.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define MAX_BAD		  20
#define LOST_AFTER_ENOSYS 32

struct opts {
	const char *gen, *flip, *allow, *deny, *file, *dir, *stop;
	unsigned allow_maj, allow_min, deny_maj, deny_min;
	long ms, pause_ms;
	bool final;
};

struct counts {
	long cycles, ops, checked, unchecked, enosys, wrong, bad_printed;
	long enosys_run; /* ENOSYS in a row without an answer from devwld in between */
	bool served;	 /* devwld answered at least one call */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "OK";

	return n ? n : "?";
}

static void bad(struct counts *c, const char *op, const char *want, int got)
{
	c->wrong++;
	if (c->bad_printed++ < MAX_BAD)
		printf("BAD %s want %s got %s\n", op, want, ename(got));
}

/* Account one answer: 0 or an errno. ENOSYS is counted apart; true if it was neither. */
static bool answered(struct counts *c, const char *op, int err)
{
	c->ops++;
	if (err == ENOSYS) {
		c->enosys++;
		c->enosys_run++;
		printf("NOSYS %s\n", op);
		return false;
	}
	c->enosys_run = 0;
	c->served = true;
	return true;
}

/* Open PATH read-only; 0 or the errno. If it opened, the fd must be device WANT. */
static int try_open(const char *path, dev_t want, bool *ret_wrong_dev)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	*ret_wrong_dev = false;
	if (fd < 0)
		return errno;
	if (want && (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != want))
		*ret_wrong_dev = true;
	close(fd);
	return err;
}

/* The generation number, or -1 (unreadable, e.g. ENOSYS at a worker's SIGKILL). */
static long read_gen(struct counts *c, const char *path)
{
	char buf[32] = {0};
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		if (answered(c, "gen", errno))
			bad(c, "gen", "OK", errno);
		return -1;
	}
	answered(c, "gen", 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static dev_t dev_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_rdev : 0;
}

/* Expect success (allowed) or EPERM (denied) from opening PATH. */
static void check_open(struct counts *c, const char *op, const char *path, bool allowed)
{
	bool wrong_dev = false;
	int err = try_open(path, allowed ? dev_of(path) : 0, &wrong_dev);

	if (!answered(c, op, err))
		return;
	if (allowed ? err != 0 : err != EPERM)
		bad(c, op, allowed ? "OK" : "EPERM", err);
	else if (wrong_dev)
		bad(c, op, "the device itself", 0);
}

static void flip(struct counts *c, const struct opts *o)
{
	long g1 = read_gen(c, o->gen), g2;
	bool wrong_dev = false;
	int err = try_open(o->flip, dev_of(o->flip), &wrong_dev);
	bool ok = answered(c, "flip", err);

	g2 = read_gen(c, o->gen);
	if (!ok)
		return;
	if (g1 < 0 || g1 != g2 || g1 % 2) {
		/* Changed under us: either answer is right, nothing else is. */
		c->unchecked++;
		if (err != 0 && err != EPERM)
			bad(c, "flip-changing", "OK|EPERM", err);
		return;
	}
	c->checked++;
	if ((g1 / 2) % 2 == 0 ? err != 0 : err != EPERM)
		bad(c, (g1 / 2) % 2 == 0 ? "flip-allowed" : "flip-denied",
		    (g1 / 2) % 2 == 0 ? "OK" : "EPERM", err);
	else if (wrong_dev)
		bad(c, "flip", "the device itself", 0);
}

static void nodes(struct counts *c, const struct opts *o, const char *dir)
{
	char path[4096];
	struct stat st;
	int err;

	if (snprintf(path, sizeof(path), "%s/allowed", dir) >= (int)sizeof(path)) {
		bad(c, "mknod-path", "a path that fits", ENAMETOOLONG);
		return;
	}
	err = mknod(path, S_IFCHR | 0600, makedev(o->allow_maj, o->allow_min)) < 0 ? errno : 0;
	if (answered(c, "mknod-allowed", err)) {
		if (err)
			bad(c, "mknod-allowed", "OK", err);
		else if (stat(path, &st) < 0 || !S_ISCHR(st.st_mode) ||
			 st.st_rdev != makedev(o->allow_maj, o->allow_min))
			bad(c, "mknod-allowed", "the node asked for", 0);
	}
	if (!err && unlink(path) < 0)
		bad(c, "unlink", "OK", errno);
	/* Unanswered (its worker killed between the mknod it made for us and the answer):
	 * the node may be there or not; the next cycle must not find it. */
	if (err == ENOSYS)
		(void)unlink(path);

	if (snprintf(path, sizeof(path), "%s/denied", dir) >= (int)sizeof(path)) {
		bad(c, "mknod-path", "a path that fits", ENAMETOOLONG);
		return;
	}
	err = mknod(path, S_IFCHR | 0600, makedev(o->deny_maj, o->deny_min)) < 0 ? errno : 0;
	if (answered(c, "mknod-denied", err) && err != EPERM)
		bad(c, "mknod-denied", "EPERM", err);
	if (!err)
		unlink(path);
}

static int final(const struct opts *o)
{
	struct counts c = {0};
	bool wd = false;
	int a = try_open(o->allow, dev_of(o->allow), &wd), d, f;
	long g1, g2;

	d = try_open(o->deny, 0, &wd);
	g1 = read_gen(&c, o->gen);
	f = try_open(o->flip, 0, &wd);
	g2 = read_gen(&c, o->gen);
	if (g1 < 0 || g1 != g2 || g1 % 2) {
		printf("FINAL allow %s deny %s flip %s expect unstable(%ld,%ld)\n", ename(a),
		       ename(d), ename(f), g1, g2);
		return 1;
	}
	printf("FINAL allow %s deny %s flip %s expect %s\n", ename(a), ename(d), ename(f),
	       (g1 / 2) % 2 == 0 ? "OK" : "EPERM");
	return a == 0 && d == EPERM && f == ((g1 / 2) % 2 == 0 ? 0 : EPERM) && !c.wrong ? 0 : 1;
}

static bool parse_dev(const char *s, unsigned *maj, unsigned *min)
{
	return sscanf(s, "%u:%u", maj, min) == 2;
}

static int usage(void)
{
	fputs("usage: soak-work [--final] --gen FILE --flip DEV --allow DEV --deny DEV "
	      "--file PATH --dir DIR --mknod-allow MAJ:MIN --mknod-deny MAJ:MIN [--stop FILE] "
	      "[--ms N] [--pause-ms N]\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"gen", required_argument, NULL, 'g'},
		{"flip", required_argument, NULL, 'f'},
		{"allow", required_argument, NULL, 'a'},
		{"deny", required_argument, NULL, 'd'},
		{"file", required_argument, NULL, 'F'},
		{"dir", required_argument, NULL, 'D'},
		{"stop", required_argument, NULL, 's'},
		{"ms", required_argument, NULL, 'm'},
		{"pause-ms", required_argument, NULL, 'p'},
		{"mknod-allow", required_argument, NULL, 'A'},
		{"mknod-deny", required_argument, NULL, 'N'},
		{"final", no_argument, NULL, 'X'},
		{NULL, 0, NULL, 0},
	};
	struct opts o = {.ms = 3000, .pause_ms = 20};
	struct counts c = {0};
	char dir[4096];
	long long end;
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'g':
			o.gen = optarg;
			break;
		case 'f':
			o.flip = optarg;
			break;
		case 'a':
			o.allow = optarg;
			break;
		case 'd':
			o.deny = optarg;
			break;
		case 'F':
			o.file = optarg;
			break;
		case 'D':
			o.dir = optarg;
			break;
		case 's':
			o.stop = optarg;
			break;
		case 'm':
			o.ms = atol(optarg);
			break;
		case 'p':
			o.pause_ms = atol(optarg);
			break;
		case 'A':
			if (!parse_dev(optarg, &o.allow_maj, &o.allow_min))
				return usage();
			break;
		case 'N':
			if (!parse_dev(optarg, &o.deny_maj, &o.deny_min))
				return usage();
			break;
		case 'X':
			o.final = true;
			break;
		default:
			return usage();
		}
	}
	if (!o.gen || !o.flip || !o.allow || !o.deny)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.final)
		return final(&o);
	if (!o.file || !o.dir || (!o.allow_maj && !o.allow_min))
		return usage();

	snprintf(dir, sizeof(dir), "%s/w.XXXXXX", o.dir);
	if (!mkdtemp(dir)) {
		/* mkdir is not trapped; this is no answer of devwld's. */
		printf("BAD mkdtemp want OK got %s\n", ename(errno));
		return 1;
	}
	end = now_ms() + o.ms;
	while (now_ms() < end && !(o.stop && access(o.stop, F_OK) == 0)) {
		c.cycles++;
		check_open(&c, "allowed", o.allow, true);
		check_open(&c, "denied", o.deny, false);
		check_open(&c, "file", o.file, true);
		flip(&c, &o);
		nodes(&c, &o, dir);
		/* Nobody serves our filter (a connection lost at a worker's SIGKILL): stop
		 * rather than spin on ENOSYS. */
		if (c.enosys_run >= LOST_AFTER_ENOSYS)
			break;
		if (o.pause_ms > 0)
			usleep((useconds_t)o.pause_ms * 1000);
	}
	if (rmdir(dir) < 0)
		printf("BAD rmdir want OK got %s\n", ename(errno));
	printf("RES cycles %ld ops %ld checked %ld unchecked %ld enosys %ld wrong %ld lost %d\n",
	       c.cycles, c.ops, c.checked, c.unchecked, c.enosys, c.wrong,
	       c.enosys_run >= LOST_AFTER_ENOSYS && !c.served);
	return c.wrong ? 1 : 0;
}
