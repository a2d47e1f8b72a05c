# A container's own node holds by construction, not by who is there at attach time
# (devwld(8) HOT-PLUG): the runc guide puts every container on one node
# (node=/containers/example). The first is alone there when a device is attached to it;
# the grant must still go to a leaf of its own, never to the shared node, so that a
# container started later there does not inherit it — here the shared node's
# container_rules keep the device from every container, so the leaf is refused, naming
# the node that refuses. A node named for its container ({id}) is its own: the grant goes
# there, and no other container may join that node while it lives.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
PROBE=$BUILD/tests/live/probe
[ -x "$RUN" ] && [ -x "$PROBE" ] || fail "devwl-run or the live probe not built"
SLEEP=$(command -v sleep)

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rw"] } ],
  "containers": { "container_rules": ["deny c 1:5 rw"] } }
JSON
start_devwld

# connect ID NODE CMD...: a process served by devwld on NODE, every open trapped, its /dev a
# tmpfs of its own holding z5 (c 1:5), made before devwl saw it.
connect() {
	local id=$1 node=$2
	shift 2
	unshare -m sh -c "mount -t tmpfs none /dev && mknod /dev/z5 c 1 5 && chmod 666 /dev/z5 &&
		exec $RUN --mode=authoritative --connect $T/listen.sock --node $node --id $id -- $*" \
		>"$T/$id.out" 2>"$T/$id.err" &
	CHILD_PIDS+=($!)
	wait_for "$T/devwld.log" "container $id: \(process\|node .* refused\)" ||
		fail "$id never reached devwld: $(cat "$T/$id.err")"
}

# 1. Alone on a shared node at attach time: never the shared node's grant.
connect hp1 /containers/example "$SLEEP" 120
ctl attach hp1 "c 1:5" /dev/zfive --access r >"$T/a1.out" 2>&1 &&
	fail "attached on the shared node: $(cat "$T/a1.out")"
grep -q 'refused at node /containers/example/hp1: the parent /containers/example does not allow it' "$T/a1.out" ||
	fail "the refusal does not name the shared node: $(cat "$T/a1.out")"
ctl list /containers/example | grep -q 'c 1:5 r' && fail "the shared node got the grant: $(ctl list /containers/example)"
ctl list /containers/example/hp1 >/dev/null 2>&1 && fail "the refused leaf stayed"
connect hp2 /containers/example "$PROBE" open /dev/z5 rdonly
for _ in $(seq 100); do [ -s "$T/hp2.out" ] && break; sleep 0.1; done
[ "$(cat "$T/hp2.out")" = EPERM ] || fail "a container started later inherited the attach: $(cat "$T/hp2.out")"
pass "hp1 alone on /containers/example: the grant is refused at its leaf, naming the shared node; hp2, started later, is refused c 1:5"

# 2. A node named for its container is its own: the grant goes there, and nobody joins it.
connect own1 /containers/own1 "$SLEEP" 120
ctl attach own1 "c 1:5" /dev/zfive --access r >"$T/a2.out" 2>&1 || fail "attach own1: $(cat "$T/a2.out")"
grep -q 'container own1: node .* of its own' "$T/devwld.log" && fail "own1 got a leaf under its own node"
ctl list /containers/own1 | grep -q 'c 1:5 r' || fail "own1's node lacks the grant: $(ctl list /containers/own1)"
connect intruder /containers/own1 "$PROBE" open /dev/z5 rdonly
wait_for "$T/devwld.log" "container intruder: node /containers/own1 is container own1's own: refused" ||
	fail "another container joined own1's node: $(grep intruder "$T/devwld.log")"
# Refused at the listener: its filter has no supervisor, so every trapped call fails
# ENOSYS (its loader's first open already): nothing of own1's reaches it.
grep -q 'ok' "$T/intruder.out" && fail "the intruder opened c 1:5: $(cat "$T/intruder.out")"
pass "own1's node (/containers/own1) is its own: the grant went there, another container naming it was refused"
exit 0
