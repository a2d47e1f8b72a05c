#!/bin/bash
# A root command cannot rewrite its v1 baseline: writing "a" (or one device) to its own
# devices.allow fails, and so does creating a child cgroup to hold rules of its own; while
# it runs, the baseline's devices.list is still exactly its allow list (--deny a: empty),
# and a denied node opened O_PATH and reopened through /proc/<pid>/fd/N is refused.
set -u
export DEVWL_MODE=authoritative
. "$(dirname "$0")/lib.sh"
live_init "device cgroup"
V1=$(awk '$9 == "cgroup" && $NF ~ /(^|,)devices(,|$)/ {print $5; exit}' /proc/self/mountinfo)
[ -n "$V1" ] || skip "no cgroup-v1 devices controller mounted"
own=$(awk -F: '$2 ~ /(^|,)devices(,|$)/ {print $3}' /proc/self/cgroup)
[ "$own" = / ] && own=
mknod -m 600 "$T/kmsg" c 1 11 || skip "cannot mknod in $T"

cat >"$T/cmd.sh" <<EOS
me=\$\$
cg=$V1\$(awk -F: '\$2 ~ /(^|,)devices(,|\$)/ {print \$3}' /proc/self/cgroup)
echo a >\$cg/devices.allow && echo "allowed a"
echo 'c 1:11 rwm' >\$cg/devices.allow && echo "allowed c 1:11"
mkdir \$cg/sub 2>/dev/null && echo "made a child cgroup"
$(hold_here cmd)
exec $PROBE open $T/kmsg path ';' open /proc/\$me/fd/%L rdonly
EOS
DEVWL_BASELINE=v1 "$RUN" --deny a --allow 'c 136:* rw' -- sh "$T/cmd.sh" >"$T/out" 2>"$T/err" &
run=$!
pid=$(await_pid cmd $run)
[ -n "$pid" ] || fail "the command never got going: $(cat "$T/out" "$T/err")"
list=$(cat "$V1$own/devwl-run.$run/devices.list")
touch "$T/cmd.go"
wait $run
rc=$?
[ "$list" = 'c 136:* rw' ] ||
	fail "the command rewrote its baseline: devices.list '$list'; $(cat "$T/out")"
[ "$rc" = 0 ] || fail "devwl-run exited $rc: $(cat "$T/err")"
grep -q "allowed\|made" "$T/out" && fail "a rewrite step succeeded: $(cat "$T/out")"
res=$(grep -E '^(ok|E[A-Z]+)' "$T/out")
[[ "$(sed -n 1p <<<"$res")" == "ok fd="*" rdev=1:11 "* ]] || fail "O_PATH open: $res"
[ "$(sed -n 2p <<<"$res")" = EPERM ] || fail "the reopen reached the device: $res"
echo "PASS"
