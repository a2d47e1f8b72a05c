# Drift in kernel mode (devwld(8), KERNEL MODE: drift): another agent rewrites the device
# cgroup devwld programmed for a runc container on /km, and devwld notices, applies /km
# again, and says so (a "drift" event on devwlctl events, kernel_drift_repairs:ID in
# devwlctl stats, one log line). DEVWLD_TEST_DRIFT_MS=200 (a test hook) makes the period
# 200 ms instead of 5 s. On cgroup v1 (this hybrid host's runc): a grant written to
# devices.allow and a revocation to devices.deny behind devwld's back, then a switch to
# allow-all ("a" to devices.allow), each repaired to exactly /km (devices.list as a set),
# access with it. On cgroup v2 (oci-v2only-200, tests/v2only.sh): devwld's program
# detached; replaced by an allow-all one (BPF_F_REPLACE); a deny-all one attached beside it
# (ALLOW_MULTI): the first two repaired (devwld's program attached again, the allow-all one
# left in place and reported), the third reported as a foreign program that denies every
# device, never detached by devwld; a deny-all one named sd_devices, as systemd names the
# program of a scope's DeviceAllow= (systemctl daemon-reload re-applies a runc
# --systemd-cgroup container's rules), taken over again: detached, /km again, event
# "reapplied", four in a row without a backoff. Then an agent that rewrites every 100 ms
# for 2 s meets a backoff: a handful of repairs, not one per check, and one log line in
# all; once it stops the cgroup holds /km again. (d) v2: after devwlctl restart the next
# worker replaces its predecessor's program, known by libdevwl's program name, and leaves
# another agent's attached. tests/oci/bpf-drift.c is the other agent's bpf(2).
RT=${RT:-runc}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_test_hooks "the drift period of 200 ms"
PROFILE=$HERE/../../examples/oci-hook/seccomp-mknod-only.json
BPF=$OCI_BIN/bpf-drift
[ -f "$PROFILE" ] || fail "no $PROFILE"
[ -x "$BPF" ] || fail "no $BPF"

# /km grants /dev/zero (1:5) and denies /dev/full (1:7), which runc allows.
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/km",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm"] } ] }
JSON
DEVWLD_TEST_DRIFT_MS=200 start_devwld
"$DEVWLCTL" --socket "$T/control.sock" events --json >"$T/events.out" 2>"$T/events.err" &
CHILD_PIDS+=("$!")
wait_until 10 sh -c '[ "$("$0" --socket "$1" stats | awk "\$1 == \"events_subscribers\" {print \$2}")" = 1 ]' \
	"$DEVWLCTL" "$T/control.sock" || fail "devwlctl events did not subscribe: $(cat "$T/events.err")"

make_rootfs
id=devwl-drift-$$
make_bundle "$id" 'echo READY; while [ ! -e /tmp/stop ]; do sleep 0.1; done'
jq --slurpfile p "$PROFILE" --arg lp "$T/listen.sock" '
	.linux.seccomp = ($p[0] | .listenerPath = $lp | .listenerMetadata = "node=/km mode=kernel")' \
	"$T/$id/config.json" >"$T/$id/config.new" && mv "$T/$id/config.new" "$T/$id/config.json" ||
	fail "jq on the config"
run_detached "$id" "$T/$id"
wait_for "$T/devwld.log" "container $id: .*kernel mode" ||
	fail "devwld said nothing about kernel mode: $(cat "$T/$id.out")"
if grep -q "container $id: WARNING: kernel mode asked for" "$T/devwld.log"; then
	why=$(grep -m1 "container $id: WARNING" "$T/devwld.log")
	host=$(own_device_cgroup "$($RT state "$id" | jq .pid)") ||
		skip "the container has no device cgroup of its own here: $host ($why)"
	fail "kernel mode not in force although the container has a device cgroup of its own: $why"
fi
mode=$(ctl containers | awk -v id="$id" '$1 == id {print $5}')
dir=$(jq -rs --arg id "$id" 'map(select(.event == "mode" and .container == $id)) | .[-1].cgroup' \
	"$T/audit.jsonl")
[ -d "$dir" ] || fail "the cgroup of the mode record: '$dir' ($(cat "$T/audit.jsonl"))"

# access: what the container opens now, "zero=ok|refused full=ok|refused".
access() {
	$RT exec "$id" sh -c 'z=refused f=refused; { true </dev/zero; } 2>/dev/null && z=ok
		{ true </dev/full; } 2>/dev/null && f=ok; echo "zero=$z full=$f"' 2>/dev/null </dev/null
}
repairs() { ctl stats | awk -v k="kernel_drift_repairs:$id" '$1 == k {print $2}'; }
# wait_repairs N: until the container's count is N; prints the ms it took.
wait_repairs() {
	local t0=$(date +%s%N)
	for _ in $(seq 200); do
		[ "$(repairs)" = "$1" ] && { echo $((($(date +%s%N) - t0) / 1000000)); return 0; }
		sleep 0.02
	done
	fail "repairs: '$(repairs)', want $1 ($(grep "$id" "$T/devwld.log" | tail -3))"
}
# event N: the Nth drift event of the container (1-based), as JSON.
event() {
	wait_until 5 sh -c '[ "$(grep -c "\"event\":\"drift\"" "$0")" -ge "$1" ]' "$T/events.out" "$1" ||
		fail "no drift event $1 on devwlctl events: $(cat "$T/events.out")"
	grep '"event":"drift"' "$T/events.out" | sed -n "${1}p"
}
[ "$(access)" = "zero=ok full=refused" ] || fail "before any drift: $(access)"

if [ "$mode" = kernel-v1 ]; then
	want=$(ctl list /km | sort)
	holds_km() { [ "$(sort "$dir/devices.list")" = "$want" ]; }
	holds_km || fail "devices.list is not /km before any drift: $(cat "$dir/devices.list")"
	# (a) A grant and a revocation behind devwld's back.
	echo 'c 1:7 rwm' >"$dir/devices.allow" && echo 'c 1:5 rwm' >"$dir/devices.deny" ||
		fail "the other agent's writes"
	ms=$(wait_repairs 1)
	holds_km || fail "after the repair: $(cat "$dir/devices.list")"
	[ "$(access)" = "zero=ok full=refused" ] || fail "after the repair: $(access)"
	e=$(event 1)
	echo "$e" | jq -e --arg id "$id" '.container == $id and .changed == ["rules"] and
		.result == "repaired" and .repairs == 1 and
		(.what | test("missing c 1:5 rwm")) and (.what | test("extra c 1:7 rwm"))' >/dev/null ||
		fail "the drift event: $e"
	pass "v1: c 1:7 granted and c 1:5 revoked behind devwld's back: /km again in $ms ms (devices.list as a set, access), event $(echo "$e" | jq -c '{changed, what}'), repairs 1"

	# A switch of the default: "a" written to devices.allow allows every device.
	echo a >"$dir/devices.allow" || fail "the other agent's allow-all"
	ms=$(wait_repairs 2)
	holds_km || fail "after the allow-all repair: $(cat "$dir/devices.list")"
	[ "$(access)" = "zero=ok full=refused" ] || fail "after the allow-all repair: $(access)"
	event 2 | jq -e '.what | test("missing .*extra a \\*:\\* rwm")' >/dev/null ||
		fail "the allow-all event: $(event 2)"
	pass "v1: allow-all written behind devwld's back: /km again in $ms ms"
	agent() { while :; do echo 'c 1:7 rwm' >"$dir/devices.allow"; sleep 0.1; done; }
	settled() { holds_km; }
else
	ours=$("$BPF" query "$dir")
	[ "$(echo "$ours" | wc -l)" = 1 ] || fail "programs of the cgroup before any drift: $ours"
	# (b) devwld's program detached: no program refuses anything then.
	"$BPF" detach "$dir" "$ours" || fail "detaching devwld's program"
	ms=$(wait_repairs 1)
	now=$("$BPF" query "$dir")
	[ "$(echo "$now" | wc -l)" = 1 ] && [ "$now" != "$ours" ] || fail "after the repair: '$now'"
	[ "$(access)" = "zero=ok full=refused" ] || fail "after re-attaching: $(access)"
	e=$(event 1)
	echo "$e" | jq -e --arg id "$id" '.container == $id and .changed == ["detached"] and
		.result == "repaired" and .repairs == 1' >/dev/null || fail "the drift event: $e"
	pass "v2: devwld's program $ours detached: attached again ($now) in $ms ms, event $(echo "$e" | jq -c '{changed, what}'), repairs 1"

	# Replaced by an allow-all program (BPF_F_REPLACE): ours again, beside it.
	ours=$now
	allow=$("$BPF" replace "$dir" "$ours" allow) || fail "replacing devwld's program"
	ms=$(wait_repairs 2)
	[ "$(access)" = "zero=ok full=refused" ] || fail "after the replace: $(access)"
	"$BPF" query "$dir" | grep -qx "$allow" || fail "devwld detached the other's program"
	ours=$("$BPF" query "$dir" | grep -vx "$allow")
	e=$(event 2)
	echo "$e" | jq -e '.changed == ["detached", "foreign"] and .result == "repaired" and
		(.what | test("foreign program [0-9]+ \"drift_allow\" attached: allows every device"))' \
		>/dev/null || fail "the replace event: $e"
	pass "v2: replaced by an allow-all program: devwld's attached beside it in $ms ms, the other's left and reported ($(echo "$e" | jq -r .what))"

	# A deny-all program beside devwld's: reported, never detached, nothing to repair.
	deny=$("$BPF" attach "$dir" deny) || fail "attaching a deny-all program"
	e=$(event 3)
	echo "$e" | jq -e '.changed == ["foreign"] and .result == "reported" and
		(.what | test("\"drift_deny\" attached: denies every device"))' >/dev/null ||
		fail "the deny-all event: $e"
	[ "$(access)" = "zero=refused full=refused" ] || fail "beside a deny-all program: $(access)"
	[ "$(stat_of kernel_foreign_programs)" = 1 ] && [ "$(repairs)" = 2 ] ||
		fail "stats: $(ctl stats | grep drift)"
	"$BPF" query "$dir" | grep -qx "$deny" && "$BPF" query "$dir" | grep -qx "$ours" ||
		fail "programs: $("$BPF" query "$dir")"
	pass "v2: a deny-all program attached beside devwld's: reported ($(echo "$e" | jq -r .what)), left in place, no repair"
	"$BPF" detach "$dir" "$deny" && "$BPF" detach "$dir" "$allow" || fail "detaching the other's"

	# systemd re-applying the runtime's rules (systemctl daemon-reload, a runc
	# --systemd-cgroup scope): its device program, named sd_devices, is the runtime's:
	# taken over again (detached), where any other program stays. Four in a row, as
	# an upgrade's daemon-reloads come: no backoff (that would wait 800 + 1600 + 3200 ms
	# after the repairs above), each within about a period.
	t0=$(date +%s%N)
	for n in 3 4 5 6; do
		sd=$("$BPF" attach "$dir" deny sd_devices) || fail "attaching a program named sd_devices"
		ms=$(wait_repairs $n)
		[ "$(access)" = "zero=ok full=refused" ] || fail "after taking over again: $(access)"
		! "$BPF" query "$dir" | grep -qx "$sd" || fail "devwld left sd_devices ($sd) attached"
		# (By the program, not by its place: a check between the two detaches above
		# may have reported drift_allow alone.)
		wait_until 5 grep -qF "(program $sd \\\"sd_devices" "$T/events.out" ||
			fail "no drift event naming program $sd: $(tail -2 "$T/events.out")"
		e=$(grep -F "(program $sd \\\"sd_devices" "$T/events.out")
		echo "$e" | jq -e '.changed == ["reapplied"] and .result == "taken over again" and
			(.what == "the cgroup manager (systemd) re-applied the runtime'"'"'s device rules (program \($sd) \"sd_devices\")")' \
			--argjson sd "$sd" >/dev/null || fail "the sd_devices event: $e"
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$ms" -lt 3200 ] || fail "four sd_devices programs took $ms ms to take over: a backoff"
	pass "v2: four deny-all programs named sd_devices in a row (systemd re-applying runc's rules): each detached, /km again, in $ms ms in all (no backoff), event $(echo "$e" | jq -c '{changed, result}')"
	agent() { while :; do "$BPF" detach-all "$dir"; sleep 0.1; done; }
	settled() { [ "$("$BPF" query "$dir" | wc -l)" = 1 ]; }
fi

# (c) An agent that rewrites every 100 ms for 2 s: a repair per backoff (doubling on from
# the repairs above: 800, 1600 ms...), not per check (10 at 200 ms), and no log line past
# the first.
before=$(repairs)
agent &
AGENT=$!
CHILD_PIDS+=("$AGENT")
sleep 2
kill "$AGENT"
wait "$AGENT" 2>/dev/null
n=$(($(repairs) - before))
[ "$n" -ge 1 ] && [ "$n" -le 6 ] || fail "repairs while an agent rewrote for 2 s: $n"
# Within the backoff in force, at most 64 periods (12.8 s); a wait ends when it holds.
wait_until 14 settled || fail "the cgroup after the agent stopped"
[ "$(access)" = "zero=ok full=refused" ] || fail "after the agent stopped: $(access)"
logged=$(grep -c "container $id: kernel mode: another writer changed" "$T/devwld.log")
[ "$logged" = 1 ] || fail "log lines of repairs: $logged for $(repairs) repairs"
pass "$mode: an agent rewriting every 100 ms for 2 s met $n repairs (backoff), /km again once it stopped; $(repairs) repairs logged in $logged line"

# (d) v2, a restart: the next worker takes the cgroup over again from its predecessor,
# whose program it knows by libdevwl's program name, and leaves another agent's.
if [ "$mode" = kernel-v2 ]; then
	other=$("$BPF" attach "$dir" allow other_agent) || fail "attaching another agent's program"
	before=$("$BPF" query "$dir" | grep -vx "$other")
	gen() { ctl stats | awk '/^generation / {print $2}'; }
	g=$(gen)
	ctl restart >/dev/null || fail "devwlctl restart"
	wait_until 60 sh -c '[ "$("$0" --socket "$1" stats | awk "/^generation / {print \$2}")" -gt "$2" ]' \
		"$DEVWLCTL" "$T/control.sock" "$g" || fail "no new worker after devwlctl restart"
	# The new worker's program in place of the old one's: exactly one besides the other's.
	taken_back() { n=$("$BPF" query "$dir" | grep -vx "$other") &&
		[ "$n" != "$before" ] && [ "$(echo "$n" | wc -l)" = 1 ]; }
	for _ in $(seq 100); do taken_back && break; sleep 0.1; done
	taken_back ||
		fail "after the restart, devwld's programs: '$n' (before: $before)"
	"$BPF" query "$dir" | grep -qx "$other" ||
		fail "the restarted devwld detached another agent's program $other: $("$BPF" query "$dir")"
	[ "$(access)" = "zero=ok full=refused" ] || fail "after the restart: $(access)"
	pass "v2: after devwlctl restart the next worker replaced its predecessor's program ($before by $n) and left another agent's ($other)"
fi
