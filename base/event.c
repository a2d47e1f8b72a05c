/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>

#include "event.h"

void devwl_event_init(struct devwl_event *ret, uint64_t id, pid_t tid, int syscall_nr,
		      const char *syscall)
{
	bool kernel = syscall_nr < 0;

	*ret = (struct devwl_event){
		.id = id,
		.tid = tid,
		.syscall_nr = syscall_nr,
		.syscall = syscall  ? syscall
			   : kernel ? NULL
				    : "unknown",
		.path = kernel ? NULL : "",
		.verdict = DEVWL_VERDICT_DENY,
		.error = EPERM,
	};
}
