#!/bin/bash
# A trapped unlink or rename that names no twin is not looked up (doc/DESIGN.md, "nodev
# mounts"): under devwl-run --userns every unlink and rename traps, and looking a path up
# as the caller can wait on a FUSE server that the workload itself stops. The workload
# (its own user and mount namespace, kernel mode) makes c 1:3 on its tmpfs, so a twin is
# bound at "null"; it mounts an ext2 image with fuse2fs, stops the server (SIGSTOP) and
# removes and renames files under the mount. Those calls then wait in the kernel, for the
# server, not in devwl-run: its next trapped call (a mknod of c 1:5) is answered at once,
# and the twin still behaves as a plain node (rm). The server resumed, the waiting calls
# end as the kernel says.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup baseline, user namespaces, FUSE"
command -v unshare >/dev/null || skip "no unshare(1)"
command -v fuse2fs >/dev/null || skip "no fuse2fs (Debian package fuse2fs)"
command -v mke2fs >/dev/null || skip "no mke2fs"
[ -c /dev/fuse ] || skip "no /dev/fuse on this host"
unshare -Urm true 2>/dev/null || skip "cannot create user and mount namespaces here"
host_can_baseline v2 || host_can_baseline v1 || skip "no device cgroup baseline here"
chmod 755 "$T"
mkdir "$T/m" "$T/f" "$T/dev"
mke2fs -q -F -t ext2 "$T/img" 8M || fail "mke2fs"
M=$T/m F=$T/f

# Inside: the twin, the FUSE mount (its own /dev/fuse node, which the kernel opens: c 10:229
# is allowed), files under it; the server stopped, an rm and an mv under it in the
# background, then the mknod that must not wait for them (5 s at most).
cat >"$T/in.sh" <<SH
mount -t tmpfs none $M || exit 9
mount -t tmpfs none $T/dev && mknod -m 666 $T/dev/fuse c 10 229 &&
	mount --bind $T/dev/fuse /dev/fuse || exit 8
echo twin \$($PROBE mknod $M/null c 1 3 0666)
fuse2fs -o fakeroot -f $T/img $F &
server=\$!
for i in \$(seq 50); do grep -q " $F fuse" /proc/self/mounts && break; sleep 0.1; done
echo x >$F/x && echo y >$F/y || exit 7
kill -STOP \$server
rm $F/x & rmpid=\$!
mv $F/y $F/z & mvpid=\$!
sleep 0.5
start=\$(date +%s%N)
echo stalled-mknod \$(timeout 5 $PROBE mknod $M/zero c 1 5 0666)
echo waited-ms \$(( (\$(date +%s%N) - start) / 1000000 ))
echo open-zero \$($PROBE open $M/zero rdwr)
rm $M/null && echo rm-twin ok
kill -CONT \$server
wait \$rmpid && echo rm-fuse ok
wait \$mvpid && echo mv-fuse ok
ls $F | tr '\n' ' ' | sed 's/^/listing /;s/ \$//'; echo
umount $F
wait \$server
SH
chmod 644 "$T/in.sh"

out=$(timeout 60 "$RUN" --mode=kernel --userns --allow 'c 10:229 rwm' -- unshare -Urm \
	sh "$T/in.sh" 2>&1)
rc=$?
[ $rc != 124 ] || fail "the workload did not end in 60 s (devwl-run waited on the stopped FUSE server?): $out"
line() { grep "^$1 " <<<"$out"; }
expect() { # NAME PATTERN
	[[ "$(line "$1")" == $2 ]] || fail "$1: expected '$2', got '$(line "$1")': $out"
}
expect twin "twin ok"
expect stalled-mknod "stalled-mknod ok"
expect open-zero "open-zero ok fd=* rdev=1:5 *"
expect rm-twin "rm-twin ok"
expect rm-fuse "rm-fuse ok"
expect mv-fuse "mv-fuse ok"
expect listing "listing lost+found z"
ms=$(line waited-ms | awk '{print $2}')
echo "ok - with the FUSE server stopped under an rm and an mv, devwl-run answered a mknod (${ms} ms); the twin's rm and the FUSE calls ended as the kernel says"
[ $rc = 0 ] || fail "devwl-run exited $rc: $out"
echo PASS
