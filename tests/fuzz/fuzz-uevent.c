/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: a message from the uevent socket (supervisor/format/uevent.c), as devwld
 * receives it: any bytes, NUL-terminated as front/uevents.c terminates them. What parses
 * has an action and a device path inside the message; nothing is read past its end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uevent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf;
	struct uevent ev;

	if (size > 8192)
		return 0;
	/* An exact-size copy: ASan catches a read past it. */
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (uevent_parse(buf, size + 1, &ev) == 0) {
		if (!ev.action || !ev.devpath || ev.action < buf || ev.action >= buf + size + 1 ||
		    ev.devpath < buf || ev.devpath >= buf + size + 1)
			abort();
		(void)uevent_matters(&ev);
	}
	free(buf);
	return 0;
}
