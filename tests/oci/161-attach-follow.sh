# Hot-plug by selector (devwlctl attach CONTAINER SELECTOR PATH, devwld(8) HOT-PLUG) into
# a running runc container, with real uevents: loop:a.img is attached at /dev/xdisk and
# read by the workload; a.img detached, /dev/xdisk goes from the container and
# `containers --devices` says waiting; a.img attached again on another minor (its old one
# held by another file first), /dev/xdisk comes back with the new numbers and a.img's
# data, while the old minor, now the other file's, is refused. A CDI device whose spec is
# rewritten to another node is re-pushed in one stroke. Every move is in devwlctl events
# (selector, old and new numbers); detach by path and by selector clean up.
# KM: devwld's --kernel-mode (auto: runc's device cgroup programmed before each node
# appears; never: every trapped open is devwld's to answer, on behalf).
RT=${RT:-runc}
KM=${KM:-auto}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
command -v losetup >/dev/null || skip "no losetup (util-linux)"
[ -e /dev/loop-control ] || skip "no loop driver here (/dev/loop-control)"
# How long a move may take to show: a bound for a loaded machine, not a timing claim.
POLL=${POLL:-10}

numbers() { local mm; mm=$(stat -c '%t:%T' "$1"); echo "$((16#${mm%:*})):$((16#${mm#*:}))"; }

for f in a hold dup; do
	printf '%s' "$f-data" >"$T/$f.img"
	truncate -s 1M "$T/$f.img"
done
A0=$(loop_of "$T/a.img" 2>"$T/losetup.err") || skip "cannot attach a loop device here: $(cat "$T/losetup.err")"
N0=$(numbers "$A0")
mkdir "$T/cdi"
spec() {
	cat >"$T/cdi/.spec.tmp" <<EOF_SPEC
{ "cdiVersion": "0.6.0", "kind": "test.devwl.org/dev",
  "devices": [ { "name": "one", "containerEdits": { "deviceNodes": [ { "path": "$1" } ] } } ] }
EOF_SPEC
	mv "$T/cdi/.spec.tmp" "$T/cdi/dev.json"
}
spec /dev/random

# The runtimes' default devices and the loop driver on /lab; each container's own node
# starts without loop devices, random and urandom, so only an attach gives them.
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/lab",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:7 rwm",
                "allow c 1:8 rwm", "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm",
                "allow c 136:* rwm", "allow b 7:* rw"],
      "mknod_needs_cap": false } ],
  "containers": { "default_template": "/lab/{id}",
                  "container_rules": ["deny b 7:* rwm", "deny c 1:8 rwm", "deny c 1:9 rwm"] } }
JSON
start_devwld --kernel-mode "$KM" --cdi-dir "$T/cdi"
make_rootfs

probe() {
	$RT exec "$id" sh -c "$1" >"$T/probe.out" 2>&1 </dev/null
	cat "$T/probe.out"
}
refused() { grep -q "Operation not permitted" "$T/probe.out"; }
"$DEVWLCTL" --socket "$T/control.sock" events --json --follow >"$T/events.out" 2>&1 &
CHILD_PIDS+=("$!")

id=attf-$RT-$$
make_bundle "$id" "echo READY; while [ ! -e /tmp/stop-$id ]; do sleep 0.1; done"
run_detached "$id" "$T/$id"
wait_until 60 sh -c '"$0" --socket "$1" containers | grep -q "^$2 "' "$DEVWLCTL" \
	"$T/control.sock" "$id" || fail "$id never reached devwld: $(cat "$T/$id.out")"
mode=$(ctl containers | awk -v id="$id" '$1 == id {print $5}')

# Refusals: each with its reason, nothing attached.
expect_refused() {
	local want=$1
	shift
	ctl attach "$@" >"$T/ctl.out" 2>&1
	[ $? = 1 ] || fail "attach $*: $(cat "$T/ctl.out")"
	grep -q -- "$want" "$T/ctl.out" || fail "attach $*: $(cat "$T/ctl.out"), want '$want'"
}
expect_refused "needs the PATH" "$id" "loop:$T/a.img"
expect_refused "names no device" "$id" "loop:$T/hold.img" /dev/xhold
D1=$(loop_of "$T/dup.img") && D2=$(loop_of "$T/dup.img") || fail "dup.img on two loop devices"
expect_refused "names 2 devices here (b $(numbers "$D1"), b $(numbers "$D2"))" "$id" "loop:$T/dup.img" /dev/xdup
losetup -d "$D1" "$D2"
[ -z "$(ctl containers --devices)" ] || fail "after refusals: $(ctl containers --devices)"
pass "$RT ($mode): a selector without PATH, naming none, naming two (listed): refused, nothing attached"

ctl attach "$id" "loop:$T/a.img" /dev/xdisk --mode 0640 >"$T/ctl.out" 2>&1 || fail "attach: $(cat "$T/ctl.out")"
[ "$(probe 'head -c 6 /dev/xdisk')" = a-data ] || fail "reading /dev/xdisk: $(cat "$T/probe.out")"
[ "$(probe "stat -c '%a %t:%T' /dev/xdisk")" = "640 $(stat -c '%t:%T' "$A0")" ] ||
	fail "/dev/xdisk in the container: $(cat "$T/probe.out")"
ctl containers --devices | grep -qxF "$id b $N0 rw /dev/xdisk - loop:$T/a.img" ||
	fail "containers --devices: $(ctl containers --devices)"
# A second node of the same numbers, made from outside (the container has no "m"): it
# opens while the grant is there, so that its refusal below is the grant's doing.
mknod "$T/rootfs/tmp/old" b "${N0%:*}" "${N0#*:}"
[ "$(probe 'head -c 6 /tmp/old')" = a-data ] || fail "b $N0 through /tmp/old: $(cat "$T/probe.out")"
pass "$RT ($mode): loop:a.img attached at /dev/xdisk (b $N0, mode 640); the workload reads a.img's data; containers --devices shows the selector"

# a.img detached: no loop device backs it, so no node and no grant, but still attached.
losetup -d "$A0" || fail "losetup -d $A0"
wait_until "$POLL" sh -c '"$0" --socket "$1" containers --devices | grep -qxF "$2 - - rw /dev/xdisk (waiting) - loop:$3"' \
	"$DEVWLCTL" "$T/control.sock" "$id" "$T/a.img" || fail "not waiting: $(ctl containers --devices)"
[ "$(probe 'test -e /dev/xdisk && echo PRESENT || echo ABSENT')" = ABSENT ] ||
	fail "/dev/xdisk while a.img has no loop device: $(cat "$T/probe.out")"
pass "$RT ($mode): losetup -d: /dev/xdisk gone from the container, containers --devices says waiting"

# The old minor held by another file, so that a.img comes back on another one.
held=1
loop_of "$T/hold.img" "$A0" >/dev/null 2>"$T/hold.err" || held=0
[ "$held" = 1 ] || echo "# $A0 was taken by someone else before hold.img: $(cat "$T/hold.err")"
A1=$(loop_of "$T/a.img") || fail "cannot attach a.img again"
N1=$(numbers "$A1")
[ "$N1" != "$N0" ] || fail "a.img landed on its old minor $N0 again"
hex1=$(stat -c '%t:%T' "$A1")
wait_until "$POLL" sh -c '[ "$("$0" exec "$1" stat -c %t:%T /dev/xdisk 2>/dev/null </dev/null)" = "$2" ]' \
	"$RT" "$id" "$hex1" || fail "/dev/xdisk never became b $N1: $(probe 'ls -l /dev/xdisk')"
[ "$(probe 'head -c 6 /dev/xdisk')" = a-data ] || fail "reading /dev/xdisk after the replug: $(cat "$T/probe.out")"
[ "$(probe "stat -c %a /dev/xdisk")" = 640 ] || fail "mode after the replug: $(cat "$T/probe.out")"
probe "head -c 6 /tmp/old" >/dev/null
refused || fail "b $N0 (now $([ "$held" = 1 ] && echo hold.img || echo "another file")) in the container: $(cat "$T/probe.out")"
ctl containers --devices | grep -qxF "$id b $N1 rw /dev/xdisk - loop:$T/a.img" ||
	fail "containers --devices after the replug: $(ctl containers --devices)"
pass "$RT ($mode): a.img again on $A1: /dev/xdisk is b $N1 (mode kept) and reads a.img; b $N0, now another file's, is refused"

# The events: the departure and the return, naming the selector and both numbers.
grep '"event":"attach"' "$T/events.out" | grep -F "\"selector\":\"loop:$T/a.img\"" >"$T/moves" || true
grep -q "\"old_device\":\"b $N0\".*\"result\":\"waiting\"" "$T/moves" ||
	fail "no waiting record: $(cat "$T/events.out")"
grep -q "\"device\":\"b $N1\",\"old_device\":\"b $N0\".*\"result\":\"back\".*\"cause\":\"uevent " "$T/moves" ||
	fail "no record of the return on b $N1: $(cat "$T/events.out")"
# The JSON lines: --follow says on stderr (here too) when it subscribes again.
grep '^{' "$T/events.out" | jq -e -s --arg s "loop:$T/a.img" --arg d "b $N1" --arg o "b $N0" '
	map(select(.event == "attach" and .path == "/dev/xdisk" and .device == $d and
		.old_device == $o and .access == "rw" and .result == "back" and .selector == $s and
		(.cause | startswith("uevent ")))) | length >= 1' >/dev/null ||
	fail "no record of the return on b $N1: $(grep attach "$T/events.out")"
pass "$RT ($mode): devwlctl events shows a.img's device leaving (waiting) and back on b $N1, was b $N0"

# A CDI device rewritten from /dev/random to /dev/urandom: moved in one stroke.
ctl attach "$id" "cdi:test.devwl.org/dev=one" /dev/xcdi --access r >"$T/ctl.out" 2>&1 ||
	fail "attach the CDI device: $(cat "$T/ctl.out")"
[ "$(probe 'head -c 4 /dev/xcdi | wc -c')" = 4 ] || fail "reading /dev/xcdi: $(cat "$T/probe.out")"
mknod "$T/rootfs/tmp/rnd" c 1 8
[ "$(probe 'head -c 4 /tmp/rnd | wc -c')" = 4 ] || fail "c 1:8 through /tmp/rnd: $(cat "$T/probe.out")"
spec /dev/urandom
wait_until "$POLL" sh -c '[ "$("$0" exec "$1" stat -c %t:%T /dev/xcdi 2>/dev/null </dev/null)" = 1:9 ]' \
	"$RT" "$id" || fail "/dev/xcdi never became c 1:9: $(probe 'ls -l /dev/xcdi')"
[ "$(probe 'head -c 4 /dev/xcdi | wc -c')" = 4 ] || fail "reading /dev/xcdi as c 1:9: $(cat "$T/probe.out")"
probe "head -c 4 /tmp/rnd" >/dev/null
refused || fail "c 1:8, no longer the CDI device's, in the container: $(cat "$T/probe.out")"
wait_until "$POLL" grep -q '"device":"c 1:9","old_device":"c 1:8".*"result":"replugged".*"cause":"CDI spec changed' "$T/events.out" ||
	fail "no replug record for the CDI device: $(cat "$T/events.out")"
pass "$RT ($mode): a CDI spec rewritten: /dev/xcdi moved from c 1:8 to c 1:9 at once (replugged), c 1:8 refused"

# A planned restart keeps the selector and goes on following.
gen() { ctl stats | awk '/^generation / {print $2}'; }
g=$(gen)
if ctl restart >/dev/null 2>&1; then
	wait_until 60 sh -c '[ "$("$0" --socket "$1" stats | awk "/^generation / {print \$2}")" -gt "$2" ]' \
		"$DEVWLCTL" "$T/control.sock" "$g" || fail "no new worker after devwlctl restart"
	ctl containers --devices >"$T/devices.out"
	grep -qxF "$id b $N1 rw /dev/xdisk - loop:$T/a.img" "$T/devices.out" &&
		grep -qxF "$id c 1:9 r /dev/xcdi - cdi:test.devwl.org/dev=one" "$T/devices.out" ||
		fail "after a restart: $(cat "$T/devices.out")"
	[ "$(probe 'head -c 6 /dev/xdisk')" = a-data ] || fail "after a restart: $(cat "$T/probe.out")"
	pass "$RT ($mode): both attachments by selector survive a planned restart"
fi

# Detach by path, then by selector: nodes gone, grants revoked, nothing left.
ctl detach "$id" /dev/xdisk >"$T/ctl.out" 2>&1 || fail "detach /dev/xdisk: $(cat "$T/ctl.out")"
[ "$(probe 'test -e /dev/xdisk && echo PRESENT || echo ABSENT')" = ABSENT ] || fail "/dev/xdisk after detach"
mknod "$T/rootfs/tmp/new" b "${N1%:*}" "${N1#*:}"
probe "head -c 6 /tmp/new" >/dev/null
refused || fail "b $N1 after detach: $(cat "$T/probe.out")"
ctl detach "$id" "cdi:test.devwl.org/dev=one" >"$T/ctl.out" 2>&1 || fail "detach by selector: $(cat "$T/ctl.out")"
[ "$(probe 'test -e /dev/xcdi && echo PRESENT || echo ABSENT')" = ABSENT ] || fail "/dev/xcdi after detach"
[ -z "$(ctl containers --devices)" ] || fail "after detach: $(ctl containers --devices)"
pass "$RT ($mode): detach by path and by selector: nodes gone, b $N1 refused, nothing listed"
touch "$T/rootfs/tmp/stop-$id"
exit 0
