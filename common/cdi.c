/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cdi.h"
#include "fileio.h"
#include "util.h"

/* One device as the precedence left it. */
struct entry {
	const struct cdi_spec *spec;
	const struct cdi_dev *dev;
	size_t dir;
	bool conflict;
};

/*
 * A spec file as last parsed, kept while its file stays the same: a refresh after every
 * uevent or spec write reads each spec again, and one at the size and depth limits takes
 * its time to parse. The same is the same (device, inode, size, modification and change
 * time: the change time no one sets by hand) and the same path (its messages name it);
 * what was refused is kept too, with why. Each registry holds a reference; the cache
 * holds one while the entry is listed.
 */
struct cached {
	struct cached *next;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	char *path;
	struct cdi_spec *spec; /* NULL: refused, for err */
	struct devwl_error err;
	unsigned int refs; /* under cache_lock */
};

/* Entries kept, the most recently used first: far more spec files than a host has. */
#define CDI_CACHE_MAX 64

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cached *cache;
static atomic_ulong parses;

unsigned long cdi_parses(void)
{
	return atomic_load(&parses);
}

static void cached_unref(struct cached *c)
{
	unsigned int refs;

	if (!c)
		return;
	pthread_mutex_lock(&cache_lock);
	refs = --c->refs;
	pthread_mutex_unlock(&cache_lock);
	if (refs)
		return;
	cdi_spec_free(c->spec);
	free(c->path);
	free(c);
}

static bool same_file(const struct cached *c, const char *path, const struct stat *st)
{
	return c->dev == st->st_dev && c->ino == st->st_ino && c->size == st->st_size &&
	       c->mtime.tv_sec == st->st_mtim.tv_sec && c->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       c->ctime.tv_sec == st->st_ctim.tv_sec && c->ctime.tv_nsec == st->st_ctim.tv_nsec &&
	       !strcmp(c->path, path);
}

/* The entry of path as st says it is now, referenced; NULL: none. */
static struct cached *cache_find(const char *path, const struct stat *st)
{
	struct cached **pp, *c = NULL;

	pthread_mutex_lock(&cache_lock);
	for (pp = &cache; *pp; pp = &(*pp)->next) {
		if (!same_file(*pp, path, st))
			continue;
		c = *pp;
		*pp = c->next; /* to the front */
		c->next = cache;
		cache = c;
		c->refs++;
		break;
	}
	pthread_mutex_unlock(&cache_lock);
	return c;
}

/* List c (referenced by the caller, which keeps its reference) in place of path's older
 * entry, and past CDI_CACHE_MAX drop the least recently used. */
static void cache_add(struct cached *c)
{
	struct cached **pp, *gone = NULL, *old = NULL;
	size_t n = 0;

	pthread_mutex_lock(&cache_lock);
	for (pp = &cache; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->path, c->path)) {
			old = *pp;
			*pp = old->next;
			break;
		}
	c->refs++;
	c->next = cache;
	cache = c;
	for (pp = &cache; *pp; pp = &(*pp)->next)
		if (++n == CDI_CACHE_MAX) {
			gone = (*pp)->next;
			(*pp)->next = NULL;
			break;
		}
	pthread_mutex_unlock(&cache_lock);
	cached_unref(old);
	while (gone) {
		struct cached *next = gone->next;

		cached_unref(gone);
		gone = next;
	}
}

struct cdi_registry {
	struct cached **specs;
	size_t n_specs;
	struct entry *ents;
	size_t n_ents;
	char **errors;
	size_t n_errors;
};

static int add_error(struct cdi_registry *reg, const char *msg)
{
	char **nv = realloc(reg->errors, (reg->n_errors + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	reg->errors = nv;
	nv[reg->n_errors] = strdup(msg);
	if (!nv[reg->n_errors])
		return -ENOMEM;
	reg->n_errors++;
	return 0;
}

static bool is_spec_name(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && ((len > 5 && !strcmp(name + len - 5, ".json")) ||
				  (len > 5 && !strcmp(name + len - 5, ".yaml")));
}

/*
 * Whoever can write a spec file, or add and rename files in its directory, chooses the
 * device nodes a cdi: selector grants. So a spec directory, and each spec file in it, is
 * read only if root or our own uid (devwld's) owns it and no one else can write it:
 * devwld(8) SECURITY, as for devwld's own directories. st: the file or directory as
 * opened, so that what was checked is what is read.
 */
static int spec_trusted(const char *path, const struct stat *st, struct devwl_error *err)
{
	const char *what = S_ISDIR(st->st_mode) ? "a CDI spec directory" : "a CDI spec";
	unsigned int mode = st->st_mode & 07777, uid = (unsigned int)geteuid();
	char whose[64] = "root";

	if (uid)
		snprintf(whose, sizeof(whose), "root or uid %u (ours)", uid);
	if (st->st_uid != 0 && st->st_uid != uid)
		return devwl_error_set(err, -EPERM, 0,
				       "%s: not read: owned by uid %u (mode %04o); %s is read only "
				       "if %s owns it and no one else can write it",
				       path, (unsigned int)st->st_uid, mode, what, whose);
	if (mode & 022)
		return devwl_error_set(err, -EPERM, 0,
				       "%s: not read: writable by %s (mode %04o, owner uid %u); %s "
				       "is read only if %s owns it and no one else can write it",
				       path, (mode & 002) ? "everyone" : "its group", mode,
				       (unsigned int)st->st_uid, what, whose);
	return 0;
}

/* The spec name in the directory dfd (path: the two, for messages), parsed or refused:
 * a reference to its cache entry (NULL and -ENOMEM: out of memory). The checks of the file
 * are made every time; the parse, only when the file changed (struct cached). */
static int read_spec(int dfd, const char *name, const char *path, struct cached **ret,
		     struct devwl_error *err)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	_cleanup_free_ char *text = NULL;
	struct cached *c = NULL;
	struct stat st;
	ssize_t len;
	int r;

	*ret = NULL;
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = negerrno();
		return devwl_error_set(err, r, 0, "%s: %s", path, strerror(-r));
	}
	/* A directory or a FIFO named like a spec is none. */
	if (!S_ISREG(st.st_mode))
		return devwl_error_set(err, -EINVAL, 0, "%s: not a regular file", path);
	if ((r = spec_trusted(path, &st, err)) < 0)
		return r;
	c = cache_find(path, &st);
	if (c) {
		*ret = c;
		if (!c->spec)
			*err = c->err;
		return c->spec ? 0 : c->err.code;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(path))) {
		free(c);
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	}
	*c = (struct cached){.dev = st.st_dev,
			     .ino = st.st_ino,
			     .size = st.st_size,
			     .mtime = st.st_mtim,
			     .ctime = st.st_ctim,
			     .path = c->path,
			     .refs = 1};
	/* Read whole, at most 1 MiB, before the parser sees a byte. */
	atomic_fetch_add(&parses, 1);
	len = devwl_read_all(fd, CDI_SPEC_SIZE_MAX, &text);
	if (len < 0)
		r = devwl_error_set(&c->err, (int)len, 0, "%s: %s", path,
				    len == -E2BIG ? "larger than 1 MiB" : strerror((int)-len));
	else
		r = cdi_spec_parse(text, (size_t)len, !strcmp(path + strlen(path) - 5, ".yaml"),
				   path, &c->spec, &c->err);
	/* What was read under another size or time is no answer for this one. */
	if (r != -ENOMEM && (len < 0 || (size_t)len == (size_t)st.st_size))
		cache_add(c);
	*ret = c;
	if (r < 0)
		*err = c->err;
	return r;
}

static struct entry *find(struct cdi_registry *reg, const char *kind, const char *name)
{
	for (size_t i = 0; i < reg->n_ents; i++)
		if (!strcmp(reg->ents[i].spec->kind, kind) && !strcmp(reg->ents[i].dev->name, name))
			return &reg->ents[i];
	return NULL;
}

/* Enter the devices of spec, read from directory dir (the dirs are read in order). */
static int enter(struct cdi_registry *reg, const struct cdi_spec *spec, size_t dir)
{
	for (size_t i = 0; i < spec->n_devs; i++) {
		struct entry *e = find(reg, spec->kind, spec->devs[i].name);
		char msg[PATH_MAX * 2 + 512];

		if (e && e->dir == dir) {
			snprintf(msg, sizeof(msg),
				 "%s: conflicting device %s=%s: also in %s; the device is ignored",
				 spec->file, spec->kind, spec->devs[i].name, e->spec->file);
			e->conflict = true;
			if (add_error(reg, msg) < 0)
				return -ENOMEM;
			continue;
		}
		if (!e) {
			struct entry *nv = realloc(reg->ents, (reg->n_ents + 1) * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			reg->ents = nv;
			e = &nv[reg->n_ents++];
			e->conflict = false;
		}
		/* A conflict stays: which copy was meant is unknown, whatever a later
		 * directory says (the CDI's library drops such a device too). */
		*e = (struct entry){
			.spec = spec, .dev = &spec->devs[i], .dir = dir, .conflict = e->conflict};
	}
	return 0;
}

static int load_dir(struct cdi_registry *reg, const char *dir, size_t index)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent **names = NULL;
	struct devwl_error untrusted = {0};
	struct stat st;
	int n = -1, r = 0;

	/* Nothing of a directory that fails the check is read, not even its names. */
	if (dfd >= 0 && fstat(dfd, &st) == 0) {
		if (spec_trusted(dir, &st, &untrusted) < 0)
			return add_error(reg, untrusted.msg);
		n = scandirat(dfd, ".", &names, NULL, alphasort);
	}
	if (n < 0) {
		char msg[PATH_MAX + 128];

		if (errno == ENOENT)
			return 0;
		snprintf(msg, sizeof(msg), "%s: %s", dir, strerror(errno));
		return add_error(reg, msg);
	}
	for (int i = 0; i < n; i++) {
		_cleanup_free_ struct dirent *ent = names[i];
		char path[PATH_MAX];
		struct devwl_error err = {0};
		struct cached *spec = NULL, **nv;

		if (r < 0 || !is_spec_name(ent->d_name) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name) >= sizeof(path))
			continue;
		if (read_spec(dfd, ent->d_name, path, &spec, &err) < 0) {
			cached_unref(spec);
			r = err.code == -ENOMEM ? -ENOMEM : add_error(reg, err.msg);
			continue;
		}
		nv = realloc(reg->specs, (reg->n_specs + 1) * sizeof(*nv));
		if (!nv) {
			cached_unref(spec);
			r = -ENOMEM;
			continue;
		}
		reg->specs = nv;
		nv[reg->n_specs++] = spec;
		r = enter(reg, spec->spec, index);
	}
	free(names);
	return r;
}

const char *const cdi_default_dirs[] = {"/etc/cdi", "/var/run/cdi"};

int cdi_load(const char *const *dirs, size_t n, struct cdi_registry **ret)
{
	struct cdi_registry *reg = calloc(1, sizeof(*reg));
	int r;

	if (!reg)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		r = load_dir(reg, dirs[i], i);
		if (r < 0) {
			cdi_free(reg);
			return r;
		}
	}
	*ret = reg;
	return 0;
}

void cdi_free(struct cdi_registry *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->n_specs; i++)
		cached_unref(reg->specs[i]);
	for (size_t i = 0; i < reg->n_errors; i++)
		free(reg->errors[i]);
	free(reg->specs);
	free(reg->ents);
	free(reg->errors);
	free(reg);
}

size_t cdi_n_errors(const struct cdi_registry *reg)
{
	return reg->n_errors;
}

const char *cdi_error(const struct cdi_registry *reg, size_t i)
{
	return i < reg->n_errors ? reg->errors[i] : NULL;
}

/* One node's rule: the spec's numbers, the rest from the node on the host. */
static int node_rule(const struct cdi_spec *spec, const struct cdi_node *n, uint8_t access,
		     struct rulevec *rv, struct devwl_error *err)
{
	struct devwl_rule rule = {.type = n->type, .major = n->major, .minor = n->minor};

	rule.access = n->access & access;
	if (!rule.access || n->no_rule)
		return 0;
	if (!n->type || !n->has_major || !n->has_minor) {
		struct stat st;
		uint8_t type;

		if (stat(n->path, &st) < 0) {
			int r = negerrno();
			return devwl_error_set(err, r, 0, "%s: %s (%s.hostPath): %s", spec->file,
					       n->path, n->field, strerror(-r));
		}
		if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
			return devwl_error_set(err, -EINVAL, 0,
					       "%s: %s (%s.hostPath): not a device node",
					       spec->file, n->path, n->field);
		type = S_ISCHR(st.st_mode) ? DEVWL_DEV_CHAR : DEVWL_DEV_BLOCK;
		if (n->type && n->type != type)
			return devwl_error_set(
				err, -EINVAL, 0, "%s: %s.type says %s, %s is a %s device",
				spec->file, n->field,
				n->type == DEVWL_DEV_CHAR ? "character" : "block", n->path,
				type == DEVWL_DEV_CHAR ? "character" : "block");
		rule.type = type;
		if (!n->has_major)
			rule.major = major(st.st_rdev);
		if (!n->has_minor)
			rule.minor = minor(st.st_rdev);
	}
	return rulevec_add(rv, &rule) < 0 ? devwl_error_set(err, -ENOMEM, 0, "out of memory") : 0;
}

static int entry_rules(const struct entry *e, uint8_t access, struct rulevec *rv,
		       struct devwl_error *err)
{
	int r;

	for (size_t i = 0; i < e->dev->n_nodes; i++)
		if ((r = node_rule(e->spec, &e->dev->nodes[i], access, rv, err)) < 0)
			return r;
	for (size_t i = 0; i < e->spec->n_common; i++)
		if ((r = node_rule(e->spec, &e->spec->common[i], access, rv, err)) < 0)
			return r;
	return 0;
}

int cdi_resolve(const struct cdi_registry *reg, const char *kind, const char *name, uint8_t access,
		struct rulevec *rv, struct devwl_error *ret_err)
{
	bool all = !strcmp(name, "*"), conflict = false, found = false;
	int r;

	for (size_t i = 0; i < reg->n_ents; i++) {
		const struct entry *e = &reg->ents[i];

		if (strcmp(e->spec->kind, kind) || (!all && strcmp(e->dev->name, name)))
			continue;
		if (e->conflict) {
			conflict = true;
			continue;
		}
		found = true;
		r = entry_rules(e, access, rv, ret_err);
		if (r < 0)
			return r;
	}
	if (!found && !all)
		return devwl_error_set(ret_err, -ENOENT, 0,
				       conflict ? "CDI device %s=%s is defined twice in one "
						  "directory (a conflict): ignored"
						: "no CDI spec defines the device %s=%s",
				       kind, name);
	rulevec_sort(rv);
	return 0;
}

int cdi_name_of(const struct cdi_registry *reg, uint8_t type, uint32_t major, uint32_t minor,
		char *buf, size_t size)
{
	for (size_t i = 0; reg && i < reg->n_ents; i++) {
		const struct entry *e = &reg->ents[i];
		struct rulevec rv = {0};
		struct devwl_error err = {0};
		bool only = false;
		int r;

		if (e->conflict)
			continue;
		r = entry_rules(e, DEVWL_ACC_MASK, &rv, &err);
		if (r == -ENOMEM) {
			free(rv.v);
			return r;
		}
		only = r >= 0 && rv.n > 0;
		for (size_t k = 0; only && k < rv.n; k++)
			only = rv.v[k].type == type && rv.v[k].major == major &&
			       rv.v[k].minor == minor;
		free(rv.v);
		if (!only)
			continue;
		if ((size_t)snprintf(buf, size, "%s=%s", e->spec->kind, e->dev->name) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	return -ENOENT;
}
