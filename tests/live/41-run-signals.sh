#!/bin/bash
# Signals sent to devwl-run reach the command: SIGTERM and SIGHUP are forwarded, and the
# command's reaction decides devwl-run's exit status.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup baseline"

wait_for() {
	for _ in $(seq 200); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	fail "timed out waiting for $1"
}

# The command traps SIGTERM and exits 7: the signal must have reached it.
"$RUN" -- sh -c "trap 'echo term >$T/term; exit 7' TERM; touch $T/ready; while :; do sleep 0.05; done" &
pid=$!
wait_for "$T/ready"
kill -TERM $pid
wait $pid
rc=$?
[ "$rc" = 7 ] || fail "SIGTERM: devwl-run exited $rc, expected the command's 7"
[ "$(cat "$T/term" 2>/dev/null)" = term ] || fail "the command did not see SIGTERM"

# A command that does not handle SIGTERM dies of it: 128+15.
rm -f "$T/ready"
"$RUN" -- sh -c "touch $T/ready; exec sleep 100" &
pid=$!
wait_for "$T/ready"
sleep 0.2 # let sh exec sleep
kill -TERM $pid
wait $pid
rc=$?
[ "$rc" = 143 ] || fail "SIGTERM to sleep: exited $rc, expected 143"

# SIGHUP too.
rm -f "$T/ready"
"$RUN" -- sh -c "trap 'exit 9' HUP; touch $T/ready; while :; do sleep 0.05; done" &
pid=$!
wait_for "$T/ready"
kill -HUP $pid
wait $pid
rc=$?
[ "$rc" = 9 ] || fail "SIGHUP: exited $rc, expected 9"
echo "PASS"
