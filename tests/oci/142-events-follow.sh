# devwlctl events when devwld restarts (devwlctl(1), events): the stream is the old
# worker's and ends; devwlctl says so on stderr and exits 1 instead of 0 in silence, and
# with --follow it subscribes again and shows the decisions of the new worker. A 64-hex
# container id (Docker's) is shown once per line, short, not twice in full.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
PROBE=$BUILD/tests/live/probe
[ -x "$RUN" ] && [ -x "$PROBE" ] || fail "devwl-run or the live tests' probe not built (the build should have made it)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
start_devwld --no-audit
subscribers() { # N: until devwld counts N subscribers
	for _ in $(seq 200); do
		[ "$(stat_of events_subscribers)" = "$1" ] && return 0
		sleep 0.05
	done
	fail "subscribers: $(stat_of events_subscribers), want $1"
}
# A decision of devwld's: a denied open by a process handed over as a runtime would.
deny_one() {
	"$RUN" --connect "$T/listen.sock" --node "/containers/$1" --id "$1" -- \
		"$PROBE" open /dev/zero rdonly >"$T/$1.out" 2>&1
	[ "$(tail -1 "$T/$1.out")" = EPERM ] || fail "$1: $(cat "$T/$1.out")"
}

"$DEVWLCTL" --socket "$T/control.sock" events >"$T/plain.out" 2>"$T/plain.err" &
PLAIN=$!
CHILD_PIDS+=("$PLAIN")
"$DEVWLCTL" --socket "$T/control.sock" events --follow >"$T/follow.out" 2>"$T/follow.err" &
CHILD_PIDS+=("$!")
subscribers 2
deny_one before
wait_for "$T/follow.out" " before /containers/before .* open.* /dev/zero c 1:5 r deny EPERM" ||
	fail "no event before the restart: $(cat "$T/follow.out")"

ctl restart || fail "devwlctl restart failed"
rc=0
wait "$PLAIN" || rc=$?
[ "$rc" = 1 ] || fail "devwlctl events exited $rc when devwld restarted: $(cat "$T/plain.err")"
grep -q "^devwlctl: devwld ended the stream (it stopped or restarted; --follow subscribes again)$" \
	"$T/plain.err" || fail "devwlctl events said: $(cat "$T/plain.err")"
pass "without --follow: exit 1, \"$(cat "$T/plain.err")\""

subscribers 1
deny_one after
wait_for "$T/follow.out" " after /containers/after .* open.* /dev/zero c 1:5 r deny EPERM" ||
	fail "--follow shows nothing after the restart: $(cat "$T/follow.out") / $(cat "$T/follow.err")"
grep -q "subscribing again" "$T/follow.err" || fail "--follow said: $(cat "$T/follow.err")"
pass "--follow: subscribed again after the restart and shows the new worker's decisions"

# Docker's ids: 64 hex digits, and the default node /containers/ID holds it again.
id=$(printf '%064x' $$)
deny_one "$id"
# The pid column is read after the answer and is "-" when the probe has ended by then.
wait_for "$T/follow.out" " ${id:0:12} /containers/{id} [0-9-]* open.* /dev/zero c 1:5 r deny EPERM" ||
	fail "the long id: $(grep -m1 "${id:0:12}" "$T/follow.out")"
grep "${id:0:12}" "$T/follow.out" | grep -q "$id" && fail "the long id in full: $(grep "${id:0:12}" "$T/follow.out")"
pass "a 64-hex id: $(grep -m1 "${id:0:12}" "$T/follow.out" | cut -d' ' -f2-)"
