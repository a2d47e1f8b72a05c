/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Prints the layout of include/devwl.h as this compiler sees it: the size and alignment of
 * every public struct and enum, the offset and size of every struct member, and the value
 * of every constant. abi.sh compares it with the committed table of the data model, so a
 * change a caller compiled against the old header would misread fails a test.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "devwl.h"

/* One line each: what, name, then size and alignment, offset and size, or value. */
#define STRUCT(s) printf("struct %s %zu %zu\n", #s, sizeof(struct s), alignof(struct s))
#define ENUM(e)	  printf("enum %s %zu %zu\n", #e, sizeof(enum e), alignof(enum e))
#define MEMBER(s, m)                                                                               \
	printf("member %s.%s %zu %zu\n", #s, #m, offsetof(struct s, m), sizeof(((struct s *)0)->m))
#define VALUE(c) printf("value %s %llu\n", #c, (unsigned long long)(c))

int main(void)
{
	/* Layouts differ between data models (i386 aligns uint64_t to 4): one table each. */
	printf("model %s%zu-u64align%zu\n", sizeof(long) == 8 ? "lp" : "ilp", sizeof(void *) * 8,
	       alignof(uint64_t));

	STRUCT(devwl_rule);
	MEMBER(devwl_rule, type);
	MEMBER(devwl_rule, access);
	MEMBER(devwl_rule, major);
	MEMBER(devwl_rule, minor);

	STRUCT(devwl_error);
	MEMBER(devwl_error, code);
	MEMBER(devwl_error, offset);
	MEMBER(devwl_error, msg);
	MEMBER(devwl_error, reserved);

	STRUCT(devwl_event);
	MEMBER(devwl_event, id);
	MEMBER(devwl_event, pid);
	MEMBER(devwl_event, tid);
	MEMBER(devwl_event, syscall_nr);
	MEMBER(devwl_event, syscall);
	MEMBER(devwl_event, path);
	MEMBER(devwl_event, type);
	MEMBER(devwl_event, major);
	MEMBER(devwl_event, minor);
	MEMBER(devwl_event, access);
	MEMBER(devwl_event, verdict);
	MEMBER(devwl_event, error);
	MEMBER(devwl_event, handling_ns);
	MEMBER(devwl_event, userns_ino);
	MEMBER(devwl_event, reserved);
	STRUCT(devwl_denial);
	MEMBER(devwl_denial, type);
	MEMBER(devwl_denial, major);
	MEMBER(devwl_denial, minor);
	MEMBER(devwl_denial, access);
	MEMBER(devwl_denial, pid);
	MEMBER(devwl_denial, tid);
	MEMBER(devwl_denial, cgroup_id);
	MEMBER(devwl_denial, count);
	MEMBER(devwl_denial, allowed);
	MEMBER(devwl_denial, reserved32);
	MEMBER(devwl_denial, reserved);

	STRUCT(devwl_place);
	MEMBER(devwl_place, path);
	MEMBER(devwl_place, type);
	MEMBER(devwl_place, major);
	MEMBER(devwl_place, minor);
	MEMBER(devwl_place, mode);
	MEMBER(devwl_place, uid);
	MEMBER(devwl_place, gid);
	MEMBER(devwl_place, flags);
	MEMBER(devwl_place, nodeset);
	MEMBER(devwl_place, nodeset_word_);
	MEMBER(devwl_place, reserved);

	ENUM(devwl_file);
	VALUE(DEVWL_FILE_ALLOW);
	VALUE(DEVWL_FILE_DENY);
	ENUM(devwl_behavior);
	VALUE(DEVWL_BEHAVIOR_ALLOW);
	VALUE(DEVWL_BEHAVIOR_DENY);
	ENUM(devwl_verdict);
	VALUE(DEVWL_VERDICT_CONTINUE);
	VALUE(DEVWL_VERDICT_ALLOW);
	VALUE(DEVWL_VERDICT_DENY);
	VALUE(DEVWL_VERDICT_ERROR);
	ENUM(devwl_log_level);
	VALUE(DEVWL_LOG_ERR);
	VALUE(DEVWL_LOG_WARNING);
	VALUE(DEVWL_LOG_DEBUG);

	VALUE(DEVWL_DEV_BLOCK);
	VALUE(DEVWL_DEV_CHAR);
	VALUE(DEVWL_DEV_ALL);
	VALUE(DEVWL_ACC_MKNOD);
	VALUE(DEVWL_ACC_READ);
	VALUE(DEVWL_ACC_WRITE);
	VALUE(DEVWL_ACC_MASK);
	VALUE(DEVWL_ANY);
	VALUE(DEVWL_RULE_WRITE_MAX);
	VALUE(DEVWL_RULE_STR_MAX);
	VALUE(DEVWL_DEVNAME_MAX);
	VALUE(DEVWL_FEATURE_USER_NOTIF);
	VALUE(DEVWL_FEATURE_ADDFD_SEND);
	VALUE(DEVWL_FEATURE_WAIT_KILLABLE_RECV);
	VALUE(DEVWL_FEATURE_SYNC_WAKE_UP);
	VALUE(DEVWL_FILTER_ALLOW_IO_URING);
	VALUE(DEVWL_FILTER_NO_WAIT_KILLABLE_RECV);
	VALUE(DEVWL_FILTER_MKNOD_ONLY);
	VALUE(DEVWL_FILTER_TWINS);
	VALUE(DEVWL_CGROUP_OWN_PARENT);
	VALUE(DEVWL_CGROUP_TAKE_OVER);
	VALUE(DEVWL_CGROUP_RECORD_DENIALS);
	VALUE(DEVWL_CGROUP_RECORD_ACCESSES);
	VALUE(DEVWL_CGROUP_DRIFT_RULES);
	VALUE(DEVWL_CGROUP_DRIFT_DETACHED);
	VALUE(DEVWL_CGROUP_DRIFT_FOREIGN);
	VALUE(DEVWL_CGROUP_DRIFT_REAPPLIED);
	VALUE(DEVWL_PLACE_MKDIR);
	VALUE(DEVWL_PLACE_TWIN);
	VALUE(DEVWL_PLACE_CONFINED);
	VALUE(DEVWL_PLACE_MADE_NODEV);
	return 0;
}
