# A node with a twin behaves as a plain one through devwld too (doc/DESIGN.md, "nodev
# mounts"): a workload handed to devwld in kernel mode as a runtime hands it (devwl-run
# --connect --mode=kernel --userns: the filter also traps unlink and rename, as
# examples/oci-hook/seccomp-mknod-only-userns.json does), in its own user and mount
# namespace, makes c 1:3 on its tmpfs, opens it (the kernel: no open traps), rm's it,
# makes it again, mv's it and opens it at the new name, and rm's that; devwld's handler
# unmounts the twin before each unlink and moves it with the rename. A node granted
# mknod only stays refused at open by the container's device cgroup after its mv.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
PROBE=$BUILD/tests/live/probe
[ -x "$RUN" ] && [ -x "$PROBE" ] || fail "devwl-run or the live probe not built"
unshare -Urm true 2>/dev/null || skip "cannot create user and mount namespaces here"
RUN=$(for_others "$RUN") && PROBE=$(for_others "$PROBE") || exit 1
chmod 755 "$T"
M=$T/m
mkdir "$M"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:11 m"] } ],
  "containers": { "node_metadata": true } }
JSON
start_devwld

inner="mount -t tmpfs none $M || exit 9
$PROBE mknod $M/null c 1 3 0666 ';' open $M/null rdwr
rm $M/null && echo rm1 ok
$PROBE mknod $M/null c 1 3 0666 ';' open $M/null rdwr
mv $M/null $M/moved && echo mv ok
$PROBE open $M/moved rdwr
rm $M/moved && echo rm2 ok
$PROBE mknod $M/kmsg c 1 11 0600
mv $M/kmsg $M/kmsg2 && echo kmv ok
$PROBE open $M/kmsg2 rdonly
rm $M/kmsg2 && echo krm ok
grep -c \" $M/\" /proc/self/mountinfo; true"
out=$("$RUN" --connect "$T/listen.sock" --node /w --id twin-205 --mode=kernel --userns -- \
	unshare -Urm sh -c "$inner" 2>"$T/err") || fail "the workload: $out $(cat "$T/err")"
mapfile -t l <<<"$out"
want=("ok" "ok fd=* rdev=1:3 *" "rm1 ok" "ok" "ok fd=* rdev=1:3 *" "mv ok" "ok fd=* rdev=1:3 *"
	"rm2 ok" "ok" "kmv ok" "EPERM" "krm ok" "0")
for i in "${!want[@]}"; do
	# shellcheck disable=SC2053 # a pattern
	[[ "${l[$i]:-}" == ${want[$i]} ]] || fail "line $i: expected '${want[$i]}': $out $(cat "$T/err")"
done
pass "through devwld: mknod, open, rm, mknod, mv, open at the new name, rm; a node granted m only refused after its mv; no twin left mounted"
exit 0
