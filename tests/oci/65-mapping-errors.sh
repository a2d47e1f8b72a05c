# The policy file's "containers" object (devwl-policy(5)): every bad template or key is
# refused at start with a message naming the file and the key, and on reload changes
# nothing (the nodes of the same file included).
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

policy() {
	printf '{ "version": 1, "nodes": [ { "path": "/apps", "rules": ["deny a", "allow c 1:3 rw"] } ],
  "containers": %s }\n' "$1" >"$T/policy.json"
}

# "containers" value | what the message must say
while IFS='|' read -r containers want; do
	[ -n "$containers" ] || continue
	policy "$containers"
	rc=0
	timeout 10 "$DEVWLD" --policy "$T/policy.json" --listen "$T/l.sock" --control "$T/c.sock" \
		2>"$T/start.err" || rc=$?
	[ "$rc" = 1 ] || fail "devwld started (rc $rc) with \"containers\": $containers"
	grep -qF -- "policy $T/policy.json: $want" "$T/start.err" ||
		fail "for $containers: expected '$want', got: $(cat "$T/start.err")"
	[ ! -e "$T/l.sock" ] && [ ! -e "$T/c.sock" ] || fail "sockets left behind"
done <<'EOF'
{"match": [{"annotation": "a", "node": "/gpu/{foo}"}]}|"containers"."match"[0]."node": unknown placeholder at "{foo}"
{"match": [{"annotation": "a", "node": "/gpu/{pod"}]}|"containers"."match"[0]."node": unknown placeholder
{"match": [{"annotation": "a", "node": "/gpu/pod}"}]}|"containers"."match"[0]."node": unknown placeholder
{"k8s_template": "/k8s/{namespace}-{pod}/{container}"}|"containers"."k8s_template": two placeholders in one path component
{"default_template": "/c/{pod}"}|"containers"."default_template": {pod} cannot be used here
{"default_template": "c/{id}"}|"containers"."default_template": "c/{id}" does not start with "/"
{"default_template": "/c/./{id}"}|"containers"."default_template": "/c/./{id}" gives "/c/./id", not a node path
{"default_template": "/c/{id}/"}|"containers"."default_template": "/c/{id}/" gives "/c/id/", not a node path
{"k8s_template": "/k8s/{namespace}/../{pod}/{container}"}|"containers"."k8s_template": "/k8s/{namespace}/../{pod}/{container}" gives
{"k8s_template": "/k8s/a b/{pod}/{container}"}|"containers"."k8s_template": "/k8s/a b/{pod}/{container}" gives
{"k8s_template": "/k8s/\ta/{pod}/{container}"}|"containers"."k8s_template": "/k8s/?a/{pod}/{container}" gives
{"k8s_template": 7}|"containers"."k8s_template": must be a string, not int
{"bogus": 1}|"containers": unknown key "bogus"
{"match": {}}|"containers"."match": must be an array, not object
{"match": [{"annotation": "a"}]}|"containers"."match"[0]: needs "annotation" and "node"
{"match": [{"annotation": "a", "node": "/x", "colour": "red"}]}|"containers"."match"[0]: unknown key "colour"
{"match": [{"annotation": "", "node": "/x"}]}|"containers"."match"[0]."annotation": empty
{"match": [{"annotation": "a", "value": 1, "node": "/x"}]}|"containers"."match"[0]."value": must be a string
{"node_annotation": "yes"}|"containers"."node_annotation": must be true, false or an array
{"node_annotation": ["/ok", "/k8s/{namespace}/.."]}|"containers"."node_annotation"[1]: "/k8s/{namespace}/.." gives "/k8s/namespace/..", not a node path
EOF
pass "20 bad \"containers\" objects refused at start, each naming the file and the key"

for bad in '/x/{id}{pod}' 'x/{id}' '/x/{nope}'; do
	"$DEVWLD" --k8s-template "$bad" 2>"$T/opt.err" && fail "--k8s-template '$bad' accepted"
	grep -q -- "--k8s-template:" "$T/opt.err" || fail "--k8s-template '$bad': $(cat "$T/opt.err")"
done
"$DEVWLD" --default-template '/c/{namespace}' 2>"$T/opt.err" && fail "--default-template with {namespace}"
grep -q -- "--default-template: {namespace} cannot be used here" "$T/opt.err" ||
	fail "--default-template: $(cat "$T/opt.err")"
pass "bad --k8s-template and --default-template refused"

# A reload with a bad "containers" object keeps both the nodes and the mapping.
policy '{"default_template": "/apps/{id}"}'
start_devwld --no-watch
"$DEVWLD" --version >/dev/null
policy '{"default_template": "/apps/{id}", "match": [{"annotation": "a", "node": "/b/{foo}"}]}'
sed -i 's/"allow c 1:3 rw"/"allow c 1:3 rw", "allow c 1:5 r"/' "$T/policy.json"
kill -HUP "$DEVWLD_PID"
wait_for "$T/devwld.log" "reload of $T/policy.json failed, keeping the current policy: .*\"containers\".\"match\"\[0\].\"node\": unknown placeholder" ||
	fail "no log line for the bad reload"
ctl list /apps | grep -q '^c 1:5' && fail "a reload with a bad \"containers\" changed the nodes"
pass "a bad \"containers\" object on reload changes nothing: $(grep -m1 'reload of' "$T/devwld.log" | sed "s|^devwld: ||; s|$T|\$T|g")"
exit 0
