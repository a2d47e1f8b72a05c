# An audit sink that never reads (devwld(8) AUDIT): records go through a bounded buffer
# written by a thread of its own, so devwld keeps serving while the sink is stuck; what
# does not fit is dropped and counted (devwlctl stats: audit_dropped, log_dropped) and the
# drops are logged. Once with --audit to a FIFO nobody reads, once with stderr (audit
# records and log lines, of the worker and of the keeper) to one: there devwld also
# restarts (SIGUSR2) and stops (SIGTERM) while stderr is stuck.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] && [ -x "$HAMMER" ] || fail "devwl-run or hammer not built (the build should have made it)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:5 r"] } ] }
JSON
# A FIFO that a process holds open (read-write, so opening it for writing does not block)
# and never reads from.
stuck_fifo() {
	mkfifo "$1"
	sleep 100000 <>"$1" &
	CHILD_PIDS+=("$!")
}
# Every devwlctl call is bounded: a devwld stalled on its sink would never answer.
ctl() { timeout 10 "$DEVWLCTL" --socket "$T/control.sock" "$@" || fail "devwlctl $1: no answer (stalled?)"; }

# Until audit_dropped > 0 while the workload goes on; then more calls must be answered.
served_while_stuck() {
	local what=$1 n0 d
	for _ in $(seq 600); do
		d=$(stat_of audit_dropped)
		[ "${d:-0}" -gt 0 ] && break
		sleep 0.05
	done
	[ "${d:-0}" -gt 0 ] || fail "$what: no audit record dropped: $(ctl stats | tr '\n' ' ')"
	n0=$(stat_of notifications)
	for _ in $(seq 200); do
		[ "$(stat_of notifications)" -gt $((n0 + 100)) ] && break
		sleep 0.05
	done
	[ "$(stat_of notifications)" -gt $((n0 + 100)) ] || fail "$what: not serving once the sink is full"
	"$RUN" --connect "$T/listen.sock" --node /w --id "late-$what" -- sh -c 'true </dev/zero' ||
		fail "$what: a new workload is not served"
}

# --- 1. --audit FILE, a FIFO nobody reads ------------------------------------------------
stuck_fifo "$T/audit.fifo"
"$DEVWLD" --listen "$T/listen.sock" --control "$T/control.sock" --policy "$T/policy.json" \
	--audit "$T/audit.fifo" 2>>"$T/devwld.log" &
DEVWLD_PID=$!
for _ in $(seq 100); do [ -S "$T/control.sock" ] && break; sleep 0.05; done
start_hammers 1
served_while_stuck audit-fifo
dropped=$(stat_of audit_dropped)
touch "$T/stop"
wait "${HAMMER_PIDS[0]}" || fail "h1: $(cat "$T/h1.out")"
# The next report (at most 10 s after the first drop) names the drops.
wait_for "$T/devwld.log" "audit records and .* log lines dropped" 15 ||
	fail "the drops were not logged"
kill "$DEVWLD_PID"
wait "$DEVWLD_PID" || fail "devwld did not exit cleanly with its audit sink stuck"
DEVWLD_PID=
pass "--audit to a FIFO nobody reads: devwld kept serving, $dropped records dropped, counted and logged"

# --- 2. stderr to a FIFO nobody reads ----------------------------------------------------
rm -f "$T/stop" "$T/h1.out"
HAMMER_PIDS=()
stuck_fifo "$T/stderr.fifo"
"$DEVWLD" --listen "$T/listen.sock" --control "$T/control.sock" --policy "$T/policy.json" \
	2>"$T/stderr.fifo" &
DEVWLD_PID=$!
for _ in $(seq 100); do [ -S "$T/control.sock" ] && break; sleep 0.05; done
[ -S "$T/control.sock" ] || fail "devwld (stderr to a FIFO) not ready"
start_hammers 1
served_while_stuck stderr
# Log lines share that buffer: whether one still fits depends on the last record's size.
[ -n "$(stat_of log_dropped)" ] || fail "stats show no log_dropped"
g=$(stat_of generation)
kill -USR2 "$DEVWLD_PID"
for _ in $(seq 200); do
	[ "$(stat_of generation)" -gt "$g" ] && break
	sleep 0.05
done
[ "$(stat_of generation)" -gt "$g" ] || fail "no restart with stderr stuck (the keeper blocked?)"
served_while_stuck stderr-restarted
touch "$T/stop"
wait "${HAMMER_PIDS[0]}" || fail "h1 (stderr stuck, restart): $(cat "$T/h1.out")"
read -r _ opens _ errors _ <"$T/h1.out"
[ "$errors" = 0 ] || fail "h1: $(cat "$T/h1.out")"
kill "$DEVWLD_PID"
rc=0
for _ in $(seq 100); do kill -0 "$DEVWLD_PID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$DEVWLD_PID" 2>/dev/null && fail "SIGTERM: devwld does not stop with stderr stuck"
wait "$DEVWLD_PID" || rc=$?
DEVWLD_PID=
[ "$rc" = 0 ] || fail "SIGTERM with stderr stuck: status $rc"
pass "stderr to a FIFO nobody reads: served throughout ($opens opens, no errors), restarted and stopped cleanly"
exit 0
