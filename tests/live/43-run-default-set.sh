#!/bin/bash
# Without --policy the command gets the standard container set (c 1:3, 1:5, 1:7, 1:8, 1:9,
# 5:0, 5:2, 136:* rwm) and nothing else; --allow/--deny apply on top, in order.
set -u
. "$(dirname "$0")/lib.sh"
live_init "mknod, device cgroup baseline"
mknod "$T/null" c 1 3 && mknod "$T/zero" c 1 5 && mknod "$T/full" c 1 7 &&
	mknod "$T/urandom" c 1 9 && mknod "$T/mem" c 1 1 && mknod "$T/kmsg" c 1 11 &&
	mknod "$T/loop" b 7 0 || skip "cannot mknod in $T"

expect() {
	local want=$1 out
	shift
	out=$("$RUN" "$@" 2>&1 | tail -n 1)
	[[ "$out" == $want ]] || fail "$*: got '$out', expected '$want'"
}

expect 'ok fd=* rdev=1:3 type=c *' -- "$PROBE" open /dev/null rdwr
expect 'ok fd=* rdev=1:3 type=c *' -- "$PROBE" open "$T/null" rdwr
expect 'ok fd=* rdev=1:5 type=c * read=00000000' -- "$PROBE" open "$T/zero" rdonly
expect 'ok fd=* rdev=1:7 type=c *' -- "$PROBE" open "$T/full" wronly
expect 'ok fd=* rdev=1:9 type=c *' -- "$PROBE" openat . "$T/urandom" rdonly
expect EPERM -- "$PROBE" open "$T/mem" rdonly
expect EPERM -- "$PROBE" open "$T/kmsg" rdonly
expect EPERM -- "$PROBE" open "$T/loop" rdonly
expect EPERM -- "$PROBE" mknod "$T/mem2" c 1 1 0600
[ ! -e "$T/mem2" ] || fail "a denied mknod created the node"
expect ok -- "$PROBE" mknod "$T/null2" c 1 3 0666
[ -c "$T/null2" ] || fail "an allowed mknod did not create the node"
# Not a device: the kernel decides.
expect 'ok fd=* type=f *' -- "$PROBE" open /etc/hostname rdonly
expect ENOENT -- "$PROBE" open "$T/missing" rdonly
# On top of the default, in order: --deny takes (part of) c 1:7 away; --allow adds to
# the root node, which has no parent to refuse it.
expect EPERM --deny 'c 1:7 rwm' -- "$PROBE" open "$T/full" wronly
expect EPERM --deny 'c 1:7 w' -- "$PROBE" open "$T/full" wronly
expect 'ok fd=* rdev=1:7 *' --deny 'c 1:7 w' -- "$PROBE" open "$T/full" rdonly
expect 'ok fd=* rdev=1:11 *' --allow 'c 1:11 r' -- "$PROBE" open "$T/kmsg" rdonly
echo "PASS"
