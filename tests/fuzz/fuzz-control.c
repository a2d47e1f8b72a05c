/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: the control protocol, one line per command, answered by control_exec() on
 * a daemon context made afresh for every input: a small policy, a container mapping
 * and two running containers (one on a node made on demand, one on a node of the
 * policy) whose notify fds are stand-ins. Nothing here needs the ring or a socket;
 * "reload" finds no policy file and fails cleanly.
 *
 * Beyond not crashing or leaking: every command gets an answer that ends in a newline,
 * a listing ends in ".", and a node a running container uses stays valid whatever
 * rmdir, deny or hook-delete says (ASan sees a use after free at once).
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "control.h"
#include "devwld.h"
#include "policy.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char mapping_json[] =
	"{\"node_annotation\": [\"/k8s/{namespace}\", \"/tenants\"],"
	" \"match\": [{\"annotation\": \"org.example/class\", \"value\": \"gpu\","
	" \"node\": \"/gpu/{id}\"},"
	" {\"annotation\": \"org.example/tenant\", \"node\": \"/tenants/{id}\"}],"
	" \"k8s_template\": \"/k8s/{namespace}/{pod}/{container}\"}";

static void stand_in_free(struct source *src)
{
	free(container_of(src, struct cproc, src));
}

/* A container as container_attach() leaves it, with nprocs stand-in processes. */
static void add_container(struct devwld *d, const char *id, const char *path, unsigned int nprocs)
{
	struct container *c = calloc(1, sizeof(*c));

	if (!c || !(c->id = strdup(id)) || !(c->node_path = strdup(path)) ||
	    policy_ensure_node(d, path, &c->node, &c->created_node) < 0)
		abort();
	devwl_node_ref(c->node);
	list_init(&c->procs);
	list_add_tail(&c->link, &d->containers);
	d->ncontainers++;
	for (unsigned int i = 0; i < nprocs; i++) {
		struct cproc *p = calloc(1, sizeof(*p));

		if (!p)
			abort();
		p->src.label = c->id;
		p->src.fd = -1; /* nothing to close; never armed, so freed at once */
		p->src.free_fn = stand_in_free;
		p->container = c;
		p->pid = 100 + (pid_t)i;
		list_add_tail(&p->link, &c->procs);
		c->nprocs++;
		d->nprocs++;
	}
}

static void setup(struct devwld *d)
{
	static const char *const steps[][2] = {
		{"deny", "c 10:200 rwm"}, {"mkdir", "/containers"}, {"mkdir", "/k8s"},
		{"mkdir", "/k8s/prod"},	  {"deny", "/k8s/prod"},    {"mkdir", "/shared"},
	};
	struct json_object *obj;
	struct devwl_error err = {0};

	*d = (struct devwld){
		.loop = {.signal_src = {.fd = -1}},
		.listen_src = {.fd = -1},
		.control_src = {.fd = -1},
	};
	list_init(&d->containers);
	list_init(&d->oci_conns);
	list_init(&d->ctl_conns);
	d->policy = devwl_policy_new();
	if (!d->policy)
		abort();
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int r;

		if (!strcmp(steps[i][0], "mkdir"))
			r = devwl_policy_mkdir(d->policy, steps[i][1]);
		else if (steps[i][1][0] == '/')
			r = devwl_policy_write(d->policy, steps[i][1], DEVWL_FILE_DENY, "a", 1,
					       NULL);
		else
			r = devwl_policy_write(d->policy, "/", DEVWL_FILE_DENY, steps[i][1],
					       strlen(steps[i][1]), NULL);
		if (r < 0)
			abort();
	}
	obj = json_tokener_parse(mapping_json);
	if (!obj || mapping_from_json(obj, "fuzz", &d->mapping, &err) < 0)
		abort();
	json_object_put(obj);
	add_container(d, "web", "/containers/web", 1);
	add_container(d, "db", "/shared", 2);
}

static void check_containers(struct devwld *d)
{
	unsigned int n = 0, procs = 0;

	for (struct list_head *l = d->containers.next; l != &d->containers; l = l->next) {
		const struct container *c = container_of(l, struct container, link);

		if (strcmp(devwl_node_path(c->node), c->node_path) ||
		    devwl_policy_find(d->policy, c->node_path) != c->node)
			abort();
		n++;
		procs += c->nprocs;
	}
	if (n != d->ncontainers || procs != d->nprocs)
		abort();
}

static void run_line(struct devwld *d, const char *line, size_t len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);

	if (!out)
		abort();
	/* "devices" is answered by a thread of its own (front/control.c, list_devices()),
	 * from a copy made here; the two halves are run in turn. */
	if (len == strlen("devices") && !memcmp(line, "devices", len)) {
		struct attach_listing *l = attach_list_copy(d);

		if (l)
			attach_list_write(l, out);
		else
			fputs("error ENOMEM: out of memory\n", out);
		attach_listing_free(l);
	} else {
		control_exec(d, line, len, out);
	}
	if (fclose(out) != 0)
		abort();
	if (size == 0 || buf[size - 1] != '\n')
		abort();
	/* A listing is answered in full or not at all. */
	if (((len == strlen("containers") && !memcmp(line, "containers", len)) ||
	     (len == strlen("devices") && !memcmp(line, "devices", len))) &&
	    (size < 2 || memcmp(buf + size - 2, ".\n", 2)))
		abort();
	free(buf);
	check_containers(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	struct devwld d;
	size_t start = 0;

	setup(&d);
	/* As ctl_conn_ready: every newline ends a command, and so does the end. */
	while (start < size) {
		const char *nl = memchr(in + start, '\n', size - start);
		size_t end = nl ? (size_t)(nl - in) : size;

		run_line(&d, in + start, end - start);
		start = end + 1;
	}
	loop_stop(&d.loop);
	store_fini(&d);
	policy_fini(&d);
	return 0;
}
