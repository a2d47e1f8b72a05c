#!/bin/bash
# A real program that uses a granted device, in a user namespace: fuse2fs mounts an ext2
# image through /dev/fuse inside `unshare -Urm`, writes a file and reads it back. FUSE
# takes a /dev/fuse fd only from an opener in the mounter's user namespace (f_cred), so
# this works only if the kernel opened the device in the caller's own context, as a grant
# must (doc/DESIGN.md, "Grants"): under devwl-run in authoritative and kernel mode, with
# the host's /dev/fuse and with a node the command makes in a /dev of its own (nodev: devwl
# binds a node the kernel opens over it). Without the grant, the mount fails. Before, an
# authoritative grant was opened by devwl itself and the mount failed with EINVAL.
set -u
. "$(dirname "$0")/lib.sh"
live_init "the baseline cgroup, user namespaces"
command -v fuse2fs >/dev/null || skip "no fuse2fs (Debian package fuse2fs)"
command -v mke2fs >/dev/null || skip "no mke2fs"
[ -c /dev/fuse ] || skip "no /dev/fuse on this host"
unshare -Urm true 2>/dev/null || skip "cannot create user and mount namespaces here"
chmod 755 "$T"
mkdir "$T/dev"
mke2fs -q -F -t ext2 "$T/img" 4M || fail "mke2fs"
# use DIR: mount the image on a fresh DIR, say so only if it is FUSE's, write, read, unmount.
use() {
	mkdir "$T/$1" || fail "mkdir $1"
	echo "fuse2fs -o fakeroot $T/img $T/$1; awk -v m=$T/$1 '\$2 == m && \$3 ~ /^fuse/ {print \"mounted\"}' \
		/proc/self/mounts; echo hello >$T/$1/x &&
		cat $T/$1/x && umount $T/$1 && echo unmounted"
}
own_dev="mount -t tmpfs none $T/dev && mknod $T/dev/fuse c 10 229 &&"
own_dev="$own_dev mount --bind $T/dev/fuse /dev/fuse &&"
want=$(printf 'mounted\nhello\nunmounted')
out=$(unshare -Urm sh -c "$(use native)" 2>&1)
[ "$out" = "$want" ] || skip "fuse2fs does not work in a user namespace here: $out"

for mode in authoritative kernel; do
	out=$("$RUN" --mode=$mode --allow 'c 10:229 rwm' -- unshare -Urm sh -c "$(use $mode-host)" 2>&1)
	[ "$out" = "$want" ] || fail "$mode, the host's /dev/fuse: $out"
	out=$("$RUN" --mode=$mode --allow 'c 10:229 rwm' -- \
		unshare -Urm sh -c "$own_dev $(use $mode-own)" 2>&1)
	[ "$out" = "$want" ] || fail "$mode, a node of the command's own: $out"
	out=$("$RUN" --mode=$mode -- unshare -Urm sh -c "$(use $mode-denied)" 2>&1)
	grep -q '^mounted$' <<<"$out" && fail "$mode: FUSE mounted without a grant: $out"
done
echo PASS
