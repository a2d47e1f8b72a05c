# A flood from one container does not stop devwld from serving the others: while one
# container opens a device from several threads as fast as it can, ten quiet ones each
# make an open every 5 ms, and every one of their calls gets the right answer (the
# granted device itself, or EPERM for a denied one) and they all finish. Correctness
# and completion only: the timing is bench/fairness.sh's business, not a test's.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] || fail "devwl-run not built at $RUN (the build should have made it)"
LOAD=$BUILD/bench/fair-load
if [ ! -x "$LOAD" ]; then
	LOAD=$T/fair-load
	${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -pthread "$HERE/../../bench/fair-load.c" -o "$LOAD" ||
		skip "cannot build bench/fair-load.c (no C compiler?)"
fi
QUIET=10
COUNT=600 # an open every 5 ms: 3 s
FLOOD_SECONDS=10

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/fair", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
start_devwld --no-audit

"$RUN" --connect "$T/listen.sock" --node /fair --id flood -- \
	"$LOAD" flood /dev/null 4 "$FLOOD_SECONDS" >"$T/flood.out" 2>&1 &
flood=$!
CHILD_PIDS+=("$flood")
# The flood must be running before the quiet ones start.
for ((i = 0; i < 1200; i++)); do
	n=$(ctl containers | awk '$1 == "flood" {print $4}')
	[ "${n:-0}" -gt 1000 ] && break
	sleep 0.05
done
[ "${n:-0}" -gt 1000 ] || fail "the flood did not get going in 60 s (${n:-no} notifications: $(cat "$T/flood.out"))"

pids=()
for i in $(seq "$QUIET"); do
	# Every open checked (fair-load compares the fd's device with /dev/null's); then
	# one denied call, which must still be refused under the flood.
	"$RUN" --connect "$T/listen.sock" --node /fair --id "quiet-$i" -- sh -c '
		"$1" quiet /dev/null 5000 "$2" || exit 1
		(: </dev/zero) 2>/dev/null && exit 2
		exit 0' sh "$LOAD" "$COUNT" >"$T/quiet-$i.out" 2>&1 &
	pids+=("$!")
	CHILD_PIDS+=("$!")
done
bad=0
for i in $(seq "$QUIET"); do
	wait "${pids[$((i - 1))]}" || {
		bad=$((bad + 1))
		echo "quiet-$i: $(cat "$T/quiet-$i.out")" >&2
	}
done
[ "$bad" = 0 ] || fail "$bad of $QUIET quiet containers got a wrong answer under the flood"
kill -0 "$flood" 2>/dev/null || fail "the flood ended before the quiet containers did: " \
	"nothing was measured under load ($(cat "$T/flood.out"))"
pass "$QUIET quiet containers: all $((QUIET * COUNT)) grants and $QUIET denials right while the flood ran"

wait "$flood" || fail "the flood workload failed: $(cat "$T/flood.out")"
grep -q 'errors 0 ' "$T/flood.out" || fail "the flood saw failed opens: $(cat "$T/flood.out")"
stats=$(ctl stats)
echo "$stats" | grep -q '^errors 0$' || fail "devwld counted errors: $stats"
wait_until 60 sh -c '"$0" --socket "$1" stats | grep -q "^containers 0$"' "$DEVWLCTL" "$T/control.sock" ||
	fail "containers left 60 s after the workloads exited: $(ctl containers | head -5)"
pass "the flood itself was served throughout ($(awk '{print $2, $3, $4, $5}' "$T/flood.out")) and devwld counted no errors"
exit 0
