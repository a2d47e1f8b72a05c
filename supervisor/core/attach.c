/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hot-plug: a device given to a running container, and taken back.
 *
 * An attachment is two things that must never exist one without the other: the grant on
 * the container's node, and the device node in the container's filesystem. The grant
 * comes first and is in force (the handlers' copies renewed, a kernel-mode cgroup
 * programmed again) before the node appears, so the device policy never refuses a node
 * the workload finds (only its first instant, mode 0000 until owner and mode are set, is
 * EACCES to a process without CAP_DAC_OVERRIDE); a node that cannot be made takes the
 * grant back. Detach removes the node first.
 *
 * The grant goes to a node of the container's own: one made for it alone, or else a leaf
 * made under the node it maps to, so that a grant never reaches the other containers of
 * that node, nor outlives the container in a node the policy file or devwlctl made. The
 * leaf starts as a copy of its parent, as a new cgroup does, and the parent's rules bound
 * the grant: an attach the ancestors refuse is refused, with the one that refuses named.
 *
 * Detach takes back what the grant added, not the whole rule: access the container had
 * before the attach (from its parent, say) stays. Open file descriptors stay valid, as
 * with the kernel's device cgroup: attach-list.c shows who holds them.
 *
 * A device named by a selector (loop:FILE, usb:VID:PID:SERIAL...) is followed by identity
 * after the attach: attach-follow.c moves the grant and the node when its numbers change.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "access.h"
#include "attach.h"
#include "audit-line.h"
#include "devwld.h"
#include "edits.h"
#include "events.h"
#include "explain.h"
#include "follow.h"
#include "log.h"
#include "nodepath.h"
#include "policy.h"
#include "resolve.h"
#include "selector.h"
#include "store.h"
#include "util.h"
#include "work.h"

#define ATTACH_MAX 256 /* per container */
/* How long placing or removing a node in a container's root may take: the walk may meet a
 * filesystem the workload serves that never answers (devwld(8), HOT-PLUG). */
#define HOTPLUG_DEADLINE_MS 5000

struct device {
	int type;
	uint32_t major, minor;
	const char *host_path; /* NULL: none found */
	char buf[PATH_MAX];
	struct stat st; /* of host_path */
};

static char type_char(int type)
{
	return type == DEVWL_DEV_BLOCK ? 'b' : 'c';
}

/* The host's node for numbers, from sysfs's DEVNAME (NULL when there is none). */
static const char *host_node_of(struct device *dev)
{
	char file[96], line[512];
	FILE *f;

	snprintf(file, sizeof(file), "/sys/dev/%s/%u:%u/uevent",
		 dev->type == DEVWL_DEV_BLOCK ? "block" : "char", dev->major, dev->minor);
	f = fopen(file, "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "DEVNAME=", 8))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(dev->buf, sizeof(dev->buf), "/dev/%s", line + 8);
		fclose(f);
		/* The node must be that very device: a name is not proof. */
		if (stat(dev->buf, &dev->st) < 0 ||
		    dev->st.st_rdev != makedev(dev->major, dev->minor) ||
		    !(dev->type == DEVWL_DEV_BLOCK ? S_ISBLK(dev->st.st_mode)
						   : S_ISCHR(dev->st.st_mode)))
			return NULL;
		return dev->buf;
	}
	fclose(f);
	return NULL;
}

/*
 * char-NAME/block-NAME (systemd's names of a driver's majors, as /proc/devices lists
 * them): attach makes one node, so it is the driver's device only when the host has
 * exactly one (block-zram with one zram disk, say); several are listed for the operator
 * to name one.
 */
static int driver_device(const char *text, struct device *dev, struct devwl_error *err)
{
	_cleanup_free_ struct devwl_rule *rules = NULL;
	char dir[32], found[4][24];
	size_t nrules = 0, n = 0;
	struct dirent *e;
	DIR *d;
	int r = devwl_devname_resolve(text, strlen(text), NULL, &rules, &nrules, err);

	if (r < 0)
		return r;
	snprintf(dir, sizeof(dir), "/sys/dev/%s",
		 rules[0].type == DEVWL_DEV_BLOCK ? "block" : "char");
	d = opendir(dir);
	if (!d)
		return devwl_error_set(err, negerrno(), 0, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		unsigned int maj, min;
		char end;

		if (sscanf(e->d_name, "%u:%u%c", &maj, &min, &end) != 2)
			continue;
		for (size_t i = 0; i < nrules; i++) {
			if (rules[i].major != maj)
				continue;
			if (n < ARRAY_SIZE(found))
				snprintf(found[n], sizeof(found[n]), "%u:%u", maj, min);
			n++;
			dev->type = rules[i].type;
			dev->major = maj;
			dev->minor = min;
		}
	}
	closedir(d);
	if (n == 0)
		return devwl_error_set(err, -ENOENT, 0, "%.64s: no device of that driver here",
				       text);
	if (n > 1)
		return devwl_error_set(
			err, -EINVAL, 0,
			"%.64s names %zu devices here (%s, %s%s%s%s%s): attach makes "
			"one node: name its /dev path or \"%c MAJOR:MINOR\"",
			text, n, found[0], found[1], n > 2 ? ", " : "", n > 2 ? found[2] : "",
			n > 3 ? ", " : "", n > 3 ? "..." : "",
			dev->type == DEVWL_DEV_BLOCK ? 'b' : 'c');
	dev->host_path = host_node_of(dev);
	return 0;
}

/*
 * A selector: the one device it names now. Several are listed for the operator to name
 * one (a serial, a by-id name); none is an error too, since the grant needs numbers.
 */
static int selector_device(struct devwld *d, const char *text, struct device *dev,
			   struct devwl_error *err)
{
	_cleanup_free_ struct devwl_rule *rules = NULL;
	struct selector_env env;
	char list[128] = "";
	size_t n = 0, at = 0;
	int r;

	follow_env(d, &env);
	r = selector_resolve(&env, text, strlen(text), &rules, &n, err);
	if (r < 0)
		return r;
	if (n == 0)
		return devwl_error_set(err, -ENOENT, 0,
				       "%.256s names no device here now (attach makes the node of "
				       "the one it names)",
				       text);
	for (size_t i = 0; i < n && i < 4; i++) {
		char s[DEVWL_RULE_STR_MAX];

		/* The numbers alone: what it names, not the access the selector text says. */
		if (devwl_rule_format(&rules[i], s, sizeof(s)) >= 0)
			at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%.*s",
					       i ? ", " : "", (int)strcspn(s + 2, " ") + 2, s);
	}
	if (n > 1 || rules[0].major == DEVWL_ANY || rules[0].minor == DEVWL_ANY ||
	    (rules[0].type != DEVWL_DEV_CHAR && rules[0].type != DEVWL_DEV_BLOCK))
		return devwl_error_set(err, -EINVAL, 0,
				       "%.256s names %s%zu devices here (%s%s): attach makes one "
				       "node: name one device (by-id:, serial:, a USB serial)",
				       text, n == 1 ? "a range of " : "", n, list,
				       n > 4 ? ", ..." : "");
	dev->type = rules[0].type;
	dev->major = rules[0].major;
	dev->minor = rules[0].minor;
	dev->host_path = host_node_of(dev);
	return 0;
}

/* A host path, "c MAJOR:MINOR"/"b MAJOR:MINOR", a driver's only device, or a selector's. */
static int resolve_device(struct devwld *d, const char *text, struct device *dev,
			  struct devwl_error *err)
{
	*dev = (struct device){0};
	if (selector_is(text, strlen(text)))
		return selector_device(d, text, dev, err);
	if (text[0] == '/') {
		if (stat(text, &dev->st) < 0)
			return devwl_error_set(err, negerrno(), 0, "device %.256s: %s", text,
					       strerror(errno));
		if (!S_ISCHR(dev->st.st_mode) && !S_ISBLK(dev->st.st_mode))
			return devwl_error_set(err, -EINVAL, 0,
					       "%.256s is not a device node (a character or block"
					       " special file)",
					       text);
		dev->type = S_ISBLK(dev->st.st_mode) ? DEVWL_DEV_BLOCK : DEVWL_DEV_CHAR;
		dev->major = major(dev->st.st_rdev);
		dev->minor = minor(dev->st.st_rdev);
		dev->host_path = text;
		return 0;
	}
	if (!strncmp(text, "char-", 5) || !strncmp(text, "block-", 6))
		return driver_device(text, dev, err);
	if ((text[0] == 'c' || text[0] == 'b') && text[1] == ' ') {
		struct devwl_rule rule;
		char buf[64];
		struct devwl_error e = {0};
		int r;

		/* The kernel's grammar, with an access the parser needs and we ignore. */
		snprintf(buf, sizeof(buf), "%.40s r", text);
		r = devwl_rule_parse(buf, strlen(buf), &rule, &e);
		if (r < 0 || strchr(text + 2, ' '))
			return devwl_error_set(err, -EINVAL, 0, "device \"%.64s\": %s", text,
					       r < 0 ? e.msg : "one device: TYPE MAJOR:MINOR");
		if (rule.major == DEVWL_ANY || rule.minor == DEVWL_ANY)
			return devwl_error_set(err, -EINVAL, 0,
					       "device \"%.64s\": attach makes one node, for one "
					       "device: no \"*\"",
					       text);
		dev->type = rule.type;
		dev->major = rule.major;
		dev->minor = rule.minor;
		dev->host_path = host_node_of(dev);
		return 0;
	}
	return devwl_error_set(err, -EINVAL, 0,
			       "device \"%.64s\": a host path (/dev/...), \"c MAJOR:MINOR\" /"
			       " \"b MAJOR:MINOR\", char-NAME/block-NAME or a selector (loop:FILE,"
			       " usb:VID:PID...)",
			       text);
}

static uint8_t access_of(const struct devwl_node *node, const struct device *dev)
{
	return attachment_access(node, dev->type, dev->major, dev->minor);
}

/* The handlers and a kernel-mode cgroup decide by c's node as it is now. */
static void node_changed(struct devwld *d)
{
	if (d->store_hooks.policy_changed)
		d->store_hooks.policy_changed(d);
	kernelmode_policy_changed(d);
}

/* Point c at the node at path (made for it, so it goes with c). */
static void repoint(struct devwld *d, struct container *c, char *path, struct devwl_node *node)
{
	/* The handlers' copy of c names its node: a new one is made for the new node. */
	if (d->store_hooks.container_gone)
		d->store_hooks.container_gone(c);
	devwl_node_unref(c->node);
	devwl_node_ref(node);
	c->node = node;
	free(c->node_path);
	c->node_path = path;
	c->created_node = true;
}

/*
 * Give c a node of its own if it has none (container_owns_node()): a leaf named for it
 * under the node it maps to. *ret_old: the path it had (heap) if it moved, for undo_leaf().
 */
/* The leaf NODE/ID own_node() would make for c (heap), or a negative errno with err
 * saying why it cannot (no node path, or taken). devwlctl attach --dry-run asks too. */
static int own_leaf(struct devwld *d, const struct container *c, char **ret_leaf,
		    struct devwl_error *err)
{
	_cleanup_free_ char *leaf = NULL;

	if (asprintf(&leaf, "%s/%s", strcmp(c->node_path, "/") ? c->node_path : "", c->id) < 0) {
		leaf = NULL;
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	}
	if (devwl_node_path_valid(leaf) < 0)
		return devwl_error_set(err, -EINVAL, 0,
				       "container %s: its node %s is shared, and %.128s is no "
				       "node path to make its own",
				       c->id, c->node_path, leaf);
	if (devwl_policy_find(d->policy, leaf))
		return devwl_error_set(
			err, -EEXIST, 0,
			"container %s: its node %s is shared, and the node of its own"
			" it would get, %s, exists already",
			c->id, c->node_path, leaf);
	*ret_leaf = TAKE_PTR(leaf);
	return 0;
}

static int own_node(struct devwld *d, struct container *c, char **ret_old, struct devwl_error *err)
{
	_cleanup_free_ char *leaf = NULL;
	struct devwl_node *node = NULL;
	bool made = false;
	int r;

	*ret_old = NULL;
	if (container_owns_node(c))
		return 0;
	r = own_leaf(d, c, &leaf, err);
	if (r < 0)
		return r;
	r = policy_ensure_node(d, leaf, &node, &made);
	if (r < 0)
		return devwl_error_set(err, r, 0, "container %s: cannot make node %s: %s", c->id,
				       leaf, strerror(-r));
	log_msg("container %s: node %s of its own, under %s, for its attached devices", c->id, leaf,
		c->node_path);
	*ret_old = strdup(c->node_path);
	if (!*ret_old) {
		policy_forget_node(d, leaf);
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	}
	repoint(d, c, TAKE_PTR(leaf), node);
	return 0;
}

int attach_own_node(struct devwld *d, struct container *c, struct devwl_error *err)
{
	_cleanup_free_ char *old = NULL;

	return own_node(d, c, &old, err);
}

/* Back to the node c had before own_node() gave it a leaf (old: taken over). */
static void undo_leaf(struct devwld *d, struct container *c, char *old, bool old_created)
{
	_cleanup_free_ char *leaf = NULL;
	struct devwl_node *node;

	if (!old)
		return;
	node = devwl_policy_find(d->policy, old);
	if (!node) { /* cannot be: c's old node had others on it, or was the policy's */
		free(old);
		return;
	}
	leaf = strdup(c->node_path);
	repoint(d, c, old, node);
	c->created_node = old_created;
	if (leaf)
		policy_forget_node(d, leaf);
}

static int pidfd_of(const struct container *c, pid_t *ret_pid)
{
	for (const struct list_head *l = c->procs.next; l != &c->procs; l = l->next) {
		const struct cproc *p = container_of(l, const struct cproc, link);
		int fd;

		if (p->pid <= 0)
			continue;
		fd = (int)syscall(SYS_pidfd_open, p->pid, 0);
		if (fd >= 0) {
			*ret_pid = p->pid;
			return fd;
		}
	}
	return -ESRCH;
}

/* Is pid in a user namespace other than ours (its ids are not the host's)? */
static bool own_userns(pid_t pid)
{
	char file[64];
	struct stat a, b;

	snprintf(file, sizeof(file), "/proc/%d/ns/user", (int)pid);
	return stat(file, &a) == 0 && stat("/proc/self/ns/user", &b) == 0 && a.st_ino != b.st_ino;
}

/* {"event":"attach"|"detach", ...} to the audit and `devwlctl events`. */
static void record(struct devwld *d, const char *event, const struct container *c,
		   const struct attachment *a, const char *container, const char *device,
		   const char *result, const char *reason)
{
	struct json_object *o = json_object_new_object();
	char acc[4], dev[64], now[AUDIT_TIME_MAX];

	if (!o)
		return;
	audit_time(now);
	json_object_object_add(o, "time", json_object_new_string(now));
	json_object_object_add(o, "event", json_object_new_string(event));
	json_object_object_add(o, "container", json_object_new_string(c ? c->id : container));
	if (c)
		json_object_object_add(o, "node", json_object_new_string(c->node_path));
	if (a) {
		snprintf(dev, sizeof(dev), "%c %u:%u", type_char(a->type), a->major, a->minor);
		json_object_object_add(o, "device", json_object_new_string(dev));
		json_object_object_add(o, "access",
				       json_object_new_string(devwl_access_text(a->access, acc)));
		json_object_object_add(o, "path", json_object_new_string(a->path));
		if (a->selector)
			json_object_object_add(o, "selector", json_object_new_string(a->selector));
	} else if (device) {
		json_object_object_add(o, "device", json_object_new_string(device));
	}
	json_object_object_add(o, "result", json_object_new_string(result));
	if (reason)
		json_object_object_add(o, "reason", json_object_new_string(reason));
	/* A name that resolved to no container is no container's record. */
	audit_record(&d->audit, o, c ? c->owner_uid : EVENTS_ANY_OWNER, c ? c->id : container);
	json_object_put(o);
}

static struct attachment *find_attachment(struct container *c, const struct device *dev,
					  const char *path)
{
	for (size_t i = 0; i < c->nattached; i++) {
		struct attachment *a = &c->attached[i];

		if (path ? !strcmp(a->path, path)
			 : !a->absent && a->type == dev->type && a->major == dev->major &&
				    a->minor == dev->minor)
			return a;
	}
	return NULL;
}

/* The attachment of c by the selector text, as attach was given it. */
static struct attachment *find_selector(struct container *c, const char *text)
{
	for (size_t i = 0; i < c->nattached; i++)
		if (c->attached[i].selector && !strcmp(c->attached[i].selector, text))
			return &c->attached[i];
	return NULL;
}

/* Take back what a granted: deny the access it added. */
static void revoke_grant(struct container *c, const struct attachment *a)
{
	struct devwl_rule rule = {
		.type = (uint8_t)a->type, .access = a->added, .major = a->major, .minor = a->minor};
	int r;

	if (!a->added || a->lapsed)
		return;
	r = devwl_node_update(c->node, DEVWL_FILE_DENY, &rule);
	if (r < 0)
		log_msg("container %s: revoking %c %u:%u on %s: %s", c->id, type_char(a->type),
			a->major, a->minor, c->node_path, strerror(-r));
}

/*
 * --parent-grant: the ancestors that refuse rule allow it, from the top down, each as a
 * devwlctl allow would (kept across reloads as one): an explicit change of the policy,
 * which detach does not take back.
 */
static int grant_ancestors(struct devwld *d, struct container *c, const struct devwl_rule *rule,
			   const struct device *dev, struct devwl_error *err)
{
	const struct devwl_node *up[256];
	size_t n = 0;

	for (const struct devwl_node *a = devwl_node_parent(c->node); a && n < ARRAY_SIZE(up);
	     a = devwl_node_parent(a))
		up[n++] = a;
	while (n--) {
		_cleanup_free_ char *line = NULL, *answer = NULL;
		char text[64];
		size_t size = 0;
		FILE *f;
		int r;

		if ((access_of(up[n], dev) & rule->access) == rule->access)
			continue;
		(void)devwl_rule_format(rule, text, sizeof(text));
		if (asprintf(&line, "allow %s %s", devwl_node_path(up[n]), text) < 0 ||
		    !(f = open_memstream(&answer, &size)))
			return devwl_error_set(err, -ENOMEM, 0, "out of memory");
		r = edit_exec(d->policy, line, strlen(line), f);
		fclose(f);
		if (r >= 0)
			r = edits_add(&d->edits, line, strlen(line));
		if (r < 0)
			return devwl_error_set(err, r, 0, "--parent-grant: %s: %.200s", line,
					       answer ? answer : strerror(-r));
		log_msg("container %s: --parent-grant: %s", c->id, line);
	}
	return 0;
}

/* What keeps a node made in c from opening more than its grant: a cgroup that enforces
 * its node's list, or a deny baseline; with neither the gate wants a nodev mount. */
static bool confined(const struct container *c)
{
	return kernelmode_enforced(c) || container_has_baseline(c);
}

void attach_place_of(const struct container *c, const struct attachment *a,
		     struct devwl_place *ret_place)
{
	*ret_place = (struct devwl_place){
		.path = a->path,
		.type = a->type,
		.major = a->major,
		.minor = a->minor,
		.mode = a->mode,
		.uid = a->uid,
		.gid = a->gid,
		/* Where the cgroup enforces the grant the kernel opens the node, in the
		 * caller's context: on a user namespace's nodev /dev only a twin of ours bound
		 * over it opens. */
		.flags = DEVWL_PLACE_MKDIR | (confined(c) ? DEVWL_PLACE_CONFINED : 0) |
			 (kernelmode_enforced(c) ? DEVWL_PLACE_TWIN : 0),
		.nodeset = c->nodeset,
	};
}

/*
 * A node's placement or removal in a container's root, on a work thread (loop/work.h):
 * the walk from /proc/PID/root may meet a filesystem the workload serves (FUSE) that never
 * answers. The loop has granted (attach) or still grants (detach) and waits for neither;
 * the attachment is in c->attached meanwhile, and c->hotplug holds this work's token so
 * that nothing else changes c's attachments until it ends.
 */
enum hotplug_kind { HOTPLUG_ATTACH, HOTPLUG_DETACH, HOTPLUG_REPUSH };

struct hotplug {
	struct work w;
	/* Set on the loop before the submit; run() only reads them. */
	char *id;
	uid_t owner;
	uint64_t token;
	enum hotplug_kind kind;
	struct devwl_place place; /* .path is path, .nodeset a reference of ours */
	char *path;
	int pidfd;
	char *old;	 /* attach: the node c had before own_node() gave it a leaf, or NULL */
	char *host_path; /* attach: the device's node on the host, for what is said, or NULL */
	bool old_created;
	struct attach_repush repush; /* HOTPLUG_REPUSH, and who is told its end */
	attach_repushed_fn *repushed;
	attach_done_fn *done;
	void *ctx;
	/* run()'s answer: the placement's (the removal's, for a detach). */
	int r;
	struct devwl_error err;
};

static void hotplug_run(struct work *w)
{
	struct hotplug *hp = container_of(w, struct hotplug, w);
	const struct attach_repush *rp = &hp->repush;

	if (hp->kind == HOTPLUG_DETACH) {
		hp->r = devwl_node_unplace(hp->pidfd, hp->path, hp->place.type, hp->place.major,
					   hp->place.minor, &hp->err);
		return;
	}
	if (hp->kind == HOTPLUG_REPUSH && rp->unplace) {
		struct devwl_error e = {0};
		int r = devwl_node_unplace(hp->pidfd, hp->path, rp->type, rp->major, rp->minor, &e);

		/* Its grant is gone already: a node left is one nobody opens. */
		if (r < 0)
			log_msg("container %s: %s: %s; its grant was revoked all the same", hp->id,
				hp->path, e.msg);
		if (!rp->place) {
			hp->r = r;
			hp->err = e;
			return;
		}
	}
	hp->r = devwl_node_place(hp->pidfd, &hp->place, &hp->err);
	/* On its nodev mount: the handlers open it for the container, from its nodeset. */
	if (hp->r == DEVWL_PLACE_MADE_NODEV)
		hp->r = 0;
}

/* The attach or re-push was undone at its deadline (its grant gone): a node made after
 * it goes too, not one that was there before. */
static void hotplug_late(struct work *w)
{
	struct hotplug *hp = container_of(w, struct hotplug, w);
	bool placed =
		hp->kind == HOTPLUG_ATTACH || (hp->kind == HOTPLUG_REPUSH && hp->repush.place);

	if (placed && hp->r == 0)
		(void)devwl_node_unplace(hp->pidfd, hp->path, hp->place.type, hp->place.major,
					 hp->place.minor, NULL);
}

static void hotplug_free(struct work *w)
{
	struct hotplug *hp = container_of(w, struct hotplug, w);

	if (hp->pidfd >= 0)
		close(hp->pidfd);
	devwl_nodeset_unref(hp->place.nodeset);
	free(hp->id);
	free(hp->path);
	free(hp->old);
	free(hp->host_path);
	free(hp);
}

static void hotplug_done(struct devwld *d, struct work *w, int r);

/* A hotplug for c's attachment a (pidfd taken over, even on failure); NULL: out of memory. */
static struct hotplug *hotplug_new(const struct container *c, const struct attachment *a,
				   enum hotplug_kind kind, int pidfd, attach_done_fn *done,
				   void *ctx)
{
	static uint64_t tokens;
	struct hotplug *hp = calloc(1, sizeof(*hp));

	if (!hp) {
		close(pidfd);
		return NULL;
	}
	hp->w = (struct work){.run = hotplug_run,
			      .done = hotplug_done,
			      .late = hotplug_late,
			      .free_fn = hotplug_free};
	hp->pidfd = pidfd;
	hp->token = ++tokens;
	hp->kind = kind;
	hp->owner = c->owner_uid;
	hp->done = done;
	hp->ctx = ctx;
	hp->id = strdup(c->id);
	hp->path = strdup(a->path);
	if (!hp->id || !hp->path) {
		hotplug_free(&hp->w);
		return NULL;
	}
	attach_place_of(c, a, &hp->place);
	hp->place.path = hp->path;
	devwl_nodeset_ref(hp->place.nodeset);
	return hp;
}

/* Hand hp to a work thread; c->hotplug holds it until it ends. 0, or -errno with err
 * saying why (hp still the caller's). */
static int hotplug_submit(struct devwld *d, struct container *c, struct hotplug *hp,
			  struct devwl_error *err)
{
	int r = work_submit(&d->loop, &hp->w, HOTPLUG_DEADLINE_MS);

	if (r < 0)
		return devwl_error_set(err, r, 0, "container %s: %s: %s", c->id, hp->path,
				       r == -EBUSY ? "devwld's work threads are all busy (each"
						     " waiting on a container's filesystem?): try"
						     " again later"
						   : strerror(-r));
	c->hotplug = hp->token;
	return 0;
}

/* Take back an attachment whose node was not made: its grant, c's leaf if it got one. */
static void attach_undo(struct devwld *d, struct container *c, struct attachment *a, char *old,
			bool old_created)
{
	revoke_grant(c, a);
	undo_leaf(d, c, old, old_created);
	node_changed(d);
	attachment_clear(a);
	*a = c->attached[--c->nattached];
}

/* The end of a detach: the grant goes, whether the node went (r >= 0) or not. */
static int detach_finish(struct devwld *d, struct container *c, struct attachment *a, int r,
			 bool reached, char *said, struct devwl_error *err)
{
	if (!reached || r < 0) {
		/* The grant goes anyway: a detach must never leave the device usable. */
		log_msg("container %s: %s: %s; revoking the grant all the same", c->id, a->path,
			!reached ? "no process left to reach its filesystem" : err->msg);
	}
	revoke_grant(c, a);
	node_changed(d);
	log_msg("container %s: %c %u:%u detached from %s", c->id, type_char(a->type), a->major,
		a->minor, a->path);
	record(d, "detach", c, a, NULL, NULL, r < 0 || !reached ? "revoked, node left" : "detached",
	       r < 0 ? err->msg : NULL);
	if (said)
		attachment_say(said, ATTACH_SAID_MAX,
			       r < 0 || (!reached && !a->absent) ? ATTACHMENT_DETACHED_NODE_LEFT
								 : ATTACHMENT_DETACHED,
			       a, NULL, c->id, resolve_shown_name(c), c->node_path);
	attachment_clear(a);
	*a = c->attached[--c->nattached];
	if (d->store_hooks.changed)
		d->store_hooks.changed(d);
	if (r < 0)
		return r == -EEXIST ? 0 : r;
	return 0;
}

/* On the loop: the placement or removal ended (r 0), or its deadline passed (-ETIMEDOUT). */
static void hotplug_done(struct devwld *d, struct work *w, int r)
{
	struct hotplug *hp = container_of(w, struct hotplug, w);
	struct container *c = container_find(d, hp->owner, hp->id);
	bool removing =
		hp->kind == HOTPLUG_DETACH || (hp->kind == HOTPLUG_REPUSH && !hp->repush.place);
	struct devwl_error err = {0};
	struct attachment *a = NULL;
	char acc[4], said[ATTACH_SAID_MAX] = "";

	if (c && c->hotplug == hp->token) {
		c->hotplug = 0;
		a = find_attachment(c, NULL, hp->path);
	}
	if (r == 0) {
		r = hp->r;
		err = hp->err;
	} else {
		devwl_error_set(&err, r, 0,
				"container %s: %s: %s did not end within %d s (a filesystem on its"
				" way that does not answer, such as a stopped FUSE server?); %s",
				hp->id, hp->path,
				removing ? "removing the node" : "making the node",
				HOTPLUG_DEADLINE_MS / 1000,
				removing ? "the grant is revoked all the same, the node may stay"
					 : "the grant is taken back");
		log_msg("%s", err.msg);
	}
	if (!a) {
		/* Gone meanwhile, and its grants with it. */
		if (r >= 0)
			r = devwl_error_set(&err, -ESRCH, 0, "container %s went away meanwhile",
					    hp->id);
	} else if (hp->kind == HOTPLUG_REPUSH) {
		hp->repushed(d, c, a, &hp->repush, r, &err);
	} else if (hp->kind == HOTPLUG_DETACH) {
		r = detach_finish(d, c, a, r, true, said, &err);
	} else if (r < 0) {
		char why[sizeof(err.msg)];

		if (r != -ETIMEDOUT) {
			memcpy(why, err.msg, sizeof(why));
			devwl_error_set(&err, r, 0, "container %s: %.480s", c->id, why);
		}
		record(d, "attach", c, a, NULL, NULL, "refused", err.msg);
		attach_undo(d, c, a, TAKE_PTR(hp->old), hp->old_created);
		if (d->store_hooks.changed)
			d->store_hooks.changed(d);
	} else {
		log_msg("container %s: %c %u:%u %s attached at %s (node %s%s)", c->id,
			type_char(a->type), a->major, a->minor, devwl_access_text(a->access, acc),
			a->path, c->node_path, r == 1 ? ", which was there already" : "");
		record(d, "attach", c, a, NULL, NULL, "attached", NULL);
		attachment_say(said, sizeof(said), ATTACHMENT_ATTACHED, a, hp->host_path, c->id,
			       resolve_shown_name(c), c->node_path);
		r = 0;
	}
	if (r < 0)
		said[0] = '\0';
	if (hp->done)
		hp->done(d, hp->ctx, r, &err, said);
}

int attach_repush(struct devwld *d, struct container *c, const struct attachment *a, int pidfd,
		  const struct attach_repush *rp, attach_repushed_fn *repushed,
		  struct devwl_error *err)
{
	struct hotplug *hp = hotplug_new(c, a, HOTPLUG_REPUSH, pidfd, NULL, NULL);
	int r;

	if (!hp)
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	hp->repush = *rp;
	hp->repushed = repushed;
	r = hotplug_submit(d, c, hp, err);
	if (r < 0)
		hotplug_free(&hp->w);
	return r;
}

/*
 * devwlctl attach --dry-run, once everything before the first change checked out: would
 * the grant take? It goes on c's own node, a leaf under c's node when c has none yet
 * (own_node()), and an allow takes where the parent gives as much (devwl-policy(5));
 * --parent-grant would widen the ancestors first. The node gate is not tried: it makes
 * the node or refuses.
 */
static int attach_dry_run(struct devwld *d, const struct container *c, const struct attachment *a,
			  const char *host_path, bool parent_grant, char *said,
			  struct devwl_error *err)
{
	_cleanup_free_ char *leaf = NULL;
	const struct devwl_node *parent = c->node;
	const char *node = c->node_path;
	char why[EXPLAIN_MAX], acc[4];
	int r;

	if (container_owns_node(c)) {
		parent = devwl_node_parent(c->node);
	} else {
		r = own_leaf(d, c, &leaf, err);
		if (r < 0)
			return r;
		node = leaf;
	}
	if (!parent_grant && parent &&
	    devwl_node_check(parent, a->type, a->major, a->minor, a->access) != 1) {
		explain_denial(parent, a->type, a->major, a->minor, a->access, why, sizeof(why));
		return devwl_error_set(err, -EPERM, 0,
				       "container %s: %c %u:%u %s would be refused at node %s: "
				       "the parent %s denies it (%s)",
				       c->id, type_char(a->type), a->major, a->minor,
				       devwl_access_text(a->access, acc), node,
				       devwl_node_path(parent), why);
	}
	attachment_say(said, ATTACH_SAID_MAX, ATTACHMENT_WOULD_ATTACH, a, host_path, c->id,
		       resolve_shown_name(c), node);
	return 0;
}

static int attach_locked(struct devwld *d, struct container *c, const struct attach_req *req,
			 struct attachment *a, char *said, char **ret_old, bool *ret_old_created,
			 int *ret_pidfd, char **ret_host_path, struct devwl_error *err)
{
	const struct attachment *taken;
	struct devwl_rule rule;
	struct device dev;
	_cleanup_free_ char *old = NULL;
	_cleanup_close_ int pidfd = -1;
	bool old_created = c->created_node;
	char acc[4];
	pid_t pid = 0;
	uint8_t before;
	int r;

	r = resolve_device(d, req->device, &dev, err);
	if (r < 0)
		return r;
	if (selector_is(req->device, strlen(req->device))) {
		/* The numbers change with the device; the path in the container does not. */
		if (!req->path)
			return devwl_error_set(
				err, -EINVAL, 0,
				"%.256s: a device named by a selector needs the PATH "
				"it gets in the container",
				req->device);
		a->selector = strdup(req->device);
		if (!a->selector)
			return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	}
	a->type = dev.type;
	a->major = dev.major;
	a->minor = dev.minor;
	a->access = req->access ? req->access : DEVWL_ACC_READ | DEVWL_ACC_WRITE;
	if (!req->path && !dev.host_path)
		return devwl_error_set(err, -EINVAL, 0,
				       "%c %u:%u has no node on the host to copy: give the PATH"
				       " it gets in the container",
				       type_char(dev.type), dev.major, dev.minor);
	a->path = strdup(req->path ? req->path : dev.host_path);
	if (!a->path)
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	if (a->path[0] != '/')
		return devwl_error_set(err, -EINVAL, 0, "path %.256s: not absolute", a->path);
	/* Say which of the two is taken: the device, or the path. */
	if ((taken = find_attachment(c, &dev, NULL)))
		return devwl_error_set(err, -EEXIST, 0,
				       "container %s has %c %u:%u attached already, at %.256s "
				       "(detach it first)",
				       c->id, type_char(dev.type), dev.major, dev.minor,
				       taken->path);
	if ((taken = find_attachment(c, NULL, a->path)))
		return devwl_error_set(err, -EEXIST, 0,
				       "container %s has %.256s attached already, for %c %u:%u "
				       "(detach it first)",
				       c->id, a->path, type_char(taken->type), taken->major,
				       taken->minor);
	if (c->nattached >= ATTACH_MAX)
		return devwl_error_set(err, -ENOSPC, 0,
				       "container %s has %d devices attached, "
				       "the most devwld keeps",
				       c->id, ATTACH_MAX);
	pidfd = pidfd_of(c, &pid);
	if (pidfd < 0)
		return devwl_error_set(err, pidfd, 0,
				       "container %s: no process of it left to reach its filesystem"
				       " through",
				       c->id);
	/* The host node's owner and mode, as the container sees them: in a user namespace
	 * the host's ids mean nothing, so its root owns the node. */
	a->mode = req->mode_set ? req->mode : dev.host_path ? dev.st.st_mode & 07777 : 0600;
	a->uid = req->uid;
	a->gid = req->gid;
	if (dev.host_path && !own_userns(pid)) {
		if (req->uid == (uid_t)-1)
			a->uid = dev.st.st_uid;
		if (req->gid == (gid_t)-1)
			a->gid = dev.st.st_gid;
	}

	if (req->dry_run)
		return attach_dry_run(d, c, a, dev.host_path, req->parent_grant, said, err);
	r = own_node(d, c, &old, err);
	if (r < 0)
		return r;
	rule = (struct devwl_rule){.type = (uint8_t)dev.type,
				   .access = a->access,
				   .major = dev.major,
				   .minor = dev.minor};
	before = access_of(c->node, &dev);
	r = req->parent_grant ? grant_ancestors(d, c, &rule, &dev, err) : 0;
	if (r < 0) {
		undo_leaf(d, c, TAKE_PTR(old), old_created);
		return r;
	}
	r = devwl_node_update(c->node, DEVWL_FILE_ALLOW, &rule);
	if (r >= 0 && (access_of(c->node, &dev) & a->access) != a->access)
		r = -EPERM; /* an allow-all node whose wider denial an exact allow cannot lift */
	if (r < 0) {
		char why[EXPLAIN_MAX];

		explain_allow_refused(c->node, &rule, why, sizeof(why));
		devwl_error_set(err, r, 0, "container %s: %c %u:%u %s refused at node %s: %s",
				c->id, type_char(dev.type), dev.major, dev.minor,
				devwl_access_text(a->access, acc), c->node_path,
				why[0] ? why : strerror(-r));
		undo_leaf(d, c, TAKE_PTR(old), old_created);
		return r;
	}
	a->added = a->access & ~before;
	node_changed(d);
	/* The grant is in force; the node is made off the loop (hotplug_done() ends it). */
	if (dev.host_path) {
		*ret_host_path = strdup(dev.host_path);
		if (!*ret_host_path) {
			revoke_grant(c, a);
			undo_leaf(d, c, TAKE_PTR(old), old_created);
			node_changed(d);
			return devwl_error_set(err, -ENOMEM, 0, "out of memory");
		}
	}
	*ret_old = TAKE_PTR(old);
	*ret_old_created = old_created;
	*ret_pidfd = TAKE_FD(pidfd);
	return 0;
}

/* Another attach or detach of c under way: its attachments are not to change meanwhile. */
static int hotplug_busy(const struct container *c, struct devwl_error *err)
{
	return devwl_error_set(err, -EBUSY, 0,
			       "container %s: another attach or detach of it is under way (it"
			       " ends within %d s)",
			       c->id, HOTPLUG_DEADLINE_MS / 1000);
}

int attach_device(struct devwld *d, const struct attach_req *req, char *said, attach_done_fn *done,
		  void *ctx, struct devwl_error *err)
{
	struct attachment a = {0};
	struct container *c = NULL;
	struct attachment *v;
	struct hotplug *hp = NULL;
	char *old = NULL, *host_path = NULL;
	bool old_created = false;
	int pidfd = -1;
	int r;

	said[0] = '\0';
	r = resolve_owned_container(d, req->owner, req->container, &c, err);
	if (r < 0) {
		if (!req->dry_run) /* a dry run changes nothing, its record neither */
			record(d, "attach", NULL, NULL, req->container, req->device, "refused",
			       err->msg);
		return r;
	}
	if (c->hotplug)
		return hotplug_busy(c, err);
	v = realloc(c->attached, (c->nattached + 1) * sizeof(*v));
	if (!v)
		return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	c->attached = v;
	r = attach_locked(d, c, req, &a, said, &old, &old_created, &pidfd, &host_path, err);
	if (r < 0) {
		if (!req->dry_run)
			record(d, "attach", c, NULL, NULL, req->device, "refused", err->msg);
		attachment_clear(&a);
		return r;
	}
	if (req->dry_run) {
		attachment_clear(&a);
		return 0;
	}
	c->attached[c->nattached++] = a;
	hp = hotplug_new(c, &a, HOTPLUG_ATTACH, pidfd, done, ctx);
	r = hp ? 0 : devwl_error_set(err, -ENOMEM, 0, "out of memory");
	if (hp) {
		hp->old = old;
		hp->old_created = old_created;
		hp->host_path = TAKE_PTR(host_path);
		r = hotplug_submit(d, c, hp, err);
		if (r < 0) {
			old = TAKE_PTR(hp->old);
			hotplug_free(&hp->w);
		}
	}
	free(host_path);
	if (r < 0) {
		record(d, "attach", c, NULL, NULL, req->device, "refused", err->msg);
		attach_undo(d, c, &c->attached[c->nattached - 1], old, old_created);
		return r;
	}
	if (d->store_hooks.changed)
		d->store_hooks.changed(d);
	return 1;
}

int detach_device(struct devwld *d, uid_t owner, const char *container, const char *what,
		  bool dry_run, char *said, attach_done_fn *done, void *ctx,
		  struct devwl_error *err)
{
	struct container *c = NULL;
	struct attachment *a;
	struct device dev;
	struct hotplug *hp;
	int pidfd = -1;
	pid_t pid;
	int r;

	said[0] = '\0';
	r = resolve_owned_container(d, owner, container, &c, err);
	if (r < 0)
		return r;
	if (c->hotplug)
		return hotplug_busy(c, err);
	if (what[0] == '/')
		a = find_attachment(c, NULL, what);
	else if ((a = find_selector(c, what)))
		; /* as it was attached, whatever it names now (or none) */
	else if (resolve_device(d, what, &dev, err) >= 0)
		a = find_attachment(c, &dev, NULL);
	else
		return err->code;
	if (!a && what[0] == '/' && resolve_device(d, what, &dev, &(struct devwl_error){0}) >= 0)
		a = find_attachment(c, &dev, NULL);
	if (!a)
		return devwl_error_set(err, -ENOENT, 0,
				       "container %s has no device %.256s attached (devwlctl "
				       "containers --devices lists them)",
				       c->id, what);
	if (dry_run) {
		attachment_say(said, ATTACH_SAID_MAX, ATTACHMENT_WOULD_DETACH, a, NULL, c->id,
			       resolve_shown_name(c), c->node_path);
		return 0;
	}
	/* The node first: once the grant is gone, nothing may be left to stumble on. An
	 * absent one has neither: its device went, and both with it. */
	if (a->absent)
		return detach_finish(d, c, a, 0, true, said, err);
	pidfd = pidfd_of(c, &pid);
	if (pidfd < 0)
		return detach_finish(d, c, a, 0, false, said, err);
	hp = hotplug_new(c, a, HOTPLUG_DETACH, pidfd, done, ctx);
	r = hp ? hotplug_submit(d, c, hp, err) : devwl_error_set(err, -ENOMEM, 0, "out of memory");
	if (r < 0 && hp)
		hotplug_free(&hp->w);
	if (r < 0) {
		/* Deny-safe all the same: the grant goes, the node may stay. */
		struct devwl_error why = *err;

		detach_finish(d, c, a, r, true, NULL, &why);
		return r;
	}
	return 1;
}

int attach_restore(struct container *c, const struct attachment *a)
{
	struct attachment *v = realloc(c->attached, (c->nattached + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	c->attached = v;
	v[c->nattached] = *a;
	v[c->nattached].path = strdup(a->path);
	v[c->nattached].selector = a->selector ? strdup(a->selector) : NULL;
	if (!v[c->nattached].path || (a->selector && !v[c->nattached].selector)) {
		attachment_clear(&v[c->nattached]);
		return -ENOMEM;
	}
	c->nattached++;
	return 0;
}

int attach_pidfd(const struct container *c, pid_t *ret_pid)
{
	return pidfd_of(c, ret_pid);
}

void attach_revoke(struct container *c, const struct attachment *a)
{
	revoke_grant(c, a);
}

void attach_node_changed(struct devwld *d)
{
	node_changed(d);
}
