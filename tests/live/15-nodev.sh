#!/bin/bash
# nodev mounts (DESIGN.md §4): a filesystem mounted inside a user namespace is always
# nodev, so a device node on it cannot be opened by anyone, host root included. A
# workload in its own user and mount namespace (unshare -Urm) makes a node there with a
# granted mknod, then opens it: devwl checks the caller's permission on its node and opens
# the device through a node of its own. Natively the mknod fails (EPERM) and the open of
# a host-made node fails (EACCES); a denied device stays EPERM; a node the caller may not
# open (mode 000, and the container root's CAP_DAC_OVERRIDE is not mirrored) stays EACCES.
set -u
# devwl opens on behalf: the authoritative mode (devwl-run --mode).
export DEVWL_MODE=authoritative
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

out=$("$RUN" --allow 'c 1:11 m' -- unshare -Urm sh -c "$inner" 2>&1)
rc=$?
[ $rc = 0 ] || fail "devwl-run exited $rc: $out"
mapfile -t l <<<"$out"
[ "${l[0]}" = ok ] || fail "granted mknod zero: $out"
[ "${l[1]}" = ok ] || fail "granted mknod full: $out"
[ "${l[2]}" = ok ] || fail "granted mknod kmsg (m only): $out"
[[ "${l[3]}" == "ok fd="*" rdev=1:5 "*"read=00000000" ]] || fail "open zero on nodev: $out"
[[ "${l[4]}" == "ok fd="*" rdev=1:7 "* ]] || fail "open full on nodev: $out"
[ "${l[5]}" = EPERM ] || fail "kmsg read is not granted: $out"

# The caller's own permissions still count: mode 000, owner the container's root.
out=$("$RUN" -- unshare -Urm sh -c "mount -t tmpfs none $T/m && \
	$PROBE mknod $T/m/zero c 1 5 0000 ';' open $T/m/zero rdonly" 2>&1)
mapfile -t l <<<"$out"
[ "${l[0]}" = ok ] || fail "mknod mode 000: $out"
[ "${l[1]}" = EACCES ] || fail "mode 000 node opened: $out"
echo PASS
