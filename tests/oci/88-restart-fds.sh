# Twenty restarts (devwlctl restart, SIGUSR2, and SIGKILL of the worker, in turn) with
# workloads attached: the keeper's and the worker's fd counts stay as they were, every
# workload stays served, and the keeper's memory does not grow.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] && [ -x "$HAMMER" ] || fail "devwl-run or hammer not built (the build should have made it)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1, "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:5 r"] } ] }
JSON
start_devwld --no-audit
# Sockets, notify fds, the ring, signalfd, inotify, memfd: what a restart could leak. A
# worker's files and devices come and go with the calls it is handling.
nfds() { ls -l /proc/"$1"/fd | grep -c -e 'socket:' -e 'anon_inode' -e 'memfd:'; }
rss() { awk '/^VmRSS/ {print $2}' /proc/"$1"/status; }

start_hammers 3
for _ in $(seq 1200); do
	[ "$(stat_of processes)" = 3 ] && break
	sleep 0.05
done
[ "$(stat_of processes)" = 3 ] || fail "workloads not attached"
sleep 0.2
k0=$(nfds "$DEVWLD_PID")
w0=$(nfds "$(stat_of pid)")
m0=$(rss "$DEVWLD_PID")

nctl=0 nusr2=0 nkill=0
for i in $(seq 20); do
	g=$(stat_of generation)
	case $((i % 3)) in
	0) ctl restart || fail "restart $i: devwlctl restart"; nctl=$((nctl + 1)) ;;
	1) kill -USR2 "$DEVWLD_PID"; nusr2=$((nusr2 + 1)) ;;
	2) kill -9 "$(stat_of pid)"; nkill=$((nkill + 1)) ;;
	esac
	for _ in $(seq 6000); do
		[ "$(stat_of generation)" != "$g" ] && break
		sleep 0.01
	done
	[ "$(stat_of generation)" != "$g" ] || fail "restart $i: no new worker"
	[ "$(stat_of processes)" = 3 ] || fail "restart $i: $(stat_of processes) processes served"
	k=$(nfds "$DEVWLD_PID")
	w=$(nfds "$(stat_of pid)")
	[ "$k" = "$k0" ] && [ "$w" = "$w0" ] ||
		fail "restart $i: fds keeper $k0 → $k, worker $w0 → $w: $(ls -l /proc/$DEVWLD_PID/fd)"
done
grep "let go" "$T/devwld.log" >&2 && fail "a restart let a process go"
m1=$(rss "$DEVWLD_PID")
[ "$m1" -le $((m0 + 512)) ] || fail "keeper RSS grew from $m0 kB to $m1 kB"
pass "20 restarts (${nctl}× devwlctl restart, ${nusr2}× SIGUSR2, ${nkill}× SIGKILL): keeper $k0 fds, worker $w0 fds throughout; keeper RSS $m0 → $m1 kB"

touch "$T/stop"
for i in 1 2 3; do
	wait "${HAMMER_PIDS[$((i - 1))]}"
	read -r _ opens _ errors _ _ <"$T/h$i.out"
	[ "$opens" -gt 0 ] || fail "h$i: $(cat "$T/h$i.out")"
	grep '^errno' "$T/h$i.out" | grep -vq '^errno ENOSYS ' && fail "h$i: $(cat "$T/h$i.out")"
	# A killed worker holds at most one call of each process: its fd is served by one
	# thread at a time.
	[ "$errors" -le "$nkill" ] || fail "h$i: more ENOSYS than kills ($nkill): $(cat "$T/h$i.out")"
done
pass "the workloads were served throughout (only ENOSYS for calls a killed worker held)"
exit 0
