# A worker SIGKILLed before any state write could name the processes attached since
# (devwld(8) STATE, RESTART): the new worker still serves every one of them, from the
# record the keeper took with each fd: a new container on a policy node, a new container
# whose node was made on demand, a second process of a container the state names. Each
# answers right afterwards (allowed open OK, denied EPERM, no ENOSYS: nothing was in
# flight). A process whose record is bad (cut short by DEVWLD_TEST_BAD_RECORD) is let go,
# logged, and its calls fail ENOSYS (fail closed); one that attached and exited before the
# kill leaves nothing behind. The state writes are held with DEVWLD_TEST_STATE_STALL.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] && [ -x "$HAMMER" ] || fail "devwl-run or hammer not built (the build should have made it)"
need_test_hooks "holding the state writes (DEVWLD_TEST_STATE_STALL)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:5 r"] } ] }
JSON
S=$T/state.json
DEVWLD_TEST_STATE_STALL=$T/stall DEVWLD_TEST_BAD_RECORD=bad start_devwld --state "$S"

# attach NAME ID NODE: a workload waiting for $T/go, then opening /dev/zero (allowed) and
# /dev/full (denied); output in $T/NAME.out.
declare -A PID_OF
attach() {
	"$RUN" --connect "$T/listen.sock" --node "$3" --id "$2" -- \
		"$HAMMER" --answers "$T/go" /dev/zero /dev/full >"$T/$1.out" 2>&1 &
	CHILD_PIDS+=("$!")
	PID_OF[$1]=$!
	wait_for "$T/$1.out" '^waiting$' || fail "$1 did not start: $(cat "$T/$1.out")"
}
in_state() { jq -e --arg id "$1" '.containers[] | select(.id == $id)' "$S" >/dev/null 2>&1; }
procs_in_state() { jq -r '[.containers[].procs | length] | add // 0' "$S"; }
state_names() { [ "$(procs_in_state)" = "$1" ]; }
serving() { [ "$(stat_of processes)" = "$1" ]; }
gone() { [ ! -e "/proc/$1" ]; }
newer() { [ "$(stat_of generation)" -gt "$1" ] 2>/dev/null; }
# crash: SIGKILL the worker; once it is gone (a write of its own would name them all), let
# the writes go on; wait for the next worker.
crash() {
	local worker g
	worker=$(stat_of pid)
	g=$(stat_of generation)
	kill -9 "$worker"
	wait_until 60 gone "$worker" || fail "worker $worker did not die"
	rm -f "$T/stall"
	wait_until 60 newer "$g" || fail "no new worker after SIGKILL"
}

attach early early /w
wait_until 60 in_state early || fail "early is not in the state"
pass "early attached and in the state file"

# From here no write finishes: whatever attaches now, only the keeper knows whose it is.
touch "$T/stall"
attach late1 late1 /w
attach late2 late2 /w/late2
attach join early /w
attach bad bad /w
"$RUN" --connect "$T/listen.sock" --node /w --id gone -- sh -c 'true </dev/zero' ||
	fail "gone: a process attached during the stall was not served"
wait_until 60 serving 5 || fail "not 5 processes served: $(ctl containers)"
for id in late1 late2 bad gone; do
	in_state "$id" && fail "$id is in the state file: the test's window is not there"
done
state_names 1 || fail "the state names $(procs_in_state) processes, not early's 1"
pass "4 processes attached (and one attached and exited) while no state write finished"

crash
ctl containers | awk '{print $1, $2, $3}' | sort >"$T/containers"
printf '%s\n' "early /w 2" "late1 /w 1" "late2 /w/late2 1" >"$T/want"
diff "$T/want" "$T/containers" >&2 || fail "containers after the restart differ (above)"
serving 4 || fail "$(stat_of processes) processes served, not 4"
restored=$(grep -c "restored from the keeper's record" "$T/devwld.log")
[ "$restored" = 3 ] || fail "$restored processes restored from records, not 3 (late1, late2, join)"
grep -q "keeper: slot [0-9]*: its record is unusable" "$T/devwld.log" ||
	fail "the bad record was not reported"
[ "$(grep -c "let go" "$T/devwld.log")" = 1 ] || fail "not exactly one slot (bad's) let go"
pass "the new worker serves the 3 processes the state did not name (early's second, late1, late2 on a node made again), bad's is let go"

# The new worker's state names them all; a second crash keeps them (from the state now).
wait_until 60 state_names 4 || fail "the state names $(procs_in_state) processes, not 4"
crash
serving 4 || fail "after a second crash: $(stat_of processes) processes served, not 4"
[ "$(grep -c "restored from the keeper's record" "$T/devwld.log")" = 3 ] ||
	fail "the second restore used records: the state should name every process"
pass "a second SIGKILL: the 4 processes are served again from the state file"

touch "$T/go"
for name in early late1 late2 join bad; do
	wait "${PID_OF[$name]}" || fail "$name: $(cat "$T/$name.out")"
done
for name in early late1 late2 join; do
	grep -qx "/dev/zero OK" "$T/$name.out" && grep -qx "/dev/full EPERM" "$T/$name.out" ||
		fail "$name: wrong answers after the restarts: $(cat "$T/$name.out")"
done
grep -qx "/dev/zero ENOSYS" "$T/bad.out" && grep -qx "/dev/full ENOSYS" "$T/bad.out" ||
	fail "bad (let go): not ENOSYS: $(cat "$T/bad.out")"
pass "every restored process answered right (allowed OK, denied EPERM, no ENOSYS); the let-go one fails ENOSYS (fail closed)"
exit 0
