# Container → node with real runc containers (devwld(8) "Container to node"): the
# Kubernetes annotations of CRI-O and containerd map a container to /k8s/NS/POD/CTR,
# made on demand below /k8s/NS so namespace-wide rules inherit downward, and removed
# when the container goes; the precedence org.devwl.node > listenerMetadata > "match"
# rules > Kubernetes template > default template; values and annotations that could
# escape are refused.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

cat >"$T/policy.json" <<'JSON'
{
  "version": 1,
  "nodes": [
    { "path": "/base",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow c 1:7 rw"] },
    { "path": "/k8s", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow c 1:7 rw"] },
    { "path": "/k8s/team-a", "rules": ["deny c 1:7 rw"] },
    { "path": "/pinned", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow c 1:7 w"] },
    { "path": "/meta", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm"] },
    { "path": "/gpu", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow c 1:7 w"] },
    { "path": "/containers", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm",
                "allow c 1:8 rwm", "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm",
                "allow c 136:* rwm"] }
  ],
  "containers": {
    "match": [ { "annotation": "io.kubernetes.pod.namespace", "value": "gpu-jobs",
                 "node": "/gpu/{pod}" } ],
    "node_annotation": [ "/pinned", "/k8s/{namespace}" ]
  }
}
JSON
start_devwld
tag=k8s-$$
SCRIPT='echo x > /dev/null && echo NULL_OK; echo x > /dev/full; echo FULL_RC=$?'

k8s_anno() { # NS POD CTR → the CRI-O annotations kubelet's pods get
	jq -n --arg ns "$1" --arg pod "$2" --arg ctr "$3" '{"io.kubernetes.pod.namespace": $ns,
		"io.kubernetes.pod.name": $pod, "io.kubernetes.container.name": $ctr,
		"io.kubernetes.pod.uid": "0c2b5a52-0000-4000-8000-000000000001"}'
}
# run_with NAME ANNOTATIONS-JSON [METADATA]: a one-shot container; output in $T/$tag-NAME.out
run_with() {
	local name=$1 anno=$2 meta=${3:-} filter
	filter=".annotations = $anno"
	[ -n "$meta" ] && filter="$filter | .linux.seccomp.listenerMetadata = \"$meta\""
	make_bundle "$name" "$SCRIPT" "$filter"
	run_fg "$tag-$name" "$T/$name"
}
full_allowed() { grep -q "FULL_RC=1" "$1" && grep -q "No space left on device" "$1"; }
full_denied() { grep -q "can't create /dev/full: Operation not permitted" "$1"; }
node_of() { # the node devwld logged for container ID
	sed -n "s/^devwld: container $1: node \([^ ]*\).*/\1/p" "$T/devwld.log" | head -1
}

# --- 1. Kubernetes annotations: /k8s/NS/POD/CTR below the namespace's rules ----------
run_with a "$(k8s_anno team-a web-7d9 app)" || fail "k8s container: $(cat "$T/$tag-a.out")"
[ "$(node_of "$tag-a")" = /k8s/team-a/web-7d9/app ] || fail "node: $(node_of "$tag-a")"
grep -q NULL_OK "$T/$tag-a.out" && full_denied "$T/$tag-a.out" ||
	fail "team-a container: $(cat "$T/$tag-a.out")"
pass "io.kubernetes.* → /k8s/team-a/web-7d9/app, made on demand; /k8s/team-a's deny c 1:7 applies"

# containerd names the same things io.kubernetes.cri.*; its pause container has no name.
run_with cd "$(jq -n '{"io.kubernetes.cri.sandbox-namespace": "team-a",
	"io.kubernetes.cri.sandbox-name": "web-x", "io.kubernetes.cri.container-name": "app",
	"io.kubernetes.cri.container-type": "container"}')" || fail "containerd-style: $(cat "$T/$tag-cd.out")"
[ "$(node_of "$tag-cd")" = /k8s/team-a/web-x/app ] || fail "node: $(node_of "$tag-cd")"
run_with sb "$(jq -n '{"io.kubernetes.cri.sandbox-namespace": "team-a",
	"io.kubernetes.cri.sandbox-name": "web-x", "io.kubernetes.cri.container-type": "sandbox"}')" ||
	fail "sandbox: $(cat "$T/$tag-sb.out")"
[ "$(node_of "$tag-sb")" = /k8s/team-a/web-x/POD ] || fail "sandbox node: $(node_of "$tag-sb")"
pass "containerd's io.kubernetes.cri.* → /k8s/team-a/web-x/app, its sandbox → /k8s/team-a/web-x/POD"

# --- 2. a running pod in a namespace the policy does not name -------------------------
make_bundle b 'echo READY; while [ ! -e /tmp/stop-'$tag' ]; do sleep 0.1; done' \
	".annotations = $(k8s_anno team-b api-1 main)"
run_detached "$tag-b" "$T/b"
wait_for "$T/$tag-b.out" READY || fail "team-b container: $(cat "$T/$tag-b.out")"
ctl containers | grep -q "^$tag-b /k8s/team-b/api-1/main 1 " || fail "containers: $(ctl containers)"
ctl show /k8s/team-b >/dev/null || fail "/k8s/team-b was not made"
runc exec "$tag-b" sh -c "$SCRIPT" >"$T/b-exec1.out" 2>&1 </dev/null
full_allowed "$T/b-exec1.out" || fail "team-b inherits /k8s: $(cat "$T/b-exec1.out")"
ctl deny /k8s/team-b 'c 1:7 w' || fail "devwlctl deny /k8s/team-b"
runc exec "$tag-b" sh -c "$SCRIPT" >"$T/b-exec2.out" 2>&1 </dev/null
full_denied "$T/b-exec2.out" || fail "after a namespace-wide deny: $(cat "$T/b-exec2.out")"
pass "a pod in an unnamed namespace inherits /k8s; a namespace-wide deny reaches it at once"
touch "$T/rootfs/tmp/stop-$tag"
wait_for "$T/devwld.log" "container $tag-b: gone" || fail "the container did not go"
for n in /k8s/team-b/api-1/main /k8s/team-b/api-1 /k8s/team-b /k8s/team-a/web-7d9; do
	ctl show "$n" >/dev/null 2>&1 && fail "on-demand node $n left behind"
done
ctl show /k8s/team-a >/dev/null || fail "the policy's /k8s/team-a was removed"
pass "on-demand nodes go with their containers; the policy's own nodes stay"

# --- 3. precedence ------------------------------------------------------------------------
run_with gpu "$(k8s_anno gpu-jobs train-0 worker)" || fail "gpu: $(cat "$T/$tag-gpu.out")"
[ "$(node_of "$tag-gpu")" = /gpu/train-0 ] || fail "match rule: $(node_of "$tag-gpu")"
full_allowed "$T/$tag-gpu.out" || fail "gpu container: $(cat "$T/$tag-gpu.out")"
pass "a \"match\" rule (namespace gpu-jobs → /gpu/{pod}) wins over the Kubernetes template"

run_with meta "$(k8s_anno gpu-jobs train-1 worker)" node=/meta/m1 || fail "meta: $(cat "$T/$tag-meta.out")"
[ "$(node_of "$tag-meta")" = /meta/m1 ] || fail "listenerMetadata: $(node_of "$tag-meta")"
full_denied "$T/$tag-meta.out" || fail "meta container: $(cat "$T/$tag-meta.out")"
pass "listenerMetadata node=/meta/m1 wins over match rules and the Kubernetes template"

run_with pin "$(k8s_anno team-a web-7d9 app | jq '. + {"org.devwl.node": "/pinned/special"}')" \
	node=/meta/m2 || fail "pinned: $(cat "$T/$tag-pin.out")"
[ "$(node_of "$tag-pin")" = /pinned/special ] || fail "org.devwl.node: $(node_of "$tag-pin")"
full_allowed "$T/$tag-pin.out" || fail "pinned container: $(cat "$T/$tag-pin.out")"
pass "annotation org.devwl.node wins over listenerMetadata and the Kubernetes annotations"

run_with own "$(k8s_anno team-a web-7d9 app | jq '. + {"org.devwl.node": "/k8s/team-a/shared"}')" ||
	fail "own namespace: $(cat "$T/$tag-own.out")"
[ "$(node_of "$tag-own")" = /k8s/team-a/shared ] || fail "own namespace: $(node_of "$tag-own")"
run_with plain '{}' || fail "plain: $(cat "$T/$tag-plain.out")"
[ "$(node_of "$tag-plain")" = "/containers/$tag-plain" ] || fail "default: $(node_of "$tag-plain")"
pass "org.devwl.node inside the pod's own /k8s/{namespace} is honoured; no annotations → /containers/ID"

# --- 4. refused: a node outside node_annotation, values that are not plain names ---------
refused() { # NAME WHAT-THE-LOG-SAYS
	! grep -q NULL_OK "$T/$tag-$1.out" || fail "$1: the container ran: $(cat "$T/$tag-$1.out")"
	grep -q "container $tag-$1: no node: $2" "$T/devwld.log" || fail "$1: no log line '$2'"
	ctl containers | grep -q "^$tag-$1 " && fail "$1: attached"
	true
}
run_with steal "$(k8s_anno team-a web-7d9 app | jq '. + {"org.devwl.node": "/k8s/team-b/x"}')"
refused steal 'annotation org.devwl.node "/k8s/team-b/x" is outside the policy.s "node_annotation" subtrees'
run_with root "$(jq -n '{"org.devwl.node": "/"}')"
refused root 'annotation org.devwl.node "/" is outside'
run_with dots "$(k8s_anno team-a .. app)"
refused dots 'the Kubernetes template: {pod} is "..", not a plain name'
run_with slash "$(k8s_anno team-a ../../pinned app)"
refused slash 'the Kubernetes template: {pod} is "../../pinned", not a plain name'
run_with ctl "$(k8s_anno team-a 'web x' $'a\nb')"
refused ctl 'the Kubernetes template: {pod} is "web x", not a plain name'
run_with half "$(jq -n '{"io.kubernetes.pod.namespace": "team-a"}')"
refused half 'incomplete Kubernetes annotations'
run_with badanno "$(jq -n '{"org.devwl.node": "/pinned/../k8s"}')"
refused badanno 'annotation org.devwl.node "/pinned/../k8s" is not a node path'
pass "refused, with the container failing closed: org.devwl.node outside node_annotation or \"/\", pod names \"..\", \"../../pinned\", \"web x\", incomplete annotations, a path with \"..\""
exit 0
