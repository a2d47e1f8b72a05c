/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "access.h"
#include "devwl.h"

int devwl_access_parse(const char *s, size_t len, uint8_t *ret)
{
	uint8_t acc = 0;

	if (len == 0 || len > 3)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		uint8_t bit = s[i] == 'r'   ? DEVWL_ACC_READ
			      : s[i] == 'w' ? DEVWL_ACC_WRITE
			      : s[i] == 'm' ? DEVWL_ACC_MKNOD
					    : 0;

		if (!bit || (acc & bit))
			return -EINVAL;
		acc |= bit;
	}
	*ret = acc;
	return 0;
}

char *devwl_access_text(unsigned int access, char buf[static 4])
{
	char *p = buf;

	if (access & DEVWL_ACC_READ)
		*p++ = 'r';
	if (access & DEVWL_ACC_WRITE)
		*p++ = 'w';
	if (access & DEVWL_ACC_MKNOD)
		*p++ = 'm';
	*p = '\0';
	return buf;
}

int devwl_rule_key_cmp(const void *a, const void *b)
{
	const struct devwl_rule *x = a, *y = b;

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->major != y->major)
		return x->major < y->major ? -1 : 1;
	if (x->minor != y->minor)
		return x->minor < y->minor ? -1 : 1;
	return 0;
}
