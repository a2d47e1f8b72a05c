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

# live_init WHY-ROOT: skip unless root; set RUN (devwl-run) and PROBE (tests/live/probe)
# and check they were built; T, a temporary directory removed on exit.
live_init() {
	[ "$(id -u)" = 0 ] || skip "needs root ($1)"
	RUN=${DEVWL_BUILD:?}/tools/devwl-run
	PROBE=$DEVWL_BUILD/tests/live/probe
	[ -x "$RUN" ] || skip "no $RUN"
	[ -x "$PROBE" ] || skip "no $PROBE"
	T=$(mktemp -d)
	trap 'rm -rf "$T"' EXIT
}
