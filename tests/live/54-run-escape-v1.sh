#!/bin/bash
# A root command cannot leave its v1 baseline: writing its pid to cgroup.procs or
# tasks of the root devices cgroup fails, as does making the hierarchy writable again from
# a user namespace of its own, and while it runs the kernel still has it in
# devwl-run.<pid>. So the attack that needed the escape fails too: a denied node opened
# O_PATH (never trapped) and reopened through /proc/<pid>/fd/N is refused.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup"
V1=$(awk '$9 == "cgroup" && $NF ~ /(^|,)devices(,|$)/ {print $5; exit}' /proc/self/mountinfo)
[ -n "$V1" ] || skip "no cgroup-v1 devices controller mounted"
own=$(awk -F: '$2 ~ /(^|,)devices(,|$)/ {print $3}' /proc/self/cgroup)
[ "$own" = / ] && own=
mknod -m 600 "$T/kmsg" c 1 11 || skip "cannot mknod in $T"

cat >"$T/cmd.sh" <<EOS
me=\$\$
echo \$me >$V1/cgroup.procs && echo "moved by cgroup.procs"
echo \$me >$V1/tasks && echo "moved by tasks"
unshare -Ur sh -c "mount -o remount,bind,rw $V1 && echo remounted; echo \$me >$V1/cgroup.procs && echo 'moved from a user namespace'" 2>/dev/null
$(hold_here cmd)
exec $PROBE open $T/kmsg path ';' open /proc/\$me/fd/%L rdonly
EOS
DEVWL_BASELINE=v1 "$RUN" -- sh "$T/cmd.sh" >"$T/out" 2>"$T/err" &
run=$!
pid=$(await_pid cmd $run)
[ -n "$pid" ] || fail "the command never got going: $(cat "$T/out" "$T/err")"
cg=$(awk -F: '$2 ~ /(^|,)devices(,|$)/ {print $3}' "/proc/$pid/cgroup")
touch "$T/cmd.go"
wait $run
rc=$?
[ "$cg" = "$own/devwl-run.$run" ] || fail "the command left its baseline: it is in '$cg'; $(cat "$T/out")"
[ "$rc" = 0 ] || fail "devwl-run exited $rc: $(cat "$T/err")"
grep -q "moved\|remounted" "$T/out" && fail "an escape step succeeded: $(cat "$T/out")"
grep -q "Read-only file system" "$T/err" || fail "cgroup.procs was not read-only: $(cat "$T/err")"
res=$(grep -E '^(ok|E[A-Z]+)' "$T/out")
[[ "$(sed -n 1p <<<"$res")" == "ok fd="*" rdev=1:11 "* ]] || fail "O_PATH open: $res"
[ "$(sed -n 2p <<<"$res")" = EPERM ] || fail "the reopen reached the device: $res"
echo "PASS"
