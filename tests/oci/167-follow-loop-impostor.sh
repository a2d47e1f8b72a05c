# devwld's loop:FILE binding follows the loop devices backed by the file FILE is, never
# the path the kernel writes in /sys/block/loopN/loop/backing_file (relative to the mount
# namespace of the backing file). An impostor in a private mount namespace, with a tmpfs
# over the image's directory, binds a loop device to a file of its own at the same path:
# its uevent makes devwld resolve the binding again, and the impostor's device is not
# granted (a canary binding, attached after it, shows devwld has resolved since). Once
# the host's image is detached the binding names nothing, and the impostor's device is
# still not granted: not in `devwlctl show`, nor in any audit record.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
command -v losetup >/dev/null || skip "no losetup (util-linux)"
command -v unshare >/dev/null || skip "no unshare (util-linux)"
[ -e /dev/loop-control ] || skip "no loop driver here (/dev/loop-control)"

numbers() { local mm; mm=$(stat -c '%t:%T' "$1"); echo "$((16#${mm%:*})):$((16#${mm#*:}))"; }
# until_shown TEXT: wait until `devwlctl show /lab` holds TEXT.
until_shown() {
	for _ in $(seq 1200); do
		ctl show /lab | grep -qF "$1" && return 0
		sleep 0.05
	done
	return 1
}

X=$T/x
mkdir "$X"
for f in "$X/img" "$T/canary.img"; do
	printf 'host-data' >"$f"
	truncate -s 1M "$f"
done
HOST=$(loop_of "$X/img" 2>"$T/losetup.err") ||
	skip "cannot attach a loop device here: $(cat "$T/losetup.err")"
NH=$(numbers "$HOST")
cat >"$T/policy.json" <<EOF_POLICY
{ "version": 1,
  "nodes": [ { "path": "/lab", "rules": ["deny a"] } ],
  "selectors": [ { "node": "/lab", "allow": "loop:$X/img r" },
                 { "node": "/lab", "allow": "loop:$T/canary.img r" } ] }
EOF_POLICY
start_devwld
ctl selectors | grep -qxF "/lab allow loop:$X/img r [file]: b $NH r" ||
	fail "selectors at start: $(ctl selectors)"

# The impostor; it stays until the end (cleanup kills it): with its namespace gone, the
# kernel would write the path otherwise.
unshare -m bash -c '
	set -e
	mount -t tmpfs tmpfs "$1"
	printf impostor >"$1/img"
	truncate -s 1M "$1/img"
	losetup -f --show "$1/img" >"$2/fake.dev.tmp"
	mv "$2/fake.dev.tmp" "$2/fake.dev"
	exec sleep 1000000' sh "$X" "$T" 2>"$T/ns.err" &
CHILD_PIDS+=("$!")
for _ in $(seq 200); do
	[ -s "$T/fake.dev" ] && break
	sleep 0.05
done
[ -s "$T/fake.dev" ] || skip "cannot attach a loop device in a mount namespace: $(cat "$T/ns.err")"
FAKE=$(cat "$T/fake.dev")
# Detached while the impostor lives: once its namespace is gone the kernel names the
# file "/img", no file of this test's, and cleanup's loop_detach_ours would leave it.
trap 'st=$?; losetup -d "$FAKE" 2>/dev/null; (exit $st); cleanup' EXIT
NF=$(numbers "$FAKE")
name=${FAKE#/dev/}
[ "$(cat "/sys/block/$name/loop/backing_file")" = "$X/img" ] ||
	skip "the kernel names the impostor's file '$(cat "/sys/block/$name/loop/backing_file")', not $X/img"

CANARY=$(loop_of "$T/canary.img") || fail "cannot attach canary.img"
NC=$(numbers "$CANARY")
until_shown "allow b $NC r" || fail "the canary b $NC was never granted: $(ctl show /lab)"
ctl show /lab | grep -qF "allow b $NF " && fail "the impostor's $FAKE (b $NF) was granted: $(ctl show /lab)"
ctl selectors | grep -qxF "/lab allow loop:$X/img r [file]: b $NH r" ||
	fail "selectors with the impostor attached: $(ctl selectors)"
pass "loop:$X/img: the host's b $NH only; the impostor's $FAKE (b $NF) not granted"

losetup -d "$HOST" || fail "losetup -d $HOST"
for _ in $(seq 1200); do
	ctl selectors | grep -qxF "/lab allow loop:$X/img r [file]: -" && break
	sleep 0.05
done
ctl selectors | grep -qxF "/lab allow loop:$X/img r [file]: -" ||
	fail "with the host's image detached, the binding names: $(ctl selectors)"
ctl show /lab | grep -qF "allow b $NH " && fail "b $NH still allowed: $(ctl show /lab)"
ctl show /lab | grep -qF "allow b $NF " && fail "the impostor's b $NF granted: $(ctl show /lab)"
grep '"event":"selector"' "$T/audit.jsonl" | grep -qF "b $NF r" &&
	fail "an audit record grants the impostor's b $NF: $(grep selector "$T/audit.jsonl")"
pass "the host's image detached: loop:$X/img names nothing, the impostor's device is never granted"
