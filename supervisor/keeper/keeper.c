/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keeper: the process devwld starts as (and systemd's main process). It keeps fds and
 * restarts the worker; it knows no JSON, no policy and no container. What it does:
 *
 *   - holds the locks on the sockets (trust.h: one devwld per socket), the listener and
 *     control sockets and a duplicate of every notify fd the
 *     worker adds (slot table in a MAP_SHARED memfd, keeper.h), so a dying worker takes
 *     no container's listener with it, and with each fd the record the worker sent with
 *     it, bytes it stores and drops but never reads: a new worker reads them to know
 *     whose each fd is, also one the state file does not name yet;
 *   - starts the worker: fork, exec of its own binary (/proc/self/exe) with the same
 *     arguments, the fds inherited at the numbers the table names;
 *   - when the worker dies abnormally: answers ENOSYS to the notifications the worker had
 *     taken and not answered (the table says which), as the kernel would had the listener
 *     died, and starts a new worker at once;
 *   - when the worker stops for a planned restart (exit DEVWLD_EXIT_HANDOVER, state
 *     written, nothing in flight): re-executes itself from the path it was started from
 *     (a new binary after an upgrade), fds kept open across exec, and starts a worker;
 *   - forwards SIGHUP and SIGUSR2 to the worker, SIGTERM/SIGINT too (then exits with it),
 *     and the worker's sd_notify messages to $NOTIFY_SOCKET (only the main process may
 *     send them);
 *   - under systemd, hands the table and a duplicate of every notify fd to systemd's file
 *     descriptor store as it takes them, and drops them there as it lets them go, so that
 *     a `systemctl restart` (a stop and a start: this process killed) loses no container:
 *     the next keeper gets them back at its start (LISTEN_FDS) and goes on as a
 *     re-executed one would. systemd flushes the store when the service stops for good.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fds.h"
#include "keeper.h"
#include "keeper_table.h"
#include "log.h"
#include "service.h"
#include "sink.h"
#include "util.h"

/* Crashes this soon after a start count as a crash loop ... */
#define QUICK_CRASH_MS 1000
/* ... and after this many in a row, restarts wait a second. */
#define QUICK_CRASHES_FREE 5

extern char **environ;

struct keeper {
	char **argv;
	char self[PATH_MAX]; /* the binary we were started from: re-executed on a restart */
	int table_fd;
	struct keeper_table *table;
	int listen_fd, control_fd;
	int lock_fd[2]; /* on the listener's and the control socket's lock files, or -1 */
	int sig_fd;
	int sock; /* our end of the worker's socketpair, -1: none */
	bool sock_hup;
	pid_t worker; /* 0: none running */
	unsigned int gen;
	bool ever_ready; /* some worker served: later failures are crashes, not bad config */
	bool stopping;
	bool fdstore; /* systemd started us: fds go to its store too */
	uint64_t started_ms, next_start_ms;
	unsigned int quick_crashes;
	struct seccomp_notif_resp *resp;
	size_t resp_size;
};

/* Every fd a worker or our successor must find open after exec. */
static void keep_fds_across_exec(struct keeper *k, bool keep)
{
	set_cloexec(k->table_fd, !keep);
	set_cloexec(k->listen_fd, !keep);
	set_cloexec(k->control_fd, !keep);
	set_cloexec(k->lock_fd[0], !keep);
	set_cloexec(k->lock_fd[1], !keep);
	for (uint32_t i = 0; i < k->table->nslots; i++)
		set_cloexec(k->table->slot[i].fd, !keep);
}

/* environ without our own variables (and NOTIFY_SOCKET unless keep_notify), plus extra. */
static char **make_env(const char *extra, bool keep_notify)
{
	size_t n = 0, j = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(environ[i], DEVWLD_ENV_WORKER "=", strlen(DEVWLD_ENV_WORKER) + 1) ||
		    !strncmp(environ[i], DEVWLD_ENV_KEEPER "=", strlen(DEVWLD_ENV_KEEPER) + 1) ||
		    (!keep_notify && !strncmp(environ[i], "NOTIFY_SOCKET=", 14)))
			continue;
		env[j++] = environ[i];
	}
	env[j] = (char *)extra;
	return env;
}

static int table_map(struct keeper *k, bool fresh)
{
	bool upgrade = false;
	struct stat st;
	void *p;

	if (fresh) {
		k->table_fd = memfd_create("devwld-slots", MFD_CLOEXEC);
		if (k->table_fd < 0 || ftruncate(k->table_fd, (off_t)KEEPER_TABLE_SIZE) < 0)
			return negerrno();
	} else if (fstat(k->table_fd, &st) < 0) {
		return negerrno();
	} else if ((size_t)st.st_size == KEEPER_SLOTS_SIZE) {
		/* A version 1 keeper re-executed us (an upgrade): the same slots, no record
		 * area. Grown here; checked to be version 1 below. */
		if (ftruncate(k->table_fd, (off_t)KEEPER_TABLE_SIZE) < 0)
			return negerrno();
		upgrade = true;
	} else if ((size_t)st.st_size != KEEPER_TABLE_SIZE) {
		return -EINVAL;
	}
	p = mmap(NULL, KEEPER_TABLE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, k->table_fd, 0);
	if (p == MAP_FAILED)
		return negerrno();
	k->table = p;
	if (fresh) {
		k->table->magic = KEEPER_MAGIC;
		k->table->version = KEEPER_VERSION;
	} else if (k->table->magic != KEEPER_MAGIC || k->table->nslots > KEEPER_SLOTS_MAX ||
		   k->table->version != (upgrade ? 1u : KEEPER_VERSION)) {
		return -EPROTO;
	} else if (upgrade) {
		/* Its slots have rec_len 0 (it never wrote that field): no records. Their
		 * processes are in the state it wrote before the handover. */
		k->table->version = KEEPER_VERSION;
		log_msg("keeper: slot table upgraded from version 1 (%u slots, none with a "
			"record)",
			k->table->nslots);
	}
	return 0;
}

/* The name of the table and of slot i's fd in systemd's store: the tag in it, so that a
 * slot's earlier fd (one whose removal systemd missed) is never taken for its current one.
 * At most 25 characters ("s1048575-" and 16 digits): the unit's FileDescriptorStoreMax= says
 * why that matters. */
#define STORE_TABLE_NAME "devwld-table"
static void slot_name(uint32_t i, uint64_t tag, char buf[SERVICE_FDNAME_MAX])
{
	snprintf(buf, SERVICE_FDNAME_MAX, "s%u-%016llx", i, (unsigned long long)tag);
}

static void slot_store(struct keeper *k, uint32_t i)
{
	const struct keeper_slot *s = &k->table->slot[i];
	char name[SERVICE_FDNAME_MAX];
	int r;

	if (!k->fdstore || s->fd < 0)
		return;
	slot_name(i, s->tag, name);
	/* Polled: a container gone (its filter without tasks: POLLHUP) leaves the store. */
	r = service_store_fd(s->fd, name, true);
	if (r < 0)
		log_msg("keeper: slot %u: cannot hand its fd to systemd (%s): a systemctl restart "
			"loses its process",
			i, strerror(-r));
}

/* forget: also drop it from systemd's store (not when we exit: the store keeps it for
 * the next devwld). */
static void slot_close(struct keeper *k, uint32_t i, bool forget)
{
	struct keeper_slot *s = &k->table->slot[i];

	if (s->fd >= 0 && forget && k->fdstore) {
		char name[SERVICE_FDNAME_MAX];

		slot_name(i, s->tag, name);
		service_forget_fd(name);
	}
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->tag = 0;
	if (s->rec_len) {
		s->rec_len = 0;
		/* The record goes with the fd, and its page back to the system. */
		if (fallocate(k->table_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)KEEPER_REC_POS(i), KEEPER_REC_MAX) < 0)
			memset(KEEPER_REC(k->table, i), 0, KEEPER_REC_MAX);
	}
	/* Not the in-flight mark: the worker may have marked the slot's next process before
	 * we read this message; fail_inflight() clears it. */
}

static void take_msg(struct keeper *k, const struct keeper_msg *m, int *fds, size_t nfds)
{
	size_t used = 0;

	switch (m->type) {
	case KMSG_SOCKETS:
		if (nfds == 2) {
			if (k->listen_fd >= 0)
				close(k->listen_fd);
			if (k->control_fd >= 0)
				close(k->control_fd);
			k->listen_fd = fds[0];
			k->control_fd = fds[1];
			used = 2;
		}
		break;
	case KMSG_ADD:
		if (nfds == 1 && m->slot < KEEPER_SLOTS_MAX) {
			/* Raise the high-water mark first: a slot beyond it would not be scanned.
			 */
			while (k->table->nslots <= m->slot)
				k->table->slot[k->table->nslots++].fd = -1;
			slot_close(k, m->slot, true);
			k->table->slot[m->slot].fd = fds[0];
			k->table->slot[m->slot].tag = m->tag;
			/* Whose the fd is, for the next worker: the bytes as they came. */
			memcpy(KEEPER_REC(k->table, m->slot), m->data, m->len);
			k->table->slot[m->slot].rec_len = m->len;
			slot_store(k, m->slot);
			used = 1;
		}
		break;
	case KMSG_DEL:
		if (m->slot < k->table->nslots)
			slot_close(k, m->slot, true);
		break;
	case KMSG_READY:
		k->ever_ready = true;
		break;
	case KMSG_NOTIFY:
		service_notify("%.*s", (int)m->len, (const char *)m->data);
		break;
	}
	for (size_t i = used; i < nfds; i++)
		close(fds[i]);
}

/* Read one message from the worker; false when there is none (or the worker is gone). */
static bool read_msg(struct keeper *k, bool wait)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} cmsg;
	struct keeper_msg m;
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cmsg.buf,
		.msg_controllen = sizeof(cmsg.buf),
	};
	int fds[2] = {-1, -1};
	size_t nfds = 0;
	ssize_t n;

	memset(&m, 0, sizeof(m));
	n = recvmsg(k->sock, &msg, MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
	if (n < 0 && errno == EINTR)
		return true;
	if (n <= 0)
		return false;
	scm_rights_take(&msg, fds, 2, &nfds);
	/* A message of another size than it says is ignored (its fds closed). */
	if ((size_t)n >= KEEPER_MSG_HEAD && m.len <= sizeof(m.data) &&
	    (size_t)n == KEEPER_MSG_HEAD + m.len && !(msg.msg_flags & MSG_TRUNC))
		take_msg(k, &m, fds, nfds);
	else
		take_msg(k, &(struct keeper_msg){0}, fds, nfds);
	return true;
}

/* Received, unanswered calls a killed worker may have left past its last record. */
#define SCAN_AFTER_LAST 64

static bool fail_one(struct keeper *k, int fd, uint64_t id, uint32_t slot)
{
	memset(k->resp, 0, k->resp_size);
	k->resp->id = id;
	k->resp->error = -ENOSYS;
	/* ENOENT: answered after all, or the caller is gone. */
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, k->resp) < 0)
		return false;
	log_msg("keeper: answered ENOSYS to notification %llu the worker had taken (slot %u)",
		(unsigned long long)id, slot);
	return true;
}

/*
 * The worker is dead: what it took and did not answer gets the dead listener's answer.
 * The table names the call it was handling. A worker killed between RECV and writing
 * the table leaves one more, unnamed: a filter numbers its notifications one by one, and
 * ID_VALID is true only for a received, unanswered one, so the ids just past the last
 * recorded find it. No worker runs now, so whatever is received is the dead one's.
 */
static void fail_inflight(struct keeper *k)
{
	for (uint32_t i = 0; i < k->table->nslots; i++) {
		struct keeper_slot *s = &k->table->slot[i];
		uint64_t last = s->inflight_id;

		if (s->fd >= 0 && __atomic_load_n(&s->inflight, __ATOMIC_ACQUIRE))
			fail_one(k, s->fd, last, i);
		if (s->fd >= 0 && s->seen)
			for (uint64_t id = last + 1; id <= last + SCAN_AFTER_LAST; id++)
				if (ioctl(s->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0)
					fail_one(k, s->fd, id, i);
		s->inflight = 0;
	}
}

static int start_worker(struct keeper *k)
{
	_cleanup_free_ char **env = NULL;
	char var[128];
	int sv[2];
	pid_t keeper_pid = getpid(), pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return negerrno();
	snprintf(var, sizeof(var), DEVWLD_ENV_WORKER "=%d,%d,%d,%d,%u,%d,%d", sv[1], k->table_fd,
		 k->listen_fd, k->control_fd, k->gen + 1, k->lock_fd[0], k->lock_fd[1]);
	env = make_env(var, false);
	if (!env) {
		close(sv[0]);
		close(sv[1]);
		return -ENOMEM;
	}
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return negerrno();
	}
	if (pid == 0) {
		/* A worker must not outlive its keeper: it would hold sockets nobody restarts. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != keeper_pid)
			_exit(1);
		set_cloexec(sv[1], false);
		keep_fds_across_exec(k, true);
		/* The keeper's own binary: a worker speaks exactly its keeper's protocol. */
		execve("/proc/self/exe", k->argv, env);
		_exit(127);
	}
	close(sv[1]);
	k->sock = sv[0];
	k->sock_hup = false;
	k->worker = pid;
	k->gen++;
	k->started_ms = now_ms();
	return 0;
}

/* Replace ourselves with the binary we were started from, keeping every fd. Returns only
 * when that fails. */
static void reexec(struct keeper *k)
{
	_cleanup_free_ char **env = NULL;
	char var[128];

	snprintf(var, sizeof(var), DEVWLD_ENV_KEEPER "=%d,%d,%d,%u,%d,%d,%d", k->table_fd,
		 k->listen_fd, k->control_fd, k->gen, k->ever_ready ? 1 : 0, k->lock_fd[0],
		 k->lock_fd[1]);
	env = make_env(var, true);
	if (!env)
		return;
	keep_fds_across_exec(k, true);
	log_stop(SINK_DRAIN_MS);
	execve(k->self, k->argv, env);
	(void)log_start();
	log_msg("keeper: cannot execute %s (%m); restarting the worker only", k->self);
	keep_fds_across_exec(k, false);
}

/* Returns an exit status when the keeper is done, -1 to go on. */
static int worker_exited(struct keeper *k, int status)
{
	bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	bool handover = WIFEXITED(status) && WEXITSTATUS(status) == DEVWLD_EXIT_HANDOVER;
	uint64_t now = now_ms();

	/* Everything the worker sent before it died counts: an fd it added is ours. */
	if (k->sock >= 0) {
		while (read_msg(k, false))
			;
		close(k->sock);
		k->sock = -1;
	}
	k->worker = 0;
	if (k->stopping || clean)
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	if (!k->ever_ready) {
		/* The first worker failed to start (bad policy, sockets): that is devwld failing.
		 */
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	if (handover) {
		reexec(k);
		k->next_start_ms = now;
		return -1;
	}
	if (WIFSIGNALED(status))
		log_msg("keeper: worker %u killed by signal %d; starting a new one", k->gen,
			WTERMSIG(status));
	else
		log_msg("keeper: worker %u exited with status %d; starting a new one", k->gen,
			WEXITSTATUS(status));
	fail_inflight(k);
	k->quick_crashes = now - k->started_ms < QUICK_CRASH_MS ? k->quick_crashes + 1 : 0;
	k->next_start_ms = now + (k->quick_crashes > QUICK_CRASHES_FREE ? 1000 : 0);
	return -1;
}

static int signal_ready(struct keeper *k)
{
	struct signalfd_siginfo si;

	while (read(k->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD) {
			int status = 0;
			pid_t pid;

			while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
				int r;

				if (pid != k->worker)
					continue;
				r = worker_exited(k, status);
				if (r >= 0)
					return r;
			}
			continue;
		}
		if (sig == SIGTERM || sig == SIGINT) {
			k->stopping = true;
			if (!k->worker)
				return 0;
		}
		if (k->worker)
			kill(k->worker, sig);
	}
	return -1;
}

/* fds from a keeper that re-executed itself, or -EINVAL. One of a version before the
 * socket locks names none: its successor holds none either (a stop and start takes them). */
static int parse_env(struct keeper *k, const char *v)
{
	int ready = 0, n = 0, m = 0;

	if (sscanf(v, "%d,%d,%d,%u,%d%n", &k->table_fd, &k->listen_fd, &k->control_fd, &k->gen,
		   &ready, &n) != 5 ||
	    k->table_fd < 0)
		return -EINVAL;
	if (v[n] &&
	    (sscanf(v + n, ",%d,%d%n", &k->lock_fd[0], &k->lock_fd[1], &m) != 2 || v[n + m]))
		return -EINVAL;
	if (!v[n])
		log_msg("keeper: re-executed by a devwld without socket locks: a second devwld is "
			"not kept off these sockets until this one is stopped and started");
	k->ever_ready = ready != 0;
	return 0;
}

/*
 * A start by systemd after a stop, a restart or a crash of the whole service: what the
 * last keeper handed to the file descriptor store comes back (LISTEN_FDS). Its table says
 * whose process each slot holds; a slot gets the stored fd named for its slot and tag, or
 * is let go. Returns the slots kept; k->table mapped from the store, or left unmapped.
 */
static uint32_t take_store(struct keeper *k)
{
	_cleanup_free_ struct stored_fd *fds = NULL;
	char name[SERVICE_FDNAME_MAX];
	uint32_t kept = 0, lost = 0;
	size_t n = 0;
	int r = service_stored_fds(&fds, &n);

	if (r < 0)
		log_msg("keeper: the fds systemd passed: %s; starting afresh", strerror(-r));
	for (size_t j = 0; j < n && k->table_fd < 0; j++)
		if (!strcmp(fds[j].name, STORE_TABLE_NAME)) {
			k->table_fd = fds[j].fd;
			fds[j].fd = -1;
		}
	if (k->table_fd >= 0) {
		r = table_map(k, false);
		if (r < 0) {
			log_msg("keeper: the slot table in systemd's store is unusable (%s); "
				"starting afresh",
				strerror(-r));
			if (k->table)
				munmap(k->table, KEEPER_TABLE_SIZE);
			k->table = NULL;
			close(k->table_fd);
			k->table_fd = -1;
			service_forget_fd(STORE_TABLE_NAME);
		}
	}
	for (uint32_t i = 0; k->table && i < k->table->nslots; i++) {
		struct keeper_slot *s = &k->table->slot[i];
		size_t j;

		if (s->fd < 0)
			continue;
		slot_name(i, s->tag, name);
		for (j = 0; j < n && (fds[j].fd < 0 || strcmp(fds[j].name, name)); j++)
			;
		/* The number is the last keeper's; ours is the one systemd passed, or none
		 * (the store was full, or systemd saw the container go). */
		s->fd = j < n ? fds[j].fd : -1;
		if (j < n) {
			fds[j].fd = -1;
			kept++;
		} else {
			slot_close(k, i, false);
			lost++;
		}
	}
	/* Nothing of ours names them: systemd need not keep them either. */
	for (size_t j = 0; j < n; j++)
		if (fds[j].fd >= 0) {
			close(fds[j].fd);
			service_forget_fd(fds[j].name);
		}
	if (k->table)
		log_msg("keeper: %u container processes taken back from systemd's file descriptor "
			"store%s",
			kept, lost ? " (some slots had no fd there: let go)" : "");
	return kept;
}

/* Under systemd: the table and every fd not yet in its store handed to it. */
static void store_all(struct keeper *k)
{
	int r;

	if (!k->fdstore || (k->table->flags & KEEPER_STORED))
		return;
	/* Not polled: a memfd has nothing to report, and it must stay while we run. */
	r = service_store_fd(k->table_fd, STORE_TABLE_NAME, false);
	if (r < 0) {
		log_msg("keeper: cannot hand the slot table to systemd (%s): a systemctl restart "
			"loses the containers",
			strerror(-r));
		return;
	}
	for (uint32_t i = 0; i < k->table->nslots; i++)
		slot_store(k, i);
	k->table->flags |= KEEPER_STORED;
}

static int keeper_run(struct keeper *k)
{
	int r;

	for (;;) {
		struct pollfd pfd[2] = {
			{.fd = k->sig_fd, .events = POLLIN},
			{.fd = k->sock_hup ? -1 : k->sock, .events = POLLIN},
		};
		int timeout = -1;

		if (!k->worker && !k->stopping) {
			uint64_t now = now_ms();

			if (now >= k->next_start_ms) {
				r = start_worker(k);
				if (r < 0) {
					log_msg("keeper: cannot start a worker: %s", strerror(-r));
					k->next_start_ms = now + 1000;
				}
				continue;
			}
			timeout = (int)(k->next_start_ms - now);
		}
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			log_msg("keeper: poll: %m");
			return 1;
		}
		if (pfd[1].revents & POLLIN)
			(void)read_msg(k, false);
		else if (pfd[1].revents & (POLLHUP | POLLERR))
			k->sock_hup = true; /* the worker is going: SIGCHLD follows */
		if (pfd[0].revents & POLLIN) {
			r = signal_ready(k);
			if (r >= 0)
				return r;
		}
	}
}

static void keeper_done(struct keeper *k)
{
	if (k->table) {
		bool stored = k->fdstore && (k->table->flags & KEEPER_STORED);

		/* systemd keeps its duplicates: then no worker answers what one had taken. */
		if (stored && k->resp)
			fail_inflight(k);
		/* And the table, which the next keeper reads as we leave it: only our fds go. */
		for (uint32_t i = 0; i < k->table->nslots; i++)
			if (!stored)
				slot_close(k, i, false);
			else if (k->table->slot[i].fd >= 0)
				close(k->table->slot[i].fd);
		munmap(k->table, KEEPER_TABLE_SIZE);
	}
	if (k->table_fd >= 0)
		close(k->table_fd);
	if (k->listen_fd >= 0)
		close(k->listen_fd);
	if (k->control_fd >= 0)
		close(k->control_fd);
	for (size_t i = 0; i < ARRAY_SIZE(k->lock_fd); i++)
		if (k->lock_fd[i] >= 0)
			close(k->lock_fd[i]);
	if (k->sig_fd >= 0)
		close(k->sig_fd);
	if (k->sock >= 0)
		close(k->sock);
	free(k->resp);
	log_stop(SINK_DRAIN_MS);
}

static int keeper_start(struct keeper *k)
{
	const char *env = secure_getenv(DEVWLD_ENV_KEEPER);
	struct seccomp_notif_sizes sizes = {0};
	sigset_t mask;
	uint32_t kept = 0, taken = 0;
	ssize_t n;
	int r;

	n = readlink("/proc/self/exe", k->self, sizeof(k->self) - 1);
	if (n <= 0 || (size_t)n >= sizeof(k->self) - 1) {
		log_msg("keeper: cannot read /proc/self/exe: %m");
		return -EINVAL;
	}
	k->self[n] = '\0';
	if (env && parse_env(k, env) < 0) {
		log_msg("keeper: bad %s '%s'", DEVWLD_ENV_KEEPER, env);
		return -EINVAL;
	}
	k->fdstore = service_fdstore();
	if (!env && k->fdstore)
		taken = take_store(k);
	r = k->table ? 0 : table_map(k, !env);
	unsetenv(DEVWLD_ENV_KEEPER);
	if (r < 0) {
		log_msg("keeper: slot table: %s", strerror(-r));
		return r;
	}
	keep_fds_across_exec(k, false);
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0) {
		log_msg("keeper: this kernel has no seccomp user notification");
		return -EOPNOTSUPP;
	}
	k->resp_size = sizes.seccomp_notif_resp > sizeof(*k->resp) ? sizes.seccomp_notif_resp
								   : sizeof(*k->resp);
	k->resp = calloc(1, k->resp_size);
	if (!k->resp)
		return -ENOMEM;
	/* Blocked since main() (and across our re-exec); the worker inherits the mask. */
	devwld_signals(&mask);
	sigaddset(&mask, SIGCHLD);
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
	    (k->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_msg("keeper: signals: %m");
		return -errno;
	}
	/* Our few lines must not stall us either when stderr does not keep up; a worker is
	 * forked from here, but it only execs. */
	if (log_start() < 0)
		log_msg("keeper: cannot start the log writer; logging directly");
	if (env) {
		for (uint32_t i = 0; i < k->table->nslots; i++)
			kept += k->table->slot[i].fd >= 0;
		log_msg("keeper: re-executed %s, %u container processes kept", k->self, kept);
	}
	/* The last keeper's worker was killed with it: what it had taken gets the answer of
	 * a dead listener, as after a worker's crash. */
	if (taken)
		fail_inflight(k);
	store_all(k);
	return 0;
}

int keeper_main(char **argv, const int lock_fds[2])
{
	struct keeper k = {
		.argv = argv,
		.table_fd = -1,
		.listen_fd = -1,
		.control_fd = -1,
		.lock_fd = {lock_fds[0], lock_fds[1]},
		.sig_fd = -1,
		.sock = -1,
	};
	int r;

	r = keeper_start(&k);
	if (r >= 0)
		r = keeper_run(&k);
	else
		r = 1;
	keeper_done(&k);
	return r;
}
