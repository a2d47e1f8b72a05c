# Whose container a name means (devwld(8) SECURITY, resolve.c): a user of --allow-uid
# registers, through the listener as a rootless runtime would, one container under root's
# container's 12-character short id claiming its Kubernetes pod name, and one under its
# very full id. devwlctl attach, detach and events --container resolve a short id, a prefix
# or NAMESPACE/POD/CONTAINER among root's containers only, so they reach root's container,
# never the user's; --owner 65534 reaches the user's, whose claimed pod name is no name of
# it. An unknown name and an ambiguous prefix are refused, the candidates listed with their
# owner; the event stream of a 12-character prefix carries root's container's decisions
# and not those of the user's container of the same id. A planned restart keeps all that.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_user_client
command -v jq >/dev/null || skip "no jq"
mkdir -m 777 "$T/sig-root" "$T/sig-nobody" && mkdir "$T/att" || fail "cannot make $T/sig-*"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/k8s", "rules": ["allow a"] } ] }
JSON
# Kernel mode never: the stand-in runtimes run in this test's own cgroup.
start_devwld --allow-uid 65534 --kernel-mode never --state "$T/state.json"

SHORT=4f1c2a9be07d
A=${SHORT}$(printf '1%.0s' $(seq 52)) # root's, with a Kubernetes name
B=4f1c2a9b0000$(printf '2%.0s' $(seq 52)) # root's, sharing A's first 8 digits
POD='{"io.kubernetes.pod.namespace":"prod","io.kubernetes.pod.name":"db-0","io.kubernetes.container.name":"db"}'
POD_B='{"io.kubernetes.pod.namespace":"prod","io.kubernetes.pod.name":"web-0","io.kubernetes.container.name":"web"}'

# run WHO ID [ANNOTATIONS]: a stand-in runtime's container, as WHO (root or nobody), until
# the test ends; it opens /dev/null once per $T/sig-WHO/go-ID. Output in $T/WHO-ID.out.
run() {
	local who=$1 id=$2 as=
	[ "$who" = nobody ] && as=as_nobody
	OCI_CLIENT_METADATA= OCI_CLIENT_ANNOTATIONS=${3:-} $as "$CLIENT" "$T/listen.sock" run "$id" \
		"$T/sig-$who" >"$T/$who-$id.out" 2>&1 &
	CHILD_PIDS+=("$!")
	wait_for "$T/$who-$id.out" UP 30 || fail "$who's $id did not start: $(cat "$T/$who-$id.out")"
	wait_until 60 sh -c '"$0" --socket "$1" containers | grep -q "^$2 .* $3 [^ ]*$"' "$DEVWLCTL" \
		"$T/control.sock" "$id" "$([ "$who" = root ] && echo 0 || echo 65534)" ||
		fail "$who's $id never reached devwld: $(ctl containers)"
}
# The user's first: a first match over every owner would be theirs.
run nobody "$SHORT" "$POD"
run nobody "$A"
run root "$A" "$POD"
run root "$B" "$POD_B"
ctl containers | grep -q "^$A /k8s/prod/db-0/db 1 .* 0 prod/db-0/db$" &&
	ctl containers | grep -q "^$SHORT /users/65534/$SHORT 1 .* 65534 -$" &&
	ctl containers | grep -q "^$A /users/65534/$A 1 .* 65534 -$" || fail "containers: $(ctl containers)"
grep -q "container $SHORT: node /users/65534/$SHORT" "$T/devwld.log" ||
	fail "the user's claimed pod name chose its node: $(grep "$SHORT" "$T/devwld.log")"
pass "root's $SHORT… (prod/db-0/db) and uid 65534's $SHORT and $SHORT… run side by side"

# attached_to PATH: the id of the container holding PATH, from
# devwlctl containers --devices (ID TYPE MAJOR:MINOR ACCESS PATH ...).
attached_to() { ctl containers --devices | awk -v p="$1" '$5 == p {print $1}'; }
# attach_as NAME DEVICE PATH [OPTS...]: attach DEVICE at PATH to NAME; the node is there.
attach_as() {
	local name=$1 dev=$2 path=$3
	shift 3
	ctl attach "$name" "$dev" "$path" "$@" >"$T/ctl.out" 2>&1 ||
		fail "attach $name $*: $(cat "$T/ctl.out")"
	[ -c "$path" ] && [ "$(stat -c '%t:%T' "$path")" = "$(stat -c '%t:%T' "$dev")" ] ||
		fail "attach $name: no node at $path"
}

# --- 1. a short id and a pod name mean root's container --------------------------------
attach_as "$SHORT" /dev/zero "$T/att/short"
ctl containers --devices | grep -q "^$A c 1:5 rw $T/att/short " ||
	fail "attach $SHORT reached another container: $(ctl containers --devices)"
ctl detach "$SHORT" "$T/att/short" >"$T/ctl.out" 2>&1 || fail "detach $SHORT: $(cat "$T/ctl.out")"
[ ! -e "$T/att/short" ] && [ -z "$(attached_to "$T/att/short")" ] || fail "detach $SHORT left $(ctl containers --devices)"
attach_as prod/db-0/db /dev/zero "$T/att/pod"
ctl containers --devices | grep -q "^$A c 1:5 rw $T/att/pod " ||
	fail "attach prod/db-0/db reached another container: $(ctl containers --devices)"
pass "attach/detach $SHORT and attach prod/db-0/db reach root's $SHORT…, not uid 65534's"

# Which of the two containers of id $A holds it: the node's leaf says (root's /k8s/...).
grep -q "container $A: c 1:5 rw attached at $T/att/pod (node /k8s/prod/db-0/db" "$T/devwld.log" ||
	fail "the attach's log: $(grep "attached at $T/att/pod" "$T/devwld.log")"

# --- 2. --owner reaches the user's, by its id only --------------------------------------
# Its processes run in the host's mount namespace with no device cgroup devwld trusts:
# the node gate refuses a node on a host directory for it (tests/oci/162), and the
# refusal names the user's container, not root's $A.
ctl attach "$SHORT" /dev/null "$T/att/user" --owner 65534 >"$T/ctl.out" 2>&1 &&
	fail "attach --owner 65534 made a node on a host directory: $(cat "$T/ctl.out")"
grep -q "container $SHORT: .*only on a nodev mount" "$T/ctl.out" ||
	fail "attach --owner 65534 $SHORT: $(cat "$T/ctl.out")"
grep -q '"event":"attach","container":"'"$SHORT"'","node":"/users/65534/'"$SHORT"'".*"result":"refused"' \
	"$T/audit.jsonl" || fail "the refusal's audit record: $(grep '"event":"attach"' "$T/audit.jsonl" | tail -1)"
[ ! -e "$T/att/user" ] || fail "a node was made for the user"
ctl detach "$SHORT" "$T/att/user" --owner 65534 >"$T/ctl.out" 2>&1 &&
	fail "detach --owner 65534 of nothing: $(cat "$T/ctl.out")"
grep -q "container $SHORT has no device $T/att/user attached" "$T/ctl.out" || fail "detach: $(cat "$T/ctl.out")"
ctl attach prod/db-0/db /dev/zero "$T/att/claim" --owner 65534 >"$T/ctl.out" 2>&1 &&
	fail "uid 65534's claimed pod name names its container: $(ctl containers --devices)"
grep -q 'no container "prod/db-0/db" of uid 65534' "$T/ctl.out" || fail "attach --owner 65534 prod/db-0/db: $(cat "$T/ctl.out")"
[ ! -e "$T/att/claim" ] || fail "a node was made for the claimed name"
pass "--owner 65534 reaches the user's $SHORT (attach refused by the node gate, detach); its claimed prod/db-0/db names nothing"

# --- 3. unknown and ambiguous names are refused, saying why -----------------------------
ctl attach nosuchctr /dev/zero "$T/att/x" >"$T/ctl.out" 2>&1 && fail "attach nosuchctr: $(cat "$T/ctl.out")"
grep -q 'no container "nosuchctr" of uid 0' "$T/ctl.out" || fail "attach nosuchctr: $(cat "$T/ctl.out")"
ctl attach "$B" /dev/zero "$T/att/x" --owner 65534 >"$T/ctl.out" 2>&1 && fail "attach --owner 65534 B: $(cat "$T/ctl.out")"
grep -q "no container \"$B\" of uid 65534 .*uid 0 has one: name it with --owner 0" "$T/ctl.out" ||
	fail "attach --owner 65534 B: $(cat "$T/ctl.out")"
ctl attach 4f1c2a9b /dev/zero "$T/att/x" >"$T/ctl.out" 2>&1 && fail "attach 4f1c2a9b: $(cat "$T/ctl.out")"
grep -q "\"4f1c2a9b\" names 2 containers of uid 0: .*give more of the id" "$T/ctl.out" &&
	grep -q "$A (uid 0)" "$T/ctl.out" && grep -q "$B (uid 0)" "$T/ctl.out" &&
	! grep -q "uid 65534" "$T/ctl.out" || fail "attach 4f1c2a9b: $(cat "$T/ctl.out")"
ctl detach 4f1c2a9b "$T/att/pod" >"$T/ctl.out" 2>&1 && fail "detach 4f1c2a9b: $(cat "$T/ctl.out")"
grep -q "names 2 containers of uid 0" "$T/ctl.out" || fail "detach 4f1c2a9b: $(cat "$T/ctl.out")"
[ ! -e "$T/att/x" ] && [ -e "$T/att/pod" ] || fail "a refused request changed a node"
"$DEVWLCTL" --socket "$T/control.sock" events --container nosuchctr >"$T/ev-unknown.out" 2>&1 &&
	fail "events --container nosuchctr: $(cat "$T/ev-unknown.out")"
grep -q 'no container "nosuchctr" of uid 0' "$T/ev-unknown.out" || fail "events --container nosuchctr: $(cat "$T/ev-unknown.out")"
"$DEVWLCTL" --socket "$T/control.sock" events --container 4f1c2a9b >"$T/ev-amb.out" 2>&1 &&
	fail "events --container 4f1c2a9b: $(cat "$T/ev-amb.out")"
grep -q "\"4f1c2a9b\" names 2 containers of uid 0" "$T/ev-amb.out" || fail "events --container 4f1c2a9b: $(cat "$T/ev-amb.out")"
pass "unknown (attach, events) and ambiguous (attach, detach, events) names refused, with the candidates: $(cat "$T/ctl.out")"

# A full id of a container not started yet may be followed; it is kept as given.
timeout 3 "$DEVWLCTL" --socket "$T/control.sock" events --container "$(printf 'f%.0s' $(seq 64))" \
	>"$T/ev-later.out" 2>&1
[ $? = 124 ] && [ ! -s "$T/ev-later.out" ] || fail "events --container FULL-ID-TO-BE: $(cat "$T/ev-later.out")"
pass "events --container accepts the full id of a container still to come"

# --- 4. events --container SHORT: root's container's decisions only ----------------------
subs() { ctl stats | awk '$1 == "events_subscribers" {print $2}'; }
"$DEVWLCTL" --socket "$T/control.sock" events --json --container "$SHORT" >"$T/ev-root.out" 2>&1 &
CHILD_PIDS+=("$!")
"$DEVWLCTL" --socket "$T/control.sock" events --json --container "$SHORT" --owner 65534 >"$T/ev-user.out" 2>&1 &
CHILD_PIDS+=("$!")
"$DEVWLCTL" --socket "$T/control.sock" events --json --container "$A" --owner 65534 >"$T/ev-user2.out" 2>&1 &
CHILD_PIDS+=("$!")
wait_until 30 sh -c '[ "$("$0" --socket "$1" stats | awk "\$1 == \"events_subscribers\" {print \$2}")" = 3 ]' \
	"$DEVWLCTL" "$T/control.sock" || fail "the event streams did not start: $(subs); $(cat "$T"/ev-*.out)"
# The user's two first: a leak into root's stream would come before root's own line.
touch "$T/sig-nobody/go-$SHORT" "$T/sig-nobody/go-$A"
wait_for "$T/nobody-$SHORT.out" OPENED 30 && wait_for "$T/nobody-$A.out" OPENED 30 ||
	fail "the user's containers made no call: $(cat "$T/nobody-$SHORT.out" "$T/nobody-$A.out")"
wait_for "$T/ev-user.out" "\"container\":\"$SHORT\"" 30 || fail "uid 65534's $SHORT stream: $(cat "$T/ev-user.out")"
wait_for "$T/ev-user2.out" "\"node\":\"/users/65534/$A\"" 30 || fail "uid 65534's $A stream: $(cat "$T/ev-user2.out")"
touch "$T/sig-root/go-$A"
wait_for "$T/root-$A.out" OPENED 30 || fail "root's $A made no call: $(cat "$T/root-$A.out")"
wait_for "$T/ev-root.out" "\"container\":\"$A\"" 30 || fail "events --container $SHORT: nothing of root's $A: $(cat "$T/ev-root.out")"
jq -e -s --arg a "$A" 'length > 0 and all(.container == $a and .node == "/k8s/prod/db-0/db")' \
	"$T/ev-root.out" >/dev/null || fail "events --container $SHORT carried another container's: $(cat "$T/ev-root.out")"
jq -e -s 'all(.node | startswith("/users/65534/"))' "$T/ev-user.out" "$T/ev-user2.out" >/dev/null ||
	fail "uid 65534's streams carried root's: $(cat "$T/ev-user.out" "$T/ev-user2.out")"
pass "events --container $SHORT follows root's $SHORT… only ($(wc -l <"$T/ev-root.out") lines); --owner 65534 the user's"

# --- 5. a planned restart keeps who is named so -------------------------------------------
ctl restart >/dev/null || fail "devwlctl restart"
ctl attach prod/db-0/db /dev/zero "$T/att/claim" --owner 65534 >"$T/ctl.out" 2>&1 &&
	fail "after a restart, uid 65534's claimed pod name names its container"
grep -q 'no container "prod/db-0/db" of uid 65534' "$T/ctl.out" || fail "after a restart: $(cat "$T/ctl.out")"
ctl detach prod/db-0/db "$T/att/pod" >"$T/ctl.out" 2>&1 || fail "after a restart, detach prod/db-0/db: $(cat "$T/ctl.out")"
[ ! -e "$T/att/pod" ] || fail "after a restart, detach prod/db-0/db left the node"
pass "after a restart prod/db-0/db still names root's $SHORT… alone"
exit 0
