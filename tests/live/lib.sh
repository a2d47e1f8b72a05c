# Sourced by the live shell tests: the verdict helpers and the common set-up.
# shellcheck shell=bash

skip() {
	echo "SKIP: $*" >&2
	exit 77
}
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# What the host can do, asked without devwl: host_can_baseline v1|v2, host_cgroup2...
. "$(dirname "${BASH_SOURCE[0]}")/../host-probe.sh"

# live_init WHY-ROOT: skip unless root; set RUN (devwl-run) and PROBE (tests/live/probe)
# and check they were built; T, a temporary directory removed on exit.
live_init() {
	[ "$(id -u)" = 0 ] || skip "needs root ($1)"
	RUN=${DEVWL_BUILD:?}/tools/devwl-run
	PROBE=$DEVWL_BUILD/tests/live/probe
	[ -x "$RUN" ] || fail "no $RUN: the build should have made it"
	[ -x "$PROBE" ] || fail "no $PROBE: the build should have made it"
	T=$(mktemp -d)
	trap 'rm -rf "$T"' EXIT
}

# hold_here NAME: a line for a command's script that writes its pid to $T/NAME.pid and
# waits for $T/NAME.go, so the test can look at the running process from outside.
hold_here() {
	echo "echo \$\$ >$T/$1.pid; while [ ! -e $T/$1.go ]; do sleep 0.05; done"
}
# await_pid NAME PID: wait until the command has written $T/NAME.pid (or PID, the
# devwl-run behind it, is gone), and print the pid it wrote.
await_pid() {
	while [ ! -s "$T/$1.pid" ] && kill -0 "$2" 2>/dev/null; do sleep 0.05; done
	cat "$T/$1.pid" 2>/dev/null
}
