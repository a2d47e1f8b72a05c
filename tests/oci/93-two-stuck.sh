#!/bin/bash
# As many stuck calls as the pool has threads: two workloads each open a path on
# a userfaultfd page nobody fills, on a devwld of two handler threads whose watchdog would
# answer only after a minute. Both threads are stuck; spares started in their place (a
# call slower than SERVE_SPARE_MS, no thread idle) serve ten other containers to the end
# while both calls are still stuck and before the watchdog has answered anything. Then
# the pages are filled: the stuck threads come back, and the pool shrinks to its size.
# Progress, not timing: only what happens while both faults are held is asserted.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
need_stall
QUIET=10

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
start_devwld --handler-threads 2 --handler-timeout 60000

stalls=()
for k in 1 2; do
	start_stall "stall-$k" "$T/s$k"
	stalls+=("$STALL_PID")
done
[ "$(stat_of handler_threads)" -ge 1 ] || fail "no thread serving: $(ctl stats)"
pass "both handler threads are stuck reading paths on userfaultfd pages"

pids=()
for i in $(seq "$QUIET"); do
	"$RUN" --connect "$T/listen.sock" --node /w --id "quiet-$i" -- sh -c '
		for n in 1 2 3 4 5 6 7 8 9 10; do : </dev/null || exit 1; done
		(: </dev/zero) 2>/dev/null && exit 2
		exit 0' >"$T/quiet-$i.out" 2>&1 &
	pids+=("$!")
	CHILD_PIDS+=("$!")
done
# Without spares they wait for the watchdog (60 s).
quiet_failures 45 "${pids[@]}"
[ "$QUIET_BAD" = 0 ] || fail "$QUIET_BAD of $QUIET containers were not served while two calls were stuck: $(ctl stats)"
[ "$(stat_of watchdog_answered)" = 0 ] || fail "the watchdog answered: $(ctl stats)"
for k in 1 2; do
	[ -e "$T/s$k/released" ] && fail "fault $k was released before the quiet containers finished"
	grep -q '^open' "$T/stall-$k.out" && fail "stuck call $k was answered: $(cat "$T/stall-$k.out")"
done
[ "$(stat_of handler_slow)" = 2 ] || fail "want 2 threads with spares: $(ctl stats)"
pass "$QUIET containers served while both threads were stuck, the watchdog silent (spares)"

touch "$T/s1/release" "$T/s2/release"
for k in 1 2; do
	wait "${stalls[$((k - 1))]}" || fail "stalled container $k not served again: $(cat "$T/stall-$k.out")"
	grep -q '^open OK after-release$' "$T/stall-$k.out" || fail "stall $k: $(cat "$T/stall-$k.out")"
done
for _ in $(seq 100); do
	[ "$(stat_of handler_slow)" = 0 ] && [ "$(stat_of handler_threads)" = 2 ] && break
	sleep 0.05
done
[ "$(stat_of handler_slow)" = 0 ] && [ "$(stat_of handler_threads)" = 2 ] ||
	fail "the pool did not come back to 2 threads: $(ctl stats)"
pass "the stuck calls completed once their pages were filled; the pool is 2 threads again"
exit 0
