# What the kernel refuses in devwld's kernel mode reaches the operator (devwld(8), KERNEL
# MODE; devwlctl(1), events): a runc container on node /km in kernel mode, its opens never
# trapped, opens /dev/full (c 1:7, which /km denies) from its init process. On cgroup v2
# the device program records the refusal and devwld reads it: `devwlctl events` and the
# audit show a "deny" of c 1:7 r by the container's init (the host pid runc reports), with
# reason "kernel device program (kernel mode)" and the rule; devwlctl stats
# (kernel_denied) and the metrics (devwl_kernel_denials_total) count it, not as a
# notification. A granted open leaves no denial (oci-203: its report). On cgroup v1 the
# controller tells nobody: on a hybrid host (this one's runc) the reporter on the
# container's own cgroup2 cgroup records the refusal the same way (oci-204 tests it
# further); on a v1-only host nothing is recorded and devwld's log says so.
# oci-v2only-147 runs it in a cgroup-v2-only view of this host (tests/v2only.sh).
RT=${RT:-runc}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PROFILE=$HERE/../../examples/oci-hook/seccomp-mknod-only.json
[ -f "$PROFILE" ] || fail "no $PROFILE"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/km",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm"] } ] }
JSON
start_devwld
follow_events "$T/events.out"

make_rootfs
id=devwl-kd-$$
# The container's init opens /dev/zero and /dev/full once /tmp/go exists: the pid that
# opens is the one runc reports.
make_bundle "$id" 'echo READY; while [ ! -e /tmp/go ]; do sleep 0.1; done
true </dev/zero && echo ZERO=ok
true </dev/full 2>/dev/null && echo FULL=ok || echo FULL=refused
while [ ! -e /tmp/stop ]; do sleep 0.1; done'
jq --slurpfile p "$PROFILE" --arg lp "$T/listen.sock" '
	.linux.seccomp = ($p[0] | .listenerPath = $lp | .listenerMetadata = "node=/km mode=kernel")' \
	"$T/$id/config.json" >"$T/$id/config.new" && mv "$T/$id/config.new" "$T/$id/config.json" ||
	fail "jq on the config"
run_detached "$id" "$T/$id"
wait_for "$T/devwld.log" "container $id: .*kernel mode" ||
	fail "devwld said nothing about kernel mode: $(cat "$T/$id.out")"
pid=$($RT state "$id" | jq .pid)
if grep -q "container $id: WARNING: kernel mode asked for" "$T/devwld.log"; then
	why=$(grep -m1 "container $id: WARNING" "$T/devwld.log")
	host=$(own_device_cgroup "$pid") ||
		skip "the container has no device cgroup of its own here: $host ($why)"
	fail "kernel mode not in force although the container has a device cgroup of its own: $why"
fi
mode=$(ctl containers | awk -v id="$id" '$1 == id {print $5}')
case $mode in
kernel-v1 | kernel-v2) ;;
*) fail "not in kernel mode: $(ctl containers)" ;;
esac
touch "$T/rootfs/tmp/go"
wait_for "$T/$id.out" "FULL=" || fail "the container did not open: $(cat "$T/$id.out")"
grep -q "ZERO=ok" "$T/$id.out" && grep -q "FULL=refused" "$T/$id.out" ||
	fail "the kernel's answers: $(cat "$T/$id.out")"
[ "$(stat_of notifications)" = 0 ] || fail "opens were trapped: $(stat_of notifications) notifications"
reason="kernel device program (kernel mode)"

if [ "$mode" = kernel-v1 ] && { ! host_cgroup2 >/dev/null || ! host_can_record; }; then
	grep -q "container $id: kernel mode: cgroup v1 .*denials not seen: the v1 controller tells nobody" \
		"$T/devwld.log" || fail "the log does not say v1 records nothing: $(grep "$id" "$T/devwld.log")"
	sleep 0.5 # nothing is to come: give a wrong record the time to show
	! grep -q "$reason" "$T/audit.jsonl" "$T/events.out" ||
		fail "v1: a kernel denial recorded: $(grep "$reason" "$T/audit.jsonl")"
	[ "$(stat_of kernel_denied)" = 0 ] || fail "v1: kernel_denied $(stat_of kernel_denied)"
	pass "$RT: kernel-v1 refused /dev/full unrecorded, as devwld(8) says (v1 tells nobody)"
	exit 0
fi

if ! host_can_record; then
	grep -q "container $id: kernel mode: cgroup v[12] .*denials not seen: the kernel cannot" \
		"$T/devwld.log" || fail "the log does not say: $(grep "$id" "$T/devwld.log")"
	skip "this kernel cannot record a device program's denials: $host_why"
fi
want_pid=$pid
host_can_record pid || want_pid=null
grep -q "container $id: kernel mode: cgroup v[12] .*denials recorded" "$T/devwld.log" ||
	fail "the log does not say the denials are recorded: $(grep "$id" "$T/devwld.log")"
# The same record to devwlctl events and the audit: the device and rule, no call, no path.
record='map(select(.container == $id and .decision == "deny")) | length == 1 and
	(.[0] | .node == "/km" and .device == "c 1:7" and .access == "r" and .pid == $pid and
		.reason == $r and .errno == "EPERM" and .syscall == null and .path == null and
		(.rule | startswith("no rule allows it (rules: c 1:3 rwm, ")))'
# The granted open of /dev/zero may be reported first (oci-203): wait for the denial.
wait_for "$T/events.out" '"device":"c 1:7"' || fail "devwlctl events: $(cat "$T/events.out")"
jq -e -s --arg id "$id" --arg r "$reason" --argjson pid "$want_pid" "$record" "$T/events.out" \
	>/dev/null || fail "devwlctl events: $(cat "$T/events.out")"
pass "$RT: devwlctl events: $(grep -m1 -F "$reason" "$T/events.out")"
wait_for "$T/audit.jsonl" '"device":"c 1:7"' || fail "the audit: $(grep "$id" "$T/audit.jsonl")"
jq -e -s --arg id "$id" --arg r "$reason" --argjson pid "$want_pid" "$record" "$T/audit.jsonl" \
	>/dev/null || fail "the audit: $(grep "$id" "$T/audit.jsonl")"
pass "$RT: the audit records the kernel's refusal of c 1:7 r by pid $want_pid, no denial of c 1:5"
[ "$(stat_of kernel_denied)" = 1 ] || fail "stats: $(ctl stats | grep kernel)"
[ "$(stat_of notifications)" = 0 ] && [ "$(stat_of denied)" = 0 ] ||
	fail "a kernel denial counted as a notification: $(ctl stats)"
ctl metrics | grep -qx "devwl_kernel_denials_total 1" ||
	fail "metrics: $(ctl metrics | grep kernel)"
pass "$RT: devwlctl stats kernel_denied 1, devwl_kernel_denials_total 1, 0 notifications"
touch "$T/rootfs/tmp/stop"
