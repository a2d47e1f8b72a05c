# Listener admission (devwld(8) SECURITY): a user of --allow-uid holding hundreds of
# silent connections, reconnecting as soon as one is dropped, gets a bounded share of the
# pending connections; root's runtimes still attach at once, and the refusals are
# counted in a few log lines, not logged one by one.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_user_client

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/clients", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
# The runtime's deadline is the default 5 s: the holder reconnects at each drop.
start_devwld --allow-uid 65534
as_nobody "$CLIENT" "$T/listen.sock" hold 300 14 >"$T/hold.out" 2>"$T/hold.err" &
HOLD=$!
CHILD_PIDS+=("$HOLD")
wait_until 20 sh -c "[ \"\$($DEVWLCTL --socket $T/control.sock stats | awk '/^pending_connections/ {print \$2}')\" -ge 16 ]" ||
	fail "the holder never got connections in: $(ctl stats | grep pending)"
sleep 1
pass "uid 65534 holds $(stat_of pending_connections) of its 300 connections pending"

# Root's runtimes meanwhile: each must attach and be served.
pids=()
for i in $(seq 20); do
	"$CLIENT" "$T/listen.sock" good "root-$i" /dev/null ok 2>>"$T/good.err" &
	pids+=("$!")
done
bad=0
for pid in "${pids[@]}"; do
	wait "$pid" || bad=$((bad + 1))
done
[ "$bad" = 0 ] || fail "$bad of 20 root runtimes were not served while uid 65534 held its connections: $(head -5 "$T/good.err")"
pass "20 root runtimes attached and were served while uid 65534 held its connections"

wait "$HOLD" || fail "the holder failed: $(cat "$T/hold.err")"
connects=$(cat "$T/hold.out")
[ "$connects" -gt 300 ] || fail "the holder was never refused or dropped ($connects connects)"
lines=$(grep -c "listener: .*uid 65534" "$T/devwld.log")
refusals=$(grep -c "listener: .*refus.*uid 65534" "$T/devwld.log")
[ "$refusals" -le 5 ] || fail "$refusals refusal lines for $connects connects: $(grep -m5 refus "$T/devwld.log")"
grep -q "listener: refused [0-9]* more connections" "$T/devwld.log" ||
	fail "no count of the refusals logged: $(grep -m5 refus "$T/devwld.log")"
pass "$connects connects of uid 65534 in 14 s: $refusals refusal lines ($lines lines naming it in all)"
exit 0
