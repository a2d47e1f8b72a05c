/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `devwlctl containers --devices`: the attached devices and who holds each open, in two
 * halves. attach_list_copy() runs on the loop and copies what the listing needs (the
 * lines' text, each device's numbers, the container's mount namespace); attach_list_write()
 * runs on a work thread (loop/work.h, front/control.c), because finding the holders stat()s
 * every open file of the container's processes, and a file on a FUSE filesystem the
 * workload serves can make a stat() wait for as long as its server does not answer:
 * nothing a workload controls runs on the loop (doc/DESIGN.md, section 5.2).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "access.h"
#include "attach.h"
#include "devwld.h"
#include "util.h"

/* One line of the listing: head, then the holders (or "-"), then tail. */
struct listed {
	char *head; /* "ID TYPE MAJOR:MINOR ACCESS PATH " */
	char *tail; /* " SELECTOR", or "" */
	int type;
	uint32_t major, minor;
	ino_t ns_ino; /* the container's mount namespace; 0: no holders looked for */
};

struct attach_listing {
	struct listed *v;
	size_t n;
};

/* Pids whose mount namespace is ns_ino's and that hold a file of the device open. */
static void holders(const struct listed *e, FILE *out)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;
	bool any = false;

	while (proc && (p = readdir(proc))) {
		char path[64];
		struct stat st;
		DIR *fds;
		struct dirent *f;
		int pid = atoi(p->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
		if (stat(path, &st) < 0 || st.st_ino != e->ns_ino)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		while (fds && (f = readdir(fds))) {
			char fd[96];

			/* This stat() reaches the file's filesystem: it may wait on the
			 * workload's FUSE server (off the loop, see above). */
			snprintf(fd, sizeof(fd), "/proc/%d/fd/%.16s", pid, f->d_name);
			if (f->d_name[0] == '.' || stat(fd, &st) < 0 ||
			    !(e->type == DEVWL_DEV_BLOCK ? S_ISBLK(st.st_mode)
							 : S_ISCHR(st.st_mode)) ||
			    st.st_rdev != makedev(e->major, e->minor))
				continue;
			fprintf(out, "%s%d", any ? "," : "", pid);
			any = true;
			break;
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
		closedir(proc);
	if (!any)
		fputc('-', out);
}

void attach_listing_free(struct attach_listing *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].head);
		free(l->v[i].tail);
	}
	free(l->v);
	free(l);
}

/* The mount namespace of one of c's processes, or 0. Its stat() is nsfs's, never the
 * workload's filesystem. */
static ino_t mnt_ns_of(const struct container *c)
{
	char ns[64];
	struct stat st = {0};
	pid_t pid = 0;
	int fd = attach_pidfd(c, &pid);

	if (fd < 0)
		return 0;
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)pid);
	if (stat(ns, &st) < 0)
		st.st_ino = 0;
	close(fd);
	return st.st_ino;
}

static void attach_listing_freep(struct attach_listing **l)
{
	attach_listing_free(*l);
}

struct attach_listing *attach_list_copy(struct devwld *d)
{
	_cleanup_(attach_listing_freep) struct attach_listing *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	for (struct list_head *h = d->containers.next; h != &d->containers; h = h->next) {
		const struct container *c = container_of(h, struct container, link);
		ino_t ns_ino = 0;
		struct listed *v;

		if (!c->nattached)
			continue;
		ns_ino = mnt_ns_of(c);
		v = realloc(l->v, (l->n + c->nattached) * sizeof(*v));
		if (!v)
			return NULL;
		l->v = v;
		for (size_t i = 0; i < c->nattached; i++) {
			const struct attachment *a = &c->attached[i];
			struct listed *e = &l->v[l->n++];
			char acc[4], nums[32] = "- -";

			if (!a->absent)
				snprintf(nums, sizeof(nums), "%c %u:%u",
					 a->type == DEVWL_DEV_BLOCK ? 'b' : 'c', a->major,
					 a->minor);
			*e = (struct listed){.type = a->type,
					     .major = a->major,
					     .minor = a->minor,
					     .ns_ino = a->absent ? 0 : ns_ino};
			if (asprintf(&e->head, "%s %s %s %s%s%s ", c->id, nums,
				     devwl_access_text(a->access, acc), a->path,
				     a->lapsed ? " (lapsed)" : "",
				     a->absent ? " (waiting)" : "") < 0)
				e->head = NULL;
			/* Last: a selector may hold blanks (a loop file's path). */
			if (asprintf(&e->tail, "%s%s", a->selector ? " " : "",
				     a->selector ? a->selector : "") < 0)
				e->tail = NULL;
			if (!e->head || !e->tail)
				return NULL;
		}
	}
	return TAKE_PTR(l);
}

void attach_list_write(const struct attach_listing *l, FILE *out)
{
	for (size_t i = 0; i < l->n; i++) {
		fputs(l->v[i].head, out);
		if (l->v[i].ns_ino)
			holders(&l->v[i], out);
		else
			fputc('-', out);
		fputs(l->v[i].tail, out);
		fputc('\n', out);
	}
	fputs(".\n", out);
}
