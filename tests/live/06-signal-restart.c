/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A signal-restarted mknod: without WAIT_KILLABLE_RECV a signal that arrives while devwl
 * is making the node cancels the answer (SEND fails ENOENT) and the call restarts as a
 * new notification; devwl must recognise its own node and answer success, not EEXIST.
 */
#include <sys/syscall.h>

#include "livetest.h"

#define ROUNDS 3000

static char dir[128];
static volatile int done;
static pid_t main_tid;

static void on_usr1(int sig)
{
	(void)sig;
}

static void *signaller(void *arg)
{
	(void)arg;
	while (!done) {
		syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
		usleep(5);
	}
	return NULL;
}

static int child_mknod(void *arg)
{
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
	int ok = 0, bad = 0, lastbad = 0;
	char p[256];
	pthread_t t;

	(void)arg;
	sigaction(SIGUSR1, &sa, NULL);
	main_tid = gettid();
	if (pthread_create(&t, NULL, signaller, NULL) != 0)
		return 3;
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(p, sizeof(p), "%s/nd/r%d", dir, i);
		if (syscall(SYS_mknodat, AT_FDCWD, p, S_IFCHR | 0600, makedev(1, 5)) == 0) {
			ok++;
		} else {
			bad++;
			lastbad = errno;
		}
	}
	done = 1;
	pthread_join(t, NULL);
	printf("ok=%d bad=%d lasterr=%s\n", ok, bad, lastbad ? strerrorname_np(lastbad) : "-");
	return 0;
}

int main(void)
{
	struct lt_nodes nodes;
	struct lt_sup s;
	int status = 0, ok = 0, bad = -1;
	char *out = NULL;

	lt_need_root();
	lt_nodes_make(&nodes);
	snprintf(dir, sizeof(dir), "%s", nodes.dir);
	lt_sup_init(&s, "deny a;allow c 1:5 m");
	s.filter_flags = DEVWL_FILTER_NO_WAIT_KILLABLE_RECV;
	out = lt_run(&s, NULL, child_mknod, NULL, &status);
	LT_CHECK(sscanf(out, "ok=%d bad=%d", &ok, &bad) == 2, "child output: %s", out);
	LT_CHECK(ok == ROUNDS && bad == 0, "mknod results: %s", out);
	LT_CHECK(s.errors == 0, "%d handler errors", s.errors);
	printf("%d mknods, %d answers cancelled by a signal and restarted: %s", ROUNDS, s.gone,
	       out);
	if (s.gone == 0)
		printf("note: no signal hit the window this run\n");
	free(out);
	lt_sup_free(&s);
	lt_nodes_remove(&nodes);
	return lt_failures ? 1 : 0;
}
