# What the command line asks for besides serving containers is there from the start or
# devwld does not start (devwld(8), DIAGNOSTICS): a metrics address in use, an audit
# file that cannot be opened, uevents refused while selector bindings need them each make
# it exit non-zero before READY=1, naming what failed, and leave no socket or lock behind.
# One that breaks later (the uevent socket refused when a binding is made at run time, an
# audit file whose writes fail) is logged as an ERROR and counted by devwlctl stats and
# the metrics, and the containers are served all the same.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
LISTEN=$OCI_BIN/notify-listen
NO_NETLINK=$OCI_BIN/no-netlink
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
PROBE=$BUILD/tests/live/probe
for x in "$LISTEN" "$NO_NETLINK" "$RUN" "$PROBE"; do
	[ -x "$x" ] || fail "$x not built (the build should have made it)"
done
command -v python3 >/dev/null || skip "no python3"

touch "$T/a.img"
cat >"$T/policy.json" <<'JSON'
{ "version": 1, "nodes": [ { "path": "/lab", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
jq --arg f "$T/a.img" '. + {selectors: [{node: "/lab", allow: ("loop:" + $f + " r")}]}' \
	"$T/policy.json" >"$T/bound.json"

# refused NAME WHAT [WRAPPER] -- ARG...: devwld started with ARG (under WRAPPER) must exit
# non-zero within 30 s, say WHAT on stderr, send no READY=1, and leave nothing in $T/NAME.
refused() {
	local name=$1 what=$2 wrap=() dir=$T/$1 rc=0
	shift 2
	while [ "$1" != -- ]; do
		wrap+=("$1")
		shift
	done
	shift
	mkdir "$dir"
	"$LISTEN" "$T/$name.notify" 40 >"$T/$name.notify.out" 2>&1 &
	CHILD_PIDS+=($!)
	wait_for "$T/$name.notify.out" listening 5 || fail "notify-listen did not start"
	NOTIFY_SOCKET=$T/$name.notify timeout 30 "${wrap[@]}" "$DEVWLD" \
		--listen "$dir/listen.sock" --control "$dir/control.sock" "$@" 2>"$T/$name.err" ||
		rc=$?
	[ "$rc" != 0 ] || fail "$name: devwld started: $(cat "$T/$name.err")"
	[ "$rc" != 124 ] || fail "$name: devwld neither started nor exited in 30 s"
	grep -qF -- "$what" "$T/$name.err" || fail "$name: stderr does not say '$what': $(cat "$T/$name.err")"
	grep -q 'not starting' "$T/$name.err" || fail "$name: stderr does not say it is not starting: $(cat "$T/$name.err")"
	grep -q READY=1 "$T/$name.notify.out" && fail "$name: READY=1 sent: $(cat "$T/$name.notify.out")"
	[ -z "$(ls -A "$dir")" ] || fail "$name: left behind: $(ls -A "$dir")"
	pass "$name: exit status $rc, '$(grep 'not starting' "$T/$name.err" | head -1)', no READY=1, nothing left"
}

# 1. A metrics address in use: taken by a listener of our own.
python3 -u -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1]); time.sleep(120)' \
	>"$T/port" &
CHILD_PIDS+=($!)
wait_until 10 test -s "$T/port" || fail "no port taken"
port=$(cat "$T/port")
refused metrics-in-use "127.0.0.1:$port: Address already in use" -- --no-audit --metrics "127.0.0.1:$port"
# The unix form in a directory that is not one: nothing bound, nothing left.
touch "$T/not-a-dir"
refused metrics-unix "unix:$T/not-a-dir/m.sock" -- --no-audit --metrics "unix:$T/not-a-dir/m.sock"

# 2. An audit file that cannot be opened (a directory), and one in a missing directory.
mkdir "$T/a-directory"
refused audit-dir "--audit $T/a-directory: Is a directory" -- --audit "$T/a-directory"
refused audit-missing "--audit $T/nowhere/audit.jsonl: No such file" -- --audit "$T/nowhere/audit.jsonl"

# 3. Selector bindings to follow, the uevent socket refused (a seccomp filter).
"$NO_NETLINK" uevent true 2>"$T/nu.err" || skip "cannot refuse netlink sockets here: $(cat "$T/nu.err")"
refused uevents "cannot receive uevents (Permission denied)" "$NO_NETLINK" uevent -- --no-audit \
	--policy "$T/bound.json"

# 4. Later: under the same filter without a binding, devwld starts; a binding made then
# cannot be followed: an ERROR, counted; the audit file is /dev/full, whose writes fail.
DEVWLD_WRAP="$NO_NETLINK uevent" start_devwld
kill -0 "$DEVWLD_PID" || fail "devwld did not start"
DEVWLD_PID_1=$DEVWLD_PID
stat_of uevents_failures >"$T/before" || fail "devwlctl stats"
[ "$(cat "$T/before")" = 0 ] || fail "uevents_failures $(cat "$T/before") before any binding"
ctl allow /lab "loop:$T/a.img" r || fail "devwlctl allow /lab loop:... r"
wait_until 10 sh -c "[ \"\$($DEVWLCTL --socket $T/control.sock stats | awk '\$1 == \"uevents_failures\" {print \$2}')\" = 1 ]" ||
	fail "uevents_failures: $(stat_of uevents_failures)"
grep -q "ERROR: selectors: cannot receive uevents (Permission denied)" "$T/devwld.log" ||
	fail "no ERROR logged for the uevents"
ctl metrics | grep -qx 'devwl_feature_failures_total{feature="uevents"} 1' ||
	fail "metrics: $(ctl metrics | grep feature_failures)"
sleep 2.5
[ "$(grep -c 'cannot receive uevents' "$T/devwld.log")" = 1 ] || fail "the uevent failure logged again and again"
out=$("$RUN" --connect "$T/listen.sock" --node /lab --id u1 -- "$PROBE" open /dev/null rdwr 2>&1)
[ "${out%% *}" = ok ] || fail "a workload after the failure: $out"
pass "a binding made later without uevents: one ERROR line, uevents_failures 1 (stats and metrics), containers served"
kill "$DEVWLD_PID_1"
wait "$DEVWLD_PID_1" 2>/dev/null
DEVWLD_PID=

rm -f "$T/listen.sock" "$T/control.sock"
start_devwld --audit /dev/full --metrics "unix:$T/metrics.sock"
grep -q "metrics: serving GET /metrics at unix:$T/metrics.sock" "$T/devwld.log" ||
	fail "devwld did not log where it serves the metrics"
for i in 1 2 3; do
	"$RUN" --connect "$T/listen.sock" --node /lab --id "a$i" -- "$PROBE" open /dev/kmsg rdonly \
		>/dev/null 2>&1 || true
done
wait_until 15 sh -c "[ \"\$($DEVWLCTL --socket $T/control.sock stats | awk '\$1 == \"audit_failures\" {print \$2}')\" -ge 1 ]" ||
	fail "audit_failures: $(stat_of audit_failures)"
wait_until 15 grep -q "ERROR: audit file /dev/full: [0-9]* writes failed" "$T/devwld.log" ||
	fail "no ERROR logged for the audit file"
ctl metrics | grep -q '^devwl_feature_failures_total{feature="audit"} [1-9]' ||
	fail "metrics: $(ctl metrics | grep feature_failures)"
pass "audit writes failing later: an ERROR line, audit_failures $(stat_of audit_failures) (stats and metrics)"
kill "$DEVWLD_PID"
wait "$DEVWLD_PID" 2>/dev/null
DEVWLD_PID=

# 5. A worker started again after a crash that cannot open the audit file: containers
# served all the same, the records on stderr, an ERROR counted.
rm -f "$T/listen.sock" "$T/control.sock" "$T/audit.jsonl"
start_devwld
worker=$(pgrep -P "$DEVWLD_PID") || fail "no worker"
rm -f "$T/audit.jsonl"
mkdir "$T/audit.jsonl"
kill -9 "$worker"
wait_until 20 sh -c "[ \"\$($DEVWLCTL --socket $T/control.sock stats 2>/dev/null | awk '\$1 == \"generation\" {print \$2}')\" = 2 ]" ||
	fail "no second worker: $(tail -5 "$T/devwld.log")"
[ "$(stat_of audit_failures)" = 1 ] || fail "audit_failures $(stat_of audit_failures) after the restart"
grep -q "ERROR: --audit $T/audit.jsonl: Is a directory (its records go to standard error)" "$T/devwld.log" ||
	fail "no ERROR for the audit file after the restart"
out=$("$RUN" --connect "$T/listen.sock" --node /lab --id r1 -- "$PROBE" open /dev/kmsg rdonly 2>&1)
[ "$out" = EPERM ] || fail "a workload after the restart: $out"
wait_until 10 grep -q '"container":"r1"' "$T/devwld.log" || fail "r1's record is not on stderr"
pass "a restarted worker without its audit file: an ERROR, audit_failures 1, records on stderr, containers served"
exit 0
