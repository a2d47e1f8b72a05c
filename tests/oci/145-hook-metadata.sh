# The OCI hook and the listener choose a container's node alike: with the shipped
# seccomp profile (examples/oci-hook/seccomp-runc.json, whose listenerMetadata names a
# node) and the shipped hooks (hooks.json), the node devwl-oci-hook made at createRuntime
# is the node the listener attached the container's process to, and poststop removes
# that node. A runtime gives the hook no listenerMetadata: the hook reads it out of the
# bundle's config.json.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
EXAMPLES=$HERE/../../examples/oci-hook
[ -x "$OCI_HOOK" ] || fail "devwl-oci-hook not built at $OCI_HOOK (the build should have made it)"

cp "$EXAMPLES/policy.json" "$T/policy.json"
# The shipped files, pointed at this test's sockets and hook and nothing else changed.
jq --arg lp "$T/listen.sock" '.listenerPath = $lp' "$EXAMPLES/seccomp-runc.json" \
	>"$T/seccomp.json" || fail "jq on seccomp-runc.json"
jq --arg h "$OCI_HOOK" --arg s "$T/control.sock" 'map_values(map(.path = $h
	| .args |= map(if . == "/run/devwl/control.sock" then $s else . end)))' \
	"$EXAMPLES/hooks.json" >"$T/hooks.json" || fail "jq on hooks.json"
[ "$(jq '[.createRuntime[], .poststop[] | select(.args | index($s))] | length' \
	--arg s "$T/control.sock" "$T/hooks.json")" = 2 ] ||
	fail "hooks.json no longer passes --socket in both stages: $(cat "$T/hooks.json")"
node=$(jq -r '.listenerMetadata // ""' "$T/seccomp.json" | tr ' ' '\n' | sed -n 's/^node=//p')
[ -n "$node" ] || fail "seccomp-runc.json's listenerMetadata names no node= (the premise)"

start_devwld
id=hookmeta-$$
make_bundle meta "echo x > /dev/null && echo READY; while [ ! -e /tmp/stop-$id ]; do sleep 0.1; done" \
	".linux.seccomp = $(cat "$T/seccomp.json") | .hooks = $(cat "$T/hooks.json")"
run_detached "$id" "$T/meta"
wait_for "$T/$id.out" READY || fail "the container never ran: $(cat "$T/$id.out")"

# The hook's node, the listener's node and the running container's node are one.
grep -q "hook: container $id: node $node created" "$T/devwld.log" ||
	fail "the createRuntime hook did not create $node: $(grep "container $id" "$T/devwld.log")"
grep -q "container $id: node $node\$" "$T/devwld.log" ||
	fail "the listener did not attach $id to $node: $(grep "container $id" "$T/devwld.log")"
ctl containers | grep -q "^$id $node [1-9]" ||
	fail "devwlctl containers: $(ctl containers)"
! ctl show "/containers/$id" >/dev/null 2>&1 ||
	fail "a node /containers/$id exists: the hook mapped without the listenerMetadata"
pass "the hook made $node, the node the listener attached $id to (its listenerMetadata)"

touch "$T/rootfs/tmp/stop-$id"
wait_until 60 sh -c "runc state $id | jq -e '.status == \"stopped\"' >/dev/null" ||
	fail "the container did not stop: $(runc state "$id" 2>&1)"
runc delete "$id" >"$T/delete.out" 2>&1 || fail "runc delete: $(cat "$T/delete.out")"
wait_for "$T/devwld.log" "hook: container $id: node $node removed" ||
	fail "poststop did not remove $node: $(grep "container $id" "$T/devwld.log")"
! ctl show "$node" >/dev/null 2>&1 || fail "$node still there after poststop"
pass "poststop removed $node, which devwld had made for $id"
