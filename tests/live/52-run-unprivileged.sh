#!/bin/bash
# An unprivileged user gets no cgroup or BPF program: devwl-run says at start that only
# deny-only enforcement is possible and runs the command anyway, with denied devices
# still refused and devices the user may open anyway still granted.
set -u
. "$(dirname "$0")/lib.sh"
live_init "to create the nodes and switch to nobody"
command -v setpriv >/dev/null || skip "no setpriv"
chmod 755 "$T"
mknod -m 666 "$T/mem" c 1 1 && mknod -m 666 "$T/zero" c 1 5 || skip "cannot mknod in $T"
nobody() { as_nobody "$@"; }
# What nobody runs must be in its reach (a 0700 checkout's build tree is not).
RUN=$(for_others "$RUN") && PROBE=$(for_others "$PROBE") || exit 1

out=$(nobody "$RUN" -- "$PROBE" open "$T/zero" rdonly ';' open "$T/mem" rdonly ';' open "$T/zero" rdonly 2>"$T/err")
rc=$?
[ "$rc" = 0 ] || fail "exited $rc: $(cat "$T/err")"
grep -q "only deny-only enforcement is possible" "$T/err" || fail "no warning: $(cat "$T/err")"
[[ "$(sed -n 1p <<<"$out")" == "ok fd="*" rdev=1:5 "*"read=00000000" ]] || fail "zero: $out"
[ "$(sed -n 2p <<<"$out")" = EPERM ] || fail "mem not refused: $out"
# Without a baseline nothing but devwl stands between an O_PATH fd (never trapped) of a
# denied device and its reopen through a magic link: refused; an allowed one granted as
# asked, and not upgraded to write.
out=$(nobody "$RUN" --deny "c 1:5 w" -- "$PROBE" open "$T/mem" path ';' open "/proc/self/fd/%L" rdonly \
	';' close 0 ';' open "$T/mem" path ';' open /dev/stdin rdonly \
	';' open "/proc/%P/fd/%L" rdonly ';' open "$T/zero" path ';' open /proc/self/fd/%L rdonly \
	';' open /proc/self/fd/%L wronly 2>"$T/err")
rc=$?
[ "$rc" = 0 ] || fail "reopen: exited $rc: $(cat "$T/err")"
[ "$(sed -n 2p <<<"$out")" = EPERM ] || fail "mem reopened through /proc/self/fd: $out"
[ "$(sed -n 5p <<<"$out")" = EPERM ] || fail "mem reopened through /dev/stdin: $out"
[ "$(sed -n 6p <<<"$out")" = EPERM ] || fail "mem reopened through /proc/PID/fd: $out"
[[ "$(sed -n 8p <<<"$out")" == "ok fd="*" rdev=1:5 "*"read=00000000" ]] || fail "zero reopen: $out"
[ "$(sed -n 9p <<<"$out")" = EPERM ] || fail "read-only zero reopened for writing: $out"
# Asking for a baseline explicitly does not make it possible.
nobody "$RUN" --baseline=v1 -- true 2>"$T/err2" || fail "--baseline=v1 as nobody: $(cat "$T/err2")"
grep -q "deny-only" "$T/err2" || fail "--baseline=v1 as nobody: no warning"
# A lookup refused to devwl is not left to the kernel: root of a user namespace of its
# own may search a directory of its own that devwl (nobody) may not, and a CONTINUE would
# let it reach a denied device through a symlink there.
nobody unshare -Ur true 2>/dev/null ||
	skip "the rest passed; no unprivileged user namespaces here for the refused lookup"
mknod -m 666 "$T/full" c 1 7 || fail "mknod full"
mkdir -m 777 "$T/u"
# shellcheck disable=SC2016
out=$(nobody "$RUN" --deny "c 1:7 rwm" -- unshare -Ur sh -c '
	mkdir "$1/d" && ln -s "$1/../full" "$1/d/l" && chmod 000 "$1/d" || exit 9
	"$2" open "$1/d/l" rdonly' sh "$T/u" "$PROBE" 2>"$T/err")
rc=$?
[ "$rc" = 0 ] || fail "refused lookup: exited $rc: $(cat "$T/err")"
[ "$out" = EACCES ] || fail "a denied device through a directory devwl may not search: $out"
echo "PASS"
