/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "access.h"
#include "cdi.h"
#include "rulevec.h"
#include "selector.h"
#include "sysfsid.h"
#include "util.h"

const struct selector_kind_info selector_kinds[SELECTOR_KIND_MAX] = {
#define ROW(k, prefix, arg) [SELECTOR_##k] = {prefix, arg},
	SELECTOR_KINDS(ROW)
#undef ROW
};

/* Joined at compile time, each after ", ": the text starts two bytes in. */
#define JOIN_PREFIX(k, prefix, arg) ", " prefix
static const char prefix_list[] = SELECTOR_KINDS(JOIN_PREFIX);

/* Where udev's by-id and by-path links live below /dev. */
static const char *const link_dirs[] = {"disk", "serial", "input", "snd", "v4l"};

int selector_kind_of(const char *text, size_t len)
{
	while (len && isspace((unsigned char)*text)) {
		text++;
		len--;
	}
	for (size_t i = 0; i < ARRAY_SIZE(selector_kinds); i++) {
		size_t p = strlen(selector_kinds[i].prefix);

		if (len >= p && !memcmp(text, selector_kinds[i].prefix, p))
			return (int)i;
	}
	return -1;
}

bool selector_is(const char *text, size_t len)
{
	return selector_kind_of(text, len) >= 0;
}

const char *selector_prefixes(void)
{
	return prefix_list + 2;
}

static void warn(const struct selector_env *env, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warn(const struct selector_env *env, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!env->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	env->warn(env->userdata, msg);
}

static bool hex4(const char *s, size_t len)
{
	if (len != 4)
		return false;
	for (size_t i = 0; i < 4; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static int usb_query(const char *sel, const char *arg, struct sysfsid_query *q, char *ids,
		     struct devwl_error *err)
{
	const char *c1 = strchr(arg, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	size_t pid_len = c1 ? (c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1)) : 0;

	if (!c1 || !hex4(arg, (size_t)(c1 - arg)) || !hex4(c1 + 1, pid_len) || (c2 && !c2[1]))
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: expected usb:VID:PID[:SERIAL], VID and PID four hex "
				       "digits",
				       sel);
	/* ids: "VVVV\0PPPP\0" */
	memcpy(ids, arg, 4);
	ids[4] = '\0';
	memcpy(ids + 5, c1 + 1, 4);
	ids[9] = '\0';
	q->kind = SYSFSID_USB;
	q->vid = ids;
	q->pid = ids + 5;
	q->serial = c2 ? c2 + 1 : NULL;
	return 0;
}

/*
 * by-id:NAME / by-path:NAME: the node each link of that name leads to. Only udev's
 * symbolic links count: devtmpfs makes a node at whatever path a device's kernel name
 * says, and a CUSE server names its device as it likes ("serial!by-id!NAME" is
 * /dev/serial/by-id/NAME), so a node there is no link udev made. A link to a loop device
 * is not followed either: udev names one by what it holds (lvm-pv-uuid-...), which is
 * whoever writes its backing file's (sysfsid_is_loop()).
 */
static int by_link(const struct selector_env *env, const char *sel, const char *kind,
		   const char *name, uint8_t access, struct rulevec *rv, struct devwl_error *err)
{
	const char *dev = env->dev ? env->dev : "/dev";
	const char *sysfs = env->sysfs ? env->sysfs : "/sys";

	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return devwl_error_set(err, -EINVAL, 0, "%s: expected %s:NAME, a link's name", sel,
				       kind);
	for (size_t i = 0; i < ARRAY_SIZE(link_dirs); i++) {
		char path[PATH_MAX];
		struct stat st;
		struct devwl_rule rule = {.access = access};

		if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s/%s", dev, link_dirs[i], kind,
				     name) >= sizeof(path) ||
		    lstat(path, &st) < 0 || !S_ISLNK(st.st_mode) || stat(path, &st) < 0 ||
		    !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) ||
		    (S_ISBLK(st.st_mode) &&
		     sysfsid_is_loop(sysfs, major(st.st_rdev), minor(st.st_rdev))))
			continue;
		rule.type = S_ISCHR(st.st_mode) ? DEVWL_DEV_CHAR : DEVWL_DEV_BLOCK;
		rule.major = major(st.st_rdev);
		rule.minor = minor(st.st_rdev);
		if (rulevec_add(rv, &rule) < 0)
			return devwl_error_set(err, -ENOMEM, 0, "out of memory");
	}
	rulevec_sort(rv);
	return 0;
}

static int by_cdi(const struct selector_env *env, const char *sel, const char *arg, uint8_t access,
		  struct rulevec *rv, struct devwl_error *err)
{
	const char *slash = strchr(arg, '/'), *eq = strchr(arg, '=');
	struct cdi_registry *reg = NULL;
	char kind[320];
	int r;

	if (!slash || !eq || eq < slash || !cdi_vendor_valid(arg, (size_t)(slash - arg)) ||
	    !cdi_class_valid(slash + 1, (size_t)(eq - slash - 1)) ||
	    (strcmp(eq + 1, "*") && !cdi_name_valid(eq + 1, strlen(eq + 1))) ||
	    (size_t)(eq - arg) >= sizeof(kind))
		return devwl_error_set(err, -EINVAL, 0,
				       "%s: expected cdi:VENDOR/CLASS=NAME (NAME * for every "
				       "device of the kind)",
				       sel);
	memcpy(kind, arg, (size_t)(eq - arg));
	kind[eq - arg] = '\0';
	if (env->cdi)
		r = 0;
	else if (env->cdi_dirs)
		r = cdi_load(env->cdi_dirs, env->n_cdi_dirs, &reg);
	else
		r = cdi_load(cdi_default_dirs, ARRAY_SIZE(cdi_default_dirs), &reg);
	if (r < 0)
		return devwl_error_set(err, r, 0, "%s: %s", sel, strerror(-r));
	for (size_t i = 0; reg && i < cdi_n_errors(reg); i++)
		warn(env, "CDI: %s", cdi_error(reg, i));
	r = cdi_resolve(env->cdi ? env->cdi : reg, kind, eq + 1, access, rv, err);
	cdi_free(reg);
	if (r < 0 && err) {
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err->msg);
		return devwl_error_set(err, r, 0, "%s: %s", sel, why);
	}
	return r < 0 ? r : 0;
}

/* sel (NUL-terminated, no access; a selector of kind) with access into rv. */
static int resolve(const struct selector_env *env, enum selector_kind kind, const char *sel,
		   uint8_t access, struct rulevec *rv, struct devwl_error *err)
{
	const char *arg = sel + strlen(selector_kinds[kind].prefix);
	struct sysfsid_query q = {.value = arg};
	char ids[10];
	int r;

	switch (kind) {
	case SELECTOR_CDI:
		return by_cdi(env, sel, arg, access, rv, err);
	case SELECTOR_BY_ID:
		return by_link(env, sel, "by-id", arg, access, rv, err);
	case SELECTOR_BY_PATH:
		return by_link(env, sel, "by-path", arg, access, rv, err);
	case SELECTOR_USB:
		r = usb_query(sel, arg, &q, ids, err);
		if (r < 0)
			return r;
		break;
	case SELECTOR_SUBSYSTEM:
		q.kind = SYSFSID_SUBSYSTEM;
		if (strchr(arg, '/'))
			return devwl_error_set(err, -EINVAL, 0, "%s: a subsystem has no '/'", sel);
		break;
	case SELECTOR_WWID:
		q.kind = SYSFSID_WWID;
		break;
	case SELECTOR_SERIAL:
		q.kind = SYSFSID_SERIAL;
		break;
	case SELECTOR_LOOP:
		q.kind = SYSFSID_LOOP;
		if (*arg && arg[0] != '/')
			return devwl_error_set(err, -EINVAL, 0, "%s: expected loop:/PATH", sel);
		break;
	case SELECTOR_KIND_MAX:
		return -EINVAL;
	}
	if (!*arg)
		return devwl_error_set(err, -EINVAL, 0, "%s: nothing after the ':'", sel);
	r = sysfsid_find(env->sysfs ? env->sysfs : "/sys", env->udev ? env->udev : "/run/udev/data",
			 env->dev ? env->dev : "/dev", &q, access, rv, err);
	if (r < 0 && err) {
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err->msg);
		return devwl_error_set(err, r, 0, "%s: %s", sel, why);
	}
	return r < 0 ? r : 0;
}

int selector_resolve(const struct selector_env *env, const char *text, size_t len,
		     struct devwl_rule **ret_rules, size_t *ret_n, struct devwl_error *ret_err)
{
	static const struct selector_env host = {0};
	_cleanup_free_ char *sel = NULL;
	struct rulevec rv = {0};
	uint8_t access = DEVWL_ACC_MASK;
	size_t end, word;
	int kind, r;

	if (!env)
		env = &host;
	if (memchr(text, '\0', len))
		return devwl_error_set(ret_err, -EINVAL, 0, "a selector holding a NUL byte");
	while (len && isspace((unsigned char)*text)) {
		text++;
		len--;
	}
	while (len && isspace((unsigned char)text[len - 1]))
		len--;
	if (len > PATH_MAX)
		return devwl_error_set(ret_err, -E2BIG, 0, "a selector longer than %d bytes",
				       PATH_MAX);
	/* The last word is the access wherever there is more than one. */
	end = len;
	for (word = len; word > 0 && !isspace((unsigned char)text[word - 1]); word--)
		;
	if (word > 0) {
		if (devwl_access_parse(text + word, len - word, &access) < 0)
			return devwl_error_set(ret_err, -EINVAL, word,
					       "%.*s: bad access \"%.*s\" (r, w and m, each once)",
					       (int)word, text, (int)(len - word), text + word);
		for (end = word; end > 0 && isspace((unsigned char)text[end - 1]); end--)
			;
	}
	sel = strndup(text, end);
	if (!sel)
		return -ENOMEM;
	kind = selector_kind_of(sel, end);
	if (kind < 0)
		return devwl_error_set(ret_err, -EINVAL, 0, "\"%s\": not a selector (%s)", sel,
				       selector_prefixes());
	r = resolve(env, (enum selector_kind)kind, sel, access, &rv, ret_err);
	if (r < 0) {
		free(rv.v);
		return r;
	}
	if (rv.n == 0)
		warn(env, "%s: matches no device now", sel);
	*ret_rules = rv.v;
	*ret_n = rv.n;
	return 0;
}

int selector_resolve_rule(const struct selector_env *env, const char *text, size_t len,
			  struct devwl_rule **ret_rules, size_t *ret_n, struct devwl_error *ret_err)
{
	struct devwl_rule *one;
	int r;

	if (selector_is(text, len))
		return selector_resolve(env, text, len, ret_rules, ret_n, ret_err);
	if (devwl_devname_is_name(text, len))
		return devwl_devname_resolve(text, len, NULL, ret_rules, ret_n, ret_err);
	one = malloc(sizeof(*one));
	if (!one)
		return -ENOMEM;
	r = devwl_rule_parse(text, len, one, ret_err);
	if (r < 0) {
		free(one);
		return r;
	}
	*ret_rules = one;
	*ret_n = 1;
	return 0;
}
