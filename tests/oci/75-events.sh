# devwlctl events (devwlctl(1)): a live stream of devwld's decisions, one line each; a
# subscriber sees a runc container's denied mknod as it happens, a --container filter
# sees only its container, and a subscriber that stops reading costs devwld nothing:
# its lines are dropped and counted, the others and the containers go on, and it is told
# how many it missed once it reads again.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] && [ -x "$HAMMER" ] || fail "devwl-run or hammer not built (the build should have made it)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 r"],
               "mknod_needs_cap": false } ],
  "containers": { "node_metadata": true } }
JSON
start_devwld --no-audit
events() { # OUT ARGS...: a subscriber in the background; its pid in EV_PID
	local out=$1
	shift
	"$DEVWLCTL" --socket "$T/control.sock" events "$@" >"$out" 2>"$out.err" &
	EV_PID=$!
	CHILD_PIDS+=("$EV_PID")
}
subscribers() { # N: until devwld counts N subscribers
	for _ in $(seq 100); do
		[ "$(stat_of events_subscribers)" = "$1" ] && return 0
		sleep 0.05
	done
	fail "subscribers: $(stat_of events_subscribers), want $1"
}
events "$T/all.out"
ALL=$EV_PID
# A container still to come: its full id is taken as given (a name must resolve now).
OTHER=$(printf '0%.0s' $(seq 64))
events "$T/other.out" --container "$OTHER" --json
subscribers 2

# --- 1. a denied mknod in a runc container, as it happens --------------------------------
tag=ev-$$
make_rootfs
make_bundle one 'mknod /tmp/mem c 1 1; echo RC=$?; echo x >/dev/null'
run_fg "$tag" "$T/one" || fail "runc: $(cat "$T/$tag.out")"
grep -q "mem: Operation not permitted" "$T/$tag.out" || fail "container: $(cat "$T/$tag.out")"
wait_for "$T/all.out" " $tag /containers/$tag [0-9]* mknod\\(at\\)\\? /tmp/mem c 1:1 m deny EPERM (policy: no rule allows it (rules: c 1:3 rwm, c 1:5 r); so does /containers)$" ||
	fail "no event line: $(cat "$T/all.out")"
grep -q " $tag .* openat /dev/null c 1:3 w allow$" "$T/all.out" || fail "no allow line: $(cat "$T/all.out")"
pass "devwlctl events: \"$(grep -m1 mknod "$T/all.out")\""
grep -q "$tag" "$T/other.out" && fail "--container $OTHER saw $tag: $(cat "$T/other.out")"
pass "devwlctl events --container ${OTHER:0:12}…: nothing of $tag"

# --- 2. a subscriber that stops reading -----------------------------------------------------
events "$T/slow.out" --all --json
SLOW=$EV_PID
subscribers 3
kill -STOP "$SLOW"
rm -f "$T/stop"
"$RUN" --connect "$T/listen.sock" --node /containers/h --id h -- "$HAMMER" "$T/stop" /dev/zero \
	>"$T/h.out" 2>&1 &
CHILD_PIDS+=("$!")
HPID=$!
for _ in $(seq 200); do
	[ "$(stat_of events_dropped)" -gt 0 ] 2>/dev/null && break
	sleep 0.05
done
dropped=$(stat_of events_dropped)
[ "$dropped" -gt 0 ] || fail "nothing dropped for the stopped subscriber"
# devwld goes on: the workload is served, the reading subscriber keeps up.
n1=$(stat_of notifications) l1=$(wc -l <"$T/all.out")
wait_until 60 sh -c '[ "$("$0" --socket "$1" stats | awk "\$1 == \"notifications\" {print \$2}")" -gt "$2" ] &&
	[ "$(wc -l <"$3")" -gt "$4" ]' "$DEVWLCTL" "$T/control.sock" "$n1" "$T/all.out" "$l1" ||
	fail "devwld or the other subscriber stalled behind the stopped one: notifications $n1 -> $(stat_of notifications), the other's lines $l1 -> $(wc -l <"$T/all.out") in 60 s"
touch "$T/stop"
wait "$HPID" || fail "the workload failed: $(cat "$T/h.out")"
pass "a stopped subscriber: $dropped lines dropped for it, the workload ($(cut -d' ' -f2 "$T/h.out") opens) and the other subscriber went on"

kill -CONT "$SLOW"
# The next decision after it caught up carries the note.
for _ in $(seq 20); do
	timeout 20 "$RUN" --connect "$T/listen.sock" --node /containers/n --id n -- \
		sh -c 'true </dev/zero' >/dev/null 2>&1
	grep -q "decisions missed" "$T/slow.out.err" && break
	sleep 0.1
done
grep -q "^devwlctl: [0-9]* decisions missed (devwlctl did not keep up)$" "$T/slow.out.err" ||
	fail "the slow subscriber was not told: $(cat "$T/slow.out.err")"
pass "the subscriber, reading again, is told: $(cat "$T/slow.out.err")"

# --- 3. subscribers come and go -------------------------------------------------------------
kill "$SLOW" "$ALL"
subscribers 1
printf 'events bogus\n' | "$DEVWLCTL" batch --connect "$T/control.sock" | grep -q "^error EINVAL: events: " ||
	fail "a bad events line was not refused"
pass "a subscriber that exits is forgotten; a malformed events request is refused (EINVAL)"
exit 0
