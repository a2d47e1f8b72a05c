#!/bin/bash
# nodev mounts (doc/DESIGN.md, "nodev mounts"): a filesystem mounted inside a user
# namespace is always nodev, so a device node on it cannot be opened by anyone, host root
# included. A workload in its own user and mount namespace (unshare -Urm) makes a node
# there with a granted mknod, then opens it. devwl made the node and bound a node of its
# own over it, on a mount the kernel opens devices from, so the kernel opens it in the
# caller's context, judged by the device cgroup that holds the allow list: in kernel mode
# (no open trapped) as in authoritative mode. Natively the mknod fails (EPERM); a denied
# device stays EPERM; the caller's own permissions are the kernel's to judge: a mode-000
# node opens for the namespace's root (CAP_DAC_OVERRIDE over its own files), not for one
# without CAP_DAC_OVERRIDE.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup baseline, user namespaces"
command -v unshare >/dev/null || skip "no unshare(1)"
unshare -Urm true 2>/dev/null || skip "cannot create user and mount namespaces here"
chmod 755 "$T"
mkdir "$T/m"

# Inside: a tmpfs of the user namespace (nodev), nodes made in it, then opened.
inner="mount -t tmpfs none $T/m && $PROBE mknod $T/m/zero c 1 5 0600 ';' \
	mknod $T/m/full c 1 7 0600 ';' mknod $T/m/kmsg c 1 11 0600 ';' \
	open $T/m/zero rdonly ';' open $T/m/full wronly ';' open $T/m/kmsg rdonly"

native=$(unshare -Urm sh -c "$inner" 2>&1)
[ "$(sed -n 1p <<<"$native")" = EPERM ] || fail "natively, mknod in a user namespace: $native"

command -v setpriv >/dev/null || skip "no setpriv(1)"
for mode in authoritative kernel; do
	out=$("$RUN" --mode=$mode --allow 'c 1:11 m' -- unshare -Urm sh -c "$inner" 2>&1)
	rc=$?
	[ $rc = 0 ] || fail "$mode: devwl-run exited $rc: $out"
	mapfile -t l <<<"$out"
	[ "${l[0]}" = ok ] || fail "$mode: granted mknod zero: $out"
	[ "${l[1]}" = ok ] || fail "$mode: granted mknod full: $out"
	[ "${l[2]}" = ok ] || fail "$mode: granted mknod kmsg (m only): $out"
	[[ "${l[3]}" == "ok fd="*" rdev=1:5 "*"read=00000000" ]] || fail "$mode: open zero: $out"
	[[ "${l[4]}" == "ok fd="*" rdev=1:7 "* ]] || fail "$mode: open full on nodev: $out"
	[ "${l[5]}" = EPERM ] || fail "$mode: kmsg read is not granted: $out"

	# The caller's own permissions: mode 000, owner the namespace's root.
	out=$("$RUN" --mode=$mode -- unshare -Urm sh -c "mount -t tmpfs none $T/m && \
		$PROBE mknod $T/m/zero c 1 5 0000 ';' open $T/m/zero rdonly && \
		setpriv --bounding-set=-dac_override,-dac_read_search $PROBE open $T/m/zero rdonly" \
		2>&1)
	mapfile -t l <<<"$out"
	[ "${l[0]}" = ok ] || fail "$mode: mknod mode 000: $out"
	[[ "${l[1]}" == "ok fd="*" rdev=1:5 "* ]] || fail "$mode: root, mode 000: $out"
	[ "${l[2]}" = EACCES ] || fail "$mode: mode 000 opened without DAC_OVERRIDE: $out"
done
echo PASS
