#!/bin/bash
# The CONTINUE race of 49-run-race in both modes of devwl-run: authoritative (every open
# trapped, the baseline denies what devwl let through) and kernel (nothing trapped, the
# device cgroup holds the policy and judges the inode actually opened).
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup baseline"
race=${DEVWL_LIVE_BIN:?}/49-run-race
[ -x "$race" ] || fail "no $race: the build should have made it"
for mode in authoritative kernel; do
	DEVWL_MODE=$mode "$race"
	rc=$?
	[ $rc = 77 ] && skip "$mode: $race skipped"
	[ $rc = 0 ] || fail "$mode: the race leaked or did not run (exit $rc)"
done
echo "PASS"
