#!/bin/bash
# A root command cannot leave a cgroup-v2 baseline: not by writing its pid to
# the root cgroup's cgroup.procs, nor by clone3(CLONE_INTO_CGROUP) with a directory of the
# hierarchy, which needs no writable mount, nor by opening the top of the hierarchy by
# file handle (from a user namespace of its own either); the command sees only its own
# cgroup namespace, rooted at the baseline. While they run, the kernel still has the command and the cloned
# child in devwl-run.<pid>, and a denied node reopened through /proc/<pid>/fd/N is refused.
set -u
. "$(dirname "$0")/lib.sh"
live_init "cgroup2, BPF"
host_can_v2_devices || skip "no cgroup-v2 device program possible on this host: $host_why"
V2=$(host_cgroup2)
own=$(awk -F: '$1 == 0 {print $3}' /proc/self/cgroup)
[ "$own" = / ] && own=
mknod -m 600 "$T/kmsg" c 1 11 || skip "cannot mknod in $T"
# The handle of the hierarchy's top as we see it: no mount the command has shows it.
top=$("$PROBE" gethandle "$V2")
[[ "$top" == [0-9]*" "[0-9a-f]* ]] || skip "no file handles for cgroup2 here: $top"

cat >"$T/cmd.sh" <<EOS
me=\$\$
echo \$me >$V2/cgroup.procs && echo "moved by cgroup.procs"
unshare -Ur sh -c "mount -o remount,bind,rw $V2 && echo remounted" 2>/dev/null
echo "handle: \$($PROBE openhandle $V2 $top directory)"
echo "handle in a user namespace: \$(unshare -Urm $PROBE openhandle $V2 $top directory)"
$PROBE clone-into $V2 sh -c '$(hold_here child)'
$(hold_here cmd)
exec $PROBE open $T/kmsg path ';' open /proc/\$me/fd/%L rdonly
EOS
"$RUN" --baseline=v2 -- sh "$T/cmd.sh" >"$T/out" 2>"$T/err" &
run=$!
child=$(await_pid child $run)
[ -n "$child" ] || fail "the cloned child never got going: $(cat "$T/out" "$T/err")"
cg_child=$(awk -F: '$1 == 0 {print $3}' "/proc/$child/cgroup")
touch "$T/child.go"
pid=$(await_pid cmd $run)
[ -n "$pid" ] || fail "the command never got going: $(cat "$T/out" "$T/err")"
cg=$(awk -F: '$1 == 0 {print $3}' "/proc/$pid/cgroup")
touch "$T/cmd.go"
wait $run
rc=$?
[ "$cg" = "$own/devwl-run.$run" ] || fail "the command left its baseline: it is in '$cg'; $(cat "$T/out")"
[ "$cg_child" = "$own/devwl-run.$run" ] ||
	fail "clone3(CLONE_INTO_CGROUP) left the baseline: the child is in '$cg_child'"
[ "$rc" = 0 ] || fail "devwl-run exited $rc: $(cat "$T/err")"
grep -q "moved\|remounted\|handle.*: ok" "$T/out" && fail "an escape step succeeded: $(cat "$T/out")"
res=$(grep -E '^(ok fd|E[A-Z]+)' "$T/out")
[[ "$(sed -n 1p <<<"$res")" == "ok fd="*" rdev=1:11 "* ]] || fail "O_PATH open: $res"
[ "$(sed -n 2p <<<"$res")" = EPERM ] || fail "the reopen reached the device: $res"
echo "PASS"
