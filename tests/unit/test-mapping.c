/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devwld's container mapping (supervisor/format/mapping.c): the policy's "containers" object,
 * which node a container gets and who may name one (the OCI state it starts from:
 * test-ocistate.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "mapping.h"

/* Parse a listener message (or a hook's state: listener false) into st. */
static int state_of(const char *json, bool listener, struct oci_state *st, struct devwl_error *err)
{
	struct json_object *obj = json_tokener_parse(json);
	int r;

	assert_non_null(obj);
	r = oci_state_from_json(obj, listener, st, err);
	json_object_put(obj);
	return r;
}

static void load_mapping(const char *json, struct mapping *m)
{
	struct json_object *obj = json ? json_tokener_parse(json) : NULL;
	struct devwl_error err = {0};

	if (json)
		assert_non_null(obj);
	if (mapping_from_json(obj, "policy.json", m, &err) < 0)
		fail_msg("mapping %s: %s", json, err.msg);
	json_object_put(obj);
}

/*
 * The node for the container of listener message msg under mapping (NULL: no
 * "containers" object), sent by a runtime of peer_uid: want is the path, or NULL for a
 * refusal with errno want_r and a reason containing why.
 */
static void expect_node(const char *mapping, const char *msg, uid_t peer_uid, const char *want,
			int want_r, const char *why)
{
	struct mapping m = {0};
	struct oci_state st = {0};
	struct devwl_error err = {0};
	const char *source = NULL;
	char *path = NULL;
	int r;

	load_mapping(mapping, &m);
	assert_int_equal(state_of(msg, true, &st, &err), 0);
	r = mapping_node_path(&m, NULL, NULL, &st, peer_uid, &path, &source, &err);
	if (want) {
		if (r < 0)
			fail_msg("%s: refused: %s", msg, err.msg);
		assert_string_equal(path, want);
		assert_non_null(source);
	} else {
		if (r >= 0)
			fail_msg("%s: got %s from %s, want errno %d", msg, path, source, want_r);
		assert_int_equal(r, want_r);
		assert_null(path);
		if (!strstr(err.msg, why))
			fail_msg("reason \"%s\" lacks \"%s\"", err.msg, why);
	}
	free(path);
	oci_state_clear(&st);
	mapping_clear(&m);
}

#define MSG(meta, annos)                                                                           \
	"{\"ociVersion\":\"1.0.2\",\"fds\":[\"seccompFd\"],\"pid\":42" meta                        \
	",\"state\":{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\",\"pid\":42,"   \
	"\"bundle\":\"/b\"" annos "}}"
#define META(path) ",\"metadata\":\"node=" path "\""
#define ANNO(path) ",\"annotations\":{\"org.devwl.node\":\"" path "\"}"

static void test_mapping_node_path_templates(void **state)
{
	(void)state;
	expect_node(NULL, MSG("", ""), 0, "/containers/c1", 0, NULL);
	expect_node("{\"default_template\": \"/x/{id}\"}", MSG("", ""), 0, "/x/c1", 0, NULL);
	expect_node(NULL,
		    MSG("",
			",\"annotations\":{\"io.kubernetes.pod.namespace\":\"ns\","
			"\"io.kubernetes.pod.name\":\"p\",\"io.kubernetes.container.name\":\"c\"}"),
		    0, "/k8s/ns/p/c", 0, NULL);
	expect_node(NULL, MSG("", ",\"annotations\":{\"io.kubernetes.pod.namespace\":\"ns\"}"), 0,
		    NULL, -EINVAL, "incomplete Kubernetes annotations");
	expect_node("{\"match\": [{\"annotation\": \"team\", \"value\": \"gpu\", \"node\": "
		    "\"/gpu/{id}\"}]}",
		    MSG("", ",\"annotations\":{\"team\":\"gpu\"}"), 0, "/gpu/c1", 0, NULL);
}

/* By default a pod author's annotation names nothing: the container gets its template. */
static void test_mapping_node_path_annotation_default_ignored(void **state)
{
	(void)state;
	expect_node(NULL, MSG("", ANNO("/")), 0, "/containers/c1", 0, NULL);
	expect_node("{}", MSG("", ANNO("/gpu")), 0, "/containers/c1", 0, NULL);
	expect_node("{\"node_annotation\": false}", MSG("", ANNO("/gpu")), 0, "/containers/c1", 0,
		    NULL);
}

static void test_mapping_node_path_annotation_refused(void **state)
{
	static const char under[] = "{\"node_annotation\": [\"/apps\"]}";

	(void)state;
	expect_node(under, MSG("", ANNO("/apps/web")), 0, "/apps/web", 0, NULL);
	expect_node(under, MSG("", ANNO("/apps")), 0, "/apps", 0, NULL);
	expect_node(under, MSG("", ANNO("/")), 0, NULL, -EPERM,
		    "annotation org.devwl.node \"/\" is outside the policy's \"node_annotation\"");
	expect_node(under, MSG("", ANNO("/appsx")), 0, NULL, -EPERM, "is outside");
	expect_node(under, MSG("", ANNO("/apps/../gpu")), 0, NULL, -EINVAL, "is not a node path");
	/* The annotation wins over the metadata, refusal included. */
	expect_node(under, MSG(META("/apps/m"), ANNO("/gpu")), 0, NULL, -EPERM, "is outside");
	expect_node("{\"node_annotation\": true}", MSG("", ANNO("/")), 0, "/", 0, NULL);
}

static void test_mapping_node_path_metadata_refused(void **state)
{
	static const char under[] = "{\"node_metadata\": [\"/meta\"]}";

	(void)state;
	/* Default: any node but the root. */
	expect_node(NULL, MSG(META("/meta/m1"), ""), 0, "/meta/m1", 0, NULL);
	expect_node(NULL, MSG(META("/"), ""), 0, NULL, -EPERM,
		    "listenerMetadata node \"/\": the root is not a container's node");
	expect_node(NULL, MSG(META("/a//b"), ""), 0, NULL, -EINVAL, "is not a node path");
	/* Subtrees. */
	expect_node(under, MSG(META("/meta/x/y"), ""), 0, "/meta/x/y", 0, NULL);
	expect_node(under, MSG(META("/gpu"), ""), 0, NULL, -EPERM,
		    "listenerMetadata node \"/gpu\" is outside the policy's \"node_metadata\"");
	expect_node(under, MSG(META("/"), ""), 0, NULL, -EPERM, "is outside");
	/* false: not looked at; true: anything. */
	expect_node("{\"node_metadata\": false}", MSG(META("/"), ""), 0, "/containers/c1", 0, NULL);
	expect_node("{\"node_metadata\": true}", MSG(META("/"), ""), 0, "/", 0, NULL);
	/* Metadata that is not node=... is no node. */
	expect_node(NULL,
		    "{\"fds\":[\"seccompFd\"],\"metadata\":\"hello\",\"state\":{\"id\":\"c1\"}}", 0,
		    "/containers/c1", 0, NULL);
}

/* A runtime that is not root (--allow-uid) stays in PEER_SUBTREE/UID whatever it sends. */
static void test_mapping_node_path_peer_confined(void **state)
{
	(void)state;
	expect_node(NULL, MSG("", ""), 1000, PEER_SUBTREE "/1000/c1", 0, NULL);
	expect_node(NULL, MSG(META(PEER_SUBTREE "/1000/web"), ""), 1000, PEER_SUBTREE "/1000/web",
		    0, NULL);
	expect_node(NULL, MSG(META("/containers/x"), ""), 1000, NULL, -EPERM,
		    "the only subtree a runtime running as uid 1000 may use");
	expect_node(NULL, MSG(META(PEER_SUBTREE "/1001/x"), ""), 1000, NULL, -EPERM, "is outside");
	expect_node(NULL, MSG(META(PEER_SUBTREE "/10000"), ""), 1000, NULL, -EPERM, "is outside");
	expect_node("{\"node_metadata\": true, \"node_annotation\": true}", MSG("", ANNO("/")),
		    1000, NULL, -EPERM, "uid 1000");
	/* Its annotations are its own: no "match" rule or Kubernetes template applies. */
	expect_node("{\"match\": [{\"annotation\": \"team\", \"node\": \"/gpu/{id}\"}]}",
		    MSG("", ",\"annotations\":{\"team\":\"gpu\",\"io.kubernetes.pod.namespace\":"
			    "\"n\",\"io.kubernetes.pod.name\":\"p\",\"io.kubernetes.container."
			    "name\":\"c\"}"),
		    1000, PEER_SUBTREE "/1000/c1", 0, NULL);
}

static void expect_mapping_error(const char *json, const char *why)
{
	struct json_object *obj = json_tokener_parse(json);
	struct devwl_error err = {0};
	struct mapping m = {0};

	assert_non_null(obj);
	assert_int_equal(mapping_from_json(obj, "policy.json", &m, &err), -EINVAL);
	json_object_put(obj);
	if (!strstr(err.msg, why))
		fail_msg("%s: reason \"%s\" lacks \"%s\"", json, err.msg, why);
	mapping_clear(&m);
}

static void test_mapping_from_json_errors(void **state)
{
	(void)state;
	expect_mapping_error("[]", "\"containers\": must be an object");
	expect_mapping_error("{\"node_metadata\": \"yes\"}",
			     "\"containers\".\"node_metadata\": must be true, false or an array");
	expect_mapping_error("{\"node_metadata\": [\"/a/{nope}\"]}", "unknown placeholder");
	expect_mapping_error("{\"node_annotation\": [\"/k8s/{namespace}/..\"]}", "not a node path");
	expect_mapping_error("{\"default_template\": \"/c/{pod}\"}", "{pod} cannot be used here");
	expect_mapping_error("{\"mystery\": 1}",
			     "known: k8s_template, default_template, "
			     "node_annotation, node_metadata, match, container_rules");
	expect_mapping_error("{\"container_rules\": \"deny a\"}", "must be an array");
	expect_mapping_error("{\"container_rules\": [3]}", "[0]: must be a string");
	expect_mapping_error("{\"container_rules\": [\"deny a\", \"grant c 1:3 r\"]}",
			     "[1]: \"grant c 1:3 r\": must be \"allow RULE\" or \"deny RULE\"");
	expect_mapping_error("{\"container_rules\": [\"deny c 1:3 rx\"]}", "\"deny c 1:3 rx\"");
	expect_mapping_error("{\"match\": [{\"node\": \"/x\"}]}",
			     "needs \"annotation\" and \"node\"");
}

/* "container_rules" are plain writes on the new node, in order: the kernel's semantics. */
static void test_mapping_start_node(void **state)
{
	struct json_object *obj = json_tokener_parse(
		"{\"container_rules\": [\"deny c 188:* rwm\", \"allow c 188:3 r\", "
		"\"allow c 1:11 r\"]}");
	struct devwl_policy *p = devwl_policy_new();
	struct devwl_error err = {0};
	struct mapping m = {0};
	struct devwl_node *n;

	(void)state;
	assert_non_null(obj);
	assert_int_equal(mapping_from_json(obj, "p.json", &m, &err), 0);
	assert_int_equal(m.nstart, 3);
	assert_int_equal(devwl_policy_mkdir(p, "/lab"), 0);
	assert_int_equal(devwl_policy_write(p, "/lab", DEVWL_FILE_DENY, "a", 1, &err), 0);
	assert_int_equal(devwl_policy_write(p, "/lab", DEVWL_FILE_ALLOW, "c 188:* rw", 10, &err),
			 0);
	assert_int_equal(devwl_policy_mkdir(p, "/lab/pod"), 0);
	n = devwl_policy_find(p, "/lab/pod");
	assert_int_equal(devwl_node_check(n, DEVWL_DEV_CHAR, 188, 3, DEVWL_ACC_READ), 1);
	/* The parent refuses the third: the write fails, as the kernel's would, and is named. */
	assert_int_equal(mapping_start_node(&m, n, &err), -EPERM);
	assert_non_null(strstr(err.msg, "allow c 1:11 r at /lab/pod"));
	assert_int_equal(devwl_node_check(n, DEVWL_DEV_CHAR, 188, 0, DEVWL_ACC_READ), 0);
	assert_int_equal(devwl_node_check(n, DEVWL_DEV_CHAR, 188, 3, DEVWL_ACC_READ), 1);
	assert_int_equal(devwl_node_check(n, DEVWL_DEV_CHAR, 188, 3, DEVWL_ACC_WRITE), 0);
	assert_int_equal(devwl_node_check(devwl_policy_find(p, "/lab"), DEVWL_DEV_CHAR, 188, 0,
					  DEVWL_ACC_READ),
			 1);
	mapping_clear(&m);
	devwl_policy_free(p);
	json_object_put(obj);
}

static void test_template_check(void **state)
{
	(void)state;
	assert_int_equal(template_check("/k8s/{namespace}/{pod}/{container}", true, NULL), 0);
	assert_int_equal(template_check("/c/{id}", false, NULL), 0);
	assert_int_equal(template_check("/c/{pod}", false, NULL), -EINVAL);
	assert_int_equal(template_check("/c/{id}{id}", true, NULL), -EINVAL);
	assert_int_equal(template_check("c/{id}", true, NULL), -EINVAL);
	assert_int_equal(template_check("/c/{ID}", true, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mapping_node_path_templates),
		cmocka_unit_test(test_mapping_node_path_annotation_default_ignored),
		cmocka_unit_test(test_mapping_node_path_annotation_refused),
		cmocka_unit_test(test_mapping_node_path_metadata_refused),
		cmocka_unit_test(test_mapping_node_path_peer_confined),
		cmocka_unit_test(test_mapping_from_json_errors),
		cmocka_unit_test(test_mapping_start_node),
		cmocka_unit_test(test_template_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
