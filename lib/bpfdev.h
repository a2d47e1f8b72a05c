/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Compile a node's allow list into a cgroup device program (lib/bpfdev.c). */
#ifndef DEVWL_BPFDEV_H
#define DEVWL_BPFDEV_H

#include <stddef.h>

#include "devwl.h"

struct bpf_insn;

/* The verifier's limit on a privileged program (BPF_COMPLEXITY_LIMIT_INSNS). */
#define DEVWL_BPF_INSNS_MAX 1000000

/* See devwl_node_compile_bpf() in devwl.h. */
int bpfdev_compile(const struct devwl_node *node, struct bpf_insn **ret_insns, size_t *ret_count);

#endif
