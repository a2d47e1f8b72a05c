# devwld's own directories (devwld(8) SECURITY): a socket or state directory another user
# made or can write is refused at start, naming it, its owner and its mode, so a planted
# state file is never restored and no socket is bound where someone else could replace
# it; a state file that is not devwld's own 0600 regular file is set aside unread.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
command -v setpriv >/dev/null || skip "no setpriv"

# A planted state: /containers allows every device.
plant() {
	jq -n '{devwld_state: 1, policy_file: null, policy_text: null, ondemand: [], edits: [],
		containers: [], hierarchy: {version: 1, nodes: [{path: "/containers",
		rules: ["allow a"]}]}}' >"$1"
}

# try_start DIR: devwld on sockets (and the state) in DIR, for at most 10 s; its exit
# status in RC (124: still running, then stopped), its stderr in $T/try.log.
try_start() {
	RC=0
	timeout 10 "$DEVWLD" --listen "$1/listen.sock" --control "$1/control.sock" --no-audit \
		2>"$T/try.log" || RC=$?
}

# --- 1. a directory a user made under a sticky, world-writable one (as in /tmp) ----------
mkdir -m 1777 "$T/tmp"
as_nobody mkdir "$T/tmp/devwl" || skip "uid 65534 cannot make a directory in a sticky 1777 one"
as_nobody sh -c "$(declare -f plant); plant '$T/tmp/devwl/state.json'" ||
	skip "uid 65534 cannot write in its own directory"
try_start "$T/tmp/devwl"
[ "$RC" != 0 ] && [ "$RC" != 124 ] || fail "devwld started in a directory of uid 65534 (status $RC): $(cat "$T/try.log")"
grep -q "$T/tmp/devwl.*uid 65534" "$T/try.log" || fail "the refusal names neither the directory nor its owner: $(cat "$T/try.log")"
[ -e "$T/tmp/devwl/listen.sock" ] || [ -e "$T/tmp/devwl/control.sock" ] && fail "sockets bound in uid 65534's directory"
pass "a socket directory of uid 65534 is refused: $(grep -m1 "$T/tmp/devwl" "$T/try.log")"

# --- 2. root's, but group or world writable; or below a directory of another user -------
mkdir -m 0777 "$T/open"
try_start "$T/open"
[ "$RC" != 0 ] && [ "$RC" != 124 ] || fail "devwld started in a 0777 directory (status $RC)"
grep -q "$T/open.*777" "$T/try.log" || fail "the refusal does not name the mode: $(cat "$T/try.log")"
mkdir -m 0775 "$T/group"
try_start "$T/group"
[ "$RC" != 0 ] && [ "$RC" != 124 ] || fail "devwld started in a 0775 directory (status $RC)"
as_nobody mkdir "$T/tmp/theirs"
mkdir "$T/tmp/theirs/sub" # root's, but uid 65534 can rename it away
try_start "$T/tmp/theirs/sub"
[ "$RC" != 0 ] && [ "$RC" != 124 ] || fail "devwld started below a directory of uid 65534 (status $RC)"
grep -q "$T/tmp/theirs.*uid 65534" "$T/try.log" || fail "the refusal does not name the ancestor: $(cat "$T/try.log")"
pass "a 0777 or 0775 directory, or one inside a directory of uid 65534, is refused too"

# --- 3. a state file in devwld's own directory that is not its own 0600 file -------------
# $T is root's, 0755, inside the sticky /tmp: a trusted directory.
unset_grant() {
	! ctl list /containers 2>/dev/null | grep -q 'a \*:\* rwm'
}
for how in owner mode symlink; do
	S=$T/state-$how.json
	case $how in
	owner) plant "$S" && chown 65534 "$S" && chmod 600 "$S" ;;
	mode) plant "$S" && chmod 644 "$S" ;;
	symlink) plant "$T/elsewhere.json" && chmod 600 "$T/elsewhere.json" && ln -s elsewhere.json "$S" ;;
	esac
	DEVWLD_POLICY= start_devwld --state "$S"
	unset_grant || fail "the planted grant ($how) was restored: $(ctl list /containers)"
	grep -q "state $S.*not trusted" "$T/devwld.log" || fail "not logged ($how): $(grep state "$T/devwld.log")"
	ls "$T"/state-$how.json.untrusted-* >/dev/null 2>&1 || fail "not set aside ($how): $(ls "$T")"
	[ "$(stat -c '%u %a %F' "$S")" = "0 600 regular file" ] || fail "no fresh state ($how): $(stat -c '%u %a %F' "$S")"
	kill "$DEVWLD_PID" && wait "$DEVWLD_PID"
	DEVWLD_PID=
	pass "a state file ($how) is set aside unread; devwld starts without it and writes its own"
done
[ "$(cat "$T/elsewhere.json" | jq -r .devwld_state)" = 1 ] || fail "the symlink's target was written"
exit 0
