# Hostile and broken listener clients: each is logged and dropped on its own, while
# well-behaved clients connecting at the same time are served at once.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
CLIENT=$OCI_BIN/oci-client
[ -x "$CLIENT" ] || fail "oci-client not built at $CLIENT (the build should have made it)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/clients", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
start_devwld --timeout-ms 3000
# Let a non-root peer reach the socket, so devwld's own SO_PEERCRED check is what stops it.
chmod 666 "$T/listen.sock"

declare -A bad_pid
# Before the first connection: no hostile connection is older than the time since.
bad_start=$(date +%s%N)
modes="malformed truncated nofds extrafds wrongfd nostate huge slow silent nonroot"
for m in $modes; do
	"$CLIENT" "$T/listen.sock" "$m" 2>"$T/$m.err" &
	bad_pid[$m]=$!
	CHILD_PIDS+=("$!")
done

# Well-behaved clients meanwhile: each must be served long before the slow and silent
# ones reach their deadline.
start=$(date +%s%N)
good=()
for i in $(seq 10); do
	"$CLIENT" "$T/listen.sock" good "good-$i" /dev/null ok 2>>"$T/good.err" &
	good+=("$!")
	"$CLIENT" "$T/listen.sock" good "denied-$i" /dev/zero EPERM 2>>"$T/good.err" &
	good+=("$!")
done
for pid in "${good[@]}"; do
	wait "$pid" || fail "a well-behaved client was not served: $(cat "$T/good.err")"
done
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
# Dropped early is a bug only if the deadline has not passed: on a loaded machine the
# good clients may take longer than it, and the silent one is then rightly gone.
if [ $((($(date +%s%N) - bad_start) / 1000000)) -lt 2500 ]; then
	kill -0 "${bad_pid[silent]}" 2>/dev/null ||
		fail "the silent client was dropped before the deadline (${elapsed_ms} ms)"
	pass "20 well-behaved clients served in $elapsed_ms ms while 10 hostile ones were connected"
else
	pass "20 well-behaved clients served in $elapsed_ms ms (a loaded machine: past the deadline)"
fi

for m in $modes; do
	wait "${bad_pid[$m]}" || fail "$m: devwld did not drop the connection: $(cat "$T/$m.err")"
done
pass "every hostile connection was dropped"

expect_log() {
	grep -q -- "$2" "$T/devwld.log" || fail "$1: no log line matching '$2'"
	pass "$1 logged: $(grep -m1 -- "$2" "$T/devwld.log" | sed 's/^devwld: //')"
}
expect_log malformed "malformed JSON"
expect_log truncated "closed after [0-9]* bytes without a complete JSON message"
expect_log nofds "names 1 fds but 0 arrived"
expect_log extrafds "names 1 fds but 3 arrived"
expect_log wrongfd "is not a seccomp notify fd"
expect_log nostate 'no "state" object'
expect_log huge "message larger than 1048576 bytes"
expect_log slow/silent "no complete message within 3000 ms"
expect_log nonroot "refusing peer pid [0-9]* uid 65534"

# Still serving, and nothing left behind.
"$CLIENT" "$T/listen.sock" good after /dev/null ok || fail "not serving after the hostile clients"
stats=$(ctl stats)
echo "$stats" | grep -q '^pending_connections 0$' || fail "connections left: $stats"
echo "$stats" | grep -q '^containers 0$' || fail "containers left: $stats"
# The keeper (DEVWLD_PID) and its worker each hold the two sockets and their link.
worker=$(echo "$stats" | awk '/^pid / {print $2}')
for pid in "$DEVWLD_PID" "$worker"; do
	left=$(ls -l /proc/"$pid"/fd | grep -c -e 'seccomp notify' -e 'socket:')
	[ "$left" -eq 3 ] || fail "devwld ($pid) holds more than its two sockets and its keeper link: $(ls -l /proc/$pid/fd)"
done
pass "devwld still serves; no connection, container or notify fd left behind"
exit 0
