#!/bin/bash
# Nothing outlives a run: processes the command left behind (in the background, double
# forked, in a new session) are killed once it exits, and the baseline cgroup is removed,
# also when the command cannot be run or devwl-run itself is told to stop.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup baseline"
V1=$(host_v1 devices) V2=$(host_cgroup2)

no_cgroup() { # no devwl-run.PID anywhere in either hierarchy
	local found
	found=$(find ${V1:+"$V1"} ${V2:+"$V2"} -maxdepth 4 -type d -name "devwl-run.$1" 2>/dev/null)
	[ -z "$found" ] || fail "$2: cgroup left behind: $found"
}
gone() { # the pid in file $1 no longer runs
	local p
	p=$(cat "$1" 2>/dev/null) || fail "$2: no pid recorded"
	for _ in $(seq 3000); do
		kill -0 "$p" 2>/dev/null || return 0
		sleep 0.02
	done
	fail "$2: process $p outlived devwl-run"
}

ran=0
for b in v1 v2; do
	# Where the host can make this baseline, devwl-run must.
	host_can_baseline $b || { echo "$b: the host cannot: $host_why" >&2; continue; }
	ran=$((ran + 1))
	export DEVWL_BASELINE=$b

	"$RUN" -- true &
	pid=$!
	wait $pid || fail "$b: true failed"
	no_cgroup $pid "$b: true"

	# A background child: devwl-run returns at once with the command's status.
	rm -f "$T/bg"
	# A devwl-run that waited for the child (sleep 1000) is killed by timeout: 124, not 4.
	timeout 120 "$RUN" -- sh -c "sleep 1000 & echo \$! >$T/bg; exit 4" &
	pid=$!
	wait $pid
	rc=$?
	[ "$rc" = 4 ] || fail "$b: background: exited $rc, expected 4 (124: it waited for the child)"
	gone "$T/bg" "$b: background"
	no_cgroup $pid "$b: background"

	# Double fork into a new session: the orphan still comes back to us.
	rm -f "$T/bg"
	timeout 20 "$RUN" -- sh -c "(setsid sh -c 'echo \$\$ >$T/bg; exec sleep 1000' &); \
		while [ ! -s $T/bg ]; do sleep 0.01; done" &
	pid=$!
	wait $pid || fail "$b: double fork: exited $?"
	gone "$T/bg" "$b: double fork"
	no_cgroup $pid "$b: double fork"

	# Error paths: the command cannot be run; devwl-run is killed by SIGTERM.
	"$RUN" -- /nonexistent 2>/dev/null &
	pid=$!
	wait $pid
	[ $? = 127 ] || fail "$b: /nonexistent"
	no_cgroup $pid "$b: /nonexistent"

	rm -f "$T/bg"
	"$RUN" -- sh -c "sleep 1000 & echo \$! >$T/bg; wait" &
	pid=$!
	# Bounded: a devwl-run that never starts the command must fail the test, not hang it.
	for ((i = 0; i < 3000; i++)); do
		[ -s "$T/bg" ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.02
	done
	[ -s "$T/bg" ] || fail "$b: SIGTERM: the command never wrote its pid (devwl-run $(kill -0 $pid 2>/dev/null && echo running || echo gone))"
	kill -TERM $pid
	wait $pid
	rc=$?
	[ "$rc" = 143 ] || fail "$b: SIGTERM: exited $rc"
	gone "$T/bg" "$b: SIGTERM"
	no_cgroup $pid "$b: SIGTERM"
done
unset DEVWL_BASELINE
[ $ran -gt 0 ] || echo "no baseline possible here: only --no-baseline checked" >&2

# Without a baseline the orphans are still found (we are their subreaper).
rm -f "$T/bg"
"$RUN" --no-baseline -- sh -c "sleep 1000 & echo \$! >$T/bg" 2>/dev/null || fail "--no-baseline"
gone "$T/bg" "--no-baseline background"
echo "PASS"
