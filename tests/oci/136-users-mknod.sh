# A runtime of another uid (--allow-uid) has no device cgroup devwld programs or trusts:
# nothing but devwl stands behind its calls (devwld(8), USERS; devwl-policy(5), "m under
# /users"). A node devwld made for it on a host directory would then open for anyone its
# permissions admit, whatever the policy grants — with an "m"-only grant (runc's
# "b *:* m"), the user made /dev/loop0 on a host directory and read it outside any trap.
# So such a node is made only on a nodev mount (every filesystem mounted in the user's
# own user namespace), where the kernel opens no device and devwld opens it for the user
# as the policy says: refused on a host directory (EPERM, the reason in the audit), made
# on the user's own tmpfs, opened there when granted and refused when not.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_user_runs
mkdir -m 777 "$T/host" "$T/m"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/users", "rules": ["deny a", "allow b *:* m", "allow c 1:5 rwm"] } ] }
JSON
start_devwld --allow-uid 65534

# 1. On a host directory: refused; nothing made; nothing for the user to open after.
as_nobody unshare -Ur "$RUN" --connect "$T/listen.sock" --id u-host -- \
	"$PROBE" mknod "$T/host/loop0" b 7 0 0666 ';' mknod "$T/host/zero" c 1 5 0666 \
	>"$T/host.out" 2>"$T/host.err" || fail "u-host: $(cat "$T/host.out" "$T/host.err")"
[ "$(cat "$T/host.out")" = "$(printf 'EPERM\nEPERM')" ] ||
	fail "uid 65534 made nodes on a host directory: $(cat "$T/host.out")"
[ ! -e "$T/host/loop0" ] && [ ! -e "$T/host/zero" ] || fail "a node was left: $(ls -l "$T/host")"
[ -z "$(ls -A "$T/host")" ] || fail "the nodev probe was left behind: $(ls -A "$T/host")"
grep '"container":"u-host"' "$T/audit.jsonl" | grep '"device":"b 7:0".*"decision":"deny"' |
	grep -q '"reason":"no device cgroup stands behind the caller' ||
	fail "no denial with its reason in the audit: $(grep u-host "$T/audit.jsonl")"
pass "uid 65534: no device node on a host directory (m only, or rwm), the reason in the audit"

# 2. On its own tmpfs (nodev): made; the granted one opens through devwld, the m-only one
# does not; natively nobody opens either.
as_nobody unshare -Urm sh -c "mount -t tmpfs none $T/m && exec $RUN --connect $T/listen.sock \
	--id u-own -- $PROBE mknod $T/m/loop0 b 7 0 0666 ';' mknod $T/m/zero c 1 5 0666 \
	';' open $T/m/zero rdwr ';' open $T/m/loop0 rdonly" >"$T/own.out" 2>"$T/own.err" ||
	fail "u-own: $(cat "$T/own.out" "$T/own.err")"
mapfile -t l <"$T/own.out"
[ "${l[0]}" = ok ] && [ "${l[1]}" = ok ] || fail "mknod on its own tmpfs: $(cat "$T/own.out")"
[[ "${l[2]}" == "ok fd="*" rdev=1:5 "*"read=00000000" ]] ||
	fail "the granted node on its nodev tmpfs: $(cat "$T/own.out")"
[ "${l[3]}" = EPERM ] || fail "an m-only node opened: $(cat "$T/own.out")"
pass "uid 65534: nodes made on its own nodev tmpfs; c 1:5 (rwm) opens through devwld, b 7:0 (m) does not"

# 3. The nodev proof trusts no errno that permissions also cause: with umask 0777 the
# probe would be mode 0000, and an EACCES on opening it is no proof of nodev (DESIGN.md,
# "The node gate"). Still refused on the host directory; still made on its own tmpfs.
as_nobody unshare -Ur sh -c "umask 0777 && exec $RUN --connect $T/listen.sock --id u-umask -- \
	$PROBE mknod $T/host/loop1 b 7 1 0666" >"$T/umask.out" 2>"$T/umask.err" ||
	fail "u-umask: $(cat "$T/umask.out" "$T/umask.err")"
[ "$(cat "$T/umask.out")" = EPERM ] && [ ! -e "$T/host/loop1" ] ||
	fail "umask 0777 made a node on a host directory: $(cat "$T/umask.out"; ls -l "$T/host")"
as_nobody unshare -Urm sh -c "mount -t tmpfs none $T/m && umask 0777 && exec $RUN \
	--connect $T/listen.sock --id u-umask2 -- $PROBE mknod $T/m/zero c 1 5 0666" \
	>"$T/umask2.out" 2>"$T/umask2.err" || fail "u-umask2: $(cat "$T/umask2.out" "$T/umask2.err")"
[ "$(cat "$T/umask2.out")" = ok ] || fail "umask 0777 on its own tmpfs: $(cat "$T/umask2.out")"
pass "uid 65534 with umask 0777: still no node on a host directory, still one on its nodev tmpfs"
exit 0
