# What the kernel allows in devwld's kernel mode reaches the operator too, deduplicated
# (devwld(8), KERNEL MODE; libdevwl(3), DEVWL_CGROUP_RECORD_ACCESSES): a runc container on
# node /km in kernel mode (mknod-only profile: its opens never trapped), in a cgroup-v2
# view (oci-v2only-203, tests/v2only.sh). Its init opens /dev/zero (granted, c 1:5 r)
# and at once `devwlctl events` and the audit show an "allow" of c 1:5 r with
# "source":"kernel", the kernel's reason and a count; then /dev/full (denied), whose
# refusal shows at once as before. Then it opens /dev/zero FLOOD more times and, past
# the one-second window, once more: the reports of c 1:5 r are at most one per window
# (bounded by the seconds the flood took, not by its size), and their counts add up to
# every open. devwlctl stats (kernel_allowed) and the metrics count the accesses, none
# as a notification. Then /km learns (devwlctl learn): the reports are what learn mode
# records of a container whose opens are not trapped, and devwlctl advise names the
# device the container's shell opened next (/dev/urandom) with the program that did
# (read from the report's pid: the shell lives on), as seen by the device program. Where the program cannot report allowed accesses, devwld's log says
# so and the test skips.
RT=${RT:-runc}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PROFILE=$HERE/../../examples/oci-hook/seccomp-mknod-only.json
[ -f "$PROFILE" ] || fail "no $PROFILE"
FLOOD=${FLOOD:-100000}

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
id=devwl-ka-$$
# Each step waits for its go file, so the test sees each report arrive on its own.
make_bundle "$id" 'echo READY; while [ ! -e /tmp/go ]; do sleep 0.1; done
true </dev/zero && echo ZERO=ok
while [ ! -e /tmp/go2 ]; do sleep 0.05; done
true </dev/full 2>/dev/null && echo FULL=ok || echo FULL=refused
while [ ! -e /tmp/go3 ]; do sleep 0.05; done
i=0; while [ $i -lt '"$FLOOD"' ]; do true </dev/zero; i=$((i + 1)); done; echo FLOOD=$i
sleep 1.2; true </dev/zero && echo LAST=ok
while [ ! -e /tmp/go4 ]; do sleep 0.05; done
exec 3</dev/urandom && echo URANDOM=ok
while [ ! -e /tmp/stop ]; do sleep 0.1; done'
jq --slurpfile p "$PROFILE" --arg lp "$T/listen.sock" '
	.linux.seccomp = ($p[0] | .listenerPath = $lp | .listenerMetadata = "node=/km mode=kernel")' \
	"$T/$id/config.json" >"$T/$id/config.new" && mv "$T/$id/config.new" "$T/$id/config.json" ||
	fail "jq on the config"
run_detached "$id" "$T/$id"
wait_for "$T/devwld.log" "container $id: .*kernel mode" ||
	fail "devwld said nothing about kernel mode: $(cat "$T/$id.out")"
mode=$(ctl containers | awk -v id="$id" '$1 == id {print $5}')
[ "$mode" = kernel-v2 ] || skip "not in kernel-v2 mode here ($mode): oci-v2only-203 runs it in a v2 view"
host_can_record || skip "this kernel cannot record a device program's denials: $host_why"
if ! grep -q "container $id: kernel mode: cgroup v2 .*its allowed accesses reported" "$T/devwld.log"; then
	grep -q "container $id: kernel mode: cgroup v2 .*its allowed accesses not seen: the kernel cannot" \
		"$T/devwld.log" || fail "the log does not say: $(grep "$id" "$T/devwld.log")"
	[ "$(stat_of kernel_unreported)" = 1 ] || fail "stats: $(ctl stats | grep kernel)"
	skip "this kernel's verifier refuses the reporting program (atomic exchange: 5.12)"
fi
[ "$(stat_of kernel_unreported)" = 0 ] || fail "stats: $(ctl stats | grep kernel)"
reason="kernel device program (kernel mode)"
# The records of the container's opens of a device, from a file of JSON lines.
recs() { jq -c -s --arg id "$id" --arg d "$2" --arg dec "$3" \
	'map(select(.container == $id and .device == $d and .decision == $dec))' "$1"; }

# 1. One granted open: reported at once, an allow with source kernel and count 1.
touch "$T/rootfs/tmp/go"
wait_for "$T/$id.out" "ZERO=" || fail "the container did not open: $(cat "$T/$id.out")"
grep -q "ZERO=ok" "$T/$id.out" || fail "the kernel's answer: $(cat "$T/$id.out")"
one='length == 1 and (.[0] | .node == "/km" and .access == "r" and .reason == $r and
	.source == "kernel" and .count == 1 and .syscall == null and .path == null and
	(has("errno") | not))'
for f in events.out audit.jsonl; do
	wait_for "$T/$f" '"device":"c 1:5".*"decision":"allow"' || fail "$f: $(cat "$T/$f")"
	recs "$T/$f" "c 1:5" allow | jq -e --arg r "$reason" "$one" >/dev/null ||
		fail "$f: $(recs "$T/$f" "c 1:5" allow)"
done
pass "$RT: a granted open shows at once: $(grep -m1 '"device":"c 1:5"' "$T/events.out")"

# 2. A denial still shows at once.
touch "$T/rootfs/tmp/go2"
wait_for "$T/$id.out" "FULL=" || fail "the container did not open: $(cat "$T/$id.out")"
grep -q "FULL=refused" "$T/$id.out" || fail "the kernel's answer: $(cat "$T/$id.out")"
for f in events.out audit.jsonl; do
	wait_for "$T/$f" '"device":"c 1:7"' || fail "$f: no denial: $(cat "$T/$f")"
	recs "$T/$f" "c 1:7" deny | jq -e 'length == 1 and .[0].errno == "EPERM" and
		.[0].source == "kernel" and .[0].count == 1' >/dev/null ||
		fail "$f: $(recs "$T/$f" "c 1:7" deny)"
done
pass "$RT: the denial of c 1:7 r shows at once, as before"

# 3. The flood, then one open past the window that brings its count in.
start=$(date +%s.%N)
touch "$T/rootfs/tmp/go3"
wait_for "$T/$id.out" "LAST=" 30 || fail "the flood did not end: $(cat "$T/$id.out")"
end=$(date +%s.%N)
grep -q "FLOOD=$FLOOD" "$T/$id.out" || fail "the flood: $(cat "$T/$id.out")"
want=$((FLOOD + 2)) # the first open, the flood, the last
sum() { recs "$T/$1" "c 1:5" allow | jq '[.[] | .count] | add'; }
for _ in $(seq 100); do
	[ "$(sum events.out)" = $want ] && [ "$(sum audit.jsonl)" = $want ] && break
	sleep 0.05
done
# At most one report a window, and the first: the seconds the flood took, and two more.
bound=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%d", e - s + 3 }')
for f in events.out audit.jsonl; do
	n=$(recs "$T/$f" "c 1:5" allow | jq length)
	[ "$(sum $f)" = $want ] || fail "$f: counts add up to $(sum $f), not $want: $(recs "$T/$f" "c 1:5" allow)"
	[ "$n" -le "$bound" ] || fail "$f: $n reports of $want opens in $(awk -v s="$start" -v e="$end" \
		'BEGIN { print e - s }') s, more than $bound"
done
pass "$RT: $want opens of /dev/zero in $n reports ($(awk -v s="$start" -v e="$end" \
	'BEGIN { printf "%.1f", e - s }') s), counts adding up"
# Every allow the audit shows (/dev/null's too, of 2>/dev/null), counted as the stats say.
all=$(jq -s --arg id "$id" '[.[] | select(.container == $id and .decision == "allow")]' "$T/audit.jsonl")
total=$(echo "$all" | jq '[.[] | .count] | add') reports=$(echo "$all" | jq length)
[ "$(stat_of kernel_allowed)" = "$total" ] && [ "$(stat_of kernel_allowed_reports)" = "$reports" ] &&
	[ "$total" -ge $want ] && [ "$(stat_of kernel_denied)" = 1 ] ||
	fail "stats: $(ctl stats | grep kernel), the audit: $total in $reports"
[ "$(stat_of notifications)" = 0 ] || fail "opens were trapped: $(stat_of notifications)"
ctl metrics | grep -qx "devwl_kernel_allowed_total $total" || fail "metrics: $(ctl metrics | grep kernel)"
pass "$RT: devwlctl stats kernel_allowed $total in $reports reports, as the audit; the metrics too"

# 4. Learning: the reports are the record of what the untrapped opens touched.
ctl learn /km on >/dev/null || fail "devwlctl learn /km on"
touch "$T/rootfs/tmp/go4"
wait_for "$T/$id.out" "URANDOM=" || fail "the container did not open: $(cat "$T/$id.out")"
for _ in $(seq 100); do
	ctl advise "$id" >"$T/advice.json" 2>/dev/null && grep -q urandom "$T/advice.json" && break
	sleep 0.05
done
jq -r '.nodes[] | select(.path == "/km") | .why["allow /dev/urandom r"]' "$T/advice.json" |
	grep -q "device program r by sh" || fail "advise $id: $(cat "$T/advice.json")"
pass "$RT: while /km learns, advise names /dev/urandom, opened by sh, from the device program's report"
touch "$T/rootfs/tmp/stop"
