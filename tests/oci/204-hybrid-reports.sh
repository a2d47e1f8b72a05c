# On a hybrid host (the v1 devices controller beside a cgroup2 hierarchy) kernel mode
# enforces through the v1 controller, which tells nobody; the reporter devwld attaches to
# the container's own cgroup2 cgroup (libdevwl(3), devwl_cgroup_set_reporter(); devwld(8),
# KERNEL MODE) reports what the v1 rules decide, and never decides itself. A runc
# container on node /km, mknod-only profile, mode=kernel (its opens never trapped):
#  1. /dev/zero (granted) opens and shows in `devwlctl events` and the audit as an allow
#     with "source":"kernel" and count 1; /dev/full (denied) fails EPERM from the kernel
#     and shows as a deny, source kernel; the v1 devices.list is the node's.
#  2. The v1 rules decide, not the reporter: c 1:7 r written into devices.allow behind
#     devwld, /dev/full opens (the reporter, predicting the node's denial, allowed it);
#     devwld's drift check repairs the v1 rules and never counts its own reporter as a
#     foreign program.
#  3. A flood of opens of /dev/zero: at most one report per second, counts adding up.
#  4. A container whose cgroup2 cgroup is not its own (runc run where the cgroup2 mount
#     is hidden, from a scratch cgroup2 cgroup that holds another process too) is
#     enforced all the same, and devwld says once (log, audit and events, stats
#     kernel_unreportable) that its accesses cannot be reported, attaching nothing there.
#  5. devwl-run --connect --mode=kernel, handed over as a runtime would: its run cgroup
#     gets a cgroup2 cgroup of its own beside the v1 one, so it is reported the same.
# Skips unless this is a hybrid host whose kernel lets a device program record.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PROFILE=$HERE/../../examples/oci-hook/seccomp-mknod-only.json
[ -f "$PROFILE" ] || fail "no $PROFILE"
FLOOD=${FLOOD:-10000}
need_test_hooks "the drift check every 300 ms"
host_can_v1_devices || skip "no v1 devices controller to program: $host_why"
host_cgroup2 >/dev/null || skip "no cgroup2 hierarchy beside the v1 devices controller: not a hybrid host"
host_can_v2_devices || skip "no cgroup2 device programs here: $host_why"
host_can_record || skip "this kernel cannot record a device program's denials: $host_why"
CG2=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
[ -n "$CG2" ] || skip "no cgroup2 mount"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/km",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm"] } ] }
JSON
DEVWLD_TEST_DRIFT_MS=300 start_devwld
follow_events "$T/events.out"
make_rootfs
kernel_profile() {
	jq --slurpfile p "$PROFILE" --arg lp "$T/listen.sock" '
		.linux.seccomp = ($p[0] | .listenerPath = $lp | .listenerMetadata = "node=/km mode=kernel")' \
		"$T/$1/config.json" >"$T/$1/config.new" && mv "$T/$1/config.new" "$T/$1/config.json" ||
		fail "jq on the config"
}

id=devwl-hy-$$
make_bundle "$id" 'echo READY; while [ ! -e /tmp/go ]; do sleep 0.05; done
true </dev/zero && echo ZERO=ok
echo "FULL=$(sh -c "true </dev/full" 2>&1)"
while [ ! -e /tmp/go2 ]; do sleep 0.05; done
i=0; until true </dev/full 2>/dev/null; do sleep 0.01; i=$((i + 1)); [ $i -lt 2000 ] || break; done
[ $i -lt 2000 ] && echo FULL2=ok || echo FULL2=refused
while [ ! -e /tmp/go3 ]; do sleep 0.05; done
i=0; while [ $i -lt '"$FLOOD"' ]; do true </dev/zero; i=$((i + 1)); done; echo FLOOD=$i
sleep 1.2; true </dev/zero && echo LAST=ok
while [ ! -e /tmp/stop ]; do sleep 0.1; done'
kernel_profile "$id"
run_detached "$id" "$T/$id"
wait_for "$T/devwld.log" "container $id: .*kernel mode" ||
	fail "devwld said nothing about kernel mode: $(cat "$T/$id.out")"
pid=$(runc state "$id" | jq .pid)
v1=$(awk -F: '$2 == "devices" {print $3}' "/proc/$pid/cgroup")
v2=$(awk -F: '$1 == 0 {print $3}' "/proc/$pid/cgroup")
[ -n "$v1" ] && [ "$v1" != / ] || skip "runc gave the container no v1 devices cgroup of its own ($v1)"
[ -n "$v2" ] && [ "$v2" != / ] || skip "runc gave the container no cgroup2 cgroup of its own ($v2)"
V1DIR=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)devices(,|$)/ {print $5; exit}' /proc/self/mountinfo)$v1
[ "$(ctl containers | awk -v id="$id" '$1 == id {print $5}')" = kernel-v1 ] ||
	fail "not in kernel-v1 mode: $(ctl containers)"
grep -q "container $id: kernel mode: cgroup v1 .*its denials recorded by its reporter on cgroup2; its allowed accesses reported" \
	"$T/devwld.log" || fail "the log: $(grep "$id" "$T/devwld.log")"
[ "$(stat_of kernel_unreported)" = 0 ] && [ "$(stat_of kernel_unreportable)" = 0 ] ||
	fail "stats: $(ctl stats | grep kernel)"
pass "runc's container on this hybrid host: v1 devices $v1, cgroup2 $v2; devwld reports through cgroup2"

recs() { jq -c -s --arg id "$id" --arg d "$2" --arg dec "$3" \
	'map(select(.container == $id and .device == $d and .decision == $dec))' "$1"; }
reason="kernel device program (kernel mode)"

# 1. One allowed and one denied open, as the kernel answered them, reported.
touch "$T/rootfs/tmp/go"
wait_for "$T/$id.out" "FULL=" || fail "the container did not open: $(cat "$T/$id.out")"
grep -q "ZERO=ok" "$T/$id.out" || fail "/dev/zero: $(cat "$T/$id.out")"
grep -q "FULL=.*Operation not permitted" "$T/$id.out" || fail "/dev/full not EPERM: $(cat "$T/$id.out")"
grep -qx "c 1:5 rwm" "$V1DIR/devices.list" && ! grep -q "^c 1:7 " "$V1DIR/devices.list" ||
	fail "the v1 devices.list: $(cat "$V1DIR/devices.list")"
for f in events.out audit.jsonl; do
	wait_for "$T/$f" '"device":"c 1:7"' || fail "$f: no denial: $(cat "$T/$f")"
	wait_for "$T/$f" '"device":"c 1:5".*"decision":"allow"' || fail "$f: no allow: $(cat "$T/$f")"
	recs "$T/$f" "c 1:5" allow | jq -e --arg r "$reason" 'length == 1 and (.[0] | .node == "/km" and
		.access == "r" and .reason == $r and .source == "kernel" and .count == 1)' >/dev/null ||
		fail "$f: $(recs "$T/$f" "c 1:5" allow)"
	recs "$T/$f" "c 1:7" deny | jq -e 'length == 1 and (.[0] | .errno == "EPERM" and
		.source == "kernel" and .count == 1 and .access == "r")' >/dev/null ||
		fail "$f: $(recs "$T/$f" "c 1:7" deny)"
done
pass "the kernel opened /dev/zero and refused /dev/full EPERM (v1 rules); both reported, source kernel"

# 2. The v1 rules alone decide: a grant written behind devwld opens /dev/full, though the
# reporter (the node's program) predicts a denial; devwld's drift check takes it back.
touch "$T/rootfs/tmp/go2"
for _ in $(seq 200); do
	grep -q "FULL2=" "$T/$id.out" && break
	echo "c 1:7 r" >"$V1DIR/devices.allow" 2>/dev/null
	sleep 0.05
done
grep -q "FULL2=ok" "$T/$id.out" || fail "/dev/full with c 1:7 r in devices.allow: $(cat "$T/$id.out")"
wait_for "$T/events.out" '"event":"drift".*"changed":\["rules"\]' ||
	fail "no drift repair: $(grep drift "$T/events.out")"
for _ in $(seq 100); do
	grep -q "^c 1:7 " "$V1DIR/devices.list" || break
	sleep 0.05
done
! grep -q "^c 1:7 " "$V1DIR/devices.list" || fail "not repaired: $(cat "$V1DIR/devices.list")"
sleep 0.8 # several drift checks of the cgroup as it is now
[ "$(stat_of kernel_foreign_programs)" = 0 ] || fail "our reporter taken for another's: $(ctl stats | grep kernel)"
! grep -q '"event":"drift".*"\(foreign\|detached\)"' "$T/events.out" ||
	fail "drift: $(grep drift "$T/events.out")"
pass "a v1 grant behind devwld opened /dev/full past the reporter; repaired, the reporter never foreign"

# 3. The flood: one report per window at most, counts adding up to every open.
before=$(recs "$T/audit.jsonl" "c 1:5" allow | jq '[.[] | .count] | add')
start=$(date +%s.%N)
touch "$T/rootfs/tmp/go3"
wait_for "$T/$id.out" "LAST=" 30 || fail "the flood did not end: $(cat "$T/$id.out")"
end=$(date +%s.%N)
grep -q "FLOOD=$FLOOD" "$T/$id.out" || fail "the flood: $(cat "$T/$id.out")"
want=$((before + FLOOD + 1))
sum() { recs "$T/$1" "c 1:5" allow | jq '[.[] | .count] | add'; }
for _ in $(seq 100); do
	[ "$(sum events.out)" = $want ] && [ "$(sum audit.jsonl)" = $want ] && break
	sleep 0.05
done
bound=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%d", e - s + 3 }')
for f in events.out audit.jsonl; do
	n=$(recs "$T/$f" "c 1:5" allow | jq length)
	[ "$(sum $f)" = $want ] || fail "$f: counts add up to $(sum $f), not $want: $(recs "$T/$f" "c 1:5" allow)"
	[ "$n" -le "$bound" ] || fail "$f: $n reports of $want opens, more than $bound"
done
pass "$want opens of /dev/zero in $n reports, counts adding up"
touch "$T/rootfs/tmp/stop"

# 4. No cgroup2 cgroup of its own: said once, nothing attached.
SCRATCH=$CG2/devwl-t204-$$
mkdir "$SCRATCH" || fail "mkdir $SCRATCH"
sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 60' sh "$SCRATCH" &
HOLDER=$!
CHILD_PIDS+=("$HOLDER")
id2=devwl-hy2-$$
trap 'st=$?; runc delete -f "$id2" >/dev/null 2>&1; kill -9 "$HOLDER" 2>/dev/null; wait "$HOLDER" 2>/dev/null
	for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$SCRATCH" 2>/dev/null && break; sleep 0.2; done
	(exit $st); cleanup' EXIT
make_bundle "$id2" 'i=0; while [ ! -e /tmp/stop2 ]; do
	echo "FULL=$(sh -c "true </dev/full" 2>&1)"; true </dev/zero && echo ZERO=ok; sleep 0.1
	i=$((i + 1)); [ $i -lt 100 ] || break; done'
kernel_profile "$id2"
CONTAINERS+=("$id2")
# runc where the cgroup2 mount is hidden (a runtime that knows only v1), started from the
# scratch cgroup: the container shares it with the holder.
timeout 120 unshare -m --propagation private sh -c 'echo $$ >"$1/cgroup.procs" || exit 1
	for m in $(awk '"'"'$0 ~ / - cgroup2 / {print $5}'"'"' /proc/self/mountinfo); do umount "$m"; done
	exec runc run -d --bundle "$2" "$3"' sh "$SCRATCH" "$T/$id2" "$id2" >"$T/$id2.out" 2>&1 </dev/null ||
	fail "runc run $id2: $(cat "$T/$id2.out")"
pid2=$(runc state "$id2" | jq .pid)
[ "$(awk -F: '$1 == 0 {print $3}' "/proc/$pid2/cgroup")" = "/devwl-t204-$$" ] ||
	fail "$id2 is not in the scratch cgroup: $(cat "/proc/$pid2/cgroup")"
wait_for "$T/devwld.log" "container $id2: kernel mode: its accesses and denials cannot be reported" ||
	fail "devwld did not say: $(grep "$id2" "$T/devwld.log")"
grep -q "container $id2: kernel mode: its accesses and denials cannot be reported: its cgroup2 cgroup /devwl-t204-$$ is not its own: process $HOLDER there" \
	"$T/devwld.log" || fail "the reason: $(grep "$id2" "$T/devwld.log")"
[ "$(ctl containers | awk -v id="$id2" '$1 == id {print $5}')" = kernel-v1 ] ||
	fail "$id2 not in kernel-v1 mode: $(ctl containers)"
# A change applied again, drift checks: said all the same only once.
ctl allow /km "c 1:11 r" >/dev/null || fail "devwlctl allow"
sleep 1
grep -q "FULL=.*Operation not permitted" "$T/$id2.out" 2>/dev/null ||
	runc exec "$id2" sh -c 'true </dev/full' 2>&1 | grep -q "Operation not permitted" ||
	fail "$id2: /dev/full not refused"
[ "$(grep -c "container $id2: kernel mode: its accesses and denials cannot be reported" "$T/devwld.log")" = 1 ] ||
	fail "said more than once: $(grep "$id2" "$T/devwld.log")"
for f in events.out audit.jsonl; do
	jq -s -e --arg id "$id2" --arg p "/devwl-t204-$$" '[.[] | select(.container == $id and .event == "reports")] |
		length == 1 and (.[0] | .result == "unavailable" and .version == 1 and
		(.reason | contains("its cgroup2 cgroup " + $p + " is not its own")))' "$T/$f" >/dev/null ||
		fail "$f: $(grep "$id2" "$T/$f" | grep -v '"decision"')"
	[ "$(jq -s --arg id "$id2" '[.[] | select(.container == $id and .source == "kernel")] | length' "$T/$f")" = 0 ] ||
		fail "$f: kernel reports of $id2: $(grep "$id2" "$T/$f")"
done
[ "$(stat_of kernel_unreportable)" = 1 ] && [ "$(stat_of kernel_unreported)" = 1 ] ||
	fail "stats: $(ctl stats | grep kernel)"
ctl metrics >"$T/metrics"
grep -qx "devwl_kernel_unreportable_containers 1" "$T/metrics" &&
	grep -qx "devwl_kernel_unreported_containers 1" "$T/metrics" ||
	fail "metrics: $(grep unreport "$T/metrics")"
pass "a container in a shared cgroup2 cgroup: enforced by v1, said once that it cannot be reported"

# 5. A workload handed over as a runtime would (devwl-run --connect, kernel mode): its v1
# run cgroup has a cgroup2 twin of its own, so it is reported like runc's container.
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
out=$("$RUN" --connect "$T/listen.sock" --node /km --id hy-run --mode=kernel -- sh -c '
	true </dev/zero && echo ZERO=ok; echo "FULL=$(sh -c "true </dev/full" 2>&1)"' 2>"$T/run.err") ||
	fail "devwl-run --connect: $out $(cat "$T/run.err")"
[[ $out == *ZERO=ok* && $out == *"FULL="*"Operation not permitted"* ]] || fail "devwl-run --connect: $out"
grep -Eq "container hy-run: kernel mode: cgroup v1 .*/devwl-run.connected/run-[0-9]+ enforces node /km .*its denials recorded by its reporter on cgroup2" \
	"$T/devwld.log" || fail "the log: $(grep hy-run "$T/devwld.log")"
id=hy-run
for f in events.out audit.jsonl; do
	wait_for "$T/$f" '"container":"hy-run".*"device":"c 1:7"' || fail "$f: no denial of hy-run"
	wait_for "$T/$f" '"container":"hy-run".*"device":"c 1:5".*"decision":"allow"' ||
		fail "$f: no allow of hy-run"
	recs "$T/$f" "c 1:7" deny | jq -e 'length == 1 and .[0].source == "kernel"' >/dev/null ||
		fail "$f: $(recs "$T/$f" "c 1:7" deny)"
done
[ "$(stat_of kernel_unreportable)" = 1 ] || fail "hy-run unreportable: $(ctl stats | grep kernel)"
pass "devwl-run --connect in kernel mode: its run cgroup's cgroup2 twin carries the reporter; /dev/zero and /dev/full reported, source kernel"
