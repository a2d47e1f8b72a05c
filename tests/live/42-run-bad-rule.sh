#!/bin/bash
# A rule that does not parse, or that the hierarchy refuses, is reported before anything
# runs: naming the option, the rule and why; the command never starts and no cgroup is made.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup baseline"

check() {
	local want=$1 pattern=$2 rc err
	shift 2
	err=$("$@" -- touch "$T/ran" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = "$want" ] || fail "$*: exited $rc, expected $want ($err)"
	grep -qF -- "$pattern" <<<"$err" || fail "$*: message '$err' lacks '$pattern'"
	[ ! -e "$T/ran" ] || fail "$*: the command ran"
}

check 2 "--allow 'c 1:x rw'" "$RUN" --allow 'c 1:x rw'
check 2 "minor must be" "$RUN" --allow 'c 1:x rw'
check 2 "--deny 'q 1:3 rw'" "$RUN" --allow 'c 1:3 r' --deny 'q 1:3 rw'
check 2 "--allow 'c 1:3'" "$RUN" --allow 'c 1:3'
# Refused by the hierarchy: /x inherits the default set, which does not hold c 4:1.
check 1 "--allow 'c 4:1 rw' on /x" "$RUN" --node /x --allow 'c 4:1 rw'
check 1 "parent" "$RUN" --node /x --allow 'c 4:1 rw'
check 2 "--node" "$RUN" --node 'not/a/path'
check 2 "CAP_BOGUS" "$RUN" --drop-cap CAP_BOGUS
check 2 "--connect" "$RUN" --connect /nonexistent --allow 'c 1:3 r'

# The same rules on a valid line run the command.
"$RUN" --node /x --deny 'c 1:3 rwm' --allow 'c 1:5 r' -- touch "$T/ran" || fail "valid rules refused"
[ -e "$T/ran" ] || fail "valid rules: the command did not run"
echo "PASS"
