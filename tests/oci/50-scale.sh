# Scale: 200 workloads handed to one devwld at once (devwl-run --connect), all served
# without errors; reports devwld's memory per container.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] || fail "devwl-run not built at $RUN (the build should have made it)"
N=${DEVWL_SCALE:-200}

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/scale", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
start_devwld --no-audit
# The worker's memory (DEVWLD_PID is its keeper, which holds fds only).
rss() { awk '/^VmRSS/ {print $2}' /proc/"$(ctl stats | awk '/^pid / {print $2}')"/status; }
# One workload first, so the library's lazily made caches are not counted per container.
"$RUN" --connect "$T/listen.sock" --node /scale --id warmup -- sh -c ': </dev/null' ||
	fail "warm-up workload"
sleep 0.2
rss0=$(rss)

pids=()
for i in $(seq "$N"); do
	"$RUN" --connect "$T/listen.sock" --node /scale --id "w$i" -- sh -c '
		: </dev/null || exit 3
		while [ ! -e "$1/go" ]; do sleep 0.2; done
		: </dev/null || exit 4
		(: </dev/zero) 2>/dev/null && exit 5
		exit 0' sh "$T" 2>>"$T/workloads.err" &
	pids+=("$!")
	CHILD_PIDS+=("$!")
done
for ((i = 0; i < 600; i++)); do
	n=$(ctl stats | awk '/^containers/ {print $2}')
	[ "$n" = "$N" ] && break
	sleep 0.1
done
[ "$n" = "$N" ] || fail "only $n of $N workloads connected: $(tail -3 "$T/workloads.err")"
rss1=$(rss)
per=$(((rss1 - rss0) * 1024 / N))
pass "$N workloads connected at once; devwld RSS ${rss0} kB → ${rss1} kB, about $per bytes per container"
touch "$T/go"
bad=0
for pid in "${pids[@]}"; do
	wait "$pid" || bad=$((bad + 1))
done
[ "$bad" = 0 ] || fail "$bad of $N workloads failed: $(tail -5 "$T/workloads.err")"
stats=$(ctl stats)
echo "$stats" | grep -q '^errors 0$' || fail "devwld counted errors: $stats"
for ((i = 0; i < 600; i++)); do
	ctl stats | grep -q '^containers 0$' && break
	sleep 0.1
done
ctl stats | grep -q '^containers 0$' || fail "containers left after the workloads exited"
pass "all $N served without errors ($(echo "$stats" | grep -E '^(allowed|denied|handling_p50_ns|handling_p99_ns) ' | tr '\n' ' '))"
exit 0
