/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy store: the policy file read once and parsed into the node hierarchy, the
 * container mapping and the selector bindings; nodes made on demand for containers (with
 * their ancestors, inheriting as a new cgroup does); devwlctl's changes; and the atomic
 * reload (SIGHUP, devwlctl reload, or the file changing: watch.c), which re-points every
 * running container (store.c keeps them) or changes nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attachment.h"
#include "batch.h"
#include "defaults.h"
#include "devwld.h"
#include "fileio.h"
#include "follow.h"
#include "log.h"
#include "nodepath.h"
#include "policy.h"
#include "policysel.h"
#include "util.h"

/* As the library's loader: a policy file is small, anything bigger is a mistake. */
#define POLICY_TEXT_MAX (16u << 20)

/* ---- loading: one read of the file feeds both the nodes and the mapping ------------- */

/*
 * The file is read once and both halves are parsed from that text: read twice, a
 * ConfigMap update landing in between could pair the nodes of one version with the
 * container mapping of another.
 */
int read_text(const char *file, size_t max, char **ret_text, size_t *ret_len,
	      struct devwl_error *err)
{
	_cleanup_close_ int fd = -1;

	/* O_NONBLOCK: a FIFO put in the file's place must not stall the loop. */
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return devwl_error_set(err, negerrno(), 0, "%s: %s", file, strerror(errno));
	return read_text_fd(fd, file, max, ret_text, ret_len, err);
}

int read_text_fd(int fd, const char *file, size_t max, char **ret_text, size_t *ret_len,
		 struct devwl_error *err)
{
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	ssize_t len;
	const char *nul;

	if (fstat(fd, &st) < 0)
		return devwl_error_set(err, negerrno(), 0, "%s: %s", file, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return devwl_error_set(err, -EINVAL, 0, "%s: not a regular file", file);
	len = devwl_read_all(fd, max, &buf);
	if (len == -E2BIG)
		return devwl_error_set(err, -E2BIG, 0, "%s: larger than %zu bytes", file, max);
	if (len < 0)
		return devwl_error_set(err, (int)len, 0, "%s: %s", file, strerror((int)-len));
	if (len == 0)
		return devwl_error_set(err, -EINVAL, 0, "%s: empty", file);
	nul = memchr(buf, '\0', (size_t)len);
	if (nul)
		return devwl_error_set(err, -EINVAL, (size_t)(nul - buf), "%s: contains a NUL byte",
				       file);
	*ret_text = TAKE_PTR(buf);
	*ret_len = (size_t)len;
	return 0;
}

int policy_parse_text(const char *file, const char *text, struct devwl_policy **ret_policy,
		      struct mapping *ret_mapping, struct bindings *ret_bindings,
		      struct devwl_error *err)
{
	struct devwl_policy *policy = NULL;
	struct json_object *top = NULL, *containers = NULL, *selectors = NULL, *nodes = NULL;
	struct bindings b = {0};
	enum json_tokener_error jerr = json_tokener_success;
	struct mapping m = {0};
	struct policysel ps = {0};
	_cleanup_free_ char *plain = NULL;
	int r;

	/* The node rules' selectors are bindings as "selectors" are, and come before them:
	 * the nodes are written before the file's "selectors" are. */
	r = policysel_extract(text, file, &plain, &ps, err);
	if (r < 0)
		return r;
	for (size_t i = 0; r >= 0 && i < ps.n; i++)
		r = bindings_add_rule(&b, ps.v[i].node, ps.v[i].allow, ps.v[i].selector,
				      ps.v[i].where);
	policysel_clear(&ps);
	if (r < 0) {
		bindings_clear(&b);
		return devwl_error_set(err, r, 0, "%s: %s", file,
				       r == -ENOSPC ? "too many selector rules" : strerror(-r));
	}
	r = devwl_policy_load_string(plain, file, &policy, err);
	if (r < 0) {
		bindings_clear(&b);
		return r;
	}
	/* The loader has checked the syntax and ignores "containers": ours to read. */
	top = json_tokener_parse_verbose(text, &jerr);
	if (!top) {
		devwl_policy_free(policy);
		bindings_clear(&b);
		return devwl_error_set(err, -EINVAL, 0, "%s: %s", file,
				       json_tokener_error_desc(jerr));
	}
	json_object_object_get_ex(top, "containers", &containers);
	json_object_object_get_ex(top, "selectors", &selectors);
	json_object_object_get_ex(top, "nodes", &nodes);
	r = mapping_from_json(containers, file, &m, err);
	if (r >= 0)
		r = cdi_optins_from_json(nodes, file, &m.cdi, err);
	if (r >= 0)
		r = node_flags_from_json(nodes, file, "learn", &m.learn, err);
	if (r >= 0)
		r = bindings_from_json(selectors, file, &b, err);
	json_object_put(top);
	if (r < 0) {
		mapping_clear(&m);
		bindings_clear(&b);
		devwl_policy_free(policy);
		return r;
	}
	if (ret_policy)
		*ret_policy = policy;
	else
		devwl_policy_free(policy);
	*ret_mapping = m;
	if (ret_bindings)
		*ret_bindings = b;
	else
		bindings_clear(&b);
	return 0;
}

int policy_load(struct devwld *d)
{
	struct devwl_error err = {0};
	int r;

	if (!d->cfg.policy_file) {
		d->policy = devwl_policy_new();
		return d->policy ? 0 : -ENOMEM;
	}
	r = read_text(d->cfg.policy_file, POLICY_TEXT_MAX, &d->policy_text, &d->policy_len, &err);
	if (r >= 0)
		r = policy_parse_text(d->cfg.policy_file, d->policy_text, &d->policy, &d->mapping,
				      &d->bindings, &err);
	if (r >= 0)
		r = follow_load(d, d->policy, &d->bindings, 0, &err);
	if (r < 0)
		log_msg("policy %s", err.msg[0] ? err.msg : strerror(-r));
	return r;
}

int policy_node_path(struct devwld *d, const struct oci_state *st, uid_t peer_uid, char **ret_path,
		     struct devwl_error *ret_err)
{
	struct devwl_error err = {0};
	const char *source = "";
	int r;

	r = mapping_node_path(&d->mapping, d->cfg.k8s_template, d->cfg.default_template, st,
			      peer_uid, ret_path, &source, &err);
	if (r < 0) {
		log_msg("container %s: no node: %s", st->id, err.msg[0] ? err.msg : strerror(-r));
		return devwl_error_set(ret_err, r, 0, "container %s: no node: %s", st->id,
				       err.msg[0] ? err.msg : strerror(-r));
	}
	if (oci_annotation(st, "org.devwl.node") && strcmp(source, "annotation org.devwl.node"))
		log_msg("container %s: annotation org.devwl.node ignored (the policy's "
			"\"node_annotation\" does not let containers name their node)",
			st->id);
	return r;
}

/*
 * A top-level node nobody defined (not the policy file, not devwlctl mkdir) does not
 * inherit the root's allow-all: that is the kernel's root cgroup, which nobody wrote, and
 * a container connecting to devwld must never get more than its runtime would give it.
 * It starts from the default set instead (common/defaults.c), minus what the root denies.
 * Below a root that denies by default, it is a plain copy: the policy chose that root.
 */
static int top_level_default(struct devwl_policy *policy, const char *path)
{
	const struct devwl_node *root = devwl_policy_find(policy, "/");

	if (devwl_node_behavior(root) != DEVWL_BEHAVIOR_ALLOW)
		return 0;
	return devwl_node_set_defaults(devwl_policy_find(policy, path));
}

/* A node just made for a container: its "container_rules" (start may be NULL: none).
 * Only allows can fail, where the parent refuses them: such a write changes nothing, as
 * in the kernel, so the container starts with what the copy and the rest gave it. */
static void start_node(const struct mapping *start, struct devwl_node *node)
{
	struct devwl_error err = {0};

	if (start && mapping_start_node(start, node, &err) < 0)
		log_msg("node %s: %s", devwl_node_path(node), err.msg);
}

/* Find path, creating it and its missing ancestors (each inheriting from its parent);
 * the paths created are added to made. A node made for a container (start: the mapping
 * whose "container_rules" it gets) gets them right after the copy. */
static int ensure_node(struct devwl_policy *policy, const char *path, struct strset *made,
		       struct strset *ruled, const struct mapping *start,
		       struct devwl_node **ret_node, bool *ret_created)
{
	_cleanup_free_ char *buf = NULL;
	struct devwl_node *node;
	bool created = false;
	int r;

	if (devwl_node_path_valid(path) < 0)
		return -EINVAL;
	node = devwl_policy_find(policy, path);
	if (!node) {
		buf = strdup(path);
		if (!buf)
			return -ENOMEM;
		for (char *slash = buf + 1;; slash++) {
			slash = strchrnul(slash, '/');
			char saved = *slash;

			*slash = '\0';
			if (!devwl_policy_find(policy, buf)) {
				r = devwl_policy_mkdir(policy, buf);
				if (r >= 0 && !strchr(buf + 1, '/'))
					r = top_level_default(policy, buf);
				if (r < 0)
					return r;
				r = strset_add(made, buf);
				if (r < 0)
					return r;
			}
			*slash = saved;
			if (!saved)
				break;
		}
		node = devwl_policy_find(policy, path);
		if (!node)
			return -ENOENT;
		created = true;
		if (start) {
			r = strset_add(ruled, path);
			if (r < 0)
				return r;
			start_node(start, node);
		}
	}
	*ret_node = node;
	if (ret_created)
		*ret_created = created;
	return 0;
}

int policy_ensure_node(struct devwld *d, const char *path, struct devwl_node **ret_node,
		       bool *ret_created)
{
	return ensure_node(d->policy, path, &d->ondemand, &d->ruled, &d->mapping, ret_node,
			   ret_created);
}

bool policy_forget_node(struct devwld *d, const char *path)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return false;
	/* Only what we made: a node of the policy file or of devwlctl mkdir stays. */
	for (char *slash; strcmp(p, "/");) {
		ssize_t i = strset_find(&d->ondemand, p);
		int r;

		if (i < 0)
			break;
		r = devwl_policy_rmdir(d->policy, p);
		if (r == -EBUSY) /* children, or another container still uses it */
			break;
		if (r < 0 && r != -ENOENT) {
			log_msg("removing node %s: %s", p, strerror(-r));
			break;
		}
		strset_del(&d->ondemand, (size_t)i);
		i = strset_find(&d->ruled, p);
		if (i >= 0)
			strset_del(&d->ruled, (size_t)i);
		/* A change devwlctl made to it lived as long as the node. */
		edits_forget(&d->edits, p);
		bindings_forget(&d->bindings, p);
		slash = strrchr(p, '/');
		if (slash == p)
			break;
		*slash = '\0';
	}
	return !devwl_policy_find(d->policy, path);
}

/* Log why a reload failed, and say it in err (may be NULL) for devwlctl. Returns r. */
static int reload_failed(struct devwld *d, struct devwl_error *err, int r, const char *why)
{
	log_msg("reload of %s failed, keeping the current policy: %s", d->cfg.policy_file, why);
	return devwl_error_set(err, r, 0, "reload of %s failed, keeping the current policy: %s",
			       d->cfg.policy_file, why);
}

static int read_policy(struct devwld *d, char **ret_text, size_t *ret_len,
		       struct devwl_error *ret_err)
{
	struct devwl_error err = {0};
	int r = read_text(d->cfg.policy_file, POLICY_TEXT_MAX, ret_text, ret_len, &err);

	if (r < 0)
		return reload_failed(d, ret_err, r, err.msg);
	return r;
}

int policy_read(struct devwld *d, char **ret_text, size_t *ret_len)
{
	return read_policy(d, ret_text, ret_len, NULL);
}

/* Is path (a prefix of node's path, len long) node itself or one of its ancestors? */
static bool at_or_above(const char *path, size_t len, const char *node)
{
	return !strncmp(path, node, len) && (node[len] == '\0' || node[len] == '/' || len == 1);
}

/* Is path the node of more than one running container? */
static bool shared(struct devwld *d, const char *path)
{
	unsigned int n = 0;

	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next)
		if (!strcmp(container_of(l, struct container, link)->node_path, path) && ++n > 1)
			return true;
	return false;
}

/* Is path a running container's node, or above one? */
static bool in_use(struct devwld *d, const char *path)
{
	size_t len = strlen(path);

	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next)
		if (at_or_above(path, len, container_of(l, struct container, link)->node_path))
			return true;
	return false;
}

/*
 * Apply the devwlctl changes e to fresh (a policy just loaded), in order; those that still
 * apply go to kept. A change to a node that is missing was made to a node made on demand
 * for a container (edits_forget() drops the others): it is made again, as the container's
 * will be. One that no longer applies (the file's parent now refuses an allow, say) is
 * logged and dropped: what the file says then stands.
 */
/* A change line on policy: a selector's allow or deny is kept in b as a binding
 * (follow.c), any other carried out as devwlctl's. */
static int exec_change(struct devwld *d, struct devwl_policy *policy, struct bindings *b,
		       const char *line, size_t len, bool record, FILE *out)
{
	_cleanup_free_ char *node = NULL, *sel = NULL;
	char target[4096];
	bool allow = false;
	int r = binding_of_line(line, len, &node, &allow, &sel);

	if (r < 0)
		return batch_reply_error(out, r, "out of memory");
	if (r > 0)
		return follow_bind(d, policy, b, node, allow, sel, record, out);
	r = unbind_of_line(line, len, &node, &allow, &sel);
	if (r < 0)
		return batch_reply_error(out, r, "out of memory");
	if (r > 0)
		return follow_unbind(d, policy, b, node, allow, sel, record, out);
	if (len > 7 && !memcmp(line, "unbind ", 7))
		return batch_reply_error(out, -EINVAL,
					 "unbind NODE allow|deny SELECTOR [ACCESS]: as devwlctl "
					 "selectors lists the binding");
	r = edit_exec(policy, line, len, out);
	/* A node removed takes its bindings along, when a reload replays it too: one made
	 * again later starts without. */
	if (r >= 0 && len > 6 && !memcmp(line, "rmdir ", 6) &&
	    edit_target(line, len, target, sizeof(target)) >= 0)
		bindings_forget(b, target);
	return r;
}

int policy_change(struct devwld *d, const char *line, size_t len, FILE *out)
{
	return exec_change(d, d->policy, &d->bindings, line, len, true, out);
}

/* Make again the node a replayed change to path needs: path itself, or for a mkdir the
 * node it is made under. */
static int remake(struct devwld *d, struct devwl_policy *fresh, char *path, bool mkdir,
		  const struct mapping *start, struct strset *made, struct strset *ruled)
{
	if (mkdir) {
		char *slash = strrchr(path, '/');

		if (!slash || slash == path)
			return -ENOENT; /* under "/", which is always there */
		*slash = '\0';
	}
	/* Each node on the way that was made for containers is made as such, with their
	 * rules, before what lies below it (an attach leaf's shared parent, say). */
	for (char *slash = path + 1;; slash++) {
		char saved;
		int r;

		slash = strchrnul(slash, '/');
		saved = *slash;
		*slash = '\0';
		r = ensure_node(fresh, path, made, ruled,
				strset_find(&d->ruled, path) >= 0 ? start : NULL,
				&(struct devwl_node *){NULL}, NULL);
		*slash = saved;
		if (r < 0 || !saved)
			return r;
	}
}

static int replay_edits(struct devwld *d, const struct edits *e, struct devwl_policy *fresh,
			const struct mapping *start, struct strset *made, struct strset *ruled,
			struct edits *kept, struct bindings *b)
{
	for (size_t i = 0; i < e->n; i++) {
		const struct edit *x = &e->v[i];
		_cleanup_free_ char *answer = NULL;
		size_t size = 0;
		char node[4096];
		FILE *f = open_memstream(&answer, &size);
		int r;

		if (!f)
			return -ENOMEM;
		r = exec_change(d, fresh, b, x->line, x->len, false, f);
		if (r == -ENOENT && edit_target(x->line, x->len, node, sizeof(node)) >= 0 &&
		    remake(d, fresh, node, !strncmp(x->line, "mkdir ", 6), start, made, ruled) >=
			    0) {
			rewind(f);
			r = exec_change(d, fresh, b, x->line, x->len, false, f);
		}
		if (fclose(f) != 0)
			return -ENOMEM;
		if (r >= 0)
			r = edits_add(kept, x->line, x->len);
		else
			log_msg("devwlctl change \"%.200s\" no longer applies to %s (%.*s): "
				"dropped",
				x->line, d->cfg.policy_file, size ? (int)size - 1 : 0, answer);
		if (r == -ENOMEM)
			return r;
	}
	return 0;
}

static int by_length(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);

	return x < y ? -1 : x > y;
}

static int apply_text(struct devwld *d, char *text, size_t len, bool replay,
		      struct devwl_error *ret_err)
{
	_cleanup_free_ char *owned = text;
	struct devwl_policy *fresh = NULL;
	struct mapping mapping = {0};
	struct strset made = {0}, ruled = {0};
	struct edits kept = {0};
	struct bindings bindings = {0};
	struct devwl_error err = {0};
	_cleanup_free_ struct devwl_node **nodes = NULL;
	_cleanup_free_ const char **order = NULL;
	_cleanup_free_ bool *created = NULL;
	size_t i = 0, m = 0, n = 0;
	int r;

	r = policy_parse_text(d->cfg.policy_file, text, &fresh, &mapping, &bindings, &err);
	if (r < 0)
		return reload_failed(d, ret_err, r, err.msg[0] ? err.msg : strerror(-r));
	/* The file's bindings right after its nodes, before the devwlctl changes. */
	r = follow_load(d, fresh, &bindings, 0, &err);
	if (r < 0) {
		reload_failed(d, ret_err, r, err.msg[0] ? err.msg : strerror(-r));
		goto fail;
	}
	/* Sized by the list itself, not by the counter kept beside it. */
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next)
		n++;
	nodes = calloc(n + 1, sizeof(*nodes));
	created = calloc(n + 1, sizeof(*created));
	order = calloc(n + d->ruled.n + 1, sizeof(*order));
	if (!nodes || !created || !order) {
		r = reload_failed(d, ret_err, -ENOMEM, "out of memory");
		goto fail;
	}
	if (replay) {
		r = replay_edits(d, &d->edits, fresh, &mapping, &made, &ruled, &kept, &bindings);
		if (r < 0) {
			reload_failed(d, ret_err, r, strerror(-r));
			goto fail;
		}
	}
	/*
	 * First find every container's node in the new policy; only then switch, so a
	 * failure leaves everything as it was. A running container keeps its node path: a
	 * changed mapping applies to containers that start later. A node made for containers
	 * is made again as such (its "container_rules"), before what lies below it: the leaf
	 * attach made under it for one of them, say, which would otherwise make it as a bare
	 * ancestor.
	 */
	/* A node made now for one container alone is made for it; one that several are on
	 * is shared, whoever it is named after (container_owns_node()). */
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next, i++) {
		order[m] = container_of(l, struct container, link)->node_path;
		created[i] = !devwl_policy_find(fresh, order[m]) && !shared(d, order[m]);
		m++;
	}
	for (size_t k = 0; k < d->ruled.n; k++)
		if (in_use(d, d->ruled.v[k]))
			order[m++] = d->ruled.v[k];
	qsort(order, m, sizeof(*order), by_length);
	for (size_t k = 0; k < m; k++) {
		r = ensure_node(fresh, order[k], &made, &ruled, &mapping,
				&(struct devwl_node *){NULL}, NULL);
		if (r < 0) {
			snprintf(err.msg, sizeof(err.msg), "node %s, made for containers: %s",
				 order[k], strerror(-r));
			reload_failed(d, ret_err, r, err.msg);
			goto fail;
		}
	}
	i = 0;
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next, i++)
		nodes[i] = devwl_policy_find(fresh,
					     container_of(l, struct container, link)->node_path);
	/* What containers' annotations bound is theirs, not the file's nor devwlctl's: it
	 * stays for as long as they do, a reset included. */
	follow_carry(d, fresh, &bindings, &d->bindings);
	i = 0;
	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next, i++) {
		struct container *c = container_of(l, struct container, link);

		/* Cannot fail: writes to the new hierarchy, now that it is taken. */
		if (attachments_regrant(c->attached, c->nattached, nodes[i]))
			log_msg("container %s: the policy reloaded refuses devices attached to it:"
				" their nodes stay, their grants are gone (devwlctl containers "
				"--devices marks them lapsed; detach removes the nodes)",
				c->id);

		devwl_node_unref(c->node);
		c->node = nodes[i];
		/*
		 * Made for it, and made again on demand (a devwlctl change to it replayed first
		 * made it): still the container's, which goes with it, and still its own if it
		 * was (container_owns_node()). Only the policy file, or a devwlctl mkdir,
		 * makes it the policy's.
		 */
		c->created_node =
			created[i] || (c->created_node && strset_find(&made, c->node_path) >= 0);
		devwl_node_ref(c->node);
	}
	devwl_policy_free(d->policy);
	d->policy = fresh;
	mapping_clear(&d->mapping);
	d->mapping = mapping;
	strset_clear(&d->ondemand);
	d->ondemand = made;
	strset_clear(&d->ruled);
	d->ruled = ruled;
	if (!replay && d->edits.n)
		log_msg("reset: %zu devwlctl changes dropped", d->edits.n);
	edits_clear(&d->edits);
	d->edits = kept;
	bindings_clear(&d->bindings);
	d->bindings = bindings;
	free(d->policy_text);
	d->policy_text = TAKE_PTR(owned);
	d->policy_len = len;
	/* The state file is to be written again, and whoever follows the policy told. */
	if (d->store_hooks.changed)
		d->store_hooks.changed(d);
	if (d->store_hooks.policy_changed)
		d->store_hooks.policy_changed(d);
	kernelmode_policy_changed(d);
	log_msg("reloaded %s (%zu nodes, %zu container match rules, %u containers re-pointed, "
		"%zu devwlctl changes applied again)",
		d->cfg.policy_file, devwl_policy_count(fresh), mapping.nrules, d->ncontainers,
		d->edits.n);
	return 0;
fail:
	devwl_policy_free(fresh);
	mapping_clear(&mapping);
	strset_clear(&made);
	strset_clear(&ruled);
	edits_clear(&kept);
	bindings_clear(&bindings);
	return r;
}

int policy_apply_text(struct devwld *d, char *text, size_t len)
{
	return apply_text(d, text, len, true, NULL);
}

static int reload(struct devwld *d, bool replay, struct devwl_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	if (!d->cfg.policy_file) {
		log_msg("reload: devwld runs without --policy; nothing to reload");
		return devwl_error_set(err, -ENOENT, 0,
				       "devwld runs without --policy: there is no file to %s",
				       replay ? "reload" : "reset to");
	}
	r = read_policy(d, &text, &len, err);
	if (r < 0)
		return r;
	return apply_text(d, text, len, replay, err);
}

int policy_reload(struct devwld *d, struct devwl_error *err)
{
	return reload(d, true, err);
}

int policy_reset(struct devwld *d, struct devwl_error *err)
{
	return reload(d, false, err);
}

void policy_fini(struct devwld *d)
{
	devwl_policy_free(d->policy);
	d->policy = NULL;
	mapping_clear(&d->mapping);
	strset_clear(&d->ondemand);
	strset_clear(&d->ruled);
	edits_clear(&d->edits);
	bindings_clear(&d->bindings);
	free(d->policy_text);
	d->policy_text = NULL;
}
