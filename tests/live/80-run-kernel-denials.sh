#!/bin/bash
# What the kernel refuses in kernel mode reaches devwl-run's audit (devwl-run(1), AUDIT):
# on cgroup v2 the device program records each denial in a ring buffer, and devwl-run
# writes it as a "deny" line with reason "kernel device program (kernel mode)", the
# device, the access asked, the rule that refuses it and the process (where the kernel
# lets device programs ask for it: the pid of the mknod the same process made). A granted
# open is reported too, as an "allow" line marked "source":"kernel" with its count (the
# program reports allowed accesses with --audit in kernel mode); a denied mknod is still
# trapped and refused by devwl ("policy").
# On cgroup v1 the controller tells nobody: no such line, as the page says, but on a
# hybrid host (a cgroup2 hierarchy beside it), where devwl-run's reporter on the run's
# cgroup2 cgroup records what the v1 rules decide: the same lines as on v2, the v1 rules
# refusing (EPERM), and the run's cgroup2 cgroup gone after it.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup"
command -v jq >/dev/null || skip "no jq"
chmod 755 "$T"
mknod -m 666 "$T/zero" c 1 5 && mknod -m 666 "$T/kmsg" c 1 11 || skip "cannot mknod in $T"
reason="kernel device program (kernel mode)"
ran=0 why=
for b in v1 v2; do
	if ! host_can_baseline $b; then
		why="$why $b: $host_why;"
		echo "$b: the host cannot: $host_why" >&2
		continue
	fi
	audit=$T/audit.$b
	"$RUN" --baseline=$b --mode=kernel --audit "$audit" -- \
		"$PROBE" open "$T/zero" rdonly ';' open "$T/kmsg" rdonly ';' \
		open "$T/kmsg" rdwr ';' mknod "$T/no.$b" c 1 11 0600 >"$T/out" 2>"$T/err" &
	pid_run=$!
	wait $pid_run
	rc=$?
	out=$(cat "$T/out")
	[ "$rc" = 0 ] || fail "$b: exited $rc: $(cat "$T/err")"
	ran=$((ran + 1))
	mapfile -t l <<<"$out"
	[[ "${l[0]}" == "ok fd="*" rdev=1:5 "* ]] || fail "$b: zero not opened: $out"
	[ "${l[1]}" = EPERM ] && [ "${l[2]}" = EPERM ] && [ "${l[3]}" = EPERM ] ||
		fail "$b: kmsg not refused: $out"
	pid=$(jq -r 'select(.syscall != null and (.syscall | startswith("mknod"))) | .pid' "$audit")
	[[ "$pid" =~ ^[0-9]+$ ]] || fail "$b: no mknod line with a pid: $(cat "$audit")"
	# (-s: jq 1.6 -e says 4 when the last line selects nothing.)
	jq -e -s 'map(select(.syscall != null and (.syscall | startswith("mknod")))) |
		length == 1 and .[0].reason == "policy"' "$audit" >/dev/null ||
		fail "$b: the mknod line: $(cat "$audit")"
	kernel=$(jq -c --arg r "$reason" 'select(.reason == $r and .decision == "deny")' "$audit")
	allowed=$(jq -c --arg r "$reason" 'select(.reason == $r and .decision == "allow")' "$audit")
	if [ $b = v1 ] && ! host_cgroup2 >/dev/null; then
		[ -z "$kernel" ] || fail "v1: a kernel denial recorded, where v1 tells nobody: $kernel"
		echo "ok - v1: the kernel refused unrecorded, as devwl-run(1) says"
		continue
	fi
	if ! host_can_record; then
		[ -z "$kernel" ] || fail "$b: a kernel denial recorded where the host cannot: $kernel"
		echo "ok - $b: this kernel cannot record denials ($host_why): none recorded"
		continue
	fi
	if [ $b = v1 ]; then
		left=$(awk '$0 ~ / - cgroup2 / {print $5}' /proc/self/mountinfo | while read -r m; do
			find "$m" -maxdepth 3 -type d -name "devwl-run.$pid_run" 2>/dev/null; done)
		[ -z "$left" ] || fail "v1: the run's cgroup2 cgroup is left: $left"
	fi
	want_pid=$pid
	host_can_record pid || want_pid=null
	# One line per denial: kmsg for r, then for rw; nothing of zero, nothing for mknod.
	[ "$(jq -s length <<<"$kernel")" = 2 ] || fail "$b: not two kernel denials: $kernel"
	jq -e -s --argjson pid "$want_pid" '
		(.[0].access == "r" and .[1].access == "rw") and
		all(.[]; .device == "c 1:11" and .decision == "deny" and .errno == "EPERM" and
			.syscall == null and .path == null and .pid == $pid and
			(.rule | test("^no rule allows it")))' <<<"$kernel" >/dev/null ||
		fail "$b: the kernel denials (pid $want_pid): $kernel"
	echo "ok - $b: the kernel's denials recorded with pid $want_pid: $kernel"
	# The granted open of zero: one report, the kernel's, counted once.
	jq -e -s 'length == 1 and .[0].device == "c 1:5" and .[0].access == "r" and
		.[0].source == "kernel" and .[0].count == 1' <<<"$allowed" >/dev/null ||
		fail "$b: the granted open of zero not reported once: ${allowed:-none}"
	echo "ok - $b: the granted open reported by the kernel: $allowed"
done
[ $ran -gt 0 ] || skip "no device cgroup baseline possible on this host:$why"
echo "PASS ($ran baselines)"
