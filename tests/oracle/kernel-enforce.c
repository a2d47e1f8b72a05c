/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel-enforcement oracle: random policies (partial-overlap denials, "a" rules,
 * wildcards) programmed into a cgroup-v2 device program (devwl_node_compile_bpf) and into
 * a cgroup-v1 devices cgroup (devwl_cgroup_apply's writes, each policy a transition from
 * the one before), then real device accesses of random numbers by a probe process in each
 * cgroup; every answer of the kernel must equal devwl_node_check(). The v2 program is the
 * one that records its denials (DEVWL_CGROUP_RECORD_DENIALS), where the kernel has ring
 * buffers: each denial it answers must be recorded, with the device, access and probe's
 * pid, and nothing it allows.
 *
 *   kernel-enforce [--policies N] [--tuples N] [--seed S]
 *
 * Accesses: faccessat(R_OK, W_OK, R_OK|W_OK) runs the device check without a driver;
 * mknodat asks 'm'; for majors no driver registered (/proc/devices) a real open(2) with
 * the access's flags (ENXIO then means allowed). Needs root, the v1 devices controller
 * and a cgroup2 mount (a hybrid host), as the host itself says (tests/hostprobe.h); exits
 * 77 otherwise.
 */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>

#include "devwl.h"
#include "util.h"

#include "../hostprobe.h"

enum method { M_ACCESS, M_OPEN, M_MKNOD };

struct req {
	int type, access, method;
	uint32_t major, minor;
};

struct probe {
	pid_t pid;
	int to, from;
};

static int devfd = -1;
static char v1root[512], v2root[512], v2dir[600], v1parent[600], v1dir[640];
static bool registered[2][4096]; /* [char?][major]: a driver exists */

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng >> 33) % n;
}

static void node_name(const struct req *q, char *buf, size_t size)
{
	snprintf(buf, size, "%c-%u-%u", q->type == DEVWL_DEV_CHAR ? 'c' : 'b', q->major, q->minor);
}

/* In the probe: one access, answered with its errno (0 allowed). */
static int probe_one(const struct req *q)
{
	char name[48];
	int r, mode = (q->access & DEVWL_ACC_READ ? R_OK : 0) |
		      (q->access & DEVWL_ACC_WRITE ? W_OK : 0);

	if (q->method == M_MKNOD) {
		snprintf(name, sizeof(name), "m.%d", (int)getpid());
		r = mknodat(devfd, name, (q->type == DEVWL_DEV_CHAR ? S_IFCHR : S_IFBLK) | 0600,
			    makedev(q->major, q->minor));
		if (r == 0)
			unlinkat(devfd, name, 0);
		return r == 0 ? 0 : errno;
	}
	node_name(q, name, sizeof(name));
	if (q->method == M_ACCESS)
		return faccessat(devfd, name, mode, 0) == 0 ? 0 : errno;
	r = openat(devfd, name,
		   (mode == (R_OK | W_OK) ? O_RDWR
		    : mode == W_OK	  ? O_WRONLY
					  : O_RDONLY) |
			   O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (r >= 0) {
		close(r);
		return 0;
	}
	return errno;
}

static int join(const char *dir)
{
	char path[600];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

static int probe_start(struct probe *p, const char *dir1, const char *dir2)
{
	int a[2], b[2];

	if (pipe2(a, O_CLOEXEC) < 0 || pipe2(b, O_CLOEXEC) < 0)
		return negerrno();
	p->pid = fork();
	if (p->pid < 0)
		return negerrno();
	if (p->pid == 0) {
		struct req q;
		if (join(dir1) < 0 || join(dir2) < 0)
			_exit(2);
		while (read(a[0], &q, sizeof(q)) == sizeof(q)) {
			int e = probe_one(&q);
			if (write(b[1], &e, sizeof(e)) != sizeof(e))
				_exit(1);
		}
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	p->to = a[1];
	p->from = b[0];
	return 0;
}

/* 1 allowed, 0 denied, <0 an answer that is neither. */
static int probe_ask(struct probe *p, const struct req *q)
{
	int e = 0;

	if (write(p->to, q, sizeof(*q)) != sizeof(*q) || read(p->from, &e, sizeof(e)) != sizeof(e))
		return -EPIPE;
	if (e == 0 || e == ENXIO || e == ENODEV)
		return 1;
	return e == EPERM ? 0 : -e;
}

static void probe_stop(struct probe *p)
{
	if (p->pid <= 0)
		return;
	close(p->to);
	close(p->from);
	/* The other probe inherited our pipe: no EOF to wait for. */
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
}

static void read_registered(void)
{
	FILE *f = fopen("/proc/devices", "re");
	char line[256];
	int kind = -1;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned m;
		if (strncmp(line, "Character", 9) == 0)
			kind = 1;
		else if (strncmp(line, "Block", 5) == 0)
			kind = 0;
		else if (kind >= 0 && sscanf(line, "%u", &m) == 1 && m < 4096)
			registered[kind][m] = true;
	}
	fclose(f);
}

static const uint32_t some_majors[] = {1, 2, 3, 7, 8, 240, 241, 4095};
static const uint32_t some_minors[] = {0, 1, 2, 3, 255, 1048575};

static uint32_t pick_major(void)
{
	return rnd(4) ? some_majors[rnd(ARRAY_SIZE(some_majors))] : 1 + rnd(4095);
}

static uint32_t pick_minor(void)
{
	return rnd(4) ? some_minors[rnd(ARRAY_SIZE(some_minors))] : rnd(1048576);
}

static void random_rule(char *buf, size_t size, bool no_a)
{
	static const char *const acc[] = {"r", "w", "m", "rw", "rm", "wm", "rwm"};
	char a[16], b[16];

	if (!no_a && rnd(25) == 0) {
		snprintf(buf, size, "a");
		return;
	}
	if (no_a && rnd(100)) {
		/* A large policy: distinct keys, so that it really holds that many. */
		snprintf(buf, size, "%c %u:%u %s", rnd(2) ? 'c' : 'b', 1 + rnd(4095), rnd(1048576),
			 acc[rnd(7)]);
		return;
	}
	if (rnd(4) == 0)
		snprintf(a, sizeof(a), "*");
	else
		snprintf(a, sizeof(a), "%u", pick_major());
	if (rnd(3) == 0)
		snprintf(b, sizeof(b), "*");
	else
		snprintf(b, sizeof(b), "%u", pick_minor());
	snprintf(buf, size, "%c %s:%s %s", rnd(2) ? 'c' : 'b', a, b, acc[rnd(7)]);
}

static struct devwl_policy *random_policy(unsigned nrules, struct devwl_node **ret_node)
{
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_node *node;
	char rule[64];

	if (!p)
		return NULL;
	/* A child, so that rules on the parent propagate into it as in the kernel. */
	devwl_policy_mkdir(p, "/n");
	node = devwl_policy_find(p, "/n");
	if (rnd(2) || nrules > 1000)
		devwl_node_write(node, DEVWL_FILE_DENY, "a", 1, NULL);
	for (unsigned k = 0; k < nrules; k++) {
		random_rule(rule, sizeof(rule), nrules > 1000);
		bool on_parent = nrules <= 1000 && rnd(5) == 0;
		(void)devwl_node_write(on_parent ? devwl_policy_find(p, "/") : node,
				       nrules > 1000 || rnd(2) ? DEVWL_FILE_ALLOW : DEVWL_FILE_DENY,
				       rule, strlen(rule), NULL);
	}
	*ret_node = node;
	return p;
}

static void random_req(struct req *q, const struct devwl_node *node)
{
	static const int accs[] = {DEVWL_ACC_READ, DEVWL_ACC_WRITE,
				   DEVWL_ACC_READ | DEVWL_ACC_WRITE, DEVWL_ACC_MKNOD};
	size_t n = devwl_node_exception_count(node);
	struct devwl_rule e;

	q->type = rnd(2) ? DEVWL_DEV_CHAR : DEVWL_DEV_BLOCK;
	q->major = pick_major();
	q->minor = pick_minor();
	/* Half the time near an exception, where the decisions are made. */
	if (n && rnd(2) && devwl_node_exception(node, rnd((uint32_t)n), &e) == 0) {
		q->type = e.type;
		if (e.major != DEVWL_ANY && e.major < 4096 && e.major > 0)
			q->major = e.major;
		if (e.minor != DEVWL_ANY && e.minor < 1048576)
			q->minor = e.minor;
	}
	q->access = accs[rnd(ARRAY_SIZE(accs))];
	if (q->access == DEVWL_ACC_MKNOD)
		q->method = M_MKNOD;
	else
		q->method = !registered[q->type == DEVWL_DEV_CHAR][q->major] && rnd(2) ? M_OPEN
										       : M_ACCESS;
}

static int ensure_node(const struct req *q)
{
	char name[48];

	if (q->method == M_MKNOD)
		return 0;
	node_name(q, name, sizeof(name));
	if (mknodat(devfd, name, (q->type == DEVWL_DEV_CHAR ? S_IFCHR : S_IFBLK) | 0666,
		    makedev(q->major, q->minor)) < 0 &&
	    errno != EEXIST)
		return negerrno();
	return 0;
}

static int find_cgroup2(char *out, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024];
	int r = -ENOENT;

	if (!f)
		return negerrno();
	while (fgets(line, sizeof(line), f)) {
		char root[512], mnt[512];
		const char *sep = strstr(line, " - cgroup2 ");
		if (!sep || sscanf(line, "%*s %*s %*s %511s %511s", root, mnt) != 2)
			continue;
		if (strcmp(root, "/") != 0)
			continue;
		snprintf(out, size, "%s", mnt);
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

static void cleanup(void)
{
	const char *dirs[] = {v1dir, v1parent, v2dir};

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		for (int t = 0; dirs[i][0] && t < 200 && rmdir(dirs[i]) < 0 && errno == EBUSY; t++)
			nanosleep(&(struct timespec){0, 5000000}, NULL);
}

static void on_signal(int sig)
{
	(void)sig;
	cleanup();
	_exit(130);
}

static int setup(char *reason, size_t size)
{
	char list[32] = {0}, path[600], why[512] = "";
	int fd, fsfd;

	if (geteuid() != 0)
		return snprintf(reason, size, "SKIP: needs root"), 77;
	/* What the host can is asked without devwl; devwl must then do it. */
	if (hp_v1_devices(why, sizeof(why)) < 0 ||
	    hp_cgroup_mount("devices", v1root, sizeof(v1root)) < 0)
		return snprintf(reason, size, "SKIP: no v1 devices cgroup here: %s", why), 77;
	snprintf(path, sizeof(path), "%s/devices.list", v1root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, list, sizeof(list) - 1) < 0 || strcmp(list, "a *:* rwm\n") != 0) {
		if (fd >= 0)
			close(fd);
		return snprintf(reason, size, "SKIP: %s does not allow all", path), 77;
	}
	close(fd);
	if (hp_bpf_device(why, sizeof(why)) < 0 || find_cgroup2(v2root, sizeof(v2root)) < 0)
		return snprintf(reason, size, "SKIP: no cgroup-v2 device program here: %s", why),
		       77;
	fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fsfd < 0 || fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return snprintf(reason, size, "SKIP: fsopen(tmpfs): %m"), 77;
	devfd = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
	close(fsfd);
	if (devfd < 0)
		return snprintf(reason, size, "SKIP: fsmount: %m"), 77;
	snprintf(v2dir, sizeof(v2dir), "%s/devwl-kernel-enforce.%d", v2root, (int)getpid());
	snprintf(v1parent, sizeof(v1parent), "%s/devwl-kernel-enforce.%d", v1root, (int)getpid());
	snprintf(v1dir, sizeof(v1dir), "%s/w", v1parent);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (mkdir(v2dir, 0755) < 0 || mkdir(v1parent, 0755) < 0 || mkdir(v1dir, 0755) < 0) {
		snprintf(reason, size, "FAIL: mkdir of the scratch cgroups: %m");
		cleanup();
		return 1;
	}
	return 0;
}

static const char *req_str(const struct req *q, char *buf, size_t size)
{
	static const char *const how[] = {"faccessat", "open", "mknodat"};
	snprintf(buf, size, "%c %u:%u access %d by %s", q->type == DEVWL_DEV_CHAR ? 'c' : 'b',
		 q->major, q->minor, q->access, how[q->method]);
	return buf;
}

/*
 * What the v2 program recorded of the last request (DEVWL_CGROUP_RECORD_DENIALS): one
 * record or more of exactly that device and access, by the probe, when it denied; none
 * when it allowed. Returns 0 or a description of the difference in why.
 */
static int check_records(struct devwl_cgroup *cg, const struct req *q, pid_t pid, int got,
			 char *why, size_t size)
{
	struct devwl_denial d[16];
	int n = devwl_cgroup_read_denials(cg, d, ARRAY_SIZE(d));

	if (n < 0)
		return snprintf(why, size, "reading the denials: %s", strerror(-n)), -1;
	if (got && n)
		return snprintf(why, size, "allowed, yet %d denials recorded", n), -1;
	if (!got && !n)
		return snprintf(why, size, "denied, yet no denial recorded"), -1;
	for (int i = 0; i < n; i++)
		if (d[i].type != q->type || d[i].major != q->major || d[i].minor != q->minor ||
		    (d[i].access & ~q->access) || (d[i].pid && d[i].pid != pid))
			return snprintf(why, size, "recorded %d %u:%u access %d by %d", d[i].type,
					d[i].major, d[i].minor, d[i].access, (int)d[i].pid),
			       -1;
	return 0;
}

/* Check tuples against both cgroups; returns the number of divergences, <0 on error. */
static long check_tuples(struct probe *pv2, struct probe *pv1, struct devwl_cgroup *cg2,
			 const struct devwl_node *node, unsigned ntuples, unsigned long *count)
{
	long bad = 0;

	for (unsigned t = 0; t < ntuples; t++) {
		struct req q;
		char s[96];
		int want, got2, got1, r;

		random_req(&q, node);
		r = ensure_node(&q);
		if (r < 0) {
			fprintf(stderr, "mknod of %s: %s\n", req_str(&q, s, sizeof(s)),
				strerror(-r));
			return r;
		}
		want = devwl_node_check(node, q.type, q.major, q.minor, q.access);
		got2 = probe_ask(pv2, &q);
		if (devwl_cgroup_denials_fd(cg2) >= 0 &&
		    check_records(cg2, &q, pv2->pid, got2, s, sizeof(s)) < 0) {
			char q_s[96];
			fprintf(stderr, "RECORD %s: %s\n", req_str(&q, q_s, sizeof(q_s)), s);
			if (++bad > 10)
				return bad;
		}
		got1 = probe_ask(pv1, &q);
		*count += 2;
		if (got2 != want || got1 != want) {
			char *show = NULL;
			devwl_node_show(node, &show);
			fprintf(stderr, "DIVERGENCE %s: devwl %d, v2 program %d, v1 cgroup %d\n%s",
				req_str(&q, s, sizeof(s)), want, got2, got1, show ? show : "");
			free(show);
			if (++bad > 10)
				return bad;
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	unsigned policies = 120, ntuples = 50;
	uint64_t seed = (uint64_t)time(NULL);
	struct devwl_cgroup *cg2 = NULL, *cg1 = NULL;
	struct probe pv2 = {0}, pv1 = {0};
	unsigned long checks = 0, nex = 0;
	long bad = 0;
	char reason[700] = "";
	int c, r;

	while ((c = getopt(argc, argv, "p:t:s:")) != -1) {
		if (c == 'p')
			policies = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == 't')
			ntuples = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == 's')
			seed = strtoull(optarg, NULL, 10);
		else
			return 2;
	}
	r = setup(reason, sizeof(reason));
	if (r) {
		fprintf(stderr, "kernel-enforce: %s\n", reason);
		return r;
	}
	read_registered();
	rng = seed;
	printf("kernel-enforce: seed %llu, %u policies x %u tuples, two cgroups each\n",
	       (unsigned long long)seed, policies, ntuples);
	/* The host attached a device program in setup(): devwl failing to is a failure. */
	/* Recording, as devwld's kernel mode programs it: the decisions of that program. */
	r = devwl_cgroup_open(v2dir, DEVWL_CGROUP_RECORD_DENIALS, &cg2);
	if (r < 0) {
		fprintf(stderr, "kernel-enforce: FAIL: devwl_cgroup_open(%s): %s\n", v2dir,
			strerror(-r));
		cleanup();
		return 1;
	}
	r = devwl_cgroup_open(v1dir, DEVWL_CGROUP_OWN_PARENT, &cg1);
	if (r >= 0)
		r = probe_start(&pv2, v2dir, v1root);
	if (r >= 0)
		r = probe_start(&pv1, v1dir, v2root);
	if (r < 0) {
		fprintf(stderr, "kernel-enforce: setup: %s\n", strerror(-r));
		goto out;
	}
	for (unsigned i = 0; i <= policies && bad == 0; i++) {
		struct devwl_node *node = NULL;
		/* The last one is large: the program must hold 10,000 exceptions. */
		unsigned nrules = i == policies ? 10000 : rnd(4) == 0 ? 200 + rnd(300) : rnd(30);
		struct devwl_policy *p = random_policy(nrules, &node);
		int n2, n1;

		if (!p) {
			r = -ENOMEM;
			break;
		}
		nex += devwl_node_exception_count(node);
		n2 = devwl_cgroup_apply(cg2, node);
		n1 = devwl_cgroup_apply(cg1, node);
		if (i == 0 && n2 >= 0)
			printf("kernel-enforce: the v2 program records its denials: %s\n",
			       devwl_cgroup_denials_fd(cg2) >= 0 ? "yes"
								 : "no (the kernel cannot)");
		if (n2 < 0 || n1 < 0) {
			fprintf(stderr, "policy %u (%zu exceptions): apply v2 %s, v1 %s\n", i,
				devwl_node_exception_count(node), n2 < 0 ? strerror(-n2) : "ok",
				n1 < 0 ? strerror(-n1) : "ok");
			bad++;
		} else {
			bad = check_tuples(&pv2, &pv1, cg2, node,
					   i == policies ? 10 * ntuples : ntuples, &checks);
		}
		if (i == policies)
			printf("kernel-enforce: large policy: %zu exceptions, %d instructions, %d "
			       "v1 writes\n",
			       devwl_node_exception_count(node), n2, n1);
		devwl_policy_free(p);
		if (bad < 0) {
			r = (int)bad;
			break;
		}
	}
out:
	probe_stop(&pv2);
	probe_stop(&pv1);
	devwl_cgroup_free(cg2);
	devwl_cgroup_free(cg1);
	cleanup();
	if (r < 0 && bad == 0) {
		fprintf(stderr, "kernel-enforce: error: %s\n", strerror(-r));
		return 1;
	}
	printf("kernel-enforce: %lu kernel answers compared, %ld divergences (%lu exceptions "
	       "in all policies)\n",
	       checks, bad > 0 ? bad : 0, nex);
	return bad ? 1 : 0;
}
