#!/bin/bash
# loop:FILE names the loop devices backed by the file FILE is here (its device and inode,
# which LOOP_GET_STATUS64 reports), never by the path the kernel writes in
# /sys/block/loopN/loop/backing_file: that path is relative to the root of the mount
# namespace the backing file lives in. An impostor, in a mount namespace of its own with
# a tmpfs over X, makes a file at the host's X/img and binds a loop device to it; its
# backing_file reads as X/img too. loop:X/img must name the host's loop device only,
# through devwl-run (--allow, resolved once) and the what-if (devwlctl batch, the host's
# roots): the command reads the host's device and is refused the impostor's. With the
# host's image detached, and then removed, the selector names nothing at all.
set -u
. "$(dirname "$0")/lib.sh"
live_init "losetup, unshare and mount in a mount namespace, the baseline cgroup"
CTL=$DEVWL_BUILD/tools/devwlctl
[ -x "$CTL" ] || fail "no $CTL: the build should have made it"
command -v losetup >/dev/null || skip "no losetup (util-linux)"
command -v unshare >/dev/null || skip "no unshare (util-linux)"
[ -e /dev/loop-control ] || skip "no loop driver here (/dev/loop-control)"

numbers() { local mm; mm=$(stat -c '%t:%T' "$1"); echo "$((16#${mm%:*})):$((16#${mm#*:}))"; }

X=$T/x
mkdir "$X"
printf 'host-data' >"$X/img"
truncate -s 1M "$X/img"
HOST= FAKE= NS=
cleanup() {
	[ -n "$NS" ] && touch "$T/ns.go" && wait "$NS" 2>/dev/null
	[ -n "$FAKE" ] && losetup -d "$FAKE" 2>/dev/null
	[ -n "$HOST" ] && losetup -d "$HOST" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
HOST=$(losetup -f --show "$X/img" 2>"$T/losetup.err") ||
	skip "cannot attach a loop device here: $(cat "$T/losetup.err")"
NH=$(numbers "$HOST")

# The impostor: a private mount namespace (unshare's default propagation is private, so
# nothing of it reaches the host), a tmpfs over X, its own X/img attached. It stays until
# the test ends: with its namespace gone the kernel would write the path otherwise.
unshare -m bash -c '
	set -e
	mount -t tmpfs tmpfs "$1"
	printf impostor >"$1/img"
	truncate -s 1M "$1/img"
	losetup -f --show "$1/img" >"$2/fake.dev.tmp"
	mv "$2/fake.dev.tmp" "$2/fake.dev"
	while [ ! -e "$2/ns.go" ]; do sleep 0.05; done' sh "$X" "$T" 2>"$T/ns.err" &
NS=$!
for _ in $(seq 200); do
	[ -s "$T/fake.dev" ] && break
	kill -0 "$NS" 2>/dev/null || break
	sleep 0.05
done
[ -s "$T/fake.dev" ] || skip "cannot attach a loop device in a mount namespace: $(cat "$T/ns.err")"
FAKE=$(cat "$T/fake.dev")
NF=$(numbers "$FAKE")
[ "$NF" != "$NH" ] || fail "the impostor got the host's device $HOST"
# The premise: the kernel's string for the impostor is the host's path.
name=${FAKE#/dev/}
[ "$(cat "/sys/block/$name/loop/backing_file")" = "$X/img" ] ||
	skip "the kernel names the impostor's file '$(cat "/sys/block/$name/loop/backing_file")', not $X/img: no impostor to refuse"
[ "$(head -c 8 "$FAKE")" = impostor ] || fail "$FAKE does not hold the impostor's data"

# resolved WAY: the rules loop:X/img resolves to, one a line ("b M:m r"), through devwl-run
# -v (run) or devwlctl batch (whatif); a selector matching nothing resolves to none.
resolved() {
	case $1 in
	run)
		"$RUN" -v --allow "loop:$X/img r" -- true 2>&1 |
			sed -n "s|^devwl-run: --allow 'loop:$X/img r': ||p"
		;;
	whatif)
		printf 'mkdir /c\ndeny /c a\nallow /c loop:%s/img r\nlist /c\n' "$X" |
			"$CTL" batch 2>/dev/null | grep '^b '
		;;
	esac
}
read_dev() { "$RUN" --allow "loop:$X/img r" -- head -c 9 "$1" 2>>"$T/run.err"; }

for way in run whatif; do
	got=$(resolved $way)
	[ "$got" = "b $NH r" ] ||
		fail "$way: loop:$X/img resolved to '$got', not the host's b $NH r (the impostor is b $NF)"
done
out=$(read_dev "$HOST") || fail "the host's $HOST refused: $(cat "$T/run.err")"
[ "$out" = host-data ] || fail "read '$out' from the host's $HOST"
out=$(read_dev "$FAKE") && fail "the impostor's $FAKE was read through loop:$X/img: '$out'"
echo "# loop:$X/img: the host's $HOST (b $NH) only, not the impostor's $FAKE (b $NF)"

# The host's image detached: nothing is X/img's now, whatever the impostor's string says.
losetup -d "$HOST" || fail "losetup -d $HOST"
HOST=
for way in run whatif; do
	got=$(resolved $way)
	[ -z "$got" ] || fail "$way: with the host's image detached, loop:$X/img resolved to '$got'"
done
: >"$T/run.err"
out=$(read_dev "$FAKE") && fail "the impostor's $FAKE was read once the host's image was detached: '$out'"
grep -qF "loop:$X/img: matches no device now" "$T/run.err" ||
	fail "no warning that loop:$X/img matches nothing: $(cat "$T/run.err")"
# A FILE this namespace does not hold names nothing either.
rm "$X/img"
got=$(resolved run)
[ -z "$got" ] || fail "with $X/img removed, loop:$X/img resolved to '$got'"
echo "PASS"
