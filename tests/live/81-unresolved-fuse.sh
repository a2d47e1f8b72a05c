#!/bin/bash
# A path devwl cannot resolve is answered by the rule that fits the caller (doc/DESIGN.md,
# "Answers"). An unprivileged user's FUSE mount in its own user namespace (fuse2fs, as
# fuse-overlayfs under a rootless image build) refuses everyone outside it, root
# included: devwl cannot look at a path under it, and a caller chrooted into it has a root
# devwl cannot open. Where the caller's device cgroup holds the allow list (devwl-run as
# root, in either mode) such an open is left to the kernel, which judges whatever its walk
# reaches, and the audit says it was not resolved; before, `chroot MOUNT cat /f` failed
# EPERM ("cannot decide") for a regular file. Without a cgroup behind the caller (devwl-run
# --no-baseline) devwl looks the path up from a child that holds the caller's ids (FUSE
# lets its owner in) and judges what it finds: the file is read, a device the policy
# refuses is refused, a name that is not there is the caller's ENOENT.
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
# A device node on the image itself (nobody in the namespace may make one): c 1:1, which
# the policy below refuses.
if command -v debugfs >/dev/null; then
	debugfs -w -R "mknod mem c 1 1" "$T/img" >/dev/null 2>&1 || fail "debugfs mknod"
fi
mkdir "$T/m" "$T/dev"
chown 65534:65534 "$T/img" "$T/m" "$T/dev"
# Its own /dev/fuse (the host's may be 0600), mounted, a file and a static busybox in it,
# then a program chrooted into it reads the file.
# Without a baseline the node must be one the kernel opens for the caller (FUSE refuses
# a descriptor opened in another user namespace, as devwl's own would be): root's, 0666.
cat >"$T/in.sh" <<SH
if [ -n "\${FUSENODE:-}" ]; then
	mount --bind "\$FUSENODE" /dev/fuse
else
	mount -t tmpfs none $T/dev && mknod -m 666 $T/dev/fuse c 10 229 &&
		mount --bind $T/dev/fuse /dev/fuse
fi && fuse2fs -o fakeroot $T/img $T/m || exit 3
awk -v m=$T/m '\$2 == m && \$3 ~ /^fuse/ {print "mounted"}' /proc/self/mounts
echo devwl-81 >$T/m/f && mkdir -p $T/m/bin && cp $BB $T/m/bin/busybox &&
	chroot $T/m /bin/busybox cat /f
if [ -n "\${DEVICES:-}" ]; then
	chroot $T/m /bin/busybox cat /mem 2>&1 | head -c 100 | grep -q 'Operation not permitted' &&
		echo mem-refused
	chroot $T/m /bin/busybox cat /nothere 2>&1 | grep -q 'No such file' && echo enoent
fi
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

mknod -m 666 "$T/fuse" c 10 229 || fail "mknod $T/fuse"
out=$(FUSENODE=$T/fuse DEVICES=1 "$RUN" --mode=authoritative --no-baseline --allow 'c 10:229 rwm' \
	--allow 'c 1:3 rw' --audit "$T/none.jsonl" -- setpriv --reuid=65534 --regid=65534 \
	--clear-groups unshare -Urm sh "$T/in.sh" 2>&1 | grep -v '^devwl-run: warning: --no-baseline')
if grep -q '^mounted$' <<<"$out"; then
	want=$(printf 'mounted\ndevwl-81')
	command -v debugfs >/dev/null && want=$(printf '%s\nmem-refused\nenoent' "$want")
	[ "$out" = "$want" ] || fail "no cgroup behind the caller: $out"
	grep '"path":"/f"' "$T/none.jsonl" | grep '"decision":"continue"' |
		grep -q '"reason":"looked up as the caller' ||
		fail "the open of /f: $(grep '"path":"/f"' "$T/none.jsonl")"
	if command -v debugfs >/dev/null; then
		grep '"path":"/mem"' "$T/none.jsonl" | grep '"device":"c 1:1"' |
			grep -q '"decision":"deny".*"reason":"policy"' ||
			fail "the open of /mem: $(grep '"path":"/mem"' "$T/none.jsonl")"
	fi
	echo "ok - without a cgroup behind the caller: looked up as the caller, the file read, a refused device refused, ENOENT passed on"
else
	fail "without a baseline FUSE did not mount: $out"
fi
echo PASS
