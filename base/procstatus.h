/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A thread's /proc/TID/status, read and searched one way (procstatus.c): libdevwl reads
 * a caller's credentials from it, the audit the process a record names. One parser, so
 * that both agree on what a field is and a decision never reads the file twice for them.
 */
#ifndef DEVWL_PROCSTATUS_H
#define DEVWL_PROCSTATUS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read TID/status under proc_fd (an fd of a procfs instance; AT_FDCWD: /proc) into buf,
 * NUL-terminated. Returns its length, size - 1 when the file did not fit (the caller
 * decides whether a file cut short will do), or a negative errno (-ENOENT: the thread
 * is gone). Allocates nothing and formats nothing: the handler's fast path calls it.
 */
ssize_t devwl_proc_status_read(int proc_fd, pid_t tid, char *buf, size_t size);

/* The value of the field "Name:" of a status text (after its tab), or NULL. name
 * without the colon ("Tgid"); never the first line's (Name: itself). */
const char *devwl_proc_status_field(const char *status, const char *name);

#endif
