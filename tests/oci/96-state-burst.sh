# 200 processes attaching at once (devwld(8) STATE): every one is served, their state
# writes are coalesced (at most one per 100 ms, off the loop; the count is printed), and
# the state lists every one of them: after a planned restart (SIGUSR2) and after a crash
# (SIGKILL of the worker) all 200 are served again.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] || fail "devwl-run not built at $RUN (the build should have made it)"
N=${DEVWL_BURST:-200}

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/b", "rules": ["deny a", "allow c 1:5 r"] } ] }
JSON
S=$T/state.json
start_devwld --no-audit --state "$S"
w0=$(stat_of state_writes)

pids=()
t0=$(date +%s%N)
for i in $(seq "$N"); do
	"$RUN" --connect "$T/listen.sock" --node /b --id "b$i" -- sh -c '
		true </dev/zero || exit 3
		while [ ! -e "$1/go" ]; do sleep 0.1; done
		true </dev/zero || exit 4
		(true </dev/null) 2>/dev/null && exit 5
		exit 0' sh "$T" 2>>"$T/workloads.err" &
	pids+=("$!")
	CHILD_PIDS+=("$!")
done
t1=$(date +%s%N)
for _ in $(seq 600); do
	[ "$(stat_of processes)" = "$N" ] && break
	sleep 0.05
done
t2=$(date +%s%N)
[ "$(stat_of processes)" = "$N" ] || fail "only $(stat_of processes) of $N attached: $(tail -3 "$T/workloads.err")"
listed() { jq '[.containers[].procs | length] | add // 0' "$S"; }
for _ in $(seq 1200); do
	[ "$(listed)" = "$N" ] && break
	sleep 0.05
done
[ "$(listed)" = "$N" ] || fail "the state lists $(listed) of $N processes"
writes=$(($(stat_of state_writes) - w0))
pass "$N processes launched in $(((t1 - t0) / 1000000)) ms, all attached after $(((t2 - t0) / 1000000)) ms with $writes state writes; the state lists all $N"

# --- a planned restart, then a crash: the state brings every process back --------------
# restart_by HOW SIGNAL PID: until a new worker answers; it must serve all N.
restart_by() {
	local g
	g=$(stat_of generation)
	kill "-$2" "$3"
	for _ in $(seq 1200); do
		[ "$(stat_of generation)" -gt "$g" ] 2>/dev/null && break
		sleep 0.05
	done
	[ "$(stat_of generation)" -gt "$g" ] || fail "no new worker after $1"
	[ "$(stat_of processes)" = "$N" ] || fail "after $1: $(stat_of processes) of $N processes"
	pass "$1: all $N processes served again"
}
restart_by "a planned restart (SIGUSR2)" USR2 "$DEVWLD_PID"
restart_by "a crash (SIGKILL of the worker)" KILL "$(stat_of pid)"

touch "$T/go"
bad=0
for pid in "${pids[@]}"; do
	wait "$pid" || bad=$((bad + 1))
done
# The killed worker may have had a call in hand (a workload's sleep loading its libraries
# under the full profile): the keeper answers it ENOSYS (devwld(8) KEEPER). One worker was
# killed, so at most one such answer, and at most that one workload failing for it.
enosys=$(grep -c 'Function not implemented' "$T/workloads.err")
[ "$enosys" -le 1 ] || fail "$enosys ENOSYS answers for one killed worker: $(grep -m5 'Function not implemented' "$T/workloads.err")"
[ "$bad" -le "$enosys" ] || fail "$bad of $N workloads failed ($enosys ENOSYS): $(tail -5 "$T/workloads.err")"
pass "every workload's calls were answered right, before and after the restarts ($enosys ENOSYS from the killed worker's call in hand, $bad workload failed for it; one of each is tolerated)"
exit 0
