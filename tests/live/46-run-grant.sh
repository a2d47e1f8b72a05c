#!/bin/bash
# A granted device works although the baseline denies it to the command: devwl opens it
# on the caller's behalf and injects the fd (v1 and v2 baselines); a device open by the
# command that devwl did not grant stays refused.
set -u
# devwl opens on behalf: the authoritative mode (devwl-run --mode).
export DEVWL_MODE=authoritative
. "$(dirname "$0")/lib.sh"
live_init "mknod, device cgroup baseline"
mknod "$T/zero" c 1 5 && mknod "$T/mem" c 1 1 || skip "cannot mknod in $T"

ran=0 why=
for b in v1 v2; do
	# Where the host can make this baseline, devwl-run must use it.
	if ! host_can_baseline $b; then
		why="$why $b: $host_why;"
		echo "$b: the host cannot: $host_why" >&2
		continue
	fi
	out=$(DEVWL_BASELINE=$b "$RUN" -- sh -c "cat /proc/self/cgroup; \
		$PROBE open $T/zero rdonly ';' open $T/zero rdwr ';' open $T/mem rdonly" 2>&1)
	rc=$?
	[ "$rc" = 0 ] || fail "$b: exited $rc: $out"
	ran=$((ran + 1))
	if [ $b = v1 ]; then
		grep -q '^[0-9]*:devices:.*/devwl-run\.[0-9]*$' <<<"$out" || fail "v1: not in the cgroup: $out"
	else
		# In its own cgroup namespace, rooted at the baseline (56-run-escape-v2).
		grep -q '^0::/$' <<<"$out" || fail "v2: not in a cgroup namespace: $out"
	fi
	lines=$(grep -E '^(ok|E[A-Z]+)' <<<"$out")
	[[ "$(sed -n 1p <<<"$lines")" == "ok fd="*" rdev=1:5 type=c "*" read=00000000" ]] ||
		fail "$b: granted read of zero: $lines"
	[[ "$(sed -n 2p <<<"$lines")" == "ok fd="*" rdev=1:5 type=c "* ]] ||
		fail "$b: granted rdwr of zero: $lines"
	[ "$(sed -n 3p <<<"$lines")" = EPERM ] || fail "$b: mem not refused: $lines"
done
[ $ran -gt 0 ] || skip "no device cgroup baseline possible on this host:$why"
echo "PASS ($ran baseline kinds)"
