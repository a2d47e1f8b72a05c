# CDI devices from the runtime's annotations (devwl-policy(5) "cdi_annotations"): a runc
# container whose config carries "cdi.k8s.io/devwl-test": "test.devwl.org/disk=d0", as
# containerd and CRI-O write it for a device plugin's choice, on a node that opts in,
# reads the loop device a CDI spec in devwld's --cdi-dir names; its neighbour under the
# same node without the annotation is refused, and so is a container with it under a
# child node that says false. Malformed names are refused and audited, the container
# served all the same. The spec rewritten (temp file and rename) to another loop device
# moves the grant; the binding survives a reload and a planned restart, and goes with
# the container. KM: devwld's --kernel-mode (auto: the containers ask for kernel mode,
# and their device cgroup holds the grant; never: devwld answers every trapped open).
RT=${RT:-runc}
KM=${KM:-auto}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PROFILE=$HERE/../../examples/oci-hook/seccomp-mknod-only.json
command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
[ -e /dev/loop-control ] || skip "no /dev/loop-control (loop driver not loaded)"

# loopdev FILE TEXT: a loop device on a 1 MiB FILE starting with TEXT; prints it.
loopdev() {
	truncate -s 1M "$1" && printf '%s' "$2" | dd of="$1" conv=notrunc status=none || return 1
	losetup -f --show "$1"
}
L0=$(loopdev "$T/d0.img" DISK-ZERO 2>"$T/losetup.err") ||
	skip "cannot attach a loop device here: $(cat "$T/losetup.err")"
LOOPS+=("$L0")
L1=$(loopdev "$T/d1.img" DISK-ONE! 2>"$T/losetup.err") ||
	skip "cannot attach a second loop device here: $(cat "$T/losetup.err")"
LOOPS+=("$L1")
M0=$(($(stat -c '0x%T' "$L0")))
M1=$(($(stat -c '0x%T' "$L1")))

# spec DEV: the CDI spec naming DEV as test.devwl.org/disk=d0, renamed into place.
mkdir "$T/cdi"
spec() {
	cat >"$T/cdi/.disk.tmp" <<EOF_SPEC
{ "cdiVersion": "0.6.0", "kind": "test.devwl.org/disk",
  "devices": [ { "name": "d0",
                 "containerEdits": { "deviceNodes": [ { "path": "$1", "permissions": "rw" } ] } } ] }
EOF_SPEC
	mv "$T/cdi/.disk.tmp" "$T/cdi/disk.json"
}
spec "$L0"

# /lab admits loop devices at most; each container's own node starts without them
# ("container_rules"), so only what its annotations name is granted. /lab/off says false.
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/lab", "cdi_annotations": true,
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow b 7:* rw"],
      "mknod_needs_cap": false },
    { "path": "/lab/off", "cdi_annotations": false } ],
  "containers": { "container_rules": ["deny b 7:* rwm"] } }
JSON
start_devwld --kernel-mode "$KM" --cdi-dir "$T/cdi"
make_rootfs

probe() {
	$RT exec "$2" sh -c "$1" >"$T/probe.out" 2>&1 </dev/null
	cat "$T/probe.out"
}
eperm() { grep -q "Operation not permitted" "$T/probe.out"; }
mode_of() { ctl containers | awk -v id="$1" '$1 == id {print $5}'; }
# start ID NODE ANNOTATIONS-JSON: a container on NODE (listenerMetadata), with both loop
# devices as /dev/cdi0 and /dev/cdi1 (linux.devices: runc makes the nodes; only the
# device policy decides whether they open), running until /tmp/stop-ID exists.
start() {
	local meta="node=$2" seccomp
	if [ "$KM" = never ]; then
		seccomp=".linux.seccomp.listenerMetadata = \"$meta\""
	else
		seccomp=".linux.seccomp = $(jq -c --arg lp "$T/listen.sock" --arg m "$meta mode=kernel" \
			'.listenerPath = $lp | .listenerMetadata = $m' "$PROFILE")"
	fi
	make_bundle "$1" "head -c 9 /dev/cdi0 >/tmp/first-$1 2>&1; echo READY
		while [ ! -e /tmp/stop-$1 ]; do sleep 0.1; done" \
		"$seccomp | .annotations = $3
		 | .linux.devices = [{path: \"/dev/cdi0\", type: \"b\", major: 7, minor: $M0, fileMode: 432, uid: 0, gid: 0},
		                     {path: \"/dev/cdi1\", type: \"b\", major: 7, minor: $M1, fileMode: 432, uid: 0, gid: 0}]"
	run_detached "$1" "$T/$1"
	wait_until 60 sh -c '"$0" --socket "$1" containers | grep -q "^$2 "' "$DEVWLCTL" \
		"$T/control.sock" "$1" || fail "$1 never reached devwld: $(cat "$T/$1.out")"
}
# devwlctl itself, not the ctl function: $! must be its pid, for the cleanup to kill it.
"$DEVWLCTL" --socket "$T/control.sock" events --json --follow >"$T/events.out" 2>&1 &
CHILD_PIDS+=("$!")

a=cdi-a-$$ b=cdi-b-$$ c=cdi-c-$$
start "$a" /lab/$a '{"cdi.k8s.io/devwl-test": "test.devwl.org/disk=d0",
	"cdi.k8s.io/bad": "nope,,test.devwl.org/disk=*", "io.example/other": "x"}'
ctl selectors >"$T/sel.out" || fail "devwlctl selectors: $(cat "$T/sel.out")"
grep -qxF "/lab/$a allow cdi:test.devwl.org/disk=d0 [annotation]: b 7:$M0 rw" "$T/sel.out" ||
	fail "selectors after $a: $(cat "$T/sel.out")"
[ "$(probe "head -c 9 /dev/cdi0" "$a")" = DISK-ZERO ] || fail "$a reading $L0: $(cat "$T/probe.out")"
probe "head -c 9 /dev/cdi1" "$a" >/dev/null
eperm || fail "$a reading $L1, which no annotation names: $(cat "$T/probe.out")"
mode=$(mode_of "$a")
# Where devwld answers the opens, the workload's very first one already finds the grant:
# it is made before the container's first call is served. (In kernel mode runc's own
# cgroup, which allows linux.devices, decides until devwld programs it.)
if [ "$KM" = never ]; then
	wait_until 10 test -s "$T/rootfs/tmp/first-$a" || fail "$a never read at its start"
	[ "$(cat "$T/rootfs/tmp/first-$a")" = DISK-ZERO ] ||
		fail "$a's first open, at its start: $(cat "$T/rootfs/tmp/first-$a")"
fi
pass "$RT ($mode): annotation cdi.k8s.io/devwl-test on /lab (cdi_annotations): $a reads $L0 (b 7:$M0), as the spec names it, and not $L1"

# The audit is written by a thread of its own: in a moment.
granted() {
	jq -se --arg id "$a" --arg rule "b 7:$M0 rw" 'any(.[]; .event == "selector" and
		.container == $id and .cause == "cdi annotation" and .granted == [$rule])' \
		"$T/audit.jsonl" >/dev/null
}
wait_until 60 granted || fail "no audit record of the grant: $(grep selector "$T/audit.jsonl")"
jq -r --arg id "$a" 'select(.event == "selector" and .result == "refused" and .container == $id)
	| .reason' "$T/audit.jsonl" >"$T/refused.txt" || fail "the audit does not parse"
for want in '"nope": not VENDOR/CLASS=NAME' '"": empty name' '"test.devwl.org/disk=*": a wildcard'; do
	grep -qF "annotation cdi.k8s.io/bad: $want" "$T/refused.txt" ||
		fail "no refusal '$want' in the audit: $(cat "$T/refused.txt")"
done
# The JSON lines: --follow says on stderr (here too) when it subscribes again.
granted_event() {
	grep '^{' "$T/events.out" | jq -e -s --arg id "$a" --arg g "b 7:$M0 rw" '
	map(select(.event == "selector" and .container == $id and .node == "/lab/" + $id and
		.binding == "allow" and .selector == "cdi:test.devwl.org/disk=d0" and
		any((.granted // [])[]; . == $g) and .cause == "cdi annotation")) | length >= 1' >/dev/null
}
wait_until 60 granted_event || fail "devwlctl events: $(cat "$T/events.out")"
pass "$RT: the grant recorded with $a and cause \"cdi annotation\" (audit, devwlctl events); \"nope\", an empty name and a wildcard refused by reason, $a served all the same"

start "$b" /lab/$b '{"io.example/other": "x"}'
probe "head -c 9 /dev/cdi0" "$b" >/dev/null
eperm || fail "$b, no annotation, read $L0: $(cat "$T/probe.out")"
start "$c" /lab/off/$c '{"cdi.k8s.io/devwl-test": "test.devwl.org/disk=d0"}'
probe "head -c 9 /dev/cdi0" "$c" >/dev/null
eperm || fail "$c, under /lab/off (cdi_annotations false), read $L0: $(cat "$T/probe.out")"
grep -q "container $c: 1 cdi.k8s.io/ annotations ignored: node /lab/off/$c does not say" \
	"$T/devwld.log" || fail "no log line for $c's ignored annotation"
ctl selectors | grep -q "/lab/off/$c\|/lab/$b" && fail "bindings for $b or $c: $(ctl selectors)"
pass "$RT: $b beside it without the annotation, and $c with it under /lab/off (false), are refused $L0"

# A container on the policy's own node /lab: the grant goes to a leaf made for it alone,
# /lab/ID, never to /lab, which its neighbours share.
e=cdi-e-$$
ctl show /lab >"$T/lab.before" || fail "show /lab"
start "$e" /lab '{"cdi.k8s.io/devwl-test": "test.devwl.org/disk=d0"}'
[ "$(ctl containers | awk -v id="$e" '$1 == id {print $2}')" = "/lab/$e" ] ||
	fail "$e is not on a leaf of its own: $(ctl containers)"
ctl selectors | grep -qxF "/lab/$e allow cdi:test.devwl.org/disk=d0 [annotation]: b 7:$M0 rw" ||
	fail "selectors after $e: $(ctl selectors)"
ctl show /lab | cmp -s - "$T/lab.before" || fail "/lab changed: $(ctl show /lab)"
[ "$(probe "head -c 9 /dev/cdi0" "$e")" = DISK-ZERO ] || fail "$e reading $L0: $(cat "$T/probe.out")"
touch "$T/rootfs/tmp/stop-$e"
wait_until 60 sh -c '! "$0" --socket "$1" containers | grep -q "^$2 "' "$DEVWLCTL" \
	"$T/control.sock" "$e" || fail "$e did not go"
ctl selectors | grep -qF "/lab/$e " && fail "$e's binding outlived it: $(ctl selectors)"
pass "$RT: $e on the policy's node /lab: bound on a leaf /lab/$e of its own, /lab unchanged, gone with it"

# The spec rewritten to name the other loop device: the grant follows.
spec "$L1"
wait_until 60 sh -c '"$0" --socket "$1" selectors | grep -qxF "$2"' "$DEVWLCTL" \
	"$T/control.sock" "/lab/$a allow cdi:test.devwl.org/disk=d0 [annotation]: b 7:$M1 rw" ||
	fail "the binding did not follow the spec: $(ctl selectors)"
[ "$(probe "head -c 9 /dev/cdi1" "$a")" = DISK-ONE! ] || fail "$a reading $L1: $(cat "$T/probe.out")"
probe "head -c 9 /dev/cdi0" "$a" >/dev/null
eperm || fail "$a still reads $L0 after the spec moved: $(cat "$T/probe.out")"
pass "$RT: the spec renamed into place naming $L1: b 7:$M0 revoked, b 7:$M1 granted to $a"

ctl reload >/dev/null || fail "reload"
ctl selectors | grep -qxF "/lab/$a allow cdi:test.devwl.org/disk=d0 [annotation]: b 7:$M1 rw" ||
	fail "selectors after a reload: $(ctl selectors)"
[ "$(probe "head -c 9 /dev/cdi1" "$a")" = DISK-ONE! ] || fail "after a reload: $(cat "$T/probe.out")"
ctl reset >/dev/null || fail "reset"
[ "$(probe "head -c 9 /dev/cdi1" "$a")" = DISK-ONE! ] || fail "after a reset: $(cat "$T/probe.out")"
gen() { ctl stats | awk '/^generation / {print $2}'; }
g=$(gen)
if ctl restart >/dev/null 2>&1; then
	wait_until 60 sh -c '[ "$("$0" --socket "$1" stats | awk "/^generation / {print \$2}")" -gt "$2" ]' \
		"$DEVWLCTL" "$T/control.sock" "$g" || fail "no new worker after devwlctl restart"
	ctl selectors | grep -qxF "/lab/$a allow cdi:test.devwl.org/disk=d0 [annotation]: b 7:$M1 rw" ||
		fail "selectors after a restart: $(ctl selectors)"
	[ "$(probe "head -c 9 /dev/cdi1" "$a")" = DISK-ONE! ] || fail "after a restart: $(cat "$T/probe.out")"
	probe "head -c 9 /dev/cdi0" "$b" >/dev/null
	eperm || fail "$b after a restart: $(cat "$T/probe.out")"
	pass "$RT: the binding survives a reload, a reset and a planned restart"
else
	pass "$RT: the binding survives a reload and a reset (no keeper here: restart not tried)"
fi

touch "$T/rootfs/tmp/stop-$a"
wait_until 60 sh -c '! "$0" --socket "$1" containers | grep -q "^$2 "' "$DEVWLCTL" \
	"$T/control.sock" "$a" || fail "$a did not go"
ctl selectors | grep -qF "/lab/$a " && fail "$a's binding outlived it: $(ctl selectors)"
ctl list "/lab/$a" >/dev/null 2>&1 && fail "/lab/$a outlived its container"
pass "$RT: $a exited: its node and its binding are gone (devwlctl selectors)"
touch "$T/rootfs/tmp/stop-$b" "$T/rootfs/tmp/stop-$c"
exit 0
