/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "uevent.h"

int uevent_parse(const char *buf, size_t n, struct uevent *ret)
{
	const char *at, *end = buf + n;

	*ret = (struct uevent){0};
	if (n < 4 || buf[n - 1] != '\0')
		return -EINVAL;
	at = memchr(buf, '@', strlen(buf));
	if (!at || at == buf || !at[1])
		return -EINVAL;
	for (const char *p = buf + strlen(buf) + 1; p < end; p += strlen(p) + 1) {
		if (!strncmp(p, "ACTION=", 7))
			ret->action = p + 7;
		else if (!strncmp(p, "DEVPATH=", 8))
			ret->devpath = p + 8;
		else if (!strncmp(p, "SUBSYSTEM=", 10))
			ret->subsystem = p + 10;
		else if (!strncmp(p, "MAJOR=", 6))
			ret->has_devnum = true;
	}
	/* The header says the same: the keys are what count, and both must be there. */
	if (!ret->action || !ret->devpath)
		return -EINVAL;
	return 0;
}

bool uevent_matters(const struct uevent *ev)
{
	static const char *const actions[] = {"add", "remove", "change", "move"};

	if (!ev->has_devnum)
		return false;
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (!strcmp(ev->action, actions[i]))
			return true;
	return false;
}
