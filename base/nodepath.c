/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "nodepath.h"

int devwl_node_path_valid(const char *path)
{
	size_t len, comp = 0;

	if (!path || path[0] != '/')
		return -EINVAL;
	len = strlen(path);
	if (len >= DEVWL_NODE_PATH_MAX)
		return -EINVAL;
	if (len == 1)
		return 0;
	if (path[len - 1] == '/')
		return -EINVAL;
	for (size_t i = 1; i <= len; i++) {
		unsigned char c = (unsigned char)path[i];
		if (c == '/' || c == '\0') {
			const char *name = path + i - comp;
			if (comp == 0 || comp > DEVWL_NODE_NAME_MAX ||
			    (comp == 1 && name[0] == '.') ||
			    (comp == 2 && name[0] == '.' && name[1] == '.'))
				return -EINVAL;
			comp = 0;
			continue;
		}
		/* Control characters, and the kernel's spaces (0xa0 too: lib/rules.c). */
		if (c <= ' ' || c == 0x7f || c == 0xa0)
			return -EINVAL;
		comp++;
	}
	return 0;
}
