/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which node a container gets (mapping.c): the policy file's "containers" object, pure. */
#ifndef DEVWLD_MAPPING_H
#define DEVWLD_MAPPING_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cdinames.h"
#include "devwl.h"
#include "ocistate.h"

struct json_object;

/* The "containers" object of the policy file: which node a container gets (mapping.c). */
struct map_rule {
	char *annotation;
	char *value; /* NULL: any value */
	char *node;  /* a template */
};

/* Which nodes a container may name itself: "node_annotation" for the annotation
 * org.devwl.node, "node_metadata" for listenerMetadata node=PATH (devwl-policy(5)). */
enum node_choice {
	NODE_CHOICE_DEFAULT, /* key absent: annotation ignored, metadata anything but "/" */
	NODE_CHOICE_ANY,     /* true: any node, "/" included */
	NODE_CHOICE_IGNORE,  /* false: not looked at */
	NODE_CHOICE_UNDER,   /* only at or below one of under[] */
};

struct node_source {
	enum node_choice choice;
	char **under; /* templates */
	size_t nunder;
};

/* A rule of "container_rules": written to each node made for a container, right after
 * it starts as a copy of its parent (devwl-policy(5)). */
struct start_rule {
	enum devwl_file file; /* allow or deny */
	struct devwl_rule rule;
};

struct mapping {
	char *k8s_template;	/* NULL: the command line's, else the built-in one */
	char *default_template; /* likewise */
	struct node_source annotation, metadata;
	struct map_rule *rules; /* first match wins */
	size_t nrules;
	struct start_rule *start; /* "container_rules", in order */
	size_t nstart;
	struct cdi_optins cdi;	 /* the nodes' "cdi_annotations" (cdinames.h) */
	struct cdi_optins learn; /* the nodes' "learn" (core/learning.c) */
};

/* Write the "container_rules" of m to node, a node just made for a container. 0, or the
 * write's error (-EPERM where the parent refuses an allow), named in err. */
int mapping_start_node(const struct mapping *m, struct devwl_node *node, struct devwl_error *err);

/* Where the containers of a peer other than root live (--allow-uid): PEER_SUBTREE/UID. */
#define PEER_SUBTREE "/users"

void mapping_clear(struct mapping *m);
/* Check a template: known placeholders only ({namespace} {pod} {container} only with
 * k8s_vars), at most one per component, a valid node path once expanded. -EINVAL. */
int template_check(const char *tmpl, bool k8s_vars, struct devwl_error *err);
/* Convert the "containers" object (NULL: absent); messages name file and key. */
int mapping_from_json(struct json_object *obj, const char *file, struct mapping *ret,
		      struct devwl_error *err);
/*
 * The node path (heap) for a container whose runtime connected as peer_uid, and which
 * source decided it (static text). The overrides (command line) win over the mapping's
 * templates. A peer other than root gets PEER_SUBTREE/UID/ID, or a node it names at or
 * below PEER_SUBTREE/UID. Errors: -EINVAL bad value or path, -ENOENT a template needs a
 * value the container lacks, -EPERM a node named outside what the policy (or the peer's
 * subtree) allows, -ENOMEM; the reason is in err.
 */
int mapping_node_path(const struct mapping *m, const char *k8s_override,
		      const char *default_override, const struct oci_state *st, uid_t peer_uid,
		      char **ret_path, const char **ret_source, struct devwl_error *err);

/* "NAMESPACE/POD/CONTAINER" of a Kubernetes container from its CRI annotations (heap), or
 * NULL: not one of them (or out of memory). For devwlctl, which names containers so. */
char *mapping_k8s_name(const struct oci_state *st);

#endif
