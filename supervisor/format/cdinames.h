/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CDI devices a container's annotations ask for (cdinames.c), and which nodes of the
 * policy let them be granted ("cdi_annotations"). Pure: no I/O, no logging.
 */
#ifndef DEVWLD_CDINAMES_H
#define DEVWLD_CDINAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "devwl.h"
#include "ocistate.h"

struct json_object;

/* The CDI specification's annotation form: "cdi.k8s.io/KEY": "V/C=N[,V/C=N...]". */
#define CDI_ANNOTATION_PREFIX "cdi.k8s.io/"
/* Per container, past which names are refused rather than granted. */
#define CDI_NAMES_MAX 64
/* Refusals kept per container (the rest are counted): a hostile value of a million
 * commas must not become a million log lines. */
#define CDI_BAD_MAX 16

struct cdi_bad {
	char *key;	 /* the annotation's key, cut to a sane length */
	char *item;	 /* the offending name, cut to a sane length ("" when empty) */
	const char *why; /* static text */
};

struct cdi_names {
	char **names; /* "VENDOR/CLASS=NAME", valid, each once, in the annotations' order */
	size_t n;
	struct cdi_bad *bad;
	size_t nbad;
	size_t nbad_more; /* refusals past CDI_BAD_MAX */
	size_t nannos;	  /* annotations with the prefix, good or bad */
};

/*
 * Add the names of one annotation value (key: its key) to out: a comma-separated list
 * of fully qualified CDI device names. An empty item, a name the CDI grammar refuses, a
 * wildcard, or a name past CDI_NAMES_MAX is a refusal (out->bad), and nothing else of
 * the value is lost. 0 or -ENOMEM.
 */
int cdi_names_add(const char *key, const char *value, struct cdi_names *out);
/* Every "cdi.k8s.io/" annotation of st into out (zeroed first). 0 or -ENOMEM. */
int cdi_names_of(const struct oci_state *st, struct cdi_names *out);
void cdi_names_clear(struct cdi_names *n);

/* The nodes of the policy file that say "cdi_annotations" (or another flag of devwld's:
 * "learn"), in file order. */
struct cdi_optin {
	char *path;
	bool on;
};

struct cdi_optins {
	struct cdi_optin *v;
	size_t n;
};

/*
 * The policy file's "nodes" array (NULL: none) into ret: each node's "cdi_annotations"
 * (a boolean; file names it in messages). -EINVAL with err naming the node, -ENOMEM.
 */
int cdi_optins_from_json(struct json_object *nodes, const char *file, struct cdi_optins *ret,
			 struct devwl_error *err);
/* The same for any boolean node key of devwld's (key: "learn"). */
int node_flags_from_json(struct json_object *nodes, const char *file, const char *key,
			 struct cdi_optins *ret, struct devwl_error *err);
void cdi_optins_clear(struct cdi_optins *o);
/* Does path, or its nearest ancestor that says so, opt in? */
bool cdi_optin(const struct cdi_optins *o, const char *path);

#endif
