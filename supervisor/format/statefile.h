/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state file's text to and from devwld's structs (statefile.c): pure conversions.
 * Writing and reading the file, and putting what was read in place: state.c.
 */
#ifndef DEVWLD_STATEFILE_H
#define DEVWLD_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attachment.h"
#include "bindings.h"
#include "devwl.h"
#include "edits.h"
#include "strset.h"

/* A state file, read back: everything checked, nothing in place yet. */
struct saved_proc {
	uint32_t slot;
	uint64_t tag;
	pid_t pid, peer_pid;
	uid_t peer_uid;
};

/* A node devwld made for a container on a nodev mount (devwl_nodeset): its st_dev, st_ino. */
struct saved_nodev {
	uint64_t dev, ino;
};

struct saved_container {
	char *id, *node;
	char *k8s_name; /* NAMESPACE/POD/CONTAINER, or NULL */
	char *rt_name;	/* its runtime's name (rtname.h), or NULL */
	uid_t owner;	/* its runtimes' uid: every process's peer_uid */
	bool created;
	bool kernel; /* in kernel mode (kernelmode.c) */
	struct saved_proc *procs;
	size_t nprocs;
	struct attachment *attached; /* devices attached to it (attach.c) */
	size_t nattached;
	struct saved_nodev *nodev; /* nodes only devwld opens for it ("nodev_nodes") */
	size_t nnodev;
};

struct saved {
	struct devwl_policy *policy;
	char *policy_text;
	struct strset ondemand;
	struct strset ruled; /* of those, containers' nodes (store.c) */
	bool has_ruled;	     /* absent from states written before it was kept */
	struct edits edits;
	struct bindings bindings; /* with what each was last written as (core/follow.c) */
	struct saved_container *containers;
	size_t ncontainers;
};

/* Free what s holds and zero it; s may be half filled by a failed parse_state(). */
void saved_clear(struct saved *s);

/*
 * Read the state file text (NUL-terminated; file names it in messages) into s, which
 * must be zeroed. All or nothing: -EINVAL with a reason in err for anything that does
 * not parse or validate, -ENOMEM; either way the caller frees s with saved_clear().
 */
int parse_state(const char *file, const char *text, struct saved *s, struct devwl_error *err);

/*
 * The state file text of s (policy_file: the file its policy was read from, or NULL):
 * its hierarchy, policy text, on-demand nodes, edits and containers with the processes
 * listed. *ret_text: caller frees. 0 or -ENOMEM (or an error of devwl_policy_to_string()).
 * s may be a view of borrowed pointers: nothing of it is freed or kept.
 */
int statefile_text(const struct saved *s, const char *policy_file, char **ret_text);

#endif
