#!/bin/bash
# devwl-run --allow/--deny take a device name as a policy file does: "/dev/fuse rw" is
# the node's numbers by stat, "char-misc r" every major /proc/devices lists as misc. The
# command opens /dev/fuse only with the name allowed; a name naming no device here and a
# bad access are refused before anything runs, naming the option and the name.
set -u
. "$(dirname "$0")/lib.sh"
live_init "mknod, device cgroup baseline"
[ -c /dev/fuse ] || skip "no /dev/fuse on this host"
fuse=$(stat -c '%t:%T' /dev/fuse)
fuse=$((16#${fuse%:*})):$((16#${fuse#*:}))

open_fuse() { "$RUN" "$@" -- "$PROBE" open /dev/fuse rdwr 2>>"$T/run.err"; }
out=$(open_fuse) || fail "no rule: $out"
[ "$out" = EPERM ] || fail "without a rule /dev/fuse opened: $out"
out=$(open_fuse --allow '/dev/fuse rw') || fail "--allow '/dev/fuse rw': $out"
[[ "$out" == "ok fd="*"rdev=$fuse"* ]] || fail "--allow '/dev/fuse rw': $out"
# The access is the name's: read only.
out=$(open_fuse --allow '/dev/fuse r') || fail "--allow '/dev/fuse r': $out"
[ "$out" = EPERM ] || fail "--allow '/dev/fuse r' opened read-write: $out"
out=$(open_fuse --allow 'char-misc rw') || fail "--allow 'char-misc rw': $out"
[[ "$out" == "ok fd="*"rdev=$fuse"* ]] || fail "--allow 'char-misc rw': $out"
# --deny by name takes it back (from the same exception: the kernel's deny of 10:229
# leaves a 10:* alone).
out=$(open_fuse --allow '/dev/fuse rw' --deny '/dev/fuse w') || fail "--deny: $out"
[ "$out" = EPERM ] || fail "--deny '/dev/fuse w' left it writable: $out"

err=$("$RUN" --allow "$T/none rw" -- touch "$T/ran" 2>&1)
[ $? = 1 ] || fail "missing node: wrong exit status: $err"
grep -qF -- "--allow '$T/none rw'" <<<"$err" || fail "missing node: '$err'"
err=$("$RUN" --allow '/dev/fuse rq' -- touch "$T/ran" 2>&1)
[ $? = 2 ] || fail "bad access: wrong exit status: $err"
grep -qF "bad access" <<<"$err" || fail "bad access: '$err'"
[ ! -e "$T/ran" ] || fail "the command ran after a refused rule"
echo "PASS"
