# devwlctl unbind NODE allow|deny SELECTOR [ACCESS] drops exactly one selector binding
# (devwlctl(1) unbind): a deny added over an allow by devwlctl, then the allow; the
# policy file's own binding too. What the dropped allow granted is revoked, what the
# others still name stays theirs, and an unbind is a devwlctl change: a reload keeps it,
# reset drops it. An unknown binding is refused, listing the node's.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
make_loop
# numbers_of DEV: MAJOR:MINOR in decimal.
numbers_of() { echo "$(($(stat -c '0x%t' "$1"))):$(($(stat -c '0x%T' "$1")))"; }
N=$(numbers_of "$LOOP")
truncate -s 1M "$T/f.img" || fail "truncate"
LF=$(loop_of "$T/f.img") || skip "no second loop device"
NF=$(numbers_of "$LF")

cat >"$T/policy.json" <<JSON
{ "version": 1,
  "nodes": [ { "path": "/lab", "rules": ["deny a"] } ],
  "selectors": [ { "node": "/lab", "allow": "loop:$T/f.img r" } ] }
JSON
start_devwld --state "$T/state.json"
sel() { ctl selectors | grep "^/lab "; }
[ "$(ctl list /lab)" = "b $NF r" ] || fail "the file's binding: $(ctl list /lab)"

# --- 1. a deny over an allow, then each dropped ----------------------------------------
ctl allow /lab "loop:$T/disk" rw >/dev/null && ctl deny /lab "loop:$T/disk" w >/dev/null ||
	fail "binding loop:$T/disk"
[ "$(ctl list /lab | sort)" = "$(printf 'b %s r\nb %s r' "$N" "$NF" | sort)" ] || fail "allow rw then deny w: $(ctl list /lab)"
[ "$(sel | wc -l)" = 3 ] || fail "three bindings: $(sel)"
ctl unbind /lab deny "loop:$T/disk" w >"$T/out" 2>&1 || fail "unbind the deny: $(cat "$T/out")"
sel | grep -q "deny" && fail "the deny binding stayed: $(sel)"
sel | grep -qxF "/lab allow loop:$T/disk rw [devwlctl]: b $N rw" || fail "the allow binding: $(sel)"
ctl check /lab b "${N%:*}" "${N#*:}" rw | grep -qx allow || fail "the allow is not rw again: $(ctl list /lab)"
pass "unbind of the deny: the allow binding's rw is whole again ($(ctl list /lab | tr '\n' ' '))"
ctl unbind /lab allow "loop:$T/disk" rw >"$T/out" 2>&1 || fail "unbind the allow: $(cat "$T/out")"
[ "$(ctl list /lab)" = "b $NF r" ] || fail "unbind of the allow left: $(ctl list /lab)"
[ "$(sel)" = "/lab allow loop:$T/f.img r [file]: b $NF r" ] || fail "bindings left: $(sel)"
grep -q '"event":"selector".*"cause":"devwlctl"' "$T/audit.jsonl" || fail "no record of the unbind"
pass "unbind of the allow: its grant revoked, the file's binding alone left"

# --- 2. refusals: a binding the node does not have -------------------------------------
ctl unbind /lab allow "loop:$T/f.img" >"$T/out" 2>&1 && fail "unbind of another text: $(cat "$T/out")"
grep -qF "ENOENT: node /lab has no binding allow loop:$T/f.img (it has: allow loop:$T/f.img r)" "$T/out" ||
	fail "unbind of an unknown binding: $(cat "$T/out")"
ctl unbind /nosuch allow "loop:$T/f.img" r >"$T/out" 2>&1 && fail "unbind on no node: $(cat "$T/out")"
grep -q "ENOENT: no node /nosuch" "$T/out" || fail "unbind on no node: $(cat "$T/out")"
pass "an unknown binding is refused, the node's listed: $(cat "$T/out")"

# --- 3. the file's binding, across a reload and a reset ----------------------------------
ctl unbind /lab allow "loop:$T/f.img" r >"$T/out" 2>&1 || fail "unbind the file's: $(cat "$T/out")"
[ -z "$(ctl list /lab)" ] && [ -z "$(sel)" ] || fail "after unbinding the file's: $(ctl list /lab); $(sel)"
ctl reload >/dev/null || fail "reload"
[ -z "$(ctl list /lab)" ] && [ -z "$(sel)" ] || fail "a reload undid the unbind: $(ctl list /lab); $(sel)"
ctl reset >/dev/null || fail "reset"
[ "$(ctl list /lab)" = "b $NF r" ] && [ "$(sel)" = "/lab allow loop:$T/f.img r [file]: b $NF r" ] ||
	fail "reset did not bring the file's binding back: $(ctl list /lab); $(sel)"
pass "the file's binding: unbound, kept so across a reload, back after reset"
exit 0
