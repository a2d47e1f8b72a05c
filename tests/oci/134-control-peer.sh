# The control socket's peer check (devwld(8) SECURITY): its 0600 mode is not the only
# guard. With the socket made world-writable (chmod 666, as a careless unit or a
# bind-mount into a container might leave it), uid 65534 connects, but devwld judges the
# peer by SO_PEERCRED, refuses it and logs why: its devwlctl fails, the command changes
# nothing, and root's devwlctl still works.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
command -v setpriv >/dev/null || skip "no setpriv"
# What uid 65534 runs must be in its reach (a 0700 checkout's build tree is not).
CTL=$(for_others "$DEVWLCTL") || exit 1

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/c", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
start_devwld
chmod 666 "$T/control.sock"
as_nobody test -w "$T/control.sock" || fail "uid 65534 cannot even write to the socket: the test proves nothing"
as_nobody "$CTL" --socket "$T/control.sock" allow /c "c 1:1 rwm" >"$T/nobody.out" 2>&1 &&
	fail "uid 65534's devwlctl allow succeeded: $(cat "$T/nobody.out")"
wait_for "$T/devwld.log" "control: refusing peer pid [0-9]* uid 65534" 20 ||
	fail "no refusal of uid 65534 logged; devwlctl said: $(cat "$T/nobody.out")"
list=$(ctl list /c) || fail "root's devwlctl list after the refusal: $list"
[ "$list" = "c 1:3 rw" ] || fail "/c changed by a refused peer: $list"
pass "uid 65534 on a world-writable control socket: refused ($(grep -m1 'refusing peer' "$T/devwld.log" | sed 's/^.*control: //')), /c unchanged"
as_nobody "$CTL" --socket "$T/control.sock" list /c >"$T/nobody.out" 2>&1 &&
	fail "uid 65534's devwlctl list succeeded: $(cat "$T/nobody.out")"
pass "uid 65534 cannot read the policy either"
