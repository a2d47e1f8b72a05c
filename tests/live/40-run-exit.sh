#!/bin/bash
# devwl-run exits with the command's status: N for exit(N), 128+N for signal N; its own
# usage errors give 2, a command that cannot be found 127.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup baseline"
host_user_notif || skip "the kernel has no seccomp user notification"
out=$("$RUN" -- true 2>&1) || fail "devwl-run -- true: $out"

expect() {
	local want=$1 rc
	shift
	"$@" >/dev/null 2>&1
	rc=$?
	[ "$rc" = "$want" ] || fail "$* exited $rc, expected $want"
}

expect 0 "$RUN" -- true
expect 3 "$RUN" -- sh -c 'exit 3'
expect 3 "$RUN" sh -c 'exit 3' # options stop at the command, even without --
expect 137 "$RUN" -- sh -c 'kill -KILL $$'
expect 143 "$RUN" -- sh -c 'kill -TERM $$'
expect 127 "$RUN" -- /nonexistent/command
expect 2 "$RUN"
expect 2 "$RUN" --no-such-option -- true
expect 2 "$RUN" --baseline=v3 -- true
expect 2 env DEVWL_BASELINE=bogus "$RUN" -- true
expect 0 "$RUN" --help
expect 0 "$RUN" --version
"$RUN" --help | grep -q '^Usage: devwl-run' || fail "--help prints no usage"
"$RUN" --help | grep -q 'c 1:3, 1:5, 1:7, 1:8, 1:9, 5:0, 5:2, 136:\* rwm' ||
	fail "--help does not list the default set"
"$RUN" --version | grep -Eq '^devwl-run [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version"
# The command's own options are passed through untouched.
[ "$("$RUN" -- sh -c 'echo "$1"' sh --help)" = "--help" ] || fail "argv not passed through"
echo "PASS"
