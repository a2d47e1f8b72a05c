# Who may name a container's node (devwl-policy(5) CONTAINERS): listenerMetadata node=PATH
# only within the policy's "node_metadata" subtrees and never "/" by default; the
# annotation org.devwl.node, which pod authors write, is not looked at unless the policy's
# "node_annotation" says where it may point. A refused container fails closed.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/meta", "rules": ["deny a", "allow c 1:3 rwm"] },
             { "path": "/gpu", "rules": ["allow a"] } ],
  "containers": { "node_metadata": [ "/meta" ] } }
JSON
start_devwld
make_rootfs
tag=src-$$
SCRIPT='echo x > /dev/null && echo NULL_OK; true </tmp/kmsg; echo KMSG_RC=$?'
mknod "$T/rootfs/tmp/kmsg" c 1 11

# run_with NAME JQ-FILTER: a one-shot container; output in $T/$tag-NAME.out
run_with() {
	make_bundle "$1" "$SCRIPT" "$2"
	run_fg "$tag-$1" "$T/$1"
}
meta() { echo ".linux.seccomp.listenerMetadata = \"node=$1\""; }
anno() { echo ".annotations = {\"org.devwl.node\": \"$1\"}"; }
node_of() { sed -n "s/^devwld: container $1: node \([^ ]*\).*/\1/p" "$T/devwld.log" | head -1; }
refused() { # NAME WHAT-THE-LOG-SAYS
	! grep -q NULL_OK "$T/$tag-$1.out" || fail "$1: the container ran: $(cat "$T/$tag-$1.out")"
	grep -q "container $tag-$1: no node: $2" "$T/devwld.log" || fail "$1: no log line '$2'"
	ctl containers | grep -q "^$tag-$1 " && fail "$1: attached"
	true
}

# --- 1. metadata: inside its subtrees, outside them ------------------------------------
run_with in "$(meta /meta/m1)" || fail "metadata in /meta: $(cat "$T/$tag-in.out")"
[ "$(node_of "$tag-in")" = /meta/m1 ] || fail "node: $(node_of "$tag-in")"
grep -q NULL_OK "$T/$tag-in.out" && grep -q "can't open /tmp/kmsg: Operation not permitted" \
	"$T/$tag-in.out" || fail "in /meta/m1: $(cat "$T/$tag-in.out")"
pass "listenerMetadata node=/meta/m1 inside \"node_metadata\": honoured"

run_with gpu "$(meta /gpu)"
refused gpu 'listenerMetadata node "/gpu" is outside the policy.s "node_metadata" subtrees'
run_with root "$(meta /)"
refused root 'listenerMetadata node "/" is outside'
pass "listenerMetadata node=/gpu and node=/ outside \"node_metadata\": refused, the container fails closed"

# --- 2. the annotation, which the policy does not mention: not looked at ---------------
run_with anno "$(anno /gpu)" || fail "annotation: $(cat "$T/$tag-anno.out")"
[ "$(node_of "$tag-anno")" = "/containers/$tag-anno" ] || fail "node: $(node_of "$tag-anno")"
grep -q "container $tag-anno: annotation org.devwl.node ignored" "$T/devwld.log" ||
	fail "no log line for the ignored annotation"
grep -q "can't open /tmp/kmsg: Operation not permitted" "$T/$tag-anno.out" ||
	fail "the ignored annotation gave /gpu: $(cat "$T/$tag-anno.out")"
pass "annotation org.devwl.node=/gpu with no \"node_annotation\": ignored (logged), the container gets /containers/ID"

# --- 3. the defaults: metadata may name anything but the root ----------------------------
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/meta", "rules": ["deny a", "allow c 1:3 rwm"] } ],
  "containers": { "node_annotation": [ "/meta" ] } }
JSON
ctl reload >/dev/null || fail "devwlctl reload"
run_with droot "$(meta /)"
refused droot 'listenerMetadata node "/": the root is not a container.s node'
run_with aroot "$(anno /)"
refused aroot 'annotation org.devwl.node "/" is outside the policy.s "node_annotation" subtrees'
run_with dmeta "$(meta /meta/x)" || fail "default metadata: $(cat "$T/$tag-dmeta.out")"
[ "$(node_of "$tag-dmeta")" = /meta/x ] || fail "node: $(node_of "$tag-dmeta")"
pass "by default listenerMetadata may name /meta/x but not \"/\"; the annotation only within \"node_annotation\""
exit 0
