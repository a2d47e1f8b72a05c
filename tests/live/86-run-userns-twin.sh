#!/bin/bash
# A node with a twin behaves as a plain one (doc/DESIGN.md, "nodev mounts"): a workload in
# its own user and mount namespace under devwl-run --mode=kernel --userns makes c 1:3 on
# its tmpfs (nodev), opens it (the kernel opens it: no open traps in kernel mode), rm's it,
# makes it again (no EEXIST: the name is free), opens it, mv's it and opens it at the new
# name (the twin moved with it), rm's that; a mv the kernel refuses (no such directory)
# leaves the node opening at its old name. A node granted for mknod only (c 1:11 m) is
# refused at open by the kernel's device cgroup, before and after a mv. Without --userns
# (nothing but mknod trapped) rm still fails EBUSY: what the trap changes. Each twin devwl
# unmounted is gone from the namespace's mountinfo.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup baseline, user namespaces"
command -v unshare >/dev/null || skip "no unshare(1)"
unshare -Urm true 2>/dev/null || skip "cannot create user and mount namespaces here"
host_can_baseline v2 || host_can_baseline v1 || skip "no device cgroup baseline here"
chmod 755 "$T"
mkdir "$T/m"
M=$T/m

# step NAME CMD...: run CMD, print "NAME ok" or "NAME ERRNO-ish text" on one line.
inner="mount -t tmpfs none $M || exit 9
step() { n=\$1; shift; if out=\$(\"\$@\" 2>&1); then echo \"\$n ok \$out\"; else echo \"\$n fail \$out\"; fi; }
twins() { grep -c \" $M/\" /proc/self/mountinfo; }
step mknod1 $PROBE mknod $M/null c 1 3 0666
step open1 $PROBE open $M/null rdwr
step rm1 rm $M/null
echo mounts1 \$(twins)
step mknod2 $PROBE mknod $M/null c 1 3 0666
step open2 $PROBE open $M/null rdwr
step mvbad mv $M/null $M/nodir/x
step open2b $PROBE open $M/null rdwr
step mv mv $M/null $M/moved
echo mounts2 \$(twins)
step open3 $PROBE open $M/moved rdwr
step openold $PROBE open $M/null rdwr
step rm2 rm $M/moved
echo mounts3 \$(twins)
step kmknod $PROBE mknod $M/kmsg c 1 11 0600
step kopen $PROBE open $M/kmsg rdonly
step kmv mv $M/kmsg $M/kmsg2
step kopen2 $PROBE open $M/kmsg2 rdonly
step krm rm $M/kmsg2
echo mounts4 \$(twins)"

out=$("$RUN" --mode=kernel --userns --allow 'c 1:11 m' -- unshare -Urm sh -c "$inner" 2>&1)
rc=$?
[ $rc = 0 ] || fail "devwl-run exited $rc: $out"
line() { grep "^$1 " <<<"$out"; }
expect() { # NAME PATTERN
	[[ "$(line "$1")" == $2 ]] || fail "$1: expected '$2', got '$(line "$1")': $out"
}
expect mknod1 "mknod1 ok ok"
expect open1 "open1 ok ok fd=* rdev=1:3 *"
expect rm1 "rm1 ok*"
expect mounts1 "mounts1 0"
expect mknod2 "mknod2 ok ok"
expect open2 "open2 ok ok fd=* rdev=1:3 *"
expect mvbad "mvbad fail *"
expect open2b "open2b ok ok fd=* rdev=1:3 *"
expect mv "mv ok*"
expect mounts2 "mounts2 1"
expect open3 "open3 ok ok fd=* rdev=1:3 *"
expect openold "openold * ENOENT"
expect rm2 "rm2 ok*"
expect mounts3 "mounts3 0"
expect kmknod "kmknod ok ok"
expect kopen "kopen * EPERM"
expect kmv "kmv ok*"
expect kopen2 "kopen2 * EPERM"
expect krm "krm ok*"
expect mounts4 "mounts4 0"

# Without --userns unlink and rename do not trap: the twin is a mount point, EBUSY.
out=$("$RUN" --mode=kernel -- unshare -Urm sh -c "mount -t tmpfs none $M && \
	$PROBE mknod $M/null c 1 3 0666 && rm $M/null" 2>&1)
[ $? != 0 ] && [[ "$out" == *"busy"* ]] ||
	fail "without --userns, rm of a twin should fail EBUSY: $out"
echo PASS
