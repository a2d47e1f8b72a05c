/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Compile a node's allow list into a cgroup device program (lib/bpfdev.c). */
#ifndef DEVWL_BPFDEV_H
#define DEVWL_BPFDEV_H

#include <stddef.h>
#include <stdint.h>

#include "devwl.h"

struct bpf_insn;

/* The verifier's limit on a privileged program (BPF_COMPLEXITY_LIMIT_INSNS). */
#define DEVWL_BPF_INSNS_MAX 1000000

/* See devwl_node_compile_bpf() in devwl.h. */
int bpfdev_compile(const struct devwl_node *node, struct bpf_insn **ret_insns, size_t *ret_count);

/* What the program hands to the ring for each report; 8-byte aligned, as a ring record. */
struct bpfdev_record {
	uint32_t access_type; /* the context's: access << 16 | type */
	uint32_t major, minor;
	uint32_t allowed;   /* 1: an allowed access (BPFDEV_RECORD_ACCESSES), 0: a denial */
	uint64_t pid_tgid;  /* bpf_get_current_pid_tgid(), 0 without BPFDEV_RECORD_PID */
	uint64_t cgroup_id; /* bpf_get_current_cgroup_id(), 0 without BPFDEV_RECORD_CGROUP */
	uint64_t count;	    /* accesses the record stands for: 1 for a denial */
};

/* The key and value of the map of reported accesses (BPFDEV_RECORD_ACCESSES). */
struct bpfdev_seen_key {
	uint32_t access_type, major, minor, zero;
};
struct bpfdev_seen {
	uint64_t last_ns; /* bpf_ktime_get_ns() of the last report */
	uint64_t count;	  /* accesses allowed since then, not reported */
	uint64_t tick;	  /* bpf_jiffies64() of the last access: the clock is read on a new one */
};

/* An allowed access is reported at most once a window per key; the others are counted
 * into the next report. */
#define BPFDEV_SEEN_WINDOW_NS 1000000000

/* Helpers the recording program calls (a kernel whose verifier refuses one gets 0). */
#define BPFDEV_RECORD_PID    (1u << 0)
#define BPFDEV_RECORD_CGROUP (1u << 1)
/* Also report allowed accesses, through the seen map (atomic exchange: 5.12). */
#define BPFDEV_RECORD_ACCESSES (1u << 2)
/* Report only: record as above, then allow every access, those the node denies too (the
 * reporter of a cgroup-v1 handle, devwl_cgroup_set_reporter(): the v1 rules decide). */
#define BPFDEV_REPORT_ONLY (1u << 3)

/*
 * The program of bpfdev_compile(), deciding the same, that on every denial also writes a
 * struct bpfdev_record to the BPF_MAP_TYPE_RINGBUF map_fd; with BPFDEV_RECORD_ACCESSES
 * also an allowed access, the first of its key (struct bpfdev_seen_key) in each window of
 * BPFDEV_SEEN_WINDOW_NS, with the count of those folded into it since the last report,
 * kept in the BPF_MAP_TYPE_LRU_HASH seen_fd; with BPFDEV_REPORT_ONLY it records the same
 * and returns 1 wherever it would have denied. Errors as bpfdev_compile(), -EINVAL a bad
 * map_fd, seen_fd or helper bit.
 */
int bpfdev_compile_record(const struct devwl_node *node, int map_fd, int seen_fd,
			  unsigned int helpers, struct bpf_insn **ret_insns, size_t *ret_count);

#endif
