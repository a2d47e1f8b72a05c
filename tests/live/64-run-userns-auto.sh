#!/bin/bash
# devwl-run run as root of a user namespace (unshare -Ur: euid 0, but no privilege over
# the host's cgroups): --mode=auto cannot program a device cgroup there, so it says so
# (stderr and the audit's mode line name the user namespace) and runs authoritative: a
# granted device opens, a denied one that the kernel alone would open gets EPERM. Before,
# euid 0 was taken for privilege and the run failed.
set -u
. "$(dirname "$0")/lib.sh"
live_init "to create a user namespace mapping root"
command -v unshare >/dev/null || skip "no unshare(1)"
unshare -Ur true 2>/dev/null || skip "cannot create user namespaces here"
[ -r /dev/full ] && [ -r /dev/zero ] || skip "no /dev/zero or /dev/full"
chmod 755 "$T"

out=$(unshare -Ur "$RUN" --mode=auto --audit "$T/audit" --deny 'c 1:7 rwm' -- \
	"$PROBE" open /dev/zero rdonly ';' open /dev/full rdonly 2>"$T/err")
rc=$?
[ "$rc" = 0 ] || fail "exited $rc: $(cat "$T/err")"
grep -q "in a user namespace" "$T/err" || fail "no word of the user namespace: $(cat "$T/err")"
grep -q '"event":"mode","mode":"authoritative","reason":"in a user namespace' "$T/audit" ||
	fail "audit does not say authoritative: $(head -1 "$T/audit")"
[[ "$(sed -n 1p <<<"$out")" == "ok fd="*" rdev=1:5 "*"read=00000000" ]] || fail "zero: $out"
[ "$(sed -n 2p <<<"$out")" = EPERM ] || fail "full not refused: $out"
grep -q '"device":"c 1:7".*"decision":"deny"' "$T/audit" || fail "no deny in the audit"
# Natively the denied device opens there: the EPERM is devwl's.
[[ "$(unshare -Ur "$PROBE" open /dev/full rdonly)" == "ok fd="* ]] || skip "full not openable natively"
# --mode=kernel cannot be had there: a clear failure, not a silent fallback.
unshare -Ur "$RUN" --mode=kernel -- true 2>"$T/err2" && fail "--mode=kernel ran in a user namespace"
grep -q "cannot program the device cgroup" "$T/err2" || fail "--mode=kernel: $(cat "$T/err2")"
# Root devwl-run, a command that makes its own user namespace later: not seen at start,
# so auto picks kernel where it can; a node made there (nodev) is bound over by one the
# kernel opens, so it opens with no open trapped, and there is nothing to warn about.
unshare -Urm true 2>/dev/null || skip "cannot create user and mount namespaces here"
mkdir "$T/m"
inner="mount -t tmpfs none $T/m && $PROBE mknod $T/m/zero c 1 5 0600 ';' open $T/m/zero rdonly"
out=$("$RUN" --mode=auto --audit "$T/audit2" -- unshare -Urm sh -c "$inner" 2>"$T/err3")
grep -q '"mode":"kernel"' "$T/audit2" || fail "auto did not pick kernel: $(head -1 "$T/audit2")"
[ "$(sed -n 1p <<<"$out")" = ok ] || fail "granted mknod in the user namespace: $out"
[[ "$(sed -n 2p <<<"$out")" == "ok fd="*" rdev=1:5 "* ]] || fail "kernel mode, nodev: $out"
grep -q "made a device node in a user namespace" "$T/err3" &&
	fail "warned though the node was bound: $(cat "$T/err3")"
# Asked for, authoritative opens it too (tests/live/15 covers the details).
out=$("$RUN" --mode=authoritative -- unshare -Urm sh -c "$inner" 2>&1)
[[ "$(sed -n 2p <<<"$out")" == "ok fd="*" rdev=1:5 "* ]] || fail "authoritative, nodev: $out"
echo PASS
