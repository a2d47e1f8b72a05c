# Signals at start-up (devwld(8) SIGNALS): SIGHUP and SIGUSR2 sent in a tight loop to the
# keeper and its worker from the moment the keeper runs never kill devwld: they stay
# blocked from main() on and across every exec, so the worker's loop reads them (reload,
# planned restart) once it is up. Afterwards devwld is ready and serves, a workload that
# ran through the storm saw no error, and SIGTERM stops it cleanly (status 0, sockets
# removed), also when it arrives before the first worker is ready.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] && [ -x "$HAMMER" ] || fail "devwl-run or hammer not built (the build should have made it)"
SECONDS_STORM=${DEVWL_STORM_SECONDS:-3}

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:5 r"] } ] }
JSON

# Start devwld without waiting; return once its keeper has SIGHUP blocked (before that
# it is not yet devwld but the shell that is about to exec it).
launch() {
	"$DEVWLD" --listen "$T/listen.sock" --control "$T/control.sock" \
		--policy "$T/policy.json" --no-audit 2>>"$T/devwld.log" &
	DEVWLD_PID=$!
	for _ in $(seq 2000); do
		blk=$(awk '/^SigBlk/ {print $2}' /proc/"$DEVWLD_PID"/status 2>/dev/null)
		[ -n "$blk" ] && (((0x$blk & 1) == 1)) &&
			[ "$(readlink /proc/"$DEVWLD_PID"/exe)" = "$(readlink -f "$DEVWLD")" ] && return 0
		sleep 0.001
	done
	fail "devwld did not start"
}

# --- 1. SIGTERM before the first worker is ready: a clean stop -------------------------
# (The worker's window is a few ms: this one is a guard, the storm below the proof.)
launch
kill -TERM "$DEVWLD_PID"
rc=0
wait "$DEVWLD_PID" || rc=$?
DEVWLD_PID=
[ "$rc" = 0 ] || fail "SIGTERM at start-up: exit status $rc, not 0"
[ ! -e "$T/listen.sock" ] && [ ! -e "$T/control.sock" ] || fail "SIGTERM at start-up: sockets left"
pass "SIGTERM during start-up: devwld stops cleanly (status 0, no sockets left)"

# --- 2. a SIGHUP/SIGUSR2 storm from the first instant -----------------------------------
launch
keeper=$DEVWLD_PID
(
	end=$((SECONDS + SECONDS_STORM))
	while [ $SECONDS -lt $end ]; do
		kids=
		read -r kids </proc/"$keeper"/task/"$keeper"/children 2>/dev/null
		kill -HUP "$keeper" $kids 2>/dev/null
		kill -USR2 "$keeper" $kids 2>/dev/null || exit 0
	done
) &
storm=$!
CHILD_PIDS+=("$storm")
for _ in $(seq 200); do
	[ -S "$T/listen.sock" ] && [ -S "$T/control.sock" ] && break
	kill -0 "$keeper" 2>/dev/null || fail "devwld died in the storm"
	sleep 0.01
done
start_hammers 1
wait "$storm"
kill -0 "$keeper" 2>/dev/null || fail "devwld died in the storm"
for _ in $(seq 200); do
	ctl stats >/dev/null 2>&1 && break
	sleep 0.05
done
gen=$(stat_of generation)
[ -n "$gen" ] || fail "devwld does not answer after the storm"
grep -q "killed by signal\|exited with status" "$T/devwld.log" && fail "a worker died in the storm"
"$RUN" --connect "$T/listen.sock" --node /w --id after -- sh -c 'true </dev/zero' ||
	fail "a workload started after the storm is not served"
pass "a SIGHUP/SIGUSR2 storm for ${SECONDS_STORM}s from start-up: devwld alive, ready, serving (worker generation $gen)"
touch "$T/stop"
wait "${HAMMER_PIDS[0]}" || fail "h1 (through the storm): $(cat "$T/h1.out")"
read -r _ opens _ errors _ <"$T/h1.out"
[ "$opens" -gt 0 ] && [ "$errors" = 0 ] || fail "h1: $(cat "$T/h1.out")"
pass "a workload that ran through the storm: $opens opens, no errors"

kill -TERM "$keeper"
rc=0
wait "$keeper" || rc=$?
DEVWLD_PID=
[ "$rc" = 0 ] || fail "SIGTERM after the storm: exit status $rc"
[ ! -e "$T/listen.sock" ] || fail "SIGTERM after the storm: socket left"
pass "SIGTERM after the storm: a clean stop"
exit 0
