/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File and socket helpers shared by libdevwl, devwld and the tools (base/fileio.c). */
#ifndef DEVWL_FILEIO_H
#define DEVWL_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* write(2) all of buf, across short writes and EINTR. 0 or -errno. */
int devwl_write_all(int fd, const char *buf, size_t len);

/* Read fd to its end, at most max bytes, into a NUL-terminated heap string (caller
 * frees). Its length (a NUL read is kept: the length says where the text ends), -E2BIG
 * (more than max), -ENOMEM, or -errno of read(2). */
ssize_t devwl_read_all(int fd, size_t max, char **ret_text);

/* Read fd to its end, or until buf[0..size-1) is full, and NUL-terminate: the length, or
 * a negative errno. */
ssize_t devwl_read_into(int fd, char *buf, size_t size);

/*
 * Replace file with text so that a crash leaves the old or the new file, never a mix:
 * a temporary file in the same directory, fsync, rename, fsync of the directory.
 * mode: the file's permissions, or -1 to keep those of the file it replaces (0644 for
 * a new one). 0 or -errno (-ENOENT: the directory is missing).
 */
int devwl_write_file_atomic(const char *file, const char *text, int mode);

/* Make the directories above path (not path itself), 0755, as mkdir -p. 0 or -errno. */
int devwl_mkdir_parents(const char *path);

/* The id of the mount fd is on (statx STATX_MNT_ID): 0 or -errno (-EOPNOTSUPP: the kernel
 * gave none). Two fds on one mount have one id, whatever is mounted over their names. */
int devwl_fd_mount_id(int fd, uint64_t *ret_id);

/* A connected SOCK_STREAM AF_UNIX socket (O_CLOEXEC) to path, or -errno. */
int devwl_unix_connect(const char *path);

#endif
