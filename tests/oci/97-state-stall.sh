# A state write that does not finish (a disk that does not answer, injected with
# DEVWLD_TEST_STATE_STALL in -DDEVWL_TEST_HOOKS=ON builds) stalls no container: the
# write runs on a thread of its own, so a running workload keeps being answered and a
# new one attaches and is served; devwlctl's read-only commands answer, while a change
# (mkdir) is answered only once a write that holds it is done (devwld(8) STATE).
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] && [ -x "$HAMMER" ] || fail "devwl-run or hammer not built (the build should have made it)"
[ "${DEVWL_TEST_HOOKS:-0}" = 1 ] || skip "devwld built without -DDEVWL_TEST_HOOKS=ON (fault injection)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:5 r"] } ] }
JSON
S=$T/state.json
DEVWLD_TEST_STATE_STALL=$T/stall start_devwld --no-audit --state "$S"
start_hammers 1
wait_containers 1
ctl() { timeout 10 "$DEVWLCTL" --socket "$T/control.sock" "$@"; }

touch "$T/stall"
# A new process: its state write starts and stalls.
timeout 20 "$RUN" --connect "$T/listen.sock" --node /w --id during -- sh -c 'true </dev/zero' ||
	fail "a process attaching while the state write stalls is not served"
n0=$(stat_of notifications)
[ -n "$n0" ] || fail "devwlctl stats does not answer while the state write stalls"
for _ in $(seq 1200); do
	[ "$(stat_of notifications)" -gt $((n0 + 100)) ] && break
	sleep 0.05
done
[ "$(stat_of notifications)" -gt $((n0 + 100)) ] || fail "the running workload is not served while the state write stalls"
pass "with the state write stalled: a new process attached and was served, the running one kept being served, stats answered"

ctl mkdir /during >"$T/mkdir.out" 2>&1 &
mk=$!
CHILD_PIDS+=("$mk")
"$RUN" --connect "$T/listen.sock" --node /w --id during2 -- sh -c 'true </dev/zero' ||
	fail "second process not served"
kill -0 "$mk" 2>/dev/null || fail "devwlctl mkdir was answered before its change was on disk: $(cat "$T/mkdir.out")"
jq -e '.hierarchy | tostring | contains("/during")' "$S" >/dev/null && fail "/during on disk while stalled?"
rm "$T/stall"
wait "$mk" || fail "devwlctl mkdir: $(cat "$T/mkdir.out")"
jq -e '.hierarchy | tostring | contains("/during")' "$S" >/dev/null ||
	fail "devwlctl mkdir returned, but /during is not in the state: $(cat "$S")"
pass "devwlctl mkdir was answered only once the write holding it was done"

touch "$T/stop"
wait "${HAMMER_PIDS[0]}" || fail "h1: $(cat "$T/h1.out")"
read -r _ opens _ errors _ <"$T/h1.out"
[ "$errors" = 0 ] || fail "h1: $(cat "$T/h1.out")"
pass "the running workload: $opens opens, no errors"
exit 0
