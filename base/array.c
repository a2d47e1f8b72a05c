/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

#define ARRAY_MIN 8

int devwl_array_reserve(void *items, size_t *cap, size_t want, size_t size)
{
	size_t n = *cap ? *cap : ARRAY_MIN;
	void *v = NULL;

	if (want <= *cap)
		return 0;
	while (n < want) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (size && n > SIZE_MAX / size)
		return -ENOMEM;
	/* items points at a T *, not a void *: copied as bytes, not read through void **,
	 * so no pointer is accessed as another type. */
	memcpy(&v, items, sizeof(v));
	v = realloc(v, n * size);
	if (!v)
		return -ENOMEM;
	memcpy(items, &v, sizeof(v));
	*cap = n;
	return 0;
}
