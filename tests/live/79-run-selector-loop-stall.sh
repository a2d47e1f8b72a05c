#!/bin/bash
# Asking a loop device what backs it (LOOP_GET_STATUS64) waits on the backing file's file
# system: a loop device on a FUSE file whose server has stopped answering would hang the
# asker, and devwld asks from its loop thread. A workload allowed /dev/fuse and
# /dev/loop-control can make one. The question has a deadline: with such a device
# attached, loop:FILE of another image still resolves, within the deadline, to that
# image's device, and the stalled device matches nothing; a process resolving again and
# again (devwld, the what-if) waits for it once, not each time. Its server answering
# again, it is named by its own file as before.
set -u
. "$(dirname "$0")/lib.sh"
live_init "losetup, a FUSE mount"
command -v losetup >/dev/null || skip "no losetup (util-linux)"
command -v fuse2fs >/dev/null || skip "no fuse2fs (Debian package fuse2fs)"
command -v mke2fs >/dev/null || skip "no mke2fs"
[ -c /dev/fuse ] || skip "no /dev/fuse on this host"
[ -e /dev/loop-control ] || skip "no loop driver here (/dev/loop-control)"

numbers() { local mm; mm=$(stat -c '%t:%T' "$1"); echo "$((16#${mm%:*})):$((16#${mm#*:}))"; }

mkdir "$T/m"
mke2fs -q -F -t ext2 "$T/fs.img" 8M || fail "mke2fs"
GOOD= STALL= FUSE_PID=
cleanup() {
	[ -n "$FUSE_PID" ] && kill -CONT "$FUSE_PID" 2>/dev/null
	[ -n "$STALL" ] && losetup -d "$STALL" 2>/dev/null
	[ -n "$GOOD" ] && losetup -d "$GOOD" 2>/dev/null
	mountpoint -q "$T/m" && umount "$T/m"
	rm -rf "$T"
}
trap cleanup EXIT
fuse2fs -o fakeroot "$T/fs.img" "$T/m" >"$T/fuse.out" 2>&1 || skip "fuse2fs cannot mount here: $(cat "$T/fuse.out")"
FUSE_PID=$(pgrep -f "fuse2fs -o fakeroot $T/fs.img" | head -1)
[ -n "$FUSE_PID" ] || fail "no fuse2fs process for $T/m"
truncate -s 1M "$T/m/img" "$T/good.img" || fail "truncate"
STALL=$(losetup -f --show "$T/m/img" 2>"$T/losetup.err") ||
	skip "cannot attach a loop device to a FUSE file here: $(cat "$T/losetup.err")"
GOOD=$(losetup -f --show "$T/good.img") || fail "cannot attach good.img"
NS=$(numbers "$STALL")
NG=$(numbers "$GOOD")

# resolve FILE: the rules loop:FILE resolves to in devwl-run -v, one a line, within 20 s.
resolve() {
	timeout 20 "$RUN" -v --allow "loop:$1 r" -- true 2>&1 |
		sed -n "s|^devwl-run: --allow 'loop:$1 r': ||p"
	return "${PIPESTATUS[0]}"
}
got=$(resolve "$T/m/img") || fail "loop:$T/m/img with fuse2fs answering: status $?"
[ "$got" = "b $NS r" ] || fail "loop:$T/m/img resolved to '$got', not $STALL's b $NS r"

# The stall is bounded whatever becomes of this test (a timeout kills it before its
# trap): until fuse2fs answers, every LOOP_GET_STATUS64 of the device on this host hangs
# (losetup -a, udev's blkid), so a watchdog of its own session resumes it after 30 s.
kill -STOP "$FUSE_PID" || fail "kill -STOP fuse2fs"
setsid sh -c "sleep 30; kill -CONT $FUSE_PID" </dev/null >/dev/null 2>&1 &
# LeakSanitizer (the ASan build) stops every thread at exit with ptrace, and a thread
# waiting on a FUSE answer never stops: the question thread would hang the process.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
# Past fuse2fs's attribute timeout (1 s): the kernel asks the server again.
sleep 1.5
start=$(date +%s%N)
got=$(resolve "$T/good.img") || fail "loop:good.img with a stalled loop device attached: status $? (hung?)"
ms=$((($(date +%s%N) - start) / 1000000))
[ "$got" = "b $NG r" ] || fail "loop:good.img resolved to '$got', not b $NG r"
echo "# devwl-run with $STALL stalled: ${ms} ms"
# One process resolving six times (the what-if, as devwld does for every uevent): the
# stalled device costs the deadline (1 s) once, then is skipped while its question hangs.
CTL=$DEVWL_BUILD/tools/devwlctl
{
	echo "mkdir /c"
	echo "deny /c a"
	for _ in 1 2 3 4 5 6; do echo "allow /c loop:$T/good.img r"; done
	echo "list /c"
} >"$T/batch.in"
start=$(date +%s%N)
out=$(timeout 20 "$CTL" batch <"$T/batch.in" 2>"$T/batch.err") || fail "batch: status $? $(cat "$T/batch.err")"
ms=$((($(date +%s%N) - start) / 1000000))
[ "$(grep -c '^ok$' <<<"$out")" = 8 ] && grep -qxF "b $NG r" <<<"$out" ||
	fail "batch answered '$out' $(cat "$T/batch.err")"
grep -qF "b $NS " <<<"$out" && fail "the stalled $STALL was granted: $out"
echo "# six resolutions in one process with $STALL stalled: ${ms} ms"
[ "$ms" -lt 4000 ] || fail "six resolutions took $ms ms: the stalled device was asked again"
kill -CONT "$FUSE_PID" || fail "kill -CONT fuse2fs"
got=$(resolve "$T/m/img") || fail "loop:$T/m/img once fuse2fs answers again: status $?"
[ "$got" = "b $NS r" ] || fail "loop:$T/m/img resolved to '$got' once fuse2fs answers again"
echo "PASS"
