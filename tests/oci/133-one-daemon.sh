# One daemon per socket (devwld(8) SECURITY): a second devwld started on the sockets of
# a running one refuses to start, naming the socket and the daemon that serves it, and
# leaves it serving; a daemon never unlinks a socket that is no longer its own; and the
# socket files a killed daemon left behind (no lock holder) are taken over cleanly.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
CLIENT=$OCI_BIN/oci-client
[ -x "$CLIENT" ] || fail "oci-client not built at $CLIENT (the build should have made it)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/clients", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
serves() {
	ctl stats >/dev/null && "$CLIENT" "$T/listen.sock" good "$1" /dev/null ok
}
worker_of() { ctl stats | awk '/^pid / {print $2}'; }

start_devwld
FIRST=$DEVWLD_PID
first_worker=$(worker_of)
rc=0
timeout 10 "$DEVWLD" --listen "$T/listen.sock" --control "$T/control.sock" \
	--policy "$T/policy.json" 2>"$T/second.log" || rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "a second devwld on the same sockets ran (status $rc): $(cat "$T/second.log")"
grep -q "$T/listen.sock.*pid $FIRST" "$T/second.log" ||
	fail "the refusal names neither the socket nor pid $FIRST: $(cat "$T/second.log")"
[ "$(worker_of)" = "$first_worker" ] && serves c1 ||
	fail "the first devwld no longer serves: $(ls -l "$T")"
pass "a second devwld is refused ($(head -1 "$T/second.log")); the first still serves"

# Only the control socket shared: refused too.
rc=0
timeout 10 "$DEVWLD" --listen "$T/other.sock" --control "$T/control.sock" 2>"$T/third.log" || rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "a devwld sharing the control socket ran (status $rc)"
grep -q "$T/control.sock.*pid $FIRST" "$T/third.log" || fail "refusal: $(cat "$T/third.log")"
serves c2 || fail "the first devwld no longer serves"
pass "a devwld sharing only the control socket is refused as well"

# Its directory emptied under it (rm -rf of the runtime directory, say): a new devwld
# takes the paths; the old one, stopped, must leave the new one's sockets alone.
find "$T" -maxdepth 1 \( -name '*.sock' -o -name '*.lock' \) -delete
start_devwld
SECOND=$DEVWLD_PID
kill "$FIRST"
wait "$FIRST" 2>/dev/null
[ -S "$T/listen.sock" ] && [ -S "$T/control.sock" ] ||
	fail "the stopped devwld unlinked its successor's sockets: $(ls "$T")"
serves c3 || fail "the new devwld does not serve"
pass "a devwld that stops leaves sockets that are no longer its own in place"

# Killed outright: its socket files stay, nobody holds the lock; a new one takes over.
second_worker=$(worker_of)
kill -9 "$SECOND"
wait "$SECOND" 2>/dev/null
wait_until 10 sh -c "! kill -0 $second_worker 2>/dev/null" || fail "worker $second_worker outlived its keeper"
[ -S "$T/listen.sock" ] || fail "the killed devwld left no socket file to take over"
readies=$(grep -c "ready: listening" "$T/devwld.log")
# start_devwld returns at once here (the old files are sockets): wait for its line.
start_devwld
wait_until 60 sh -c "[ \$(grep -c 'ready: listening' '$T/devwld.log') -gt $readies ]" ||
	fail "no devwld ready on the stale sockets"
serves c4 || fail "the devwld that took over stale sockets does not serve"
pass "stale sockets of a killed devwld are taken over"
exit 0
