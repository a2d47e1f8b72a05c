# CDI specs someone else could have written, and specs written to stall devwld's loop
# (devwld(8) SECURITY, "CDI specs"). A cdi: binding on /lab follows test.devwl.org/dev=one,
# which the spec names as /dev/null (c 1:3). A spec of mode 0666, one owned by nobody,
# and every spec of a directory of mode 0777 grant nothing, each logged with its owner
# and mode; the same spec of root's, mode 0644, in a 0755 directory grants. Then specs
# made to be slow, beside the good one: YAML nested 100000 deep (200 KB, which libyaml's
# whole-document load took 41 s over) and a 50 MB one. While devwld reads them, control
# commands are answered (each within a generous 10 s: a loop held by the parser would
# answer none), both are refused in the log with the limit they passed, and the good
# spec's grant stays.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
id nobody >/dev/null 2>&1 || skip "no user nobody to own a spec"

mkdir -m 0755 "$T/cdi"
# spec [MODE [OWNER]]: the spec, written beside and renamed into place (the watch sees
# the rename: a chmod alone is no change of the directory).
spec() {
	cat >"$T/cdi/.dev.tmp" <<'EOF_SPEC'
{ "cdiVersion": "0.6.0", "kind": "test.devwl.org/dev",
  "devices": [ { "name": "one",
                 "containerEdits": { "deviceNodes": [ { "path": "/dev/null", "type": "c",
                                                         "major": 1, "minor": 3 } ] } } ] }
EOF_SPEC
	chmod "${1:-0644}" "$T/cdi/.dev.tmp"
	chown "${2:-root}" "$T/cdi/.dev.tmp"
	mv "$T/cdi/.dev.tmp" "$T/cdi/dev.json"
}
cat >"$T/policy.json" <<'EOF_POLICY'
{ "version": 1,
  "nodes": [ { "path": "/lab", "rules": ["deny a"] } ],
  "selectors": [ { "node": "/lab", "allow": "cdi:test.devwl.org/dev=one r" } ] }
EOF_POLICY
GRANTED="/lab allow cdi:test.devwl.org/dev=one r [file]: c 1:3 r"
NOTHING="/lab allow cdi:test.devwl.org/dev=one r [file]: -"
# shows LINE: devwlctl selectors lists the binding as LINE (in a moment: the watch).
shows() {
	wait_until 60 sh -c '"$0" --socket "$1" selectors | grep -qxF -- "$2"' "$DEVWLCTL" \
		"$T/control.sock" "$1"
}

spec 0666
start_devwld --cdi-dir "$T/cdi"
shows "$NOTHING" || fail "a spec of mode 0666 granted: $(ctl selectors)"
wait_for "$T/devwld.log" "$T/cdi/dev.json: not read: writable by everyone (mode 0666, owner uid 0)" ||
	fail "no log line for the spec of mode 0666"
spec 0644
shows "$GRANTED" || fail "root's spec of mode 0644 grants nothing: $(ctl selectors)"
pass "a spec of mode 0666 grants nothing and is logged; root's, mode 0644, grants c 1:3 r"

spec 0644 nobody
shows "$NOTHING" || fail "a spec owned by nobody grants: $(ctl selectors)"
uid=$(id -u nobody)
wait_for "$T/devwld.log" "CDI: $T/cdi/dev.json: not read: owned by uid $uid (mode 0644)" ||
	fail "no log line for the spec owned by nobody"
spec 0644
shows "$GRANTED" || fail "root's spec again grants nothing: $(ctl selectors)"
chmod 0777 "$T/cdi"
spec 0644
shows "$NOTHING" || fail "a spec in a directory of mode 0777 grants: $(ctl selectors)"
wait_for "$T/devwld.log" "CDI: $T/cdi: not read: writable by everyone (mode 0777, owner uid 0)" ||
	fail "no log line for the directory of mode 0777"
chmod 0755 "$T/cdi"
spec 0644
shows "$GRANTED" || fail "the directory made 0755 again: nothing granted: $(ctl selectors)"
pass "a spec owned by nobody, and root's in a directory of mode 0777, grant nothing; each logged"

# 100000 [ and their ], and 50 MB of [, written beside and renamed into place.
python3 -c 'import sys; sys.stdout.write("[" * 100000 + "]" * 100000 + "\n")' >"$T/cdi/.deep.tmp" ||
	fail "python3 wrote no deep spec"
head -c $((50 << 20)) /dev/zero | tr '\0' '[' >"$T/cdi/.big.tmp"
[ "$(stat -c %s "$T/cdi/.big.tmp")" = $((50 << 20)) ] || fail "no 50 MB spec"
mv "$T/cdi/.deep.tmp" "$T/cdi/deep.yaml"
mv "$T/cdi/.big.tmp" "$T/cdi/big.yaml"
# Answered while the specs are read: the watch's event is in the loop within moments of
# the rename, so the loop meets these commands while it reads them, or after.
for i in 1 2 3 4 5 6 7 8 9 10; do
	timeout 10 "$DEVWLCTL" --socket "$T/control.sock" list / >"$T/list.out" 2>&1 ||
		fail "devwlctl list / ($i) got no answer within 10 s while devwld read the specs: $(cat "$T/list.out")"
	sleep 0.1
done
wait_for "$T/devwld.log" "CDI: $T/cdi/deep.yaml:1:66: nested deeper than 64 levels" ||
	fail "no log line refusing deep.yaml at its 65th level"
wait_for "$T/devwld.log" "CDI: $T/cdi/big.yaml: larger than 1 MiB" ||
	fail "no log line refusing big.yaml by its size"
timeout 10 "$DEVWLCTL" --socket "$T/control.sock" selectors >"$T/sel.out" 2>&1 ||
	fail "devwlctl selectors: $(cat "$T/sel.out")"
grep -qxF -- "$GRANTED" "$T/sel.out" || fail "the good spec's grant went: $(cat "$T/sel.out")"
pass "specs nested 100000 deep and of 50 MB: control commands answered while devwld reads them, both refused by the limit they pass (logged), the good spec's grant kept"
exit 0
