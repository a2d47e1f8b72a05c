/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Targets killed while a call is trapped or being handled: the handler reports -ENOENT
 * (not an error), never crashes, keeps no fd of the dead target and stays usable.
 */
#include <stdatomic.h>
#include <time.h>

#include "livetest.h"

static char zero_path[256];
static int kill_at;

static int child_loop(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = open(zero_path, O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
	}
	return 0;
}

static void hook(struct lt_sup *s, int count)
{
	if (count == kill_at)
		kill(s->child_pid, SIGKILL);
}

struct timer_arg {
	struct lt_sup *s;
	int delay_us;
};

static void *timer_kill(void *p)
{
	struct timer_arg *t = p;

	/* Only once the child runs under the filter, not while it is still setting up. */
	while (__atomic_load_n(&t->s->nfd, __ATOMIC_ACQUIRE) < 0)
		usleep(100);
	usleep((useconds_t)t->delay_us);
	kill(t->s->child_pid, SIGKILL);
	return NULL;
}

static int count_fds(void)
{
	int n = 0;
	char p[64];

	for (int fd = 0; fd < 1024; fd++) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		if (access(p, F_OK) == 0)
			n++;
	}
	return n;
}

int main(void)
{
	struct lt_nodes nodes;
	int before = 0, handled = 0, gone = 0;

	lt_need_root();
	lt_nodes_make(&nodes);
	snprintf(zero_path, sizeof(zero_path), "%s/zero", nodes.dir);
	srand((unsigned int)time(NULL));
	before = count_fds();
	for (int i = 0; i < 30; i++) {
		struct lt_sup s;
		struct timer_arg ta = {.s = &s, .delay_us = 200 + rand() % 5000};
		pthread_t timer;
		int status = 0;
		char *out = NULL;

		lt_sup_init(&s, "deny a;allow c 1:5 r");
		if (i % 2 == 0) {
			kill_at = 1 + rand() % 200;
			s.before_handle = hook;
		} else if (pthread_create(&timer, NULL, timer_kill, &ta) != 0) {
			LT_DIE("pthread_create");
		}
		out = lt_run(&s, NULL, child_loop, NULL, &status);
		if (i % 2 == 1)
			pthread_join(timer, NULL);
		LT_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			 "round %d: child status %#x", i, status);
		LT_CHECK(s.errors == 0, "round %d: %d handler errors", i, s.errors);
		handled += s.allowed;
		gone += s.gone;
		free(out);
		lt_sup_free(&s);
	}
	LT_CHECK(count_fds() == before, "fd leak: %d fds before, %d after", before, count_fds());
	LT_CHECK(handled > 0, "no call was ever answered");
	lt_nodes_remove(&nodes);
	printf("30 targets killed; %d opens granted, %d notifications found their target gone; "
	       "%d failures\n",
	       handled, gone, lt_failures);
	return lt_failures ? 1 : 0;
}
