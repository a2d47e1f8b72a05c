/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Device names beside the kernel's numbers (devwl.h). A path is one stat(2); a
 * char-NAME/block-NAME is looked up in the "Character devices:" or "Block devices:"
 * section of /proc/devices, where one name can hold several majors (pts: 136-143) and
 * every one of them becomes a rule.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "access.h"
#include "devwl.h"
#include "fileio.h"
#include "rules.h"
#include "util.h"

DEVWL_EXPORT bool devwl_devname_is_name(const char *text, size_t len)
{
	size_t i = 0;

	while (i < len && rules_kspace((unsigned char)text[i]))
		i++;
	text += i;
	len -= i;
	return (len >= 1 && text[0] == '/') || (len >= 5 && !memcmp(text, "char-", 5)) ||
	       (len >= 6 && !memcmp(text, "block-", 6));
}

/* One more rule: a name resolves to a handful, grown one at a time. */
static int push(struct devwl_rule **v, size_t *n, const struct devwl_rule *rule)
{
	struct devwl_rule *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	nv[(*n)++] = *rule;
	*v = nv;
	return 0;
}

/*
 * Every major listed under a name matching pattern in the section of /proc/devices for
 * type: lines "%3d NAME" after "Character devices:" or "Block devices:", a blank line
 * between the sections. Lines that do not look like that are skipped.
 */
static int majors_named(const char *text, uint8_t type, const char *pattern, struct devwl_rule **v,
			size_t *n, uint8_t access)
{
	const char *header = type == DEVWL_DEV_CHAR ? "Character devices:" : "Block devices:";
	bool in_section = false;
	char line[256];

	while (*text) {
		size_t l = strcspn(text, "\n");
		char *p = line, *end = NULL;
		unsigned long major;

		if (l >= sizeof(line)) {
			text += l + (text[l] == '\n');
			continue;
		}
		memcpy(line, text, l);
		line[l] = '\0';
		text += l + (text[l] == '\n');
		if (line[0] != ' ' && !(line[0] >= '0' && line[0] <= '9')) {
			in_section = !strcmp(line, header);
			continue;
		}
		if (!in_section)
			continue;
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			continue;
		errno = 0;
		major = strtoul(p, &end, 10);
		if (errno || major > UINT32_MAX - 1 || *end != ' ')
			continue;
		while (*end == ' ')
			end++;
		if (*end && fnmatch(pattern, end, 0) == 0) {
			struct devwl_rule r = {.type = type,
					       .access = access,
					       .major = (uint32_t)major,
					       .minor = DEVWL_ANY};
			bool dup = false;

			for (size_t i = 0; i < *n; i++)
				dup |= (*v)[i].major == r.major;
			if (!dup && push(v, n, &r) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* /proc/devices says its size is 0: read to EOF, 1 MiB at most. */
static int read_proc_devices(char **ret)
{
	_cleanup_close_ int fd = open("/proc/devices", O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return negerrno();
	len = devwl_read_all(fd, 1 << 20, ret);
	return len == -E2BIG ? -EFBIG : len < 0 ? (int)len : 0;
}

DEVWL_EXPORT int devwl_devname_resolve(const char *text, size_t len, const char *proc_devices,
				       struct devwl_rule **ret_rules, size_t *ret_n,
				       struct devwl_error *ret_err)
{
	_cleanup_free_ char *name = NULL, *own_devices = NULL;
	_cleanup_free_ struct devwl_rule *v = NULL;
	const char *acc = NULL;
	size_t i = 0, n = 0, name_len = 0, acc_len = 0;
	uint8_t access = DEVWL_ACC_MASK;
	int r;

	while (len && rules_kspace((unsigned char)text[len - 1]))
		len--;
	while (i < len && rules_kspace((unsigned char)text[i]))
		i++;
	text += i;
	len -= i;
	if (len > DEVWL_DEVNAME_MAX)
		return devwl_error_set(ret_err, -E2BIG, 0, "device name longer than %d bytes",
				       DEVWL_DEVNAME_MAX);
	if (memchr(text, '\0', len))
		return devwl_error_set(ret_err, -EINVAL, 0, "device name holds a NUL byte");
	while (name_len < len && !rules_kspace((unsigned char)text[name_len]))
		name_len++;
	name = strndup(text, name_len);
	if (!name)
		return -ENOMEM;
	if (!devwl_devname_is_name(name, name_len))
		return devwl_error_set(
			ret_err, -EINVAL, 0,
			"\"%s\": not a device name (/dev/PATH, char-NAME, block-NAME)", name);
	for (i = name_len; i < len && rules_kspace((unsigned char)text[i]); i++)
		;
	if (i < len) {
		acc = text + i;
		acc_len = len - i;
		if (devwl_access_parse(acc, acc_len, &access) < 0)
			return devwl_error_set(ret_err, -EINVAL, i,
					       "%s: bad access \"%.*s\" (r, w and m, each once)",
					       name, (int)acc_len, acc);
	}

	if (name[0] == '/') {
		struct stat st;
		struct devwl_rule rule = {.access = access};

		if (stat(name, &st) < 0) {
			r = negerrno();
			return devwl_error_set(ret_err, r, 0, "%s: %s", name, strerror(-r));
		}
		if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
			return devwl_error_set(ret_err, -EINVAL, 0,
					       "%s: not a character or block device", name);
		rule.type = S_ISCHR(st.st_mode) ? DEVWL_DEV_CHAR : DEVWL_DEV_BLOCK;
		rule.major = major(st.st_rdev);
		rule.minor = minor(st.st_rdev);
		if (push(&v, &n, &rule) < 0)
			return -ENOMEM;
	} else {
		bool is_char = name[0] == 'c';
		const char *pattern = name + (is_char ? 5 : 6);

		if (!*pattern)
			return devwl_error_set(ret_err, -EINVAL, 0, "%s: no name after the '-'",
					       name);
		if (!proc_devices) {
			r = read_proc_devices(&own_devices);
			if (r < 0)
				return devwl_error_set(ret_err, r, 0, "%s: /proc/devices: %s", name,
						       strerror(-r));
			proc_devices = own_devices;
		}
		r = majors_named(proc_devices, is_char ? DEVWL_DEV_CHAR : DEVWL_DEV_BLOCK, pattern,
				 &v, &n, access);
		if (r < 0)
			return r;
		if (n == 0)
			return devwl_error_set(ret_err, -ENOENT, 0,
					       "%s: /proc/devices lists no %s device major named "
					       "\"%s\"",
					       name, is_char ? "character" : "block", pattern);
	}
	*ret_rules = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}
