# The state file (devwld(8) STATE): written atomically on every change, restored at
# start (it wins over the policy file for the hierarchy, unless the file changed
# meanwhile), and a corrupt one is set aside, never half-loaded.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
command -v jq >/dev/null || skip "jq not installed"

cat >"$T/policy.json" <<'JSON'
{ "version": 1, "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:5 r"] } ] }
JSON
S=$T/state.json
stop_devwld() {
	kill "$DEVWLD_PID"
	wait "$DEVWLD_PID" 2>/dev/null
	DEVWLD_PID=
}

start_devwld --state "$S"
[ -f "$S" ] || fail "no state file at start"
ctl mkdir /live && ctl deny /live 'c 1:9 rwm' && ctl mknod-cap /live false || fail "devwlctl"
jq -e '.hierarchy.nodes[] | select(.path == "/live") | .mknod_needs_cap == false' "$S" >/dev/null ||
	fail "devwlctl changes not in the state: $(cat "$S")"
[ "$(stat -c %a "$S")" = 600 ] || fail "state mode $(stat -c %a "$S")"
ls "$T" | grep -q 'state.json\.' && fail "temporary files left: $(ls "$T")"
pass "devwlctl mkdir/deny/mknod-cap are in the state file before devwlctl returns; mode 600, no temporaries"

want=$(ctl show /live)
stop_devwld
start_devwld --state "$S"
[ "$(ctl show /live)" = "$want" ] || fail "after a restart /live is: $(ctl show /live)"
grep -q "state: restored" "$T/devwld.log" || fail "no restore logged"
pass "restored at start: the live hierarchy wins over the policy file, which lacks /live"

# The policy file changed while devwld was down: it is applied (as a reload would).
stop_devwld
cat >"$T/policy.json" <<'JSON'
{ "version": 1, "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:3 r"] } ] }
JSON
start_devwld --state "$S"
ctl list /w | grep -qx 'c 1:3 r' || fail "/w: $(ctl list /w)"
grep -q "differs from what the state was loaded from" "$T/devwld.log" || fail "not logged"
# The devwlctl changes are applied again on top of it, as after any reload.
[ "$(ctl show /live)" = "$want" ] || fail "the devwlctl changes did not survive: $(ctl show /live 2>&1)"
pass "a policy file changed while devwld was down is applied at start, the devwlctl changes on top"

# Corrupt: not JSON.
stop_devwld
echo '{ "devwld_state": 1, "hierarchy": ' >"$S"
start_devwld --state "$S"
grep -q "state $S is unusable" "$T/devwld.log" || fail "corrupt state not reported"
aside=$(ls "$T"/state.json.corrupt-* 2>/dev/null | head -1)
[ -n "$aside" ] && grep -q '"hierarchy": $' "$aside" || fail "corrupt state not set aside: $(ls "$T")"
ctl list /w | grep -qx 'c 1:3 r' || fail "not serving the policy file: $(ctl list /w)"
jq -e '.devwld_state == 1' "$S" >/dev/null || fail "no fresh state written: $(cat "$S")"
pass "a corrupt state file is reported, set aside as $(basename "$aside"), and devwld starts from the policy file"

# Valid JSON, valid hierarchy, one bad container entry: nothing of it may be loaded.
stop_devwld
rm -f "$T"/state.json.corrupt-*
jq '.hierarchy.nodes += [{"path": "/half", "rules": ["deny a"]}]
    | .policy_text = null | .containers = [{"id": "x", "node": "/half", "created_node": false,
      "procs": [{"slot": -1}]}]' "$S" >"$S.new" && chmod 600 "$S.new" && mv "$S.new" "$S"
start_devwld --state "$S"
ls "$T"/state.json.corrupt-* >/dev/null 2>&1 || fail "half-bad state not set aside"
ctl show /half >/dev/null 2>&1 && fail "/half was loaded from a state that was set aside"
pass "a state with one bad entry is set aside whole: nothing of it is loaded"
exit 0
