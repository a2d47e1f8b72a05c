# --allow-uid (devwld(8) USERS): a runtime running as a listed uid can connect and hand
# over its own notify fd, and is served, but only on nodes under /users/UID; an unlisted
# uid is refused (its calls fail closed), and a listed one cannot join another uid's
# container to use its node: the same id is a container of its own.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
PROBE=$BUILD/tests/live/probe
[ -x "$RUN" ] && [ -x "$PROBE" ] || fail "devwl-run or the live probe not built (the build should have made it)"
command -v setpriv >/dev/null || skip "no setpriv"
as_uid() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups --inh-caps=-all "$@"; }
# What uid 65534 runs must be in its reach (a 0700 checkout's build tree is not).
RUN=$(for_others "$RUN") && PROBE=$(for_others "$PROBE") || exit 1
mknod -m 666 "$T/mem" c 1 1 && mknod -m 666 "$T/zero" c 1 5 || skip "cannot mknod in $T"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "rules": ["allow a"] } ],
  "containers": { "node_metadata": true } }
JSON
start_devwld --allow-uid 65534
[ "$(stat -c %a "$T/listen.sock")" = 666 ] && [ "$(stat -c %a "$T/control.sock")" = 600 ] ||
	fail "socket modes: $(stat -c '%n %a' "$T/listen.sock" "$T/control.sock")"
pass "--allow-uid: the listener socket is 0666 (SO_PEERCRED decides), the control socket stays 0600"

# connect_as UID ID [NODE]: devwl-run --connect as UID opening zero then mem; output $T/ID.out
connect_as() {
	as_uid "$1" "$RUN" --connect "$T/listen.sock" --id "$2" ${3:+--node "$3"} -- \
		"$PROBE" open "$T/zero" rdonly ';' open "$T/mem" rdonly >"$T/$2.out" 2>"$T/$2.err"
}

# failed_closed ID: every trapped call failed ENOSYS (the loader's own open of libc, here).
failed_closed() {
	! grep -q "^ok" "$T/$1.out" && grep -q "ENOSYS\|Error 38\|Function not implemented" "$T/$1.out" "$T/$1.err"
}

# --- 1. a listed uid is served, on /users/65534/ID with the default set -----------------
connect_as 65534 u1 || fail "uid 65534: $(cat "$T/u1.out" "$T/u1.err")"
[[ "$(sed -n 1p "$T/u1.out")" == "ok fd="*"rdev=1:5"* ]] && [ "$(sed -n 2p "$T/u1.out")" = EPERM ] ||
	fail "uid 65534's calls: $(cat "$T/u1.out")"
grep -q "container u1: node /users/65534/u1" "$T/devwld.log" || fail "uid 65534's node: $(grep u1 "$T/devwld.log")"
grep '"container":"u1"' "$T/audit.jsonl" | grep -q '"decision":"deny"' || fail "no audit record for uid 65534"
pass "uid 65534 (--allow-uid) is served on /users/65534/u1: /dev/zero granted, /dev/mem denied"

# --- 2. ... but cannot name a node outside /users/65534 ----------------------------------
connect_as 65534 u2 /containers/x
grep -q "container u2: no node: listenerMetadata: \"/containers/x\" is outside /users/65534" "$T/devwld.log" ||
	fail "uid 65534 named /containers/x: $(grep u2 "$T/devwld.log")"
failed_closed u2 || fail "u2's calls: $(cat "$T/u2.out")"
pass "uid 65534 naming /containers/x (allow-all) is refused; its calls fail closed (ENOSYS)"

# --- 3. ... nor join root's container of the same id ----------------------------------------
"$RUN" --connect "$T/listen.sock" --id shared -- sh -c 'echo UP; while [ ! -e "$1/go" ]; do sleep 0.1; done' \
	sh "$T" >"$T/root-shared.out" 2>&1 &
CHILD_PIDS+=("$!")
wait_for "$T/root-shared.out" UP || fail "root's container did not start"
connect_as 65534 shared || fail "uid 65534's shared: $(cat "$T/shared.out" "$T/shared.err")"
grep -q "container shared: node /users/65534/shared" "$T/devwld.log" ||
	fail "uid 65534 joined root's container: $(grep shared "$T/devwld.log")"
[[ "$(sed -n 1p "$T/shared.out")" == "ok fd="*"rdev=1:5"* ]] && [ "$(sed -n 2p "$T/shared.out")" = EPERM ] ||
	fail "uid 65534's shared got more than its node: $(cat "$T/shared.out")"
ctl containers | grep -q "^shared /containers/shared 1 .* 0 -$" || fail "root's shared: $(ctl containers)"
touch "$T/go"
pass "uid 65534's \"shared\" is a container of its own on /users/65534: it cannot join root's (and its allow-all node)"

# --- 4. an unlisted uid is refused ---------------------------------------------------------
connect_as 65533 u3
grep -q "listener: refusing peer pid [0-9]* uid 65533" "$T/devwld.log" || fail "uid 65533 was not refused"
# Closed before or after devwl-run sent its fd: either way nothing of it is served.
! grep -q "^ok" "$T/u3.out" || fail "uid 65533's calls: $(cat "$T/u3.out")"
ctl containers | grep -q "^u3 " && fail "uid 65533 attached"
pass "uid 65533 (not listed) is refused; its calls fail closed"
exit 0
