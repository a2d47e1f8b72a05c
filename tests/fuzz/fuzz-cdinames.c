/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: the value of a cdi.k8s.io/ annotation (supervisor/format/cdinames.c), which a
 * pod author may write: any bytes up to the first NUL, as json-c hands devwld a string.
 * Every name kept must be one the CDI grammar accepts (VENDOR/CLASS=NAME, no wildcard),
 * kept once; every refusal is bounded and shown as plain ASCII.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cdinames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_shown(const char *s)
{
	if (strlen(s) > 128)
		abort();
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cdi_names n = {0};
	char *value;

	if (size > 65536)
		return 0;
	value = malloc(size + 1);
	if (!value)
		return 0;
	memcpy(value, data, size);
	value[size] = '\0';
	if (cdi_names_add("cdi.k8s.io/fuzz", value, &n) == 0) {
		if (n.n > CDI_NAMES_MAX || n.nbad > CDI_BAD_MAX)
			abort();
		for (size_t i = 0; i < n.n; i++) {
			const char *s = n.names[i], *slash = strchr(s, '/'), *eq = strchr(s, '=');

			if (!slash || !eq || eq < slash || !strcmp(eq, "=*") || strchr(s, ',') ||
			    !strstr(value, s))
				abort();
			for (size_t j = 0; j < i; j++)
				if (!strcmp(n.names[j], s))
					abort();
		}
		for (size_t i = 0; i < n.nbad; i++) {
			check_shown(n.bad[i].key);
			check_shown(n.bad[i].item);
			if (!n.bad[i].why)
				abort();
		}
	}
	cdi_names_clear(&n);
	free(value);
	return 0;
}
