/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A target that pulls its path buffer away while the call is trapped: one thread maps a
 * page, writes a path into it and opens it; another, at a random moment right after,
 * munmaps the page or mprotects it PROT_NONE. Whatever the moment, the answer must be the
 * right one for the path (allowed device: its fd; denied device: EPERM; regular file: it)
 * or EFAULT, never an fd of the denied device, never a handler error, crash or stall.
 * No devices cgroup: a wrong CONTINUE of the denied device would show as an open fd.
 */
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include "livetest.h"

#define ROUNDS 10000

static char paths[3][256];
static char *page;
static atomic_int armed, removed;
static volatile int spin;

static void *remover(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		int delay = rand() % 30000;

		while (!atomic_load(&armed))
			sched_yield(); /* 2 CPUs: leave one to the supervisor */
		atomic_store(&armed, 0);
		for (int k = 0; k < delay; k++)
			spin++;
		if (i % 2)
			munmap(page, 4096);
		else
			mprotect(page, 4096, PROT_NONE);
		atomic_store(&removed, 1);
	}
	return NULL;
}

static int child_unmap(void *arg)
{
	/* [kind][ok, EFAULT, EPERM, other, wrong device] */
	int n[3][5] = {{0}};
	pthread_t t;

	(void)arg;
	srand((unsigned int)getpid());
	if (pthread_create(&t, NULL, remover, NULL) != 0)
		return 3;
	for (int i = 0; i < ROUNDS; i++) {
		int kind = i % 3, fd = -1;
		struct stat st;

		page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (page == MAP_FAILED)
			return 4;
		strcpy(page, paths[kind]);
		atomic_store(&removed, 0);
		atomic_store(&armed, 1);
		fd = (int)syscall(SYS_openat, AT_FDCWD, page, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			bool right = fstat(fd, &st) == 0 &&
				     (kind == 2 ? S_ISREG(st.st_mode)
						: S_ISCHR(st.st_mode) &&
							  st.st_rdev == makedev(1, kind ? 7 : 5));

			n[kind][right ? 0 : 4]++;
			close(fd);
		} else if (errno == EFAULT) {
			n[kind][1]++;
		} else if (errno == EPERM) {
			n[kind][2]++;
		} else {
			n[kind][3]++;
		}
		while (!atomic_load(&removed))
			sched_yield();
		munmap(page, 4096);
	}
	pthread_join(t, NULL);
	for (int k = 0; k < 3; k++)
		printf("%s ok=%d efault=%d eperm=%d other=%d wrong=%d\n",
		       k == 0	? "zero"
		       : k == 1 ? "full"
				: "file",
		       n[k][0], n[k][1], n[k][2], n[k][3], n[k][4]);
	return 0;
}

int main(void)
{
	struct lt_nodes nodes;
	struct lt_sup s;
	int status = 0, fds = 0;
	int v[3][5] = {{0}};
	char *out = NULL, *line = NULL, *save = NULL;

	lt_need_root();
	lt_watchdog(120);
	lt_nodes_make(&nodes);
	snprintf(paths[0], sizeof(paths[0]), "%s/zero", nodes.dir);
	snprintf(paths[1], sizeof(paths[1]), "%s/full", nodes.dir);
	snprintf(paths[2], sizeof(paths[2]), "%s/file", nodes.dir);
	fds = lt_count_fds();
	lt_sup_init(&s, "deny a;allow c 1:5 r");
	out = lt_run(&s, NULL, child_unmap, NULL, &status);
	LT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	LT_CHECK(s.errors == 0, "%d handler errors", s.errors);
	lt_sup_free(&s);
	LT_CHECK(lt_count_fds() == fds, "supervisor fds: %d before, %d after", fds, lt_count_fds());
	line = strtok_r(out, "\n", &save);
	for (int k = 0; k < 3 && line; k++, line = strtok_r(NULL, "\n", &save))
		LT_CHECK(sscanf(line, "%*s ok=%d efault=%d eperm=%d other=%d wrong=%d", &v[k][0],
				&v[k][1], &v[k][2], &v[k][3], &v[k][4]) == 5,
			 "child said: %s", line);
	printf("zero: ok=%d efault=%d eperm=%d other=%d wrong=%d\n", v[0][0], v[0][1], v[0][2],
	       v[0][3], v[0][4]);
	printf("full: ok=%d efault=%d eperm=%d other=%d\n", v[1][0], v[1][1], v[1][2], v[1][3]);
	printf("file: ok=%d efault=%d eperm=%d other=%d wrong=%d\n", v[2][0], v[2][1], v[2][2],
	       v[2][3], v[2][4]);
	LT_CHECK(v[1][0] == 0 && v[1][4] == 0, "the denied device was opened %d times",
		 v[1][0] + v[1][4]);
	LT_CHECK(v[0][2] == 0 && v[2][2] == 0, "EPERM for an allowed open");
	for (int k = 0; k < 3; k++)
		LT_CHECK(v[k][3] == 0 && v[k][4] == 0, "unexpected answers for kind %d", k);
	LT_CHECK(v[0][0] + v[0][1] + v[1][1] + v[1][2] + v[2][0] + v[2][1] == ROUNDS,
		 "not every call answered");
	free(out);
	lt_nodes_remove(&nodes);
	printf("%d failures\n", lt_failures);
	return lt_failures ? 1 : 0;
}
