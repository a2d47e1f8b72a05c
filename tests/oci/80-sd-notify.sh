# The systemd unit is Type=notify: devwld must send READY=1 to $NOTIFY_SOCKET once both
# of its sockets exist (not before: runtimes started After= it would find no
# listenerPath), and STOPPING=1 when it exits. A fake NOTIFY_SOCKET listener checks.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
LISTEN=$OCI_BIN/notify-listen
[ -x "$LISTEN" ] || fail "notify-listen not built at $LISTEN (the build should have made it)"

echo '{ "version": 1 }' >"$T/policy.json"
"$LISTEN" "$T/notify.sock" 120 "$T/listen.sock" "$T/control.sock" >"$T/notify.out" 2>&1 &
listener=$!
CHILD_PIDS+=("$listener")
wait_for "$T/notify.out" listening 5 || fail "notify-listen did not start: $(cat "$T/notify.out")"

NOTIFY_SOCKET=$T/notify.sock start_devwld
wait_for "$T/notify.out" "READY=1" 5 || fail "no READY=1: $(cat "$T/notify.out")"
grep -q "^sockets ok$" "$T/notify.out" || fail "READY=1 before both sockets existed: $(cat "$T/notify.out")"
pass "READY=1 sent once both sockets exist: $(grep '^message' "$T/notify.out" | head -1)"

# SIGHUP (ExecReload): RELOADING=1 with MONOTONIC_USEC, then READY=1 again, as
# systemd >= 253's Type=notify-reload expects.
kill -HUP "$DEVWLD_PID"
for _ in $(seq 1200); do
	[ "$(grep -c 'READY=1' "$T/notify.out")" -ge 2 ] && break
	sleep 0.05
done
grep -q '^message RELOADING=1 MONOTONIC_USEC=[0-9]\+ *$' "$T/notify.out" &&
	[ "$(grep -c '^message READY=1' "$T/notify.out")" = 2 ] ||
	fail "reload notifications: $(cat "$T/notify.out")"
pass "SIGHUP: RELOADING=1 + MONOTONIC_USEC, then READY=1"

kill -TERM "$DEVWLD_PID"
wait "$DEVWLD_PID" || fail "devwld exited $? on SIGTERM"
DEVWLD_PID=
wait "$listener" || fail "no STOPPING=1: $(cat "$T/notify.out")"
[ ! -e "$T/listen.sock" ] && [ ! -e "$T/control.sock" ] || fail "sockets left after exit"
pass "SIGTERM: STOPPING=1 sent, exit status 0, sockets removed"

# An abstract NOTIFY_SOCKET ("@name", as systemd may use) must not break anything.
: >"$T/devwld.log"
NOTIFY_SOCKET=@devwl-test-$$ start_devwld
ctl stats >/dev/null || fail "devwld with an abstract NOTIFY_SOCKET does not answer"
pass "an abstract NOTIFY_SOCKET with nobody listening is harmless"
exit 0
