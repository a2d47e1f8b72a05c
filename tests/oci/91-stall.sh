#!/bin/bash
# One stuck call costs only its own container: a workload opens a path that
# lies on a userfaultfd page nobody fills, so the devwld thread reading it waits. While it
# waits, ten other containers each complete all their trapped calls, with the right
# answers; the watchdog answers the stuck call EPERM (before the page is filled) and
# counts it; once the page is filled the stalled container is served normally again.
# Progress, not timing: what happens while the fault is held is all that is asserted.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
need_stall
LOAD=$BUILD/bench/fair-load
if [ ! -x "$LOAD" ]; then
	LOAD=$T/fair-load
	${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -pthread "$HERE/../../bench/fair-load.c" -o "$LOAD" ||
		skip "cannot build bench/fair-load.c (no C compiler?)"
fi
QUIET=10
COUNT=300

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
start_devwld --handler-timeout 1500

start_stall stall "$T/s"
stall=$STALL_PID
pass "a handler thread is stuck reading the path on a userfaultfd page"

pids=()
for i in $(seq "$QUIET"); do
	"$RUN" --connect "$T/listen.sock" --node /w --id "quiet-$i" -- sh -c '
		"$1" quiet /dev/null 1000 "$2" || exit 1
		(: </dev/zero) 2>/dev/null && exit 2
		exit 0' sh "$LOAD" "$COUNT" >"$T/quiet-$i.out" 2>&1 &
	pids+=("$!")
	CHILD_PIDS+=("$!")
done
# Without the pool they wait for the fault.
quiet_failures 60 "${pids[@]}"
[ -e "$T/s/released" ] && fail "the fault was released before the quiet containers finished"
[ "$QUIET_BAD" = 0 ] || fail "$QUIET_BAD of $QUIET containers were not served while one call was stuck"
pass "$QUIET containers made all $((QUIET * COUNT)) trapped opens and $QUIET denials while the call was stuck"

wait_for "$T/stall.out" '^open ' 60 || fail "the stuck call was never answered: $(cat "$T/stall.out")"
grep -q '^open EPERM before-release$' "$T/stall.out" ||
	fail "the stuck call was not answered EPERM while stuck: $(cat "$T/stall.out")"
[ "$(stat_of watchdog_answered)" -ge 1 ] || fail "the watchdog counted nothing: $(ctl stats)"
grep -q 'watchdog: container stall: a call stuck for .* answered EPERM' "$T/devwld.log" ||
	fail "the watchdog's answer is not logged"
pass "the watchdog answered the stuck call EPERM and logged it"

touch "$T/s/release"
wait "$stall" || fail "the stalled container was not served again: $(cat "$T/stall.out")"
grep -q '^served again' "$T/stall.out" || fail "$(cat "$T/stall.out")"
for _ in $(seq 100); do
	[ "$(stat_of handler_stuck)" = 0 ] && break
	sleep 0.05
done
[ "$(stat_of handler_stuck)" = 0 ] || fail "the stuck thread did not come back: $(ctl stats)"
pass "once the page was filled, the thread came back and the container was served again"
exit 0
