/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The worker's side of the keeper (keeper.h): the fds it inherited, the slots it gives
 * the container processes, the in-flight marks, and the messages it sends.
 *
 * Every notify fd the worker serves is also held by the keeper under a slot; a slot has
 * a random tag that the state file records with the process, so a new worker only ever
 * attaches a slot's fd to the container the state says it belongs to, even if a slot was
 * freed and reused after the state was last written. The fd goes to the keeper with its
 * record (slotrec.h), so a slot the state does not name (added after the last write) still
 * says whose it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fds.h"
#include "keeper_link.h"
#include "keeper_table.h"
#include "log.h"
#include "slotrec.h"
#include "util.h"

#define USED_WORDS (KEEPER_SLOTS_MAX / 64)

/* The socket to the keeper, for service_notify(), which has no struct devwld at hand. */
static int link_sock = -1;

static bool used_get(const struct keeper_link *l, uint32_t i)
{
	return l->used[i / 64] & (1ULL << (i % 64));
}

static void used_set(struct keeper_link *l, uint32_t i, bool on)
{
	if (on)
		l->used[i / 64] |= 1ULL << (i % 64);
	else
		l->used[i / 64] &= ~(1ULL << (i % 64));
}

static int send_msg(int sock, const struct keeper_msg *m, const int *fds, size_t nfds)
{
	SCM_RIGHTS_BUF(2) cmsg;
	struct iovec iov = {.iov_base = (void *)m, .iov_len = KEEPER_MSG_HEAD + m->len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	if (sock < 0)
		return -ENOTCONN;
	scm_rights_put(&msg, cmsg.buf, fds, nfds);
	/* Blocking: the keeper reads at once, and once sendmsg returns, the fds are in the
	 * socket, the keeper's even if we die right after. */
	for (;;) {
		if (sendmsg(sock, &msg, MSG_NOSIGNAL) >= 0)
			return 0;
		if (errno != EINTR)
			return negerrno();
	}
}

int keeper_link_open(struct keeper_link *l)
{
	const char *v = secure_getenv(DEVWLD_ENV_WORKER);
	int sock = -1, table_fd = -1, n = 0;
	unsigned int gen = 0;
	struct stat st;
	void *p;

	l->sock = l->listen_fd = l->control_fd = l->lock_fd[0] = l->lock_fd[1] = -1;
	if (!v)
		return 0;
	if (sscanf(v, "%d,%d,%d,%d,%u,%d,%d%n", &sock, &table_fd, &l->listen_fd, &l->control_fd,
		   &gen, &l->lock_fd[0], &l->lock_fd[1], &n) != 7 ||
	    v[n] || sock < 0 || table_fd < 0)
		return -EINVAL;
	unsetenv(DEVWLD_ENV_WORKER);
	set_cloexec(sock, true);
	set_cloexec(l->listen_fd, true);
	set_cloexec(l->control_fd, true);
	set_cloexec(l->lock_fd[0], true);
	set_cloexec(l->lock_fd[1], true);
	if (fstat(table_fd, &st) < 0 || (size_t)st.st_size != KEEPER_TABLE_SIZE) {
		close(table_fd);
		return -EINVAL;
	}
	p = mmap(NULL, KEEPER_TABLE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, table_fd, 0);
	close(table_fd); /* the mapping keeps the memory */
	if (p == MAP_FAILED)
		return negerrno();
	l->table = p;
	if (l->table->magic != KEEPER_MAGIC || l->table->version != KEEPER_VERSION ||
	    l->table->nslots > KEEPER_SLOTS_MAX)
		return -EPROTO;
	l->used = calloc(USED_WORDS, sizeof(*l->used));
	l->claimed = calloc(USED_WORDS, sizeof(*l->claimed));
	if (!l->used || !l->claimed)
		return -ENOMEM;
	/* Every live slot is in use until claimed by a restored process or released. */
	for (uint32_t i = 0; i < l->table->nslots; i++) {
		if (l->table->slot[i].fd < 0)
			continue;
		used_set(l, i, true);
		set_cloexec(l->table->slot[i].fd, true);
	}
	l->sock = link_sock = sock;
	l->gen = gen;
	return 1;
}

void keeper_link_close(struct keeper_link *l)
{
	if (l->table)
		munmap(l->table, KEEPER_TABLE_SIZE);
	l->table = NULL;
	free(l->used);
	l->used = NULL;
	free(l->claimed);
	l->claimed = NULL;
	if (l->sock >= 0)
		close(l->sock);
	l->sock = link_sock = -1;
	for (size_t i = 0; i < ARRAY_SIZE(l->lock_fd); i++)
		if (l->lock_fd[i] >= 0)
			close(l->lock_fd[i]);
	l->lock_fd[0] = l->lock_fd[1] = -1;
}

#ifdef DEVWL_TEST_HOOKS
/* Tests (tests/oci/98): the record of every process of container DEVWLD_TEST_BAD_RECORD
 * is cut one byte short, as a record a new worker must refuse. */
static void test_bad_record(const struct slot_owner *o, struct keeper_msg *m)
{
	const char *id = secure_getenv("DEVWLD_TEST_BAD_RECORD");

	if (id && !strcmp(id, o->id))
		m->len--;
}
#else
static void test_bad_record(const struct slot_owner *o, struct keeper_msg *m)
{
	(void)o;
	(void)m;
}
#endif

int keeper_link_add(struct keeper_link *l, int fd, const struct slot_owner *owner,
		    uint32_t *ret_slot, uint64_t *ret_tag)
{
	struct keeper_msg m = {.type = KMSG_ADD};
	ssize_t len;
	uint32_t i;
	int r;

	if (!l->table)
		return 0;
	for (i = l->hint; i < KEEPER_SLOTS_MAX && used_get(l, i); i++)
		;
	if (i == KEEPER_SLOTS_MAX)
		return -ENOSPC;
	if (getrandom(&m.tag, sizeof(m.tag), 0) != (ssize_t)sizeof(m.tag))
		return -EIO;
	/* Every id and node devwld accepts fits (slotrec.h): one that does not is a bug,
	 * refused here rather than attached without a record a crash would lose. */
	len = slotrec_encode(owner, m.data, sizeof(m.data));
	if (len < 0)
		return (int)len;
	m.len = (uint32_t)len;
	test_bad_record(owner, &m);
	m.slot = i;
	r = send_msg(l->sock, &m, &fd, 1);
	if (r < 0)
		return r;
	used_set(l, i, true);
	l->hint = i + 1;
	*ret_slot = i;
	*ret_tag = m.tag;
	return 0;
}

void keeper_link_del(struct keeper_link *l, uint32_t slot)
{
	struct keeper_msg m = {.type = KMSG_DEL, .slot = slot};
	int r;

	if (!l->table || slot >= KEEPER_SLOTS_MAX || !used_get(l, slot))
		return;
	r = send_msg(l->sock, &m, NULL, 0);
	if (r < 0)
		log_msg("keeper: cannot free slot %u: %s", slot, strerror(-r));
	used_set(l, slot, false);
	if (slot < l->hint)
		l->hint = slot;
}

int keeper_link_claim(struct keeper_link *l, uint32_t slot, uint64_t tag)
{
	if (!l->table || !l->claimed || slot >= l->table->nslots || l->table->slot[slot].fd < 0 ||
	    l->table->slot[slot].tag != tag || (l->claimed[slot / 64] & (1ULL << (slot % 64))))
		return -ENOENT;
	l->claimed[slot / 64] |= 1ULL << (slot % 64);
	return l->table->slot[slot].fd;
}

uint32_t keeper_link_nslots(const struct keeper_link *l)
{
	return l->table && l->claimed ? l->table->nslots : 0;
}

ssize_t keeper_link_record(struct keeper_link *l, uint32_t slot, void *buf, uint64_t *ret_tag)
{
	const struct keeper_slot *s;
	uint32_t len;

	if (!l->table || !l->claimed || slot >= l->table->nslots)
		return -ENOENT;
	s = &l->table->slot[slot];
	if (s->fd < 0 || (l->claimed[slot / 64] & (1ULL << (slot % 64))))
		return -ENOENT;
	/* Read once: the table is shared memory, and its record is checked on our copy. */
	len = __atomic_load_n(&s->rec_len, __ATOMIC_RELAXED);
	if (len > KEEPER_REC_MAX)
		return -EBADMSG;
	memcpy(buf, KEEPER_REC(l->table, slot), len);
	*ret_tag = s->tag;
	return (ssize_t)len;
}

void keeper_link_release_unclaimed(struct keeper_link *l)
{
	if (!l->table || !l->claimed)
		return;
	for (uint32_t i = 0; i < l->table->nslots; i++) {
		int fd = l->table->slot[i].fd;

		if (fd < 0 || (l->claimed[i / 64] & (1ULL << (i % 64))))
			continue;
		/* Neither the state nor a record says whose it is (the reason is logged
		 * before): fail closed, its calls get ENOSYS. */
		log_msg("keeper: slot %u belongs to no container we know of; let go", i);
		close(fd);
		keeper_link_del(l, i);
	}
	/* Claims are made once, at the start. */
	free(l->claimed);
	l->claimed = NULL;
}

int keeper_link_sockets(struct keeper_link *l, int listen_fd, int control_fd)
{
	struct keeper_msg m = {.type = KMSG_SOCKETS};
	int fds[2] = {listen_fd, control_fd};

	if (!l->table)
		return 0;
	return send_msg(l->sock, &m, fds, 2);
}

void keeper_link_ready(struct keeper_link *l)
{
	struct keeper_msg m = {.type = KMSG_READY};

	if (l->table)
		(void)send_msg(l->sock, &m, NULL, 0);
}

bool keeper_link_notify(const char *text)
{
	struct keeper_msg m = {.type = KMSG_NOTIFY};

	if (link_sock < 0)
		return false;
	m.len = (uint32_t)strnlen(text, sizeof(m.data));
	memcpy(m.data, text, m.len);
	(void)send_msg(link_sock, &m, NULL, 0);
	return true;
}

void keeper_link_inflight(struct keeper_link *l, uint32_t slot, uint64_t id)
{
	struct keeper_slot *s = &l->table->slot[slot];

	s->inflight_id = id;
	s->seen = 1;
	__atomic_store_n(&s->inflight, 1, __ATOMIC_RELEASE);
}

void keeper_link_answered(struct keeper_link *l, uint32_t slot)
{
	__atomic_store_n(&l->table->slot[slot].inflight, 0, __ATOMIC_RELEASE);
}
