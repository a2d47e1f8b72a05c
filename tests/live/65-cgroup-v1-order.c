/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v1 write ordering (libdevwl(3), KERNEL ENFORCEMENT): devwl_cgroup_apply() moves
 * a devices cgroup from one node state to another in several writes, and a task in the
 * cgroup must at no instant get a device that neither the old nor the new list grants.
 * A task in the cgroup hammers opens and mknods of exactly such devices while this
 * process flips the cgroup between two policies thousands of times: DENY <-> DENY and
 * ALLOW <-> ALLOW with partly overlapping rules, DENY <-> ALLOW behaviour changes in both
 * directions. Every one of those calls must fail EPERM. Afterwards each policy is applied
 * once more and every probe must get what devwl_node_check() says.
 * DEVWL_LIVE65_FLIPS sets the number of flips per pair within one behaviour (default
 * 20000), DEVWL_LIVE65_BEHAVIOUR_FLIPS per pair of a DENY <-> ALLOW change (default 200:
 * each waits for an RCU grace period; before the holding cgroup about one flip in twenty
 * let a call through).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "devwl.h"
#include "util.h"

#include "../hostprobe.h"

struct pol {
	bool allow;	      /* default behaviour */
	const char *rules[6]; /* exceptions: denials (allow) or grants (deny) */
};

struct pair {
	const char *what;
	bool behaviour; /* a DENY <-> ALLOW change */
	struct pol a, b;
};

static const struct pair pairs[] = {
	{"DENY <-> DENY, partial overlap",
	 false,
	 {false, {"c 1:3 rwm", "c 240:* r", "b 250:0 rw", "c 240:2 r"}},
	 {false, {"c 1:5 rwm", "c 240:1 w", "b 250:* r", "c 240:2 w"}}},
	{"DENY <-> ALLOW with partial-overlap denials",
	 true,
	 {false, {"c 1:3 rwm", "c 1:5 r", "c 240:0 rw"}},
	 {true, {"c 1:5 w", "c 240:* w", "b *:* m", "c 1:7 rwm"}}},
	{"ALLOW <-> ALLOW, partial overlap",
	 false,
	 {true, {"c 1:* w", "c 240:1 rwm"}},
	 {true, {"c 1:3 rw", "c 240:* r", "b 250:0 m"}}},
	{"DENY all <-> ALLOW with denials",
	 true,
	 {false, {NULL}},
	 {true, {"c 1:5 rw", "c 240:0 m", "b 250:* rwm"}}},
	{"ALLOW with wildcard denials <-> DENY with wildcard grants",
	 true,
	 {true, {"c *:* w", "b 250:* rw"}},
	 {false, {"c *:3 rw", "b *:* m", "c 240:* r"}}},
};

/* The devices probed: some with a driver (open works when allowed), some without
 * (ENXIO when allowed). Either way only EPERM means the cgroup refused. */
static const struct {
	const char *name;
	int type;
	unsigned maj, min;
} devs[] = {
	{"null", DEVWL_DEV_CHAR, 1, 3},	     {"zero", DEVWL_DEV_CHAR, 1, 5},
	{"full", DEVWL_DEV_CHAR, 1, 7},	     {"c240-0", DEVWL_DEV_CHAR, 240, 0},
	{"c240-1", DEVWL_DEV_CHAR, 240, 1},  {"c240-2", DEVWL_DEV_CHAR, 240, 2},
	{"b250-0", DEVWL_DEV_BLOCK, 250, 0}, {"b250-1", DEVWL_DEV_BLOCK, 250, 1},
};
static const int accs[] = {DEVWL_ACC_READ, DEVWL_ACC_WRITE, DEVWL_ACC_READ | DEVWL_ACC_WRITE,
			   DEVWL_ACC_MKNOD};
#define NPROBES (ARRAY_SIZE(devs) * ARRAY_SIZE(accs))

enum cmd { CMD_IDLE, CMD_HAMMER, CMD_VERIFY, CMD_EXIT };

/* Shared with the task in the cgroup. */
struct shared {
	int cmd, arg, seq; /* written by the flipper */
	int ack;	   /* the seq the task has done a full round of */
	long probes, violations, mismatches;
	char first[200];
	bool neither[ARRAY_SIZE(pairs)][NPROBES];  /* granted by neither list */
	int expect[ARRAY_SIZE(pairs)][2][NPROBES]; /* devwl_node_check of a, b */
};

static struct shared *sh;
static char nodes[64];
static int last_errno; /* of the last probe: 0 it succeeded */

static int ld(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Try probe i from inside the cgroup: 1 the kernel let it through, 0 EPERM. */
static int probe(size_t i)
{
	size_t d = i / ARRAY_SIZE(accs);
	int acc = accs[i % ARRAY_SIZE(accs)], fd, e;
	char path[128];

	if (acc == DEVWL_ACC_MKNOD) {
		snprintf(path, sizeof(path), "%s/made", nodes);
		if (mknod(path, (devs[d].type == DEVWL_DEV_CHAR ? S_IFCHR : S_IFBLK) | 0600,
			  makedev(devs[d].maj, devs[d].min)) == 0) {
			unlink(path);
			last_errno = 0;
			return 1;
		}
		e = last_errno = errno;
		if (e == EEXIST)
			unlink(path);
		return e != EPERM;
	}
	snprintf(path, sizeof(path), "%s/%s", nodes, devs[d].name);
	fd = open(path, (acc == DEVWL_ACC_READ	  ? O_RDONLY
			 : acc == DEVWL_ACC_WRITE ? O_WRONLY
						  : O_RDWR) |
				O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0) {
		close(fd);
		last_errno = 0;
		return 1;
	}
	last_errno = errno;
	return errno != EPERM;
}

static void describe(char *buf, size_t size, size_t i, const char *when)
{
	static const char *const an[] = {[DEVWL_ACC_READ] = "r",
					 [DEVWL_ACC_WRITE] = "w",
					 [DEVWL_ACC_READ | DEVWL_ACC_WRITE] = "rw",
					 [DEVWL_ACC_MKNOD] = "m"};
	size_t d = i / ARRAY_SIZE(accs);

	snprintf(buf, size, "%s: %c %u:%u %s: %s", when, devs[d].type == DEVWL_DEV_CHAR ? 'c' : 'b',
		 devs[d].maj, devs[d].min, an[accs[i % ARRAY_SIZE(accs)]],
		 last_errno ? strerror(last_errno) : "succeeded");
}

static void __attribute__((noreturn)) hammer(void)
{
	for (;;) {
		int seq = ld(&sh->seq), cmd = ld(&sh->cmd), arg = ld(&sh->arg);

		if (cmd == CMD_EXIT)
			_exit(0);
		for (size_t i = 0; i < NPROBES; i++) {
			int got;

			if (cmd == CMD_HAMMER && !sh->neither[arg][i])
				continue;
			if (cmd == CMD_IDLE)
				break;
			got = probe(i);
			__atomic_add_fetch(&sh->probes, 1, __ATOMIC_RELAXED);
			if (cmd == CMD_HAMMER && got) {
				__atomic_add_fetch(&sh->violations, 1, __ATOMIC_RELAXED);
				if (!sh->first[0])
					describe(sh->first, sizeof(sh->first), i, pairs[arg].what);
			}
			if (cmd == CMD_VERIFY && got != sh->expect[arg / 2][arg % 2][i]) {
				__atomic_add_fetch(&sh->mismatches, 1, __ATOMIC_RELAXED);
				if (!sh->first[0])
					describe(sh->first, sizeof(sh->first), i, "settled state");
			}
		}
		st(&sh->ack, seq);
		if (cmd == CMD_IDLE)
			sched_yield();
	}
}

/* Tell the task what to do and wait until it has done one full round of it. */
static void command(pid_t task, int cmd, int arg)
{
	int seq = ld(&sh->seq) + 1;

	st(&sh->cmd, cmd);
	st(&sh->arg, arg);
	st(&sh->seq, seq);
	while (ld(&sh->ack) != seq) {
		if (waitpid(task, NULL, WNOHANG) == task) {
			fprintf(stderr, "FATAL: the task in the cgroup died\n");
			exit(1);
		}
		sched_yield();
	}
}

static struct devwl_node *make(struct devwl_policy *p, const char *path, const struct pol *pol)
{
	struct devwl_node *n;

	if (devwl_policy_mkdir(p, path) < 0 || !(n = devwl_policy_find(p, path)))
		return NULL;
	if (!pol->allow && devwl_node_write(n, DEVWL_FILE_DENY, "a", 1, NULL) < 0)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(pol->rules) && pol->rules[i]; i++)
		if (devwl_node_write(n, pol->allow ? DEVWL_FILE_DENY : DEVWL_FILE_ALLOW,
				     pol->rules[i], strlen(pol->rules[i]), NULL) < 0)
			return NULL;
	return n;
}

static int join(const char *dir)
{
	char path[300];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

static void rmdir_retry(const char *dir)
{
	for (int i = 0; i < 200 && rmdir(dir) < 0 && errno == EBUSY; i++)
		nanosleep(&(struct timespec){0, 5000000}, NULL);
}

static int run(const char *dir, struct devwl_node *n[][2], long within, long behaviour)
{
	struct devwl_cgroup *cg = NULL;
	int fails = 0, r;
	pid_t task;

	r = devwl_cgroup_open(dir, DEVWL_CGROUP_OWN_PARENT, &cg);
	if (r < 0) {
		fprintf(stderr, "FATAL: devwl_cgroup_open %s: %s\n", dir, strerror(-r));
		return 1;
	}
	task = fork();
	if (task < 0)
		return 1;
	if (task == 0) {
		if (join(dir) < 0)
			_exit(2);
		hammer();
	}
	command(task, CMD_IDLE, 0); /* it is in the cgroup */
	for (size_t k = 0; k < ARRAY_SIZE(pairs); k++) {
		long before = sh->probes, bad = sh->violations, writes = 0;
		size_t neither = 0;

		long flips = pairs[k].behaviour ? behaviour : within;

		for (size_t i = 0; i < NPROBES; i++)
			neither += sh->neither[k][i];
		sh->first[0] = '\0'; /* the task is idle */
		r = devwl_cgroup_apply(cg, n[k][0]);
		if (r < 0) {
			fprintf(stderr, "FAIL %s: first apply: %s\n", pairs[k].what, strerror(-r));
			fails++;
			continue;
		}
		command(task, CMD_HAMMER, (int)k);
		for (long f = 0; f < 2 * flips && r >= 0; f++) {
			r = devwl_cgroup_apply(cg, n[k][(f + 1) % 2]);
			writes += r;
		}
		command(task, CMD_IDLE, 0);
		if (r < 0) {
			fprintf(stderr, "FAIL %s: apply: %s\n", pairs[k].what, strerror(-r));
			fails++;
		}
		if (sh->violations != bad) {
			fprintf(stderr,
				"FAIL %s: %ld calls on devices neither list grants got through "
				"(first %s)\n",
				pairs[k].what, sh->violations - bad, sh->first);
			fails++;
		}
		fprintf(stderr, "%s: %ld flips, %ld writes, %ld calls on %zu refused tuples\n",
			pairs[k].what, 2 * flips, writes, sh->probes - before, neither);
		/* Settled: each side decides every probe as devwl_node_check does. */
		for (int side = 0; side < 2; side++) {
			long mism = sh->mismatches;
			sh->first[0] = '\0';
			r = devwl_cgroup_apply(cg, n[k][side]);
			command(task, CMD_VERIFY, (int)(2 * k + (size_t)side));
			command(task, CMD_IDLE, 0);
			if (r < 0 || sh->mismatches != mism) {
				fprintf(stderr, "FAIL %s: side %d settled wrong (apply %d; %s)\n",
					pairs[k].what, side, r, sh->first);
				fails++;
			}
		}
	}
	st(&sh->cmd, CMD_EXIT);
	waitpid(task, NULL, 0);
	devwl_cgroup_free(cg);
	return fails;
}

int main(void)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *n[ARRAY_SIZE(pairs)][2];
	char parent[200], dir[240], path[128], mnt[128], why[512] = "";
	const char *env = getenv("DEVWL_LIVE65_FLIPS");
	long flips = env ? atol(env) : 20000;
	const char *benv = getenv("DEVWL_LIVE65_BEHAVIOUR_FLIPS");
	long bflips = benv ? atol(benv) : 200;
	int fails;

	if (geteuid() != 0) {
		fputs("SKIP: needs root (device cgroups, mknod)\n", stderr);
		return 77;
	}
	if (hp_v1_devices(why, sizeof(why)) < 0 ||
	    hp_cgroup_mount("devices", mnt, sizeof(mnt)) < 0) {
		fprintf(stderr, "SKIP: no v1 devices cgroup on this host: %s\n", why);
		return 77;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!p || sh == MAP_FAILED || flips < 1 || bflips < 1)
		return 1;
	for (size_t k = 0; k < ARRAY_SIZE(pairs); k++) {
		char a[32], b[32];
		snprintf(a, sizeof(a), "/p%zu-a", k);
		snprintf(b, sizeof(b), "/p%zu-b", k);
		n[k][0] = make(p, a, &pairs[k].a);
		n[k][1] = make(p, b, &pairs[k].b);
		if (!n[k][0] || !n[k][1]) {
			fprintf(stderr, "FATAL: building %s\n", pairs[k].what);
			return 1;
		}
		for (size_t i = 0; i < NPROBES; i++) {
			size_t d = i / ARRAY_SIZE(accs);
			int acc = accs[i % ARRAY_SIZE(accs)];
			for (int s = 0; s < 2; s++)
				sh->expect[k][s][i] = devwl_node_check(
					n[k][s], devs[d].type, devs[d].maj, devs[d].min, acc);
			sh->neither[k][i] = !sh->expect[k][0][i] && !sh->expect[k][1][i];
		}
	}
	strcpy(nodes, "/tmp/devwl-live65.XXXXXX");
	if (!mkdtemp(nodes))
		return 1;
	for (size_t d = 0; d < ARRAY_SIZE(devs); d++) {
		snprintf(path, sizeof(path), "%s/%s", nodes, devs[d].name);
		if (mknod(path, (devs[d].type == DEVWL_DEV_CHAR ? S_IFCHR : S_IFBLK) | 0666,
			  makedev(devs[d].maj, devs[d].min)) < 0) {
			fprintf(stderr, "FATAL: mknod %s: %m\n", path);
			return 1;
		}
	}
	snprintf(parent, sizeof(parent), "%s/devwl-live65.%d", mnt, (int)getpid());
	snprintf(dir, sizeof(dir), "%s/w", parent);
	if (mkdir(parent, 0755) < 0 || mkdir(dir, 0755) < 0) {
		fprintf(stderr, "FATAL: mkdir %s: %m\n", dir);
		rmdir(parent);
		return 1;
	}
	fails = run(dir, n, flips, bflips);
	rmdir_retry(dir);
	rmdir_retry(parent);
	for (size_t d = 0; d < ARRAY_SIZE(devs); d++) {
		snprintf(path, sizeof(path), "%s/%s", nodes, devs[d].name);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/made", nodes);
	unlink(path);
	rmdir(nodes);
	devwl_policy_free(p);
	puts(fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
