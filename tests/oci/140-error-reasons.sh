# Errors say why: every refusal devwlctl and the OCI hook get from devwld names the bad
# input and the reason after the errno name (devwlctl(1), Results), on stderr, with the
# exit status unchanged: a bad access string, "c 10-229", a rule without access, a rule
# the parent refuses (the parent and its rules), an unknown node, a reload of a broken
# file (the file, line and column). devwlctl batch --connect passes the same answers
# through, and the OCI hook says them instead of "devwld answered: error EPERM".
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/containers", "rules": ["deny a", "allow c 1:5 rw"] },
    { "path": "/containers/a" } ],
  "containers": { "node_annotation": [ "/containers" ] } }
JSON
start_devwld

# expect STATUS PATTERN -- ARGS: devwlctl ARGS exits STATUS and its stderr matches PATTERN
# (a fixed string).
expect() {
	local want=$1 pattern=$2 rc=0
	shift 3
	ctl "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = "$want" ] || fail "devwlctl $*: status $rc, not $want: $(cat "$T/err")"
	grep -qF -- "$pattern" "$T/err" || fail "devwlctl $*: said \"$(cat "$T/err")\", not \"$pattern\""
	pass "devwlctl $*: $(cat "$T/err")"
}

expect 1 "devwlctl: EINVAL: allow \"c 1:3 rwx\" on /containers/a: access must be made of 'r', 'w' and 'm'" \
	-- allow /containers/a 'c 1:3 rwx'
expect 1 "devwlctl: EINVAL: allow \"c 10-229\" on /containers/a: expected ':' after the major" \
	-- allow /containers/a 'c 10-229'
expect 1 'devwlctl: EINVAL: allow "c 1:3" on /containers/a: missing access (a subset of "rwm")' \
	-- allow /containers/a 'c 1:3'
expect 1 "devwlctl: EPERM: allow c 1:3 rw on /containers/a: the parent /containers does not allow it (its rules: c 1:5 rw)" \
	-- allow /containers/a 'c 1:3 rw'
expect 1 "devwlctl: ENOENT: no node /nope" -- allow /nope 'c 1:5 r'
expect 1 "devwlctl: ENOENT: no node /nope" -- show /nope
expect 1 "devwlctl: EBUSY: /containers has children: remove them first" -- rmdir /containers
expect 1 "devwlctl: ENOENT: no node /nope" -- mknod-cap /nope true
[ "$(ctl list /containers/a)" = "c 1:5 rw" ] || fail "a refused change changed the node: $(ctl list /containers/a)"

# A broken file: the reload is refused, naming the file, the line and what is wrong.
cp "$T/policy.json" "$T/good.json"
printf '{ "version": 1,\n  "nodes": [\n    { "path": "/containers" "rules": [] } ] }\n' >"$T/policy.json"
expect 1 "devwlctl: EINVAL: reload of $T/policy.json failed, keeping the current policy: $T/policy.json:3:" -- reload
printf '{ "version": 1,\n  "nodes": [\n    { "path": "/containers", "rulez": [] } ] }\n' >"$T/policy.json"
expect 1 "devwlctl: EINVAL: reload of $T/policy.json failed, keeping the current policy: $T/policy.json:3:5: node /containers: unknown key \"rulez\" (known: path, rules, devices, mknod_needs_cap, cdi_annotations, why, learn)" -- reload
cp "$T/good.json" "$T/policy.json"
ctl reload || fail "the good file does not reload"

# The same answers in a batch against devwld: one line each, the session goes on.
printf 'allow /containers/a c 1:3 rw\nlist /containers/a\nbogus\n' |
	"$DEVWLCTL" batch --connect "$T/control.sock" >"$T/batch.out" ||
	fail "batch --connect: $(cat "$T/batch.out")"
[ "$(sed -n 1p "$T/batch.out")" = "error EPERM: allow c 1:3 rw on /containers/a: the parent /containers does not allow it (its rules: c 1:5 rw)" ] &&
	[ "$(sed -n 2p "$T/batch.out")" = "c 1:5 rw" ] &&
	sed -n 4p "$T/batch.out" | grep -q '^error EINVAL: unknown command "bogus"' ||
	fail "batch --connect answered: $(cat "$T/batch.out")"
pass "batch --connect: $(sed -n 1p "$T/batch.out")"


# The OCI hook: a container whose annotation names a node the policy does not let it.
state='{"ociVersion":"1.0.2","id":"hooked","status":"creating","pid":1,"bundle":"/",
	"annotations":{"org.devwl.node":"/elsewhere"}}'
rc=0
"$OCI_HOOK" --socket "$T/control.sock" createRuntime <<<"$state" 2>"$T/hook.err" || rc=$?
[ "$rc" = 1 ] || fail "the hook exited $rc: $(cat "$T/hook.err")"
grep -qF 'devwl-oci-hook: createRuntime: EPERM: container hooked: no node: annotation org.devwl.node "/elsewhere" is outside the policy'"'"'s "node_annotation" subtrees' "$T/hook.err" ||
	fail "the hook said: $(cat "$T/hook.err")"
pass "devwl-oci-hook: $(cat "$T/hook.err")"
