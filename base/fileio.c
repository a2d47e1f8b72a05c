/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "array.h"
#include "fileio.h"
#include "util.h"

int devwl_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negerrno();
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t devwl_read_into(int fd, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return -EINVAL;
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negerrno();
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

ssize_t devwl_read_all(int fd, size_t max, char **ret_text)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		/* Room for a page-sized read at least, and the NUL; a fill short of the room
		 * is the end of the file. */
		int r = ARRAY_RESERVE(buf, cap, len + 4096);
		size_t room = cap - len;
		ssize_t n;

		if (r < 0)
			return r;
		n = devwl_read_into(fd, buf + len, room);
		if (n < 0)
			return n;
		len += (size_t)n;
		if (len > max)
			return -E2BIG;
		if ((size_t)n < room - 1)
			break;
	}
	*ret_text = TAKE_PTR(buf);
	return (ssize_t)len;
}

int devwl_write_file_atomic(const char *file, const char *text, int mode)
{
	_cleanup_free_ char *dir = NULL, *tmp = NULL;
	_cleanup_close_ int fd = -1, dfd = -1;
	const char *slash = NULL, *base = NULL;
	struct stat st;
	int r = 0;

	if (!file || !*file || !text)
		return -EINVAL;
	slash = strrchr(file, '/');
	base = slash ? slash + 1 : file;
	if (!*base)
		return -EISDIR;
	dir = slash ? strndup(file, slash == file ? 1 : (size_t)(slash - file)) : strdup(".");
	/* A hidden name beside the file: same filesystem, so the rename is atomic. */
	if (!dir || asprintf(&tmp, "%.*s.%s.XXXXXX", (int)(base - file), file, base) < 0) {
		tmp = NULL;
		return -ENOMEM;
	}
	if (mode < 0)
		mode = stat(file, &st) == 0 ? (int)(st.st_mode & 07777) : 0644;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return negerrno();
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	r = devwl_write_all(fd, text, strlen(text));
	if (r >= 0 && fchmod(fd, (mode_t)mode) < 0)
		r = negerrno();
	/* The data must be on disk before the rename makes it the file. */
	if (r >= 0 && fsync(fd) < 0)
		r = negerrno();
	if (r >= 0 && close(TAKE_FD(fd)) < 0)
		r = negerrno();
	if (r >= 0 && rename(tmp, file) < 0)
		r = negerrno();
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	/* And the rename itself must survive a crash. */
	if (fsync(dfd) < 0)
		return negerrno();
	return 0;
}

int devwl_unix_connect(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	_cleanup_close_ int fd = -1;
	size_t len = path ? strlen(path) : 0;

	if (len == 0)
		return -EINVAL;
	if (len >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, len + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return negerrno();
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return negerrno();
	return TAKE_FD(fd);
}

int devwl_mkdir_parents(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);

	if (!copy)
		return -ENOMEM;
	for (char *p = copy + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			return negerrno();
		*p = '/';
	}
	return 0;
}

int devwl_fd_mount_id(int fd, uint64_t *ret_id)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0)
		return negerrno();
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	*ret_id = stx.stx_mnt_id;
	return 0;
}
