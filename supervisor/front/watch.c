/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reload when the policy file changes. A Kubernetes ConfigMap volume never writes the
 * file: kubelet fills a new hidden directory, points a new symlink at it and renames
 * that over "..data" (the file itself is a symlink through "..data"), so the event to
 * see is a rename in the file's directory, not a write to the file. We watch the
 * directory, not the file, which covers that, editors that rename a new file into
 * place, and plain writes.
 *
 * Events come in bursts (kubelet makes several entries; an editor writes, renames,
 * chmods), so a check waits until the directory has been quiet for DEBOUNCE_MS, but
 * never longer than MAX_DELAY_MS after the first event. A check reloads only when the
 * text differs from what is loaded, and does not retry a text that already failed, so
 * unrelated activity in the directory costs a read, not a reload or a log line.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "clock.h"
#include "devwld.h"
#include "log.h"
#include "policy.h"
#include "store.h"
#include "util.h"
#include "watch.h"

#define DEBOUNCE_MS  200
#define MAX_DELAY_MS 2000
/* While the directory itself is gone, look for it again this often. */
#define REWATCH_MS 1000

struct watch {
	struct source src; /* inotify on the policy file's directory */
	int wd;		   /* -1: none (the directory is gone) */
	uint64_t due_ms;   /* debounced reload check due then; 0: none */
	uint64_t first_ms;
	char *tried; /* the text of the last reload the watch tried */
	size_t tried_len;
};

#define WATCH_MASK                                                                                 \
	(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_DELETE | IN_ATTRIB |        \
	 IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

static char *dir_of(const char *file)
{
	const char *slash = strrchr(file, '/');

	if (!slash)
		return strdup(".");
	if (slash == file)
		return strdup("/");
	return strndup(file, (size_t)(slash - file));
}

static const char *base_of(const char *file)
{
	const char *slash = strrchr(file, '/');

	return slash ? slash + 1 : file;
}

static int add_watch(struct devwld *d)
{
	struct watch *w = d->watch;
	_cleanup_free_ char *dir = dir_of(d->cfg.policy_file);

	if (!dir)
		return -ENOMEM;
	w->wd = inotify_add_watch(w->src.fd, dir, WATCH_MASK);
	return w->wd < 0 ? negerrno() : 0;
}

static void watch_ready(struct devwld *d, struct source *src, int revents);

int watch_open(struct devwld *d)
{
	struct watch *w;
	int r;

	if (!d->cfg.policy_file || !d->cfg.watch_policy)
		return 0;
	w = d->watch = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->wd = -1;
	w->src.ready = watch_ready;
	w->src.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->src.fd < 0)
		return negerrno();
	r = add_watch(d);
	if (r < 0)
		return r;
	return loop_arm(&d->loop, &w->src, POLLIN);
}

/* After the loop: the ring that watched it is gone or going. */
void watch_close(struct devwld *d)
{
	struct watch *w = d->watch;

	if (!w)
		return;
	if (w->src.fd >= 0)
		close(w->src.fd);
	free(w->tried);
	free(w);
	d->watch = NULL;
}

static void schedule(struct watch *w, uint64_t now)
{
	if (!w->due_ms)
		w->first_ms = now;
	w->due_ms = now + DEBOUNCE_MS;
	if (w->due_ms > w->first_ms + MAX_DELAY_MS)
		w->due_ms = w->first_ms + MAX_DELAY_MS;
}

/* Names that can change what the path reads: the file, and kubelet's "..data" and
 * "..TIMESTAMP" entries. */
static bool relevant(const struct inotify_event *ev, const char *base)
{
	if (ev->mask & (IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
		return true;
	return ev->len && (!strcmp(ev->name, base) || !strncmp(ev->name, "..", 2));
}

static void watch_ready(struct devwld *d, struct source *src, int revents)
{
	union {
		char buf[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)];
		struct inotify_event align;
	} u;
	struct watch *w = container_of(src, struct watch, src);
	const char *base = base_of(d->cfg.policy_file);
	bool any = false;

	(void)revents;
	/* Bounded: the rest waits for the next round. */
	for (int round = 0; round < 16; round++) {
		ssize_t n = read(w->src.fd, u.buf, sizeof(u.buf));

		if (n <= 0)
			break;
		for (char *p = u.buf; p < u.buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;

			if (ev->mask & IN_IGNORED) {
				/* The directory went away (a ConfigMap volume unmounted?). */
				log_msg("watch: %s's directory is gone; looking for it again",
					d->cfg.policy_file);
				w->wd = -1;
			}
			any = any || relevant(ev, base);
			p += sizeof(*ev) + ev->len;
		}
	}
	if (any)
		schedule(w, now_ms());
	if (loop_arm(&d->loop, &w->src, POLLIN) < 0) {
		log_msg("watch: cannot watch %s any more: it is reloaded on SIGHUP only",
			d->cfg.policy_file);
		watch_close(d);
	}
}

static bool same_text(const char *a, size_t alen, const char *b, size_t blen)
{
	return a && alen == blen && !memcmp(a, b, alen);
}

static void check(struct devwld *d)
{
	struct watch *w = d->watch;
	_cleanup_free_ char *text = NULL;
	char *copy;
	size_t len = 0;

	if (policy_read(d, &text, &len) < 0)
		return;
	if (same_text(d->policy_text, d->policy_len, text, len)) {
		free(w->tried);
		w->tried = NULL;
		return;
	}
	if (same_text(w->tried, w->tried_len, text, len))
		return;
	copy = malloc(len + 1);
	if (!copy) {
		log_msg("watch: out of memory");
		return;
	}
	memcpy(copy, text, len + 1);
	free(w->tried);
	w->tried = TAKE_PTR(text);
	w->tried_len = len;
	log_msg("%s changed: reloading", d->cfg.policy_file);
	policy_apply_text(d, copy, len);
}

int watch_tick(struct devwld *d, uint64_t now)
{
	struct watch *w = d->watch;

	if (!w)
		return -1;
	if (w->wd < 0 && !w->due_ms)
		w->due_ms = now + REWATCH_MS;
	if (!w->due_ms)
		return -1;
	if (now < w->due_ms)
		return (int)(w->due_ms - now);
	w->due_ms = 0;
	if (w->wd < 0) {
		if (add_watch(d) < 0)
			return REWATCH_MS;
		log_msg("watch: watching %s's directory again", d->cfg.policy_file);
	}
	check(d);
	return -1;
}
