#!/bin/bash
# devwl-run's kernel mode: the policy is programmed into the device cgroup (v1 writes, or
# a v2 device program), opens are not trapped at all, the kernel refuses what the policy
# denies and grants what it allows, and a granted mknod is still made on the caller's
# behalf. auto picks the kernel mode where it can and says so in the audit.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup"
chmod 755 "$T"
mknod -m 666 "$T/zero" c 1 5 && mknod -m 666 "$T/kmsg" c 1 11 || skip "cannot mknod in $T"
ran=0 why=
for b in v1 v2; do
	# Where the host can make this baseline, devwl-run must use it.
	if ! host_can_baseline $b; then
		why="$why $b: $host_why;"
		echo "$b: the host cannot: $host_why" >&2
		continue
	fi
	out=$("$RUN" --baseline=$b --mode=auto --audit "$T/audit.$b" -- \
		"$PROBE" open "$T/zero" rdonly ';' open "$T/kmsg" rdonly ';' \
		mknod "$T/made.$b" c 1 5 0600 ';' mknod "$T/no.$b" c 1 11 0600 2>"$T/err")
	rc=$?
	[ "$rc" = 0 ] || fail "$b: exited $rc: $(cat "$T/err")"
	ran=$((ran + 1))
	mapfile -t l <<<"$out"
	[[ "${l[0]}" == "ok fd="*" rdev=1:5 "* ]] || fail "$b: zero not opened: $out"
	[ "${l[1]}" = EPERM ] || fail "$b: kmsg not refused by the kernel: $out"
	[ "${l[2]}" = ok ] || fail "$b: granted mknod: $out"
	[ "${l[3]}" = EPERM ] || fail "$b: denied mknod: $out"
	[ "$(stat -c %t:%T "$T/made.$b")" = 1:5 ] || fail "$b: the node made is wrong"
	head -1 "$T/audit.$b" | grep -q "\"mode\":\"kernel\",\"cgroup\":\"${b}\"" ||
		fail "$b: the audit does not say kernel mode: $(head -1 "$T/audit.$b")"
	# Nothing but mknod was trapped: no open in the audit.
	if grep -q '"syscall":"open' "$T/audit.$b"; then
		fail "$b: an open was trapped: $(grep '"syscall":"open' "$T/audit.$b" | head -1)"
	fi
	grep -q '"syscall":"mknod.*"decision":"allow"' "$T/audit.$b" || fail "$b: no mknod grant"
done
[ $ran -gt 0 ] || skip "no device cgroup baseline possible on this host:$why"
# --baseline=auto takes the v1 devices controller wherever it is mounted (a hybrid host;
# devwl-run(1) says why), cgroup2 otherwise (tests/v2only.sh runs this test so too).
want=v2
host_v1 devices >/dev/null && host_can_v1_devices && want=v1
"$RUN" --mode=auto --audit "$T/audit.auto" -- true 2>"$T/err" || fail "auto: $(cat "$T/err")"
head -1 "$T/audit.auto" | grep -q "\"mode\":\"kernel\",\"cgroup\":\"$want\"" ||
	fail "auto on this host should be kernel on $want: $(head -1 "$T/audit.auto")"
# Forcing the kernel mode without a cgroup fails rather than running unprotected.
"$RUN" --no-baseline --mode=kernel -- true 2>"$T/err2" && fail "--mode=kernel --no-baseline ran"
grep -q "cannot program the device cgroup" "$T/err2" || fail "no reason given: $(cat "$T/err2")"
echo "PASS ($ran baselines; auto chose $want)"
