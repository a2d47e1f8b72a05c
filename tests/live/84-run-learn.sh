#!/bin/bash
# devwl-run --learn (devwl-run(1), LEARN MODE): real workloads, each learnt under a
# ceiling node's parent that allows more than they need, then run again enforced with the
# policy learnt, as written (--policy FILE, no --learn): losetup and mkfs on a loop device
# attached beforehand, a FUSE file system mounted by fuse2fs in a user namespace, a pty
# opened by its path, a tun interface made in a network namespace (TUNSETIFF, where
# /dev/net/tun exists), /dev/full read where a CDI spec names it alone. Each passes
# enforced; a device it did not touch is refused (EPERM): another loop device, /dev/zero.
# The loop device is named by its backing file (loop:FILE), the pty by its major's name
# (char-pts), /dev/full by its CDI name (cdi:VENDOR/CLASS=NAME), the others by their
# nodes, each with the program that touched it. Without a policy the ceiling is the standard container set:
# /dev/fuse is refused while learning, said so, and not learnt. --learn with --allow or
# --mode=kernel is a usage error.
set -u
. "$(dirname "$0")/lib.sh"
live_init "the baseline cgroup, losetup, user namespaces"
command -v losetup >/dev/null || skip "no losetup (util-linux)"
command -v mkfs.ext4 >/dev/null && command -v dumpe2fs >/dev/null || skip "no e2fsprogs"
command -v fuse2fs >/dev/null || skip "no fuse2fs (Debian package fuse2fs)"
command -v jq >/dev/null || skip "no jq"
# The interpreter itself: a shim (pyenv) would add a shell and its /dev/tty to what is learnt.
PY=$(command -v /usr/bin/python3 python3 | head -n1) || skip "no python3"
[ -e /dev/loop-control ] || skip "no loop driver here (/dev/loop-control)"
[ -c /dev/fuse ] || skip "no /dev/fuse on this host"
unshare -Urm true 2>/dev/null || skip "cannot create user and mount namespaces here"
chmod 755 "$T"
truncate -s 8M "$T/disk.img" "$T/other.img"
LOOP=$(losetup -f --show "$T/disk.img" 2>"$T/losetup.err") ||
	skip "cannot attach a loop device here: $(cat "$T/losetup.err")"
OTHER=$(losetup -f --show "$T/other.img") || { losetup -d "$LOOP"; fail "second loop device"; }
# The CDI spec of the last case goes in a spec directory devwl-run reads (its only ones);
# a name no other test uses, removed at the end with the directory if it made it.
CDIDIR=/var/run/cdi
CDISPEC=$CDIDIR/devwl-live84-$$.json
[ -d "$CDIDIR" ] || { mkdir -p "$CDIDIR" && MADE_CDIDIR=1; }
trap 'losetup -d "$LOOP" "$OTHER"; rm -f "$CDISPEC"; [ -n "${MADE_CDIDIR:-}" ] && rmdir "$CDIDIR" 2>/dev/null; rm -rf "$T"' EXIT

# The ceiling: / allows what a build box might. /job, the node learnt, has rules of its own
# that learning replaces: it runs under / and never sees them (they deny /dev/fuse).
cat >"$T/ceiling.json" <<EOF
{"version": 1, "nodes": [
  {"path": "/", "rules": ["deny a", "allow c 1:* rwm", "allow c 5:* rwm", "allow c 136:* rwm",
                          "allow c 10:229 rwm", "allow c 10:237 rwm", "allow b 7:* rwm",
                          "allow c 10:200 rwm"]},
  {"path": "/job", "rules": ["deny c 10:229 rwm"]}]}
EOF
learn() { # NAME WORKLOAD...: learn /job into $T/NAME.json; the workload's output
	local name=$1
	shift
	"$RUN" --policy "$T/ceiling.json" --node /job --learn="$T/$name.json" -- "$@" \
		2>"$T/$name.learn.err" || fail "$name: learning failed: $(cat "$T/$name.learn.err")"
	[ -s "$T/$name.json" ] || fail "$name: no policy written: $(cat "$T/$name.learn.err")"
}
enforce() { # NAME [--mode=MODE] WORKLOAD...: run under the policy learnt
	local name=$1 mode=--mode=auto
	shift
	case $1 in --mode=*) mode=$1 && shift ;; esac
	"$RUN" "$mode" --policy "$T/$name.json" --node /job -- "$@" 2>>"$T/$name.err"
}
rules() { jq -r '.nodes[] | select(.path == "/job") | .rules[]' "$T/$1.json"; }
why() { jq -r --arg r "$2" '.nodes[] | select(.path == "/job") | .why[$r]' "$T/$1.json"; }
has_rule() { rules "$1" | grep -qxF -- "$2" || fail "$1: no rule '$2' in $(cat "$T/$1.json")"; }
eperm() { # NAME WHAT: the last enforced run was refused EPERM
	grep -q "Operation not permitted" "$T/$1.err" || fail "$1: $2 not refused: $(cat "$T/$1.err")"
}

# losetup + mkfs on the loop device: named by the file behind it, not 7:N.
loopw() { echo "losetup $1 >/dev/null && mkfs.ext4 -q -F $1 && dumpe2fs -h $1 2>/dev/null | grep -c 'Filesystem magic'"; }
out=$(learn loop sh -c "$(loopw "$LOOP")") || exit 1
[ "$out" = 1 ] || fail "loop: learning: '$out': $(cat "$T/loop.learn.err")"
has_rule loop "deny a"
has_rule loop "allow loop:$T/disk.img rw"
rules loop | grep -q '^allow b 7:' && fail "loop: named by numbers: $(rules loop)"
why loop "allow loop:$T/disk.img rw" | grep -q "openat rw by mkfs.ext4" ||
	fail "loop: why: '$(why loop "allow loop:$T/disk.img rw")'"
out=$(enforce loop sh -c "$(loopw "$LOOP")") || fail "loop: enforced: $(cat "$T/loop.err")"
[ "$out" = 1 ] || fail "loop: enforced: '$out'"
enforce loop mkfs.ext4 -q -F "$OTHER" && fail "loop: mkfs on $OTHER, never touched, ran"
eperm loop "mkfs on $OTHER"

# fuse2fs in a user namespace: /dev/fuse by its node.
mke2fs -q -F -t ext2 "$T/img" 4M || fail "mke2fs"
fusew() {
	mkdir -p "$T/$1"
	echo "fuse2fs -o fakeroot $T/img $T/$1 && echo hello >$T/$1/x && cat $T/$1/x && umount $T/$1"
}
out=$(learn fuse unshare -Urm sh -c "$(fusew m1)") || exit 1
[ "$out" = hello ] || fail "fuse: learning: '$out': $(cat "$T/fuse.learn.err")"
has_rule fuse "allow /dev/fuse rw"
why fuse "allow /dev/fuse rw" | grep -q "openat rw by fuse2fs" || fail "fuse: why: $(why fuse "allow /dev/fuse rw")"
out=$(enforce fuse unshare -Urm sh -c "$(fusew m2)") || fail "fuse: enforced: $(cat "$T/fuse.err")"
[ "$out" = hello ] || fail "fuse: enforced: '$out'"
enforce fuse head -c1 /dev/zero && fail "fuse: /dev/zero, never touched, read"
eperm fuse "/dev/zero"

# A pty opened by its path: the master by its node, the pty by the name of its major.
cat >"$T/pty.py" <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.ptsname.restype = ctypes.c_char_p
m = libc.posix_openpt(os.O_RDWR | os.O_NOCTTY)
assert m >= 0 and libc.grantpt(m) == 0 and libc.unlockpt(m) == 0
s = os.open(libc.ptsname(m), os.O_RDWR | os.O_NOCTTY)
os.write(s, b"pty-ok\n")
print(os.read(m, 16).decode().strip())
EOF
out=$(learn pty "$PY" "$T/pty.py") || exit 1
[ "$out" = pty-ok ] || fail "pty: learning: '$out': $(cat "$T/pty.learn.err")"
has_rule pty "allow /dev/ptmx rw"
has_rule pty "allow char-pts rw"
# auto above (kernel mode where the cgroup can be programmed); authoritative here.
out=$(enforce pty --mode=authoritative "$PY" "$T/pty.py") || fail "pty: enforced: $(cat "$T/pty.err")"
[ "$out" = pty-ok ] || fail "pty: enforced: '$out'"
enforce pty head -c1 /dev/zero && fail "pty: /dev/zero, never touched, read"
eperm pty "/dev/zero"

# A tun interface in a network namespace of its own: /dev/net/tun by its node, TUNSETIFF
# answered by the driver, so the open was the device's.
if [ -c /dev/net/tun ] && unshare -Urn true 2>/dev/null; then
	cat >"$T/tun.py" <<'EOF'
import fcntl, os, struct
fd = os.open("/dev/net/tun", os.O_RDWR)
ifr = fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", b"devwl%d", 0x0001 | 0x1000))
print("tun-ok", ifr[:16].rstrip(b"\0").decode())
EOF
	out=$(learn tun unshare -Urn "$PY" "$T/tun.py") || exit 1
	case $out in "tun-ok devwl"*) ;; *) fail "tun: learning: '$out': $(cat "$T/tun.learn.err")" ;; esac
	has_rule tun "allow /dev/net/tun rw"
	why tun "allow /dev/net/tun rw" | grep -q "openat rw by python3" ||
		fail "tun: why: $(why tun "allow /dev/net/tun rw")"
	out=$(enforce tun unshare -Urn "$PY" "$T/tun.py") || fail "tun: enforced: $(cat "$T/tun.err")"
	case $out in "tun-ok devwl"*) ;; *) fail "tun: enforced: '$out'" ;; esac
	enforce tun head -c1 /dev/zero && fail "tun: /dev/zero, never touched, read"
	eperm tun "/dev/zero"
else
	echo "tun case skipped: no /dev/net/tun or no network namespace here" >&2
fi

# A CDI spec that names /dev/full alone: its CDI name, before its node's. The device the
# spec lists first names it with /dev/zero, which would grant more: passed by.
cat >"$CDISPEC" <<EOF
{"cdiVersion": "0.6.0", "kind": "devwl-live84.test/dev",
 "devices": [{"name": "both-$$", "containerEdits": {"deviceNodes": [{"path": "/dev/zero"},
                                                                    {"path": "/dev/full"}]}},
             {"name": "full-$$", "containerEdits": {"deviceNodes": [{"path": "/dev/full"}]}}]}
EOF
chmod 644 "$CDISPEC"
out=$(learn cdi sh -c 'head -c3 /dev/full | od -An -tx1') || exit 1
[ "$(echo $out)" = "00 00 00" ] || fail "cdi: learning: '$out': $(cat "$T/cdi.learn.err")"
has_rule cdi "allow cdi:devwl-live84.test/dev=full-$$ r"
rules cdi | grep -q "both-\|/dev/full" && fail "cdi: named otherwise too: $(rules cdi)"
out=$(enforce cdi sh -c 'head -c3 /dev/full | od -An -tx1') || fail "cdi: enforced: $(cat "$T/cdi.err")"
[ "$(echo $out)" = "00 00 00" ] || fail "cdi: enforced: '$out'"
enforce cdi head -c1 /dev/zero && fail "cdi: /dev/zero, never touched, read"
eperm cdi "/dev/zero"
rm -f "$CDISPEC"

# No policy: the ceiling is the standard set, which has no /dev/fuse.
(cd "$T" && "$RUN" --learn -- unshare -Urm sh -c "$(fusew m3)" >/dev/null 2>"$T/std.err")
grep -qF "c 10:229 rw (openat rw (refused) by fuse2fs" "$T/std.err" &&
	grep -qF "refused by the ceiling, not learned" "$T/std.err" ||
	fail "standard set: /dev/fuse not said refused: $(cat "$T/std.err")"
[ -s "$T/devwl-learned.json" ] || fail "standard set: no devwl-learned.json: $(cat "$T/std.err")"
jq -e '.nodes[0].path == "/" and (.nodes[0].rules | map(select(test("fuse|10:229"))) | length == 0)' \
	"$T/devwl-learned.json" >/dev/null || fail "standard set: learnt $(cat "$T/devwl-learned.json")"
# --learn=- writes to stdout, after the command's own output.
out=$("$RUN" --learn=- -- head -c0 /dev/null 2>/dev/null) || fail "--learn=-"
jq -e '.nodes[0].rules == ["deny a", "allow /dev/null r"]' <<<"$out" >/dev/null ||
	fail "--learn=-: '$out'"

# What learning cannot be combined with.
for bad in "--allow c\ 1:7\ rw" "--mode=kernel"; do
	eval "\"\$RUN\" --learn=\"\$T/bad.json\" $bad -- true" 2>/dev/null
	[ $? = 2 ] || fail "--learn $bad: not a usage error"
done
[ ! -e "$T/bad.json" ] || fail "a refused --learn wrote a policy"
# DEVWL_MODE=kernel, a default, gives way: learning traps every open.
out=$(DEVWL_MODE=kernel "$RUN" --learn=- -- head -c0 /dev/null 2>/dev/null) ||
	fail "DEVWL_MODE=kernel --learn"
jq -e '.nodes[0].rules == ["deny a", "allow /dev/null r"]' <<<"$out" >/dev/null ||
	fail "DEVWL_MODE=kernel --learn: '$out'"
echo PASS
