# Events say why (devwlctl(1), events; devwld(8), --audit): a runc container without
# CAP_MKNOD (runc's default capabilities) makes a node its policy allows, refused EPERM
# for want of CAP_MKNOD, and one its policy denies, refused EPERM by the policy.
# devwlctl check answers allow for the first; the audit and devwlctl events --json tell the
# two apart ("no CAP_MKNOD", "policy" with the rule that refused it), in the same line.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm"] } ] }
JSON
start_devwld
follow_events "$T/events.out"

tag=why-$$
make_rootfs
make_bundle one 'mknod /tmp/null c 1 3; mknod /tmp/mem c 1 1; echo done'
run_fg "$tag" "$T/one" || fail "runc: $(cat "$T/$tag.out")"
[ "$(grep -c "Operation not permitted" "$T/$tag.out")" = 2 ] || fail "container: $(cat "$T/$tag.out")"
[ "$(ctl check /containers c 1 3 m)" = allow ] || fail "devwlctl check does not allow c 1:3 m"

wait_for "$T/events.out" '"path":"/tmp/mem"' || fail "no policy event: $(cat "$T/events.out")"
# one DECISION-FILTER: exactly one decision of the container in events.out is so.
one() {
	jq -e -s --arg id "$tag" "map(select(.container == \$id and .node == \"/containers/\" + \$id and
		(.syscall | test(\"^mknod(at)?\$\")) and .decision == \"deny\" and .errno == \"EPERM\"
		and ($1))) | length == 1" "$T/events.out" >/dev/null
}
one '.path == "/tmp/null" and .device == "c 1:3" and .access == "m" and .reason == "no CAP_MKNOD"
	and .rule == null' || fail "the CAP_MKNOD refusal: $(cat "$T/events.out")"
one '.path == "/tmp/mem" and .device == "c 1:1" and .access == "m" and .reason == "policy" and
	.rule == "no rule allows it (rules: c 1:3 rwm, c 1:5 rwm); so does /containers"' ||
	fail "the policy denial: $(cat "$T/events.out")"
pass "devwlctl events: $(grep -m1 /tmp/null "$T/events.out")"
pass "devwlctl events: $(grep -m1 /tmp/mem "$T/events.out")"

jq -e -s 'map(select(.container == "'"$tag"'" and .device == "c 1:3" and .access == "m"))
	| length == 1 and .[0].reason == "no CAP_MKNOD"' "$T/audit.jsonl" >/dev/null ||
	fail "audit of the CAP_MKNOD refusal: $(grep /tmp/null "$T/audit.jsonl")"
jq -e -s 'map(select(.container == "'"$tag"'" and .device == "c 1:1"))
	| length == 1 and .[0].reason == "policy" and (.[0].rule | startswith("no rule allows it"))' \
	"$T/audit.jsonl" >/dev/null || fail "audit of the policy denial: $(grep /tmp/mem "$T/audit.jsonl")"
pass "devwld --audit: \"reason\" tells the two EPERMs apart"

# One decision, one record: the subscriber's lines are the audit's, byte for byte, time
# and pid included (common/audit-line.h: built once, formatted once).
wait_for "$T/audit.jsonl" '"path":"/tmp/mem"' || fail "no audit of /tmp/mem"
grep '"decision":' "$T/events.out" >"$T/ev.dec"
grep '"decision":' "$T/audit.jsonl" >"$T/au.dec"
[ -s "$T/ev.dec" ] && cmp -s "$T/ev.dec" "$T/au.dec" ||
	fail "events and audit differ: $(diff "$T/ev.dec" "$T/au.dec")"
pass "devwlctl events and the audit carry the same $(wc -l <"$T/ev.dec") decision lines"
