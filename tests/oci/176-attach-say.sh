# devwlctl attach and detach say what was done (devwlctl(1) attach): the container's full
# id and name, the device's numbers and host path, the path in the container, access,
# owner, mode and the node holding the grant; --dry-run resolves and checks all that and
# changes nothing (no node, no grant, no record of a change); EEXIST says which of the
# device and the path is taken. A stand-in runtime's container with a Kubernetes name
# (tests/oci/oci-client), as in 148.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_user_client
mkdir -m 777 "$T/sig" && mkdir "$T/att" || fail "cannot make $T/sig"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/k8s", "rules": ["deny a", "allow c 1:5 rw", "allow c 1:3 rw"] } ] }
JSON
start_devwld --kernel-mode never --state "$T/state.json"

A=4f1c2a9be07d$(printf '1%.0s' $(seq 52))
POD='{"io.kubernetes.pod.namespace":"prod","io.kubernetes.pod.name":"db-0","io.kubernetes.container.name":"db"}'
OCI_CLIENT_METADATA= OCI_CLIENT_ANNOTATIONS=$POD "$CLIENT" "$T/listen.sock" run "$A" "$T/sig" >"$T/a.out" 2>&1 &
CHILD_PIDS+=("$!")
wait_for "$T/a.out" UP 30 || fail "the container did not start: $(cat "$T/a.out")"
wait_until 60 sh -c '"$0" --socket "$1" containers | grep -q "^$2 "' "$DEVWLCTL" "$T/control.sock" "$A" ||
	fail "$A never reached devwld: $(ctl containers)"
devices() { ctl containers --devices; }

# --- 1. --dry-run: checked, said, nothing changed ----------------------------------------
before_list=$(ctl list /k8s/prod/db-0/db)
ctl attach prod/db-0/db /dev/zero "$T/att/z" --mode 0640 --dry-run >"$T/out" 2>&1 || fail "attach --dry-run: $(cat "$T/out")"
grep -qx "would attach c 1:5 (/dev/zero) rw to container $A (prod/db-0/db) at $T/att/z, mode 0640, owner 0:0; granted on node /k8s/prod/db-0/db (dry run: nothing changed)" "$T/out" ||
	fail "attach --dry-run said: $(cat "$T/out")"
[ ! -e "$T/att/z" ] && [ -z "$(devices)" ] && [ "$(ctl list /k8s/prod/db-0/db)" = "$before_list" ] ||
	fail "attach --dry-run changed something: $(devices); $(ctl list /k8s/prod/db-0/db)"
! grep -q '"event":"attach"' "$T/audit.jsonl" || fail "a dry run was recorded: $(grep '"event":"attach"' "$T/audit.jsonl")"
# What a real attach would refuse, a dry run refuses: the parent denies 1:7.
ctl attach 4f1c /dev/full "$T/att/f" --dry-run >"$T/out" 2>&1 && fail "attach --dry-run of a denied device: $(cat "$T/out")"
grep -q "EPERM: container $A: c 1:7 rw would be refused at node /k8s/prod/db-0/db: the parent /k8s/prod/db-0 denies it (no rule allows it.*; so does /k8s)" "$T/out" ||
	fail "attach --dry-run of /dev/full: $(cat "$T/out")"
ctl attach 4f1c /dev/full "$T/att/f" >"$T/out" 2>&1 && fail "attach of a denied device: $(cat "$T/out")"
grep -q EPERM "$T/out" || fail "attach of /dev/full: $(cat "$T/out")"
ctl attach nosuch /dev/zero "$T/att/z" --dry-run >"$T/out" 2>&1 && fail "attach --dry-run nosuch: $(cat "$T/out")"
grep -q 'no container "nosuch" of uid 0' "$T/out" || fail "attach --dry-run nosuch: $(cat "$T/out")"
# Of the four, only the real attach of /dev/full is recorded: a dry run is no change,
# refused or not.
[ "$(grep -c '"event":"attach"' "$T/audit.jsonl")" = 1 ] ||
	fail "dry runs were recorded: $(grep '"event":"attach"' "$T/audit.jsonl")"
pass "attach --dry-run says what it would do, refuses what attach refuses, changes nothing"

# --- 2. attach says what was done ---------------------------------------------------------
ctl attach 4f1c2a /dev/zero "$T/att/z" --mode 0640 --uid 12 --gid 34 >"$T/out" 2>&1 || fail "attach: $(cat "$T/out")"
grep -qx "attached c 1:5 (/dev/zero) rw to container $A (prod/db-0/db) at $T/att/z, mode 0640, owner 12:34; granted on node /k8s/prod/db-0/db" "$T/out" ||
	fail "attach said: $(cat "$T/out")"
[ "$(stat -c '%t:%T %a %u:%g' "$T/att/z")" = "1:5 640 12:34" ] || fail "the node: $(stat -c '%t:%T %a %u:%g' "$T/att/z")"
pass "attach: $(cat "$T/out")"

# --- 3. EEXIST names what is taken --------------------------------------------------------
ctl attach "$A" /dev/zero "$T/att/z2" >"$T/out" 2>&1 && fail "a second attach of /dev/zero: $(cat "$T/out")"
grep -q "EEXIST: container $A has c 1:5 attached already, at $T/att/z (detach it first)" "$T/out" ||
	fail "EEXIST for the device: $(cat "$T/out")"
ctl attach "$A" /dev/null "$T/att/z" >"$T/out" 2>&1 && fail "attach of /dev/null at a taken path: $(cat "$T/out")"
grep -q "EEXIST: container $A has $T/att/z attached already, for c 1:5 (detach it first)" "$T/out" ||
	fail "EEXIST for the path: $(cat "$T/out")"
[ ! -e "$T/att/z2" ] || fail "a refused attach made a node"
pass "EEXIST says whether the device or the path is taken"

# --- 4. detach, dry and real --------------------------------------------------------------
ctl detach prod/db-0/db "$T/att/z" --dry-run >"$T/out" 2>&1 || fail "detach --dry-run: $(cat "$T/out")"
grep -qx "would detach c 1:5 rw from container $A (prod/db-0/db): $T/att/z would be removed and the grant revoked on node /k8s/prod/db-0/db (dry run: nothing changed)" "$T/out" ||
	fail "detach --dry-run said: $(cat "$T/out")"
[ -c "$T/att/z" ] && devices | grep -q " $T/att/z " || fail "detach --dry-run changed something: $(devices)"
ctl detach prod/db-0/db "$T/att/z" >"$T/out" 2>&1 || fail "detach: $(cat "$T/out")"
grep -qx "detached c 1:5 rw from container $A (prod/db-0/db): $T/att/z removed, grant revoked on node /k8s/prod/db-0/db" "$T/out" ||
	fail "detach said: $(cat "$T/out")"
[ ! -e "$T/att/z" ] && [ -z "$(devices)" ] || fail "detach left $(devices)"
pass "detach --dry-run and detach: $(cat "$T/out")"
exit 0
