# examples/docker/devwl-runc without Docker: with a stand-in runtime that records what
# it was given, the wrapper adds listenerPath (and listenerMetadata) only to a create or
# run whose seccomp section has a SCMP_ACT_NOTIFY rule and no listener of its own, finds
# the bundle however runc's arguments give it, passes every argument through unchanged,
# and refuses to start a container whose config it cannot read.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/clients.sh"
trap cleanup EXIT

W=$EXAMPLES/docker/devwl-runc
cat >"$T/fake-runc" <<'SH'
#!/bin/sh
printf '%s\n' "$@" >"$FAKE_OUT"
SH
chmod +x "$T/fake-runc"
export FAKE_OUT=$T/args
client_profile
bundle() { # NAME SECCOMP-JSON
	mkdir -p "$T/$1"
	jq -n --argjson sc "$2" '{ociVersion: "1.0.2", process: {args: ["sh"]}, linux: {seccomp: $sc}}' \
		| jq 'if .linux.seccomp == null then del(.linux.seccomp) else . end' >"$T/$1/config.json"
}
notify=$(jq 'del(.listenerPath)' "$T/profile.json")
w() { "$W" --devwl-runtime="$T/fake-runc" --devwl-listener=/run/x.sock "$@"; }
lp() { jq -r '.linux.seccomp.listenerPath // "none"' "$T/$1/config.json"; }

bundle a "$notify"
w --root /r --log /l --log-format json --systemd-cgroup create --bundle "$T/a" --pid-file /p id1 ||
	fail "create"
[ "$(lp a)" = /run/x.sock ] || fail "listenerPath not added: $(cat "$T/a/config.json")"
[ "$(tr '\n' ' ' <"$T/args")" = "--root /r --log /l --log-format json --systemd-cgroup create --bundle $T/a --pid-file /p id1 " ] ||
	fail "arguments changed: $(cat "$T/args")"
bundle b "$notify"
w run -b="$T/b" id2 && [ "$(lp b)" = /run/x.sock ] || fail "-b=DIR"
bundle c "$notify"
(cd "$T/c" && w create id3) && [ "$(lp c)" = /run/x.sock ] || fail "bundle in the working directory"
bundle d "$notify"
w --devwl-metadata=node=/apps/web create -b "$T/d" id4 &&
	[ "$(jq -r .linux.seccomp.listenerMetadata "$T/d/config.json")" = node=/apps/web ] ||
	fail "listenerMetadata: $(cat "$T/d/config.json")"
[ -z "$(find "$T" -name '.config.json.devwl.*')" ] || fail "temporary file left"
pass "listenerPath (and metadata) added for --bundle DIR, -b=DIR, the working directory; arguments unchanged"

bundle e "$(jq '.listenerPath = "/elsewhere.sock"' <<<"$notify")"
bundle f "$(jq '.syscalls |= map(select(.action != "SCMP_ACT_NOTIFY"))' <<<"$notify")"
bundle g null
for b in e f g; do
	cp "$T/$b/config.json" "$T/$b.before"
	w create --bundle "$T/$b" "id-$b" || fail "create $b"
	cmp -s "$T/$b/config.json" "$T/$b.before" || fail "$b's config was changed"
done
bundle h "$notify"
cp "$T/h/config.json" "$T/h.before"
w start id-h && w delete --bundle "$T/h" id-h && w state id-h || fail "other commands"
cmp -s "$T/h/config.json" "$T/h.before" || fail "a non-create command changed the config"
pass "a listener of the profile's own, no NOTIFY rule, no seccomp, start/delete/state: config untouched"

rm -f "$T/args"
mkdir -p "$T/bad" && echo '{"linux": {"seccomp": ' >"$T/bad/config.json"
w create --bundle "$T/bad" id-bad 2>"$T/bad.err" && fail "malformed config started"
grep -q "devwl-runc: .* is not valid JSON" "$T/bad.err" || fail "message: $(cat "$T/bad.err")"
w create --bundle "$T/missing" id-m 2>"$T/m.err" && fail "missing config started"
grep -q "devwl-runc: cannot read" "$T/m.err" || fail "message: $(cat "$T/m.err")"
w --devwl-listner=/x create id-typo 2>"$T/typo.err" && fail "a misspelt option ran"
grep -q "unknown option --devwl-listner=/x" "$T/typo.err" || fail "message: $(cat "$T/typo.err")"
[ -e "$T/args" ] && fail "the runtime ran for a refused container"
# runc's --log file gets the refusal in runc's format: that file is what Docker shows.
w --devwl-listner=/x --log "$T/log.json" --log-format json create id-typo 2>/dev/null &&
	fail "a misspelt option ran"
jq -e 'select(.level == "error") | .msg | test("unknown option --devwl-listner=/x")' \
	"$T/log.json" >/dev/null || fail "--log json: $(cat "$T/log.json" 2>&1)"
w --devwl-listner=/x --log="$T/log.txt" create id-typo 2>/dev/null && fail "a misspelt option ran"
grep -q '^time=".*" level=error msg="devwl-runc: unknown option' "$T/log.txt" ||
	fail "--log text: $(cat "$T/log.txt" 2>&1)"
pass "malformed or missing config.json, a misspelt --devwl- option: refused, the runtime never runs"
exit 0
