/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recorder and the advice of learn mode (learn.h). A device is kept by its numbers,
 * with the union of the access granted and a few words per distinct way it was touched;
 * its name is the first of these that resolves, through the selectors' own resolvers, to
 * rules covering it: its identity where it has one (a loop device's backing file, the CDI
 * device that is this device alone, the USB device above it, udev's by-id link), then
 * its node in /dev, then, for a node of a
 * devpts instance (made anew per session, its number never the same twice), its major's
 * name. Anything else is named by numbers: a name that might mean another device next
 * time is worse than none.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "array.h"
#include "cdi.h"
#include "jsonutil.h"
#include "learn.h"
#include "nodepath.h"
#include "sysfsid.h"
#include "util.h"

#ifndef DEVPTS_SUPER_MAGIC
#define DEVPTS_SUPER_MAGIC 0x1cd1
#endif

/* Distinct ways one device was touched that its comment tells; more are counted. */
#define HOW_MAX 6

struct seen {
	uint8_t type;
	uint32_t major, minor;
	uint8_t access; /* granted */
	uint8_t refused;
	char *name; /* as named when recorded, or NULL */
	char *how[HOW_MAX];
	size_t n_how, more_how;
};

struct learn {
	struct seen *v;
	size_t n, cap;
};

struct learn *learn_new(void)
{
	return calloc(1, sizeof(struct learn));
}

static void seen_clear(struct seen *s)
{
	free(s->name);
	for (size_t i = 0; i < s->n_how; i++)
		free(s->how[i]);
}

void learn_free(struct learn *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		seen_clear(&l->v[i]);
	free(l->v);
	free(l);
}

size_t learn_count(const struct learn *l)
{
	return l ? l->n : 0;
}

static void read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)size, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* The thread group of thread tid, from /proc (a notification names the thread only). */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

void learn_program_of(pid_t pid, pid_t tid, struct learn_program *ret)
{
	char path[64];
	ssize_t n;

	if (pid <= 0)
		pid = tgid_of(tid);
	/* The process's name, not its thread's: a thread may have named itself. */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)(pid > 0 ? pid : tid));
	read_line(path, ret->comm, sizeof(ret->comm));
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)tid);
	n = readlink(path, ret->exe, sizeof(ret->exe) - 1);
	ret->exe[n > 0 ? n : 0] = '\0';
	if (!ret->comm[0])
		snprintf(ret->comm, sizeof(ret->comm), "?");
}

static void access_word(uint8_t access, char buf[static 4])
{
	size_t i = 0;

	if (access & DEVWL_ACC_READ)
		buf[i++] = 'r';
	if (access & DEVWL_ACC_WRITE)
		buf[i++] = 'w';
	if (access & DEVWL_ACC_MKNOD)
		buf[i++] = 'm';
	buf[i] = '\0';
}

/* ---- naming a device ------------------------------------------------------------------ */

static const char *dev_root(const struct selector_env *env)
{
	return env && env->dev ? env->dev : "/dev";
}

static const char *sys_root(const struct selector_env *env)
{
	return env && env->sysfs ? env->sysfs : "/sys";
}

static bool rule_covers(const struct devwl_rule *r, uint8_t type, uint32_t major, uint32_t minor)
{
	return (r->type == DEVWL_DEV_ALL || r->type == type) &&
	       (r->major == DEVWL_ANY || r->major == major) &&
	       (r->minor == DEVWL_ANY || r->minor == minor);
}

/* Does name resolve now to rules one of which covers the device? The one test every name
 * passes, so that a name in the advice is one the loader reads as this device. */
static bool names_device(const struct selector_env *env, const char *name, uint8_t type,
			 uint32_t major, uint32_t minor)
{
	struct selector_env quiet = env ? *env : (struct selector_env){0};
	_cleanup_free_ struct devwl_rule *rules = NULL;
	struct devwl_error err = {0}; /* selector_resolve() writes it on failure */
	size_t n = 0;

	quiet.warn = NULL; /* a candidate that matches nothing is no news */
	if (selector_resolve_rule(&quiet, name, strlen(name), &rules, &n, &err) < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (rule_covers(&rules[i], type, major, minor))
			return true;
	return false;
}

/* Keep candidate (formatted) if it names the device. */
static char *try_name(const struct selector_env *env, uint8_t type, uint32_t major, uint32_t minor,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static char *try_name(const struct selector_env *env, uint8_t type, uint32_t major, uint32_t minor,
		      const char *fmt, ...)
{
	char *name = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&name, fmt, ap);
	va_end(ap);
	if (r < 0)
		return NULL;
	if (!strpbrk(name, " \t\n") && names_device(env, name, type, major, minor))
		return name;
	free(name);
	return NULL;
}

static const char *type_dir(uint8_t type)
{
	return type == DEVWL_DEV_BLOCK ? "block" : "char";
}

/* A loop device (or a partition of one) by the file behind it; its node and numbers say
 * nothing of what it holds. */
static char *name_loop(const struct selector_env *env, uint32_t major, uint32_t minor)
{
	static const char *const where[] = {"loop", "../loop"}; /* a disk's, a partition's */
	char path[PATH_MAX], file[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(where); i++) {
		char *name;

		snprintf(path, sizeof(path), "%s/dev/block/%u:%u/%s/backing_file", sys_root(env),
			 major, minor, where[i]);
		read_line(path, file, sizeof(file));
		if (file[0] != '/')
			continue;
		name = try_name(env, DEVWL_DEV_BLOCK, major, minor, "loop:%s", file);
		if (name)
			return name;
	}
	return NULL;
}

/* The USB device above it, with its serial where it has one. */
static char *name_usb(const struct selector_env *env, uint8_t type, uint32_t major, uint32_t minor)
{
	char link[PATH_MAX], real[PATH_MAX], attr[PATH_MAX + 16], vid[16], pid[16], serial[128];
	size_t root_len;
	char *slash;

	snprintf(link, sizeof(link), "%s/dev/%s/%u:%u", sys_root(env), type_dir(type), major,
		 minor);
	if (!realpath(link, real) || !realpath(sys_root(env), link))
		return NULL;
	root_len = strlen(link);
	while (strlen(real) > root_len && (slash = strrchr(real, '/'))) {
		snprintf(attr, sizeof(attr), "%s/idVendor", real);
		read_line(attr, vid, sizeof(vid));
		snprintf(attr, sizeof(attr), "%s/idProduct", real);
		read_line(attr, pid, sizeof(pid));
		if (vid[0] && pid[0]) {
			char *name = NULL;

			snprintf(attr, sizeof(attr), "%s/serial", real);
			read_line(attr, serial, sizeof(serial));
			if (serial[0])
				name = try_name(env, type, major, minor, "usb:%s:%s:%s", vid, pid,
						serial);
			return name ? name
				    : try_name(env, type, major, minor, "usb:%s:%s", vid, pid);
		}
		*slash = '\0';
	}
	return NULL;
}

static bool is_node(const struct stat *st, uint8_t type, uint32_t major, uint32_t minor)
{
	return (type == DEVWL_DEV_BLOCK ? S_ISBLK(st->st_mode) : S_ISCHR(st->st_mode)) &&
	       st->st_rdev == makedev(major, minor);
}

/* The first entry of dir, in name order, whose node (the link's target where follow) is
 * the device; NULL if none. */
static char *find_node(const char *dir, bool follow, uint8_t type, uint32_t major, uint32_t minor)
{
	struct dirent **ents = NULL;
	char *found = NULL;
	int n = scandir(dir, &ents, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (!found && ents[i]->d_name[0] != '.' &&
		    (follow ? stat(path, &st) : lstat(path, &st)) == 0 &&
		    is_node(&st, type, major, minor))
			found = strdup(ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return found;
}

/* udev's by-id link: the name the device keeps wherever it is plugged. */
static char *name_by_id(const struct selector_env *env, uint8_t type, uint32_t major,
			uint32_t minor)
{
	static const char *const dirs[] = {"disk", "serial", "input", "snd", "v4l"};

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char dir[PATH_MAX];
		_cleanup_free_ char *link = NULL;

		snprintf(dir, sizeof(dir), "%s/%s/by-id", dev_root(env), dirs[i]);
		link = find_node(dir, true, type, major, minor);
		if (link) {
			char *name = try_name(env, type, major, minor, "by-id:%s", link);
			if (name)
				return name;
		}
	}
	return NULL;
}

/* The major's name in /proc/devices, in the section of its type. */
static char *major_name(uint8_t type, uint32_t major)
{
	const char *section = type == DEVWL_DEV_BLOCK ? "Block devices:" : "Character devices:";
	FILE *f = fopen("/proc/devices", "re");
	char line[256], name[200];
	bool in = false;
	char *found = NULL;
	unsigned int m;

	while (f && !found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		/* "Character devices:", then "  1 mem" lines, a blank one, "Block devices:". */
		if (line[0] && line[strlen(line) - 1] == ':')
			in = strcmp(line, section) == 0;
		else if (in && sscanf(line, "%u %199s", &m, name) == 2 && m == major)
			found = strdup(name);
	}
	if (f)
		fclose(f);
	return found;
}

/* The majors of the Unix98 ptys' other sides (the kernel's UNIX98_PTY_SLAVE_MAJOR and
 * the 7 after it): every devpts instance's nodes, a container's too. */
#define PTS_MAJOR_FIRST 136
#define PTS_MAJOR_LAST	143

/* Its major's name (char-pts), where the kernel says it has one. */
static char *name_major(const struct selector_env *env, uint8_t type, uint32_t major,
			uint32_t minor)
{
	_cleanup_free_ char *m = major_name(type, major);

	return m ? try_name(env, type, major, minor, "%s-%s", type_dir(type), m) : NULL;
}

/* Its node under /dev (top level first, then one directory down): /dev/fuse, /dev/net/tun.
 * A node of a devpts instance is named by its major instead: that number is the
 * session's. A container's devpts is not the host's, so a pty's other side is known by its
 * major, never by a node found or not under the host's /dev/pts. */
static char *name_node(const struct selector_env *env, uint8_t type, uint32_t major, uint32_t minor)
{
	struct dirent **ents = NULL;
	_cleanup_free_ char *node = NULL;
	char *name = NULL;
	int n;

	if (type == DEVWL_DEV_CHAR && major >= PTS_MAJOR_FIRST && major <= PTS_MAJOR_LAST)
		return name_major(env, type, major, minor);
	node = find_node(dev_root(env), false, type, major, minor);
	if (node)
		return try_name(env, type, major, minor, "%s/%s", dev_root(env), node);
	n = scandir(dev_root(env), &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char dir[PATH_MAX];
		struct statfs sf;

		snprintf(dir, sizeof(dir), "%s/%s", dev_root(env), ents[i]->d_name);
		if (!name && ents[i]->d_type == DT_DIR && ents[i]->d_name[0] != '.' &&
		    (node = find_node(dir, false, type, major, minor))) {
			if (statfs(dir, &sf) == 0 && sf.f_type == DEVPTS_SUPER_MAGIC) {
				name = name_major(env, type, major, minor);
			} else {
				name = try_name(env, type, major, minor, "%s/%s", dir, node);
			}
			free(TAKE_PTR(node));
		}
		free(ents[i]);
	}
	free(ents);
	return name;
}

/* The CDI device (cdi.h) that is this device and nothing else: the name an operator gave
 * it, the same on every host whose spec says so. One that is more than it (a GPU's
 * several nodes) would grant more than the workload touched. */
static char *name_cdi(const struct selector_env *env, uint8_t type, uint32_t major, uint32_t minor)
{
	struct cdi_registry *reg = NULL;
	char kind[512];
	int r;

	if (env && env->cdi)
		r = cdi_name_of(env->cdi, type, major, minor, kind, sizeof(kind));
	else {
		r = env && env->cdi_dirs
			    ? cdi_load(env->cdi_dirs, env->n_cdi_dirs, &reg)
			    : cdi_load(cdi_default_dirs, ARRAY_SIZE(cdi_default_dirs), &reg);
		if (r >= 0)
			r = cdi_name_of(reg, type, major, minor, kind, sizeof(kind));
		cdi_free(reg);
	}
	return r < 0 ? NULL : try_name(env, type, major, minor, "cdi:%s", kind);
}

/* The device's most stable name that resolves to it now, or NULL: its numbers. */
static char *name_device(const struct selector_env *env, uint8_t type, uint32_t major,
			 uint32_t minor)
{
	char *name;

	if (type == DEVWL_DEV_BLOCK && sysfsid_is_loop(sys_root(env), major, minor))
		return name_loop(env, major, minor);
	name = name_cdi(env, type, major, minor);
	if (!name)
		name = name_usb(env, type, major, minor);
	if (!name)
		name = name_by_id(env, type, major, minor);
	if (!name)
		name = name_node(env, type, major, minor);
	return name;
}

/* ---- recording ------------------------------------------------------------------------ */

static struct seen *find_seen(struct learn *l, uint8_t type, uint32_t major, uint32_t minor)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].type == type && l->v[i].major == major && l->v[i].minor == minor)
			return &l->v[i];
	if (devwl_array_reserve(&l->v, &l->cap, l->n + 1, sizeof(*l->v)) < 0)
		return NULL;
	l->v[l->n] = (struct seen){.type = type, .major = major, .minor = minor};
	return &l->v[l->n++];
}

int learn_record(struct learn *l, const struct devwl_event *ev, const struct learn_program *prog,
		 const struct selector_env *env)
{
	char acc[4], *how = NULL;
	struct seen *s;

	if (!ev->type || (ev->type != DEVWL_DEV_CHAR && ev->type != DEVWL_DEV_BLOCK))
		return 0;
	s = find_seen(l, (uint8_t)ev->type, ev->major, ev->minor);
	if (!s)
		return -ENOMEM;
	/* Granted, or granted and failed for another reason (ENXIO): the workload needs the
	 * grant to see the same answer. Refused: the ceiling's. */
	if (ev->verdict == DEVWL_VERDICT_DENY)
		s->refused |= (uint8_t)ev->access;
	else
		s->access |= (uint8_t)ev->access;
	if (!s->name && ev->verdict != DEVWL_VERDICT_DENY)
		s->name = name_device(env, s->type, s->major, s->minor);
	access_word((uint8_t)ev->access, acc);
	if (asprintf(&how, "%s %s%s by %s%s%s%s", ev->syscall ? ev->syscall : "?",
		     acc[0] ? acc : "-", ev->verdict == DEVWL_VERDICT_DENY ? " (refused)" : "",
		     prog->comm, prog->exe[0] ? " (" : "", prog->exe, prog->exe[0] ? ")" : "") < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_how; i++)
		if (!strcmp(s->how[i], how)) {
			free(how);
			return 0;
		}
	if (s->n_how < HOW_MAX)
		s->how[s->n_how++] = how;
	else {
		s->more_how++;
		free(how);
	}
	return 0;
}

/* ---- the advice ----------------------------------------------------------------------- */

/* One rule of the advice: devices of one name, or one device by its numbers. */
struct advice_rule {
	char *text; /* "allow NAME ACCESS" */
	bool selector;
	char *why;
};

static int cmp_rule(const void *a, const void *b)
{
	const struct advice_rule *x = a, *y = b;

	/* Plain rules and device names first: selector rules must come last (policysel.h). */
	if (x->selector != y->selector)
		return x->selector ? 1 : -1;
	return strcmp(x->text, y->text);
}

/* Is every rule name+access resolves to within what ceiling allows? check is a child of
 * ceiling that denies all but what it was given: an allow its parent does not hold is
 * refused (EPERM), as the kernel refuses it. */
static bool within(struct devwl_node *check, const struct selector_env *env, const char *text)
{
	_cleanup_free_ struct devwl_rule *rules = NULL;
	struct devwl_error err = {0};
	size_t n = 0;

	if (selector_resolve_rule(env, text, strlen(text), &rules, &n, &err) < 0 || n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (devwl_node_update(check, DEVWL_FILE_ALLOW, &rules[i]) < 0)
			return false;
	return true;
}

static int append(char **buf, const char *sep, const char *text)
{
	char *joined = NULL;

	if (asprintf(&joined, "%s%s%s", *buf ? *buf : "", *buf ? sep : "", text) < 0)
		return -ENOMEM;
	free(*buf);
	*buf = joined;
	return 0;
}

/* The rules of the advice, one per name, into *ret (caller frees each and the array). */
static int advise_rules(const struct learn *l, struct devwl_node *check,
			const struct selector_env *env,
			void (*warn)(void *userdata, const char *msg), void *userdata,
			struct advice_rule **ret, size_t *ret_n)
{
	struct advice_rule *v = calloc(l->n ? l->n : 1, sizeof(*v));
	size_t n = 0;
	int r = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < l->n; i++) {
		const struct seen *s = &l->v[i];
		char acc[4], msg[1024], num[DEVWL_RULE_STR_MAX];
		_cleanup_free_ char *name = NULL, *text = NULL, *note = NULL;
		size_t j;

		snprintf(num, sizeof(num), "%c %u:%u", s->type == DEVWL_DEV_BLOCK ? 'b' : 'c',
			 s->major, s->minor);
		if (s->refused & ~s->access) {
			access_word(s->refused & ~s->access, acc);
			snprintf(msg, sizeof(msg),
				 "%s %s (%s): refused by the ceiling, not learned", num, acc,
				 s->n_how ? s->how[0] : "?");
			if (warn)
				warn(userdata, msg);
		}
		if (!s->access)
			continue;
		access_word(s->access, acc);
		/* Named again now: a name that no longer covers the device (a loop device
		 * detached since, a link gone) would grant nothing, or another device; one
		 * that came since (a CDI spec written) is the better. The name it had then
		 * is kept if it still names it. */
		name = name_device(env, s->type, s->major, s->minor);
		if (!name && s->name && names_device(env, s->name, s->type, s->major, s->minor))
			name = strdup(s->name);
		if (name) {
			if (asprintf(&text, "%s %s", name, acc) < 0)
				text = NULL;
			if (text && !within(check, env, text)) {
				r = asprintf(&note, "%s names more than the ceiling allows", text);
				free(TAKE_PTR(text));
			}
		} else if (s->name) {
			r = asprintf(&note, "%s during the run, no longer", s->name);
		}
		if (r < 0 || (!text && asprintf(&text, "%s %s", num, acc) < 0)) {
			r = -ENOMEM;
			break;
		}
		r = 0;
		for (j = 0; j < n; j++)
			if (!strcmp(v[j].text + strlen("allow "), text))
				break;
		if (j == n) {
			if (asprintf(&v[n].text, "allow %s", text) < 0) {
				r = -ENOMEM;
				break;
			}
			v[n++].selector = selector_is(text, strlen(text));
		}
		for (size_t k = 0; r >= 0 && k < s->n_how; k++)
			r = append(&v[j].why, "; ", s->how[k]);
		if (r >= 0 && s->more_how) {
			snprintf(msg, sizeof(msg), "and %zu more", s->more_how);
			r = append(&v[j].why, "; ", msg);
		}
		/* Several devices behind one name: say which. */
		if (r >= 0 && (name || note)) {
			snprintf(msg, sizeof(msg), "(%s%s%s)", num, note ? ": " : "",
				 note ? note : "");
			r = append(&v[j].why, " ", msg);
		}
	}
	if (r < 0) {
		for (size_t i = 0; i < n; i++) {
			free(v[i].text);
			free(v[i].why);
		}
		free(v);
		return r;
	}
	qsort(v, n, sizeof(*v), cmp_rule);
	*ret = v;
	*ret_n = n;
	return 0;
}

/* The advice's nodes: node_path's ancestors, bare (copies of the allow-all root), then it. */
static int advice_json(const char *node_path, const struct advice_rule *v, size_t n, bool needs_cap,
		       char **ret_json)
{
	struct json_object *top = json_object_new_object(), *nodes = json_object_new_array();
	struct json_object *node = json_object_new_object(), *rules = json_object_new_array();
	struct json_object *why = json_object_new_object();
	_cleanup_free_ char *path = strdup(node_path);
	int r = -ENOMEM;

	if (!top || !nodes || !node || !rules || !why || !path)
		goto out;
	r = json_add(top, "version", json_object_new_int(1));
	if (r >= 0)
		r = json_add(top, "nodes", json_object_get(nodes));
	for (char *p = path + 1; r >= 0 && *p; p++) {
		struct json_object *anc;

		if (*p != '/')
			continue;
		*p = '\0';
		anc = json_object_new_object();
		r = anc ? json_add(anc, "path", json_object_new_string(path)) : -ENOMEM;
		r = r >= 0 ? json_push(nodes, anc) : (json_object_put(anc), r);
		*p = '/';
	}
	if (r >= 0)
		r = json_add(node, "path", json_object_new_string(node_path));
	if (r >= 0)
		r = json_push(rules, json_object_new_string("deny a"));
	for (size_t i = 0; r >= 0 && i < n; i++) {
		r = json_push(rules, json_object_new_string(v[i].text));
		if (r >= 0 && v[i].why)
			r = json_add(why, v[i].text, json_object_new_string(v[i].why));
	}
	if (r >= 0)
		r = json_add(node, "rules", json_object_get(rules));
	if (r >= 0 && n)
		r = json_add(node, "why", json_object_get(why));
	/* A waiver the ceiling gave the run holds for the node too (a child inherits it). */
	if (r >= 0 && !needs_cap)
		r = json_add(node, "mknod_needs_cap", json_object_new_boolean(false));
	if (r >= 0)
		r = json_push(nodes, json_object_get(node));
	if (r >= 0) {
		const char *s = json_object_to_json_string_ext(
			top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
				     JSON_C_TO_STRING_NOSLASHESCAPE);
		*ret_json = s ? malloc(strlen(s) + 2) : NULL;
		if (*ret_json)
			snprintf(*ret_json, strlen(s) + 2, "%s\n", s);
		r = *ret_json ? 0 : -ENOMEM;
	}
out:
	json_object_put(top);
	json_object_put(nodes);
	json_object_put(node);
	json_object_put(rules);
	json_object_put(why);
	return r;
}

int learn_advise(const struct learn *l, struct devwl_policy *policy, struct devwl_node *ceiling,
		 const char *node_path, const struct selector_env *env,
		 void (*warn)(void *userdata, const char *msg), void *userdata, char **ret_json)
{
	const char *cpath = devwl_node_path(ceiling);
	_cleanup_free_ char *check_path = NULL, *json = NULL;
	struct advice_rule *v = NULL;
	struct devwl_node *check;
	size_t n = 0;
	int r;

	if (devwl_node_path_valid(node_path) < 0)
		return -EINVAL;
	if (asprintf(&check_path, "%s/.devwl-learn-check", strcmp(cpath, "/") ? cpath : "") < 0)
		return -ENOMEM;
	r = devwl_policy_mkdir(policy, check_path);
	if (r < 0)
		return r;
	check = devwl_policy_find(policy, check_path);
	r = check ? devwl_node_write(check, DEVWL_FILE_DENY, "a", 1, NULL) : -ENOMEM;
	if (r >= 0)
		r = advise_rules(l, check, env, warn, userdata, &v, &n);
	(void)devwl_policy_rmdir(policy, check_path);
	if (r < 0)
		return r;
	r = advice_json(node_path, v, n, devwl_node_mknod_needs_cap(ceiling), &json);
	for (size_t i = 0; i < n; i++) {
		free(v[i].text);
		free(v[i].why);
	}
	free(v);
	if (r >= 0)
		*ret_json = TAKE_PTR(json);
	return r;
}
