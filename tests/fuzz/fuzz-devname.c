/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for device names (lib/devname.c). The input's first line is the name
 * (char-NAME/block-NAME; paths are turned into char- names so the fuzzer does not stat
 * the file system), the rest is the /proc/devices text it is resolved against. A name
 * resolves or is refused with a coherent error; every rule it resolves to is one the
 * kernel's grammar accepts and prints back to the same rule.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devwl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	size_t name_len = nl ? (size_t)(nl - (const char *)data) : size;
	char *name = NULL, *devices = NULL;
	struct devwl_rule *rules = NULL;
	struct devwl_error err = {0};
	size_t n = 0;
	int r;

	name = malloc(name_len + 1);
	devices = malloc(size - name_len + 1);
	check(name && devices);
	memcpy(name, data, name_len);
	name[name_len] = '\0';
	for (size_t i = 0; i < name_len; i++)
		if (name[i] == '/')
			name[i] = '-';
	memcpy(devices, data + name_len, size - name_len);
	devices[size - name_len] = '\0';

	r = devwl_devname_resolve(name, name_len, devices, &rules, &n, &err);
	if (r < 0) {
		check(r == -EINVAL || r == -ENOENT || r == -E2BIG || r == -ENOMEM);
		check(err.code == r && err.msg[0]);
		check(!rules);
	} else {
		check(n >= 1 && rules);
		for (size_t i = 0; i < n; i++) {
			char s[DEVWL_RULE_STR_MAX];
			struct devwl_rule back;
			int len = devwl_rule_format(&rules[i], s, sizeof(s));

			check(len > 0);
			check(devwl_rule_parse(s, (size_t)len, &back, NULL) == 0);
			check(back.type == rules[i].type && back.major == rules[i].major &&
			      back.minor == rules[i].minor && back.access == rules[i].access);
			check(rules[i].minor == DEVWL_ANY && rules[i].major != DEVWL_ANY);
		}
	}
	free(rules);
	free(name);
	free(devices);
	return 0;
}
