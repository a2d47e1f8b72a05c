#!/bin/bash
# A path devwl cannot resolve is answered by the rule that fits the caller (doc/DESIGN.md,
# "Answers"). An unprivileged user's FUSE mount in its own user namespace (fuse2fs, as
# fuse-overlayfs under a rootless image build) refuses everyone outside it, root
# included: devwl cannot look at a path under it, and a caller chrooted into it has a root
# devwl cannot open. Where the caller's device cgroup holds the allow list (devwl-run as
# root, in either mode) such an open is left to the kernel, which judges whatever its walk
# reaches, and the audit says it was not resolved; before, `chroot MOUNT cat /f` failed
# EPERM ("cannot decide") for a regular file. Without a cgroup behind the caller (devwl-run
# --no-baseline) nothing would judge it: still refused.
set -u
. "$(dirname "$0")/lib.sh"
live_init "the baseline cgroup, user namespaces, FUSE"
command -v fuse2fs >/dev/null || skip "no fuse2fs (Debian package fuse2fs)"
command -v mke2fs >/dev/null || skip "no mke2fs"
command -v setpriv >/dev/null || skip "no setpriv"
[ -c /dev/fuse ] || skip "no /dev/fuse on this host"
BB=$(command -v busybox) && file -L "$BB" | grep -q 'statically linked' || skip "no static busybox"
setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urm true 2>/dev/null ||
	skip "uid 65534 cannot make user namespaces here"
chmod 755 "$T"
mke2fs -q -F -t ext2 "$T/img" 8M || fail "mke2fs"
mkdir "$T/m" "$T/dev"
chown 65534:65534 "$T/img" "$T/m" "$T/dev"
# Its own /dev/fuse (the host's may be 0600), mounted, a file and a static busybox in it,
# then a program chrooted into it reads the file.
cat >"$T/in.sh" <<SH
mount -t tmpfs none $T/dev && mknod -m 666 $T/dev/fuse c 10 229 &&
mount --bind $T/dev/fuse /dev/fuse && fuse2fs -o fakeroot $T/img $T/m || exit 3
awk -v m=$T/m '\$2 == m && \$3 ~ /^fuse/ {print "mounted"}' /proc/self/mounts
echo devwl-81 >$T/m/f && mkdir -p $T/m/bin && cp $BB $T/m/bin/busybox &&
	chroot $T/m /bin/busybox cat /f
umount $T/m
SH
chmod 644 "$T/in.sh"

for mode in authoritative kernel; do
	out=$("$RUN" --mode=$mode --allow 'c 10:229 rwm' --allow 'c 1:3 rw' \
		--audit "$T/$mode.jsonl" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
		unshare -Urm sh "$T/in.sh" 2>&1)
	[ "$out" = "$(printf 'mounted\ndevwl-81')" ] || fail "$mode: $out"
done
grep '"path":"/f"' "$T/authoritative.jsonl" | grep '"decision":"continue"' |
	grep -q '"reason":"not resolved by devwl' ||
	fail "the unresolved open's audit: $(grep '"path":"/f"' "$T/authoritative.jsonl")"
echo "ok - chroot into the user's FUSE mount reads its file, authoritative and kernel; audited as not resolved"

out=$("$RUN" --mode=authoritative --no-baseline --allow 'c 10:229 rwm' --allow 'c 1:3 rw' \
	--audit "$T/none.jsonl" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
	unshare -Urm sh "$T/in.sh" 2>&1)
if grep -q '^mounted$' <<<"$out"; then
	grep '"path":"/f"' "$T/none.jsonl" | grep -q '"decision":"deny".*"reason":"cannot decide"' ||
		fail "no cgroup behind the caller, yet not refused: $out $(grep '"path":"/f"' "$T/none.jsonl")"
	echo "ok - without a cgroup behind the caller it is still refused (cannot decide)"
else
	echo "# without a baseline FUSE did not mount here (the host's /dev/fuse rules): $out"
fi
echo PASS
