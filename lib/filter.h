/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The calls the devwl filter traps, by (seccomp_data.arch, nr), for the handler. */
#ifndef DEVWL_FILTER_H
#define DEVWL_FILTER_H

#include <stdbool.h>
#include <stdint.h>

enum devwl_call {
	DEVWL_CALL_NONE = 0,
	DEVWL_CALL_OPEN,
	DEVWL_CALL_OPENAT,
	DEVWL_CALL_OPENAT2,
	DEVWL_CALL_CREAT,
	DEVWL_CALL_MKNOD,
	DEVWL_CALL_MKNODAT,
	DEVWL_CALL_OPEN_BY_HANDLE_AT,
	/* DEVWL_FILTER_TWINS: a twin of devwl's is unmounted before these go on. */
	DEVWL_CALL_UNLINK,
	DEVWL_CALL_UNLINKAT,
	DEVWL_CALL_RENAME,
	DEVWL_CALL_RENAMEAT,
	DEVWL_CALL_RENAMEAT2,
};

struct devwl_syscall {
	uint32_t arch;	  /* AUDIT_ARCH_* as in seccomp_data */
	int32_t nr;	  /* as in seccomp_data (x32 numbers carry __X32_SYSCALL_BIT) */
	uint8_t call;	  /* enum devwl_call */
	bool compat32;	  /* a 32-bit ABI: pointers and longs are 32 bits wide */
	bool x32;	  /* x32: 64-bit registers, which devwl does not read: always EPERM */
	const char *name; /* static */
};

/*
 * Build the (arch, nr) table once (thread-safe, idempotent); libseccomp resolves the
 * names here so that the fast path never does. Errors: -ENOMEM, -EOPNOTSUPP.
 */
int filter_table_init(void);

/* The entry for a notification, or NULL (a call devwl does not trap). No allocation. */
const struct devwl_syscall *filter_syscall_lookup(uint32_t arch, int32_t nr);

#endif
