/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What tells devwld that the devices its selector bindings name may have changed, so
 * that core/follow.c resolves them again and writes the difference:
 *
 * - the kernel's uevents: a NETLINK_KOBJECT_UEVENT socket in the kernel's own multicast
 *   group (1), not udevd's (2), so it works without udevd and learns of a device's
 *   removal before udevd has acted on it. Every message only triggers a resolution
 *   against sysfs, never a decision by itself, so a message forged into the group could
 *   cost a resolution and nothing more; those of another sender than the kernel are
 *   dropped all the same. ENOBUFS (messages lost) resolves everything again.
 * - the CDI spec directories (inotify): a spec written, renamed into place or removed.
 *   A directory that does not exist yet is looked for again every REWATCH_MS rather
 *   than watched through its parent: /var/run/cdi's parent is /run, busy with
 *   everything else, and the look costs one inotify_add_watch() a second; when it
 *   appears, the cdi: bindings are resolved at once, which covers specs written into
 *   it before the watch was in place.
 *
 * Both are open only while there is a binding or a device attached by selector (both
 * followed on each change: core/follow.c, core/attach-follow.c), and each revocation is
 * in force (the handlers' node copies renewed, programmed cgroups written) before this
 * hook returns to the loop, so no call is decided under a number that vanished once its
 * uevent is read.
 */
#include <errno.h>
#include <limits.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attach.h"
#include "cdi.h"
#include "clock.h"
#include "devwld.h"
#include "follow.h"
#include "kernelmode.h"
#include "log.h"
#include "metrics.h"
#include "serve.h"
#include "state.h"
#include "uevent.h"
#include "uevents.h"
#include "util.h"
#include "work.h"

#define REWATCH_MS    1000
#define UEVENT_RCVBUF (4 << 20)
#define CDI_MASK                                                                                   \
	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF |   \
	 IN_MOVE_SELF | IN_ONLYDIR)

struct follow {
	struct source *nl, *ino; /* NULL while closed */
	int *wd;		 /* per CDI directory; -1: not watched (missing) */
	uint64_t rewatch_ms;	 /* when to look for the missing ones again */
	bool failed;		 /* the uevent socket could not be had: said once */
	int err;		 /* why, then */
	bool starting;		 /* in uevents_start(): a failure is its caller's to report */
	/* The CDI specs as last read (d->cdi_now while following), or NULL; their read under
	 * way on a work thread, and a refresh asked for meanwhile (its first cause). */
	struct cdi_registry *cdi;
	bool reading, again, again_all;
	char again_cause[PATH_MAX + 96];
};

static size_t n_dirs(const struct devwld *d)
{
	return d->cfg.n_cdi_dirs ? d->cfg.n_cdi_dirs : ARRAY_SIZE(cdi_default_dirs);
}

static const char *dir_at(const struct devwld *d, size_t i)
{
	return d->cfg.n_cdi_dirs ? d->cfg.cdi_dirs[i] : cdi_default_dirs[i];
}

/* The specs read for the refreshes from now on (reg taken over; NULL: none). */
static void set_specs(struct devwld *d, struct cdi_registry *reg)
{
	struct follow *f = d->follow;

	cdi_free(f->cdi);
	f->cdi = reg;
	d->cdi_now = reg;
}

/* What follow_refresh() wrote is in force before anything else runs; then the attached
 * devices move, each in force before its node appears (attach_follow() sees to it). */
static void apply(struct devwld *d, bool cdi_only, const char *cause)
{
	bool changed;

	changed = follow_refresh(d, cdi_only, cause);

	if (changed) {
		serve_policy_changed(d);
		kernelmode_policy_changed(d);
	}
	if (attach_follow(d, cdi_only, cause))
		changed = true;
	if (changed)
		state_changed(d);
}

/* The CDI specs read on a work thread: anyone with a spec directory to write can make one
 * slow to parse, and the loop waits for no file others write. */
struct spec_read {
	struct work w;
	const struct devwld *d; /* its configuration only */
	struct cdi_registry *reg;
	bool cdi_only;
	char cause[PATH_MAX + 96];
};

static void spec_read_run(struct work *w)
{
	struct spec_read *sr = container_of(w, struct spec_read, w);

#ifdef DEVWL_TEST_HOOKS
	/* DEVWLD_TEST_CDI_SLOW_MS=N (tests/oci/174): each read takes N ms longer, as a
	 * spec at the parser's limits on a slow machine would. */
	const char *slow = secure_getenv("DEVWLD_TEST_CDI_SLOW_MS");

	if (slow)
		usleep((useconds_t)strtoul(slow, NULL, 10) * 1000);
#endif
	(void)follow_cdi_load(sr->d, &sr->reg);
}

static void spec_read_free(struct work *w)
{
	struct spec_read *sr = container_of(w, struct spec_read, w);

	cdi_free(sr->reg);
	free(sr);
}

static void refresh(struct devwld *d, bool cdi_only, const char *cause);

static void spec_read_done(struct devwld *d, struct work *w, int r)
{
	struct spec_read *sr = container_of(w, struct spec_read, w);
	struct follow *f = d->follow;
	struct cdi_registry *reg = NULL;

	f->reading = false;
	/* Stopped following meanwhile: unwatched, they would grow stale. */
	if (!f->nl)
		return;
	if (r == 0 && sr->reg) {
		follow_cdi_report(sr->reg);
		set_specs(d, TAKE_PTR(sr->reg));
	} else {
		/* When in doubt, deny: none read is none granted (its read goes on alone). */
		log_msg("CDI: the specs were not read within %d s (%s): cdi: selectors name "
			"nothing until they are",
			follow_cdi_deadline_ms() / 1000,
			r == 0 ? "out of memory" : "a spec too slow to parse");
		(void)cdi_load(NULL, 0, &reg);
		set_specs(d, reg);
	}
	apply(d, sr->cdi_only, sr->cause);
	if (f->again) {
		f->again = false;
		refresh(d, !f->again_all, f->again_cause);
	}
}

/* A refresh that needs the CDI specs read again: on a work thread, then apply(). */
static void read_specs(struct devwld *d, bool cdi_only, const char *cause)
{
	struct follow *f = d->follow;
	struct spec_read *sr = NULL;
	int r;

	if (f->reading) {
		/* One read at a time: the next starts when it ends, for every change since. */
		if (!f->again)
			snprintf(f->again_cause, sizeof(f->again_cause), "%s", cause);
		f->again_all = f->again ? f->again_all || !cdi_only : !cdi_only;
		f->again = true;
		return;
	}
	sr = calloc(1, sizeof(*sr));
	if (!sr) {
		log_msg("CDI: out of memory: the specs are not read again");
		apply(d, cdi_only, cause);
		return;
	}
	sr->w = (struct work){
		.run = spec_read_run, .done = spec_read_done, .free_fn = spec_read_free};
	sr->d = d;
	sr->cdi_only = cdi_only;
	snprintf(sr->cause, sizeof(sr->cause), "%s", cause);
	r = work_submit(&d->loop, &sr->w, follow_cdi_deadline_ms());
	if (r < 0) {
		log_msg("CDI: no work thread to read the specs (%s): resolving with the specs as "
			"last read",
			strerror(-r));
		free(sr);
		apply(d, cdi_only, cause);
		return;
	}
	f->reading = true;
}

/*
 * Resolve what is followed again. Where a cdi: selector is followed and a spec may have
 * changed (cdi_only: a spec directory's event; or none read yet), the specs are read
 * first, off the loop; a uevent alone resolves at once against the specs as last read.
 */
static void refresh(struct devwld *d, bool cdi_only, const char *cause)
{
	struct follow *f = d->follow;

	if (!follow_cdi_needed(d, attach_following_cdi(d))) {
		set_specs(d, NULL);
		apply(d, cdi_only, cause);
		return;
	}
	if (cdi_only || !f->cdi) {
		read_specs(d, cdi_only, cause);
		return;
	}
	apply(d, cdi_only, cause);
}

/* Anything to follow: a binding, or a device attached by selector. */
static bool following(const struct devwld *d)
{
	return d->bindings.n || attach_following(d);
}

static void free_source(struct source *src)
{
	free(src);
}

static void close_sources(struct devwld *d)
{
	struct follow *f = d->follow;

	if (f->nl)
		loop_destroy(&d->loop, f->nl);
	if (f->ino)
		loop_destroy(&d->loop, f->ino);
	f->nl = f->ino = NULL;
	for (size_t i = 0; i < n_dirs(d); i++)
		f->wd[i] = -1;
	/* Unwatched, they would grow stale: each resolution reads its own meanwhile. */
	set_specs(d, NULL);
	f->again = false;
}

static void nl_ready(struct devwld *d, struct source *src, int revents);
static void ino_ready(struct devwld *d, struct source *src, int revents);

static struct source *new_source(int fd, void (*ready)(struct devwld *, struct source *, int))
{
	struct source *src = calloc(1, sizeof(*src));

	if (!src) {
		close(fd);
		return NULL;
	}
	src->fd = fd;
	src->ready = ready;
	src->free_fn = free_source;
	return src;
}

/* The receive buffer asked for; *ret_force: past rmem_max (SO_RCVBUFFORCE, root). */
static int rcvbuf_size(bool *ret_force)
{
#ifdef DEVWL_TEST_HOOKS
	/* DEVWLD_TEST_UEVENT_RCVBUF=BYTES (tests/oci/193): a buffer a small burst overflows. */
	const char *v = secure_getenv("DEVWLD_TEST_UEVENT_RCVBUF");

	if (v) {
		*ret_force = false;
		return (int)strtol(v, NULL, 10);
	}
#endif
	/* A burst (a hub of devices plugged in, a udev trigger) must not overflow it. */
	*ret_force = true;
	return UEVENT_RCVBUF;
}

static int open_netlink(void)
{
	struct sockaddr_nl addr = {.nl_family = AF_NETLINK, .nl_groups = 1};
	bool force;
	int size = rcvbuf_size(&force);
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			NETLINK_KOBJECT_UEVENT);

	if (fd < 0)
		return negerrno();
	if (!force || setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int r = negerrno();

		close(fd);
		return r;
	}
	return fd;
}

/* Watch the CDI directories not watched yet; true when one was added. */
static bool watch_dirs(struct devwld *d)
{
	struct follow *f = d->follow;
	bool added = false;

	for (size_t i = 0; f->ino && i < n_dirs(d); i++) {
		if (f->wd[i] >= 0)
			continue;
		f->wd[i] = inotify_add_watch(f->ino->fd, dir_at(d, i), CDI_MASK);
		added |= f->wd[i] >= 0;
	}
	return added;
}

static bool any_missing(const struct devwld *d)
{
	for (size_t i = 0; d->follow->ino && i < n_dirs(d); i++)
		if (d->follow->wd[i] < 0)
			return true;
	return false;
}

static int open_sources(struct devwld *d)
{
	struct follow *f = d->follow;
	int fd = open_netlink();

	if (fd < 0) {
		/* Tried again every REWATCH_MS: said and counted once, not every second
		 * (uevents_start() makes it fatal at the start instead). */
		if (!f->failed && !f->starting) {
			log_msg("ERROR: selectors: cannot receive uevents (%s): devices are not "
				"followed until it can",
				strerror(-fd));
			feature_failed(FEATURE_UEVENTS);
		}
		f->failed = true;
		f->err = fd;
		return fd;
	}
	f->failed = false;
	f->nl = new_source(fd, nl_ready);
	if (!f->nl || loop_arm(&d->loop, f->nl, POLLIN) < 0) {
		if (!f->starting) {
			log_msg("ERROR: selectors: cannot watch uevents: devices are not followed");
			feature_failed(FEATURE_UEVENTS);
		}
		close_sources(d);
		f->failed = true;
		f->err = -ENOMEM;
		return -ENOMEM;
	}
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd >= 0)
		f->ino = new_source(fd, ino_ready);
	if (!f->ino || loop_arm(&d->loop, f->ino, POLLIN) < 0) {
		/* The devices still are: only a spec rewritten waits for a reload. */
		log_msg("selectors: cannot watch the CDI spec directories (%s): a changed spec "
			"applies on reload",
			fd < 0 ? strerror(errno) : "no room");
		if (f->ino)
			loop_destroy(&d->loop, f->ino);
		f->ino = NULL;
	}
	watch_dirs(d);
	return 0;
}

static struct follow *follow_new(struct devwld *d)
{
	struct follow *f = calloc(1, sizeof(*f));

	if (f)
		f->wd = malloc(n_dirs(d) * sizeof(*f->wd));
	if (!f || !f->wd) {
		free(f);
		return NULL;
	}
	for (size_t i = 0; i < n_dirs(d); i++)
		f->wd[i] = -1;
	return d->follow = f;
}

int uevents_tick(struct devwld *d, uint64_t now)
{
	struct follow *f = d->follow;

	if (!f) {
		if (!following(d))
			return -1;
		f = follow_new(d);
		if (!f) {
			log_msg("ERROR: selectors: out of memory: devices are not followed");
			feature_failed(FEATURE_UEVENTS);
			return REWATCH_MS;
		}
	}
	if (d->refollow && f->nl) {
		/* What attach_follow() passed by while a container was busy. */
		d->refollow = false;
		if (attach_follow(d, false, "devices changed during an attach, detach or re-push"))
			state_changed(d);
	}
	if (!following(d)) {
		if (f->nl)
			log_msg("selectors: no binding or device attached by selector left: "
				"uevents no longer followed");
		close_sources(d);
		return -1;
	}
	if (!f->nl) {
		if (open_sources(d) < 0)
			return REWATCH_MS;
		log_msg("selectors: following uevents and the CDI spec directories");
		/* Whatever changed between the binding and now. */
		refresh(d, false, "following started");
		f->rewatch_ms = now + REWATCH_MS;
	}
	if (!any_missing(d))
		return -1;
	if (now >= f->rewatch_ms) {
		f->rewatch_ms = now + REWATCH_MS;
		if (watch_dirs(d))
			refresh(d, true, "a CDI spec directory appeared");
	}
	return (int)(f->rewatch_ms - now);
}

static void rearm(struct devwld *d, struct source *src)
{
	if (loop_arm(&d->loop, src, POLLIN) >= 0)
		return;
	/* The next tick opens them again and resolves everything. */
	log_msg("selectors: cannot watch uevents or CDI specs; opening them again");
	close_sources(d);
}

/*
 * Every message waiting is read, then the bindings are resolved once: what is resolved is
 * sysfs as it is after the last of them, so a number a removal freed and an add took
 * again is revoked unless what now holds it matches too, and a burst (a hub plugged in,
 * a udev trigger) costs one resolution per round, not one per device.
 */
static void nl_ready(struct devwld *d, struct source *src, int revents)
{
	char buf[8192 + 1], cause[PATH_MAX + 96] = "";
	unsigned int more = 0;
	bool lost = false;
	(void)revents;

	/* Bounded: the rest waits for the next round. */
	for (int round = 0; round < 256; round++) {
		struct sockaddr_nl from = {0};
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf) - 1};
		struct msghdr msg = {.msg_name = &from,
				     .msg_namelen = sizeof(from),
				     .msg_iov = &iov,
				     .msg_iovlen = 1};
		struct uevent ev;
		ssize_t n = recvmsg(src->fd, &msg, MSG_DONTWAIT);

		if (n < 0 && errno == ENOBUFS) {
			lost = true;
			continue;
		}
		if (n <= 0)
			break;
		/* The kernel's (port 0) alone; a truncated message is no uevent. */
		if (from.nl_pid != 0 || (msg.msg_flags & MSG_TRUNC))
			continue;
		buf[n] = '\0';
		if (uevent_parse(buf, (size_t)n + (buf[n - 1] != '\0'), &ev) < 0 ||
		    !uevent_matters(&ev))
			continue;
		if (cause[0])
			more++;
		else
			snprintf(cause, sizeof(cause), "uevent %s %s", ev.action, ev.devpath);
	}
	if (lost) {
		/* Repaired at once, but a device may have come and gone unseen meanwhile, and
		 * a buffer of 4 MiB that overflows says the host outruns us: an ERROR, counted,
		 * so that it shows where it goes on. */
		log_msg("ERROR: selectors: uevents were lost (the receive buffer overflowed): "
			"resolving every binding again");
		feature_failed(FEATURE_UEVENTS);
		refresh(d, false, "uevents lost");
	} else if (cause[0]) {
		if (more)
			snprintf(cause + strlen(cause), sizeof(cause) - strlen(cause),
				 " and %u more", more);
		refresh(d, false, cause);
	}
	rearm(d, src);
}

static void ino_ready(struct devwld *d, struct source *src, int revents)
{
	union {
		char buf[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)];
		struct inotify_event align;
	} u;
	struct follow *f = d->follow;
	char cause[PATH_MAX + 64] = "";
	(void)revents;

	for (int round = 0; round < 16; round++) {
		ssize_t n = read(src->fd, u.buf, sizeof(u.buf));

		if (n <= 0)
			break;
		for (char *p = u.buf; p < u.buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
			const char *dir = "?";

			for (size_t i = 0; i < n_dirs(d); i++)
				if (f->wd[i] == ev->wd) {
					dir = dir_at(d, i);
					if (ev->mask & IN_IGNORED)
						f->wd[i] = -1; /* gone: looked for again */
				}
			if (!cause[0] || (ev->mask & IN_Q_OVERFLOW))
				snprintf(cause, sizeof(cause), "%s %s%s%s",
					 ev->mask & IN_Q_OVERFLOW ? "CDI events lost in"
								  : "CDI spec changed:",
					 dir, ev->len ? "/" : "", ev->len ? ev->name : "");
			p += sizeof(*ev) + ev->len;
		}
	}
	/* One resolution for the burst an editor or a rename makes. */
	if (cause[0])
		refresh(d, true, cause);
	rearm(d, src);
}

int uevents_start(struct devwld *d)
{
	struct follow *f = d->follow;
	int r = 0;

	if (!following(d))
		return 0;
	if (!f && !follow_new(d))
		return -ENOMEM;
	f = d->follow;
	f->starting = true;
	(void)uevents_tick(d, now_ms());
	f->starting = false;
	if (!f->nl)
		r = f->err < 0 ? f->err : -EIO;
	return r;
}

void uevents_close(struct devwld *d)
{
	if (!d->follow)
		return;
	close_sources(d);
	free(d->follow->wd);
	free(d->follow);
	d->follow = NULL;
}
