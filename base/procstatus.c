/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "procstatus.h"
#include "util.h"

/* "/proc/" (when from is AT_FDCWD), the decimal tid, "/status" and a NUL at p. */
static void status_path(char *p, int proc_fd, pid_t tid)
{
	char digits[24];
	size_t n = 0;
	unsigned long v = (unsigned long)tid;

	if (proc_fd == AT_FDCWD) {
		memcpy(p, "/proc/", 6);
		p += 6;
	}
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = digits[--n];
	memcpy(p, "/status", sizeof("/status"));
}

ssize_t devwl_proc_status_read(int proc_fd, pid_t tid, char *buf, size_t size)
{
	_cleanup_close_ int fd = -1;
	char path[48];

	if (size == 0)
		return -EINVAL;
	status_path(path, proc_fd, tid);
	fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	return devwl_read_into(fd, buf, size);
}

const char *devwl_proc_status_field(const char *status, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strchr(status, '\n'); p; p = strchr(p + 1, '\n'))
		if (!strncmp(p + 1, name, n) && p[1 + n] == ':' && p[2 + n] == '\t')
			return p + 3 + n;
	return NULL;
}
