# The node gate's and the names' attacks (tests/oci 136, 148, 162, made there through the
# listener by a stand-in runtime) made again by a real rootless runc: uid 65534, an
# --allow-uid user, with `runc --root DIR run` and the spec from `runc spec --rootless`
# (tests/oci/rootless.sh), against a root devwld (devwld(8) USERS, SECURITY).
#   a. The user binds a host directory of its own (on the host's ext4, no nodev) over its
#      container's /dev. Root's `devwlctl attach --owner 65534 ID "c 1:5" /dev/zero5
#      --access r` is refused (a node only on a nodev mount), and no device node of any
#      kind is left in that directory for the user to open from the host.
#   b. In that container, a granted mknod on the same /dev, plain and under umask 0777
#      (where EACCES on the nodev probe proves nothing): EPERM, no node.
#   c. The user's container takes root's container's 12-character short id for its own
#      id and claims its Kubernetes name in its annotations: `devwlctl attach SHORTID` and
#      `devwlctl attach NAMESPACE/POD/CONTAINER` reach root's container, never the user's.
# Not here: a loop: binding fooled by a loop device the user binds to a file at the same
# path in its own mount namespace (tests/oci/167 makes it as root): a rootless runc
# container configures no loop device unless the policy grants it /dev/loop-control,
# which the guide's does not.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/rootless.sh"
rootless_setup
# Root's containers too: /k8s, as a CRI runtime's template names them.
jq '.nodes += [{path: "/k8s", rules: ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm",
	"allow c 1:8 rwm", "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm",
	"allow c 136:* rwm"]}]' "$T/policy.json" >"$T/policy.new" && mv "$T/policy.new" "$T/policy.json" ||
	fail "jq on the policy"
ctl reload >/dev/null || fail "devwlctl reload"

# --- a, b: the user's /dev on a host directory ------------------------------------------
findmnt -n -o OPTIONS -T "$T" | tr , '\n' | grep -qx nodev && skip "$T is on a nodev mount here"
mkdir -m 0755 "$T/udev" && chown 65534:65534 "$T/udev" || fail "mkdir $T/udev"
mkdir -p "$T/g" && chown 65534:65534 "$T/g"
jq --arg udev "$T/udev" '.mounts |= map(if .destination == "/dev"
		then {destination: "/dev", type: "bind", source: $udev, options: ["rbind"]} else . end)
	# A bound /dev gets no nodes from runc: the host'"'"'s /dev/null, bound as a rootless
	# runtime binds it, which runc needs for itself.
	| .mounts += [{destination: "/dev/null", type: "bind", source: "/dev/null", options: ["bind"]}]
	| .process.args = ["/bin/sh", "-c", "mknod /dev/plain5 c 1 5; echo PLAIN_RC=$? >/w/g.new
		(umask 0777; mknod /dev/umask5 c 1 5; echo UMASK_RC=$? >>/w/g.new)
		mv /w/g.new /w/g; while [ ! -e /w/stop ]; do sleep 0.1; done"]' \
	"$T/b/config.json" >"$T/g/config.json" && chown 65534:65534 "$T/g/config.json" ||
	fail "jq on the spec"
id=rl-gate-$$
RL_IDS+=("$id")
rt_user run -d --bundle "$T/g" "$id" >"$T/g.out" 2>&1 </dev/null || fail "runc run: $(cat "$T/g.out")"
await g
ctl containers | grep -q "^$id /users/65534/$id " || fail "devwlctl containers: $(ctl containers)"
# The bind is the user's own: its /dev is the host directory, as the user sees it too.
[ -e "$T/udev/null" ] || fail "runc's /dev is not $T/udev: $(ls -la "$T/udev")"

ctl attach --owner 65534 "$id" "c 1:5" /dev/zero5 --access r >"$T/attach.out" 2>&1 &&
	fail "attached into a host directory: $(cat "$T/attach.out"; ls -la "$T/udev")"
grep -q 'only on a nodev mount' "$T/attach.out" || fail "attach: no reason: $(cat "$T/attach.out")"
[ ! -e "$T/udev/zero5" ] || fail "left on the host directory: $(ls -la "$T/udev")"
ctl containers --devices | grep -q "$id" && fail "listed as attached: $(ctl containers --devices)"
nodes=$(find "$T/udev" -xdev \( -type c -o -type b \) 2>/dev/null)
[ -z "$nodes" ] || fail "device nodes in the user's host directory: $nodes"
pass "a: runc's /dev bound to the user's host directory: attach --access r refused ($(sed 's/.*: //' "$T/attach.out")); no device node there to open from the host"

[ "$(cat "$W/g")" = "$(printf 'PLAIN_RC=1\nUMASK_RC=1')" ] || fail "the mknods: $(cat "$W/g")"
[ ! -e "$T/udev/plain5" ] && [ ! -e "$T/udev/umask5" ] || fail "a node was made: $(ls -la "$T/udev")"
audit_reason "$id" mknodat "c 1:5" "a node is made only on a nodev mount" ||
	fail "the refusal's record: $(grep "$id" "$T/audit.jsonl" | grep '"deny"')"
pass "b: a granted mknod c 1:5 on that /dev, plain and under umask 0777: EPERM, no node"
touch "$W/stop"

# --- c: root's container's short id and Kubernetes name, taken by the user ---------------
SHORT=5e2d3b4a1c0f
A=${SHORT}$(printf '3%.0s' $(seq 52))
POD='{"io.kubernetes.pod.namespace": "prod", "io.kubernetes.pod.name": "db-0", "io.kubernetes.container.name": "db"}'
# The user's first, so that a first match over every owner would be the user's.
jq --argjson pod "$POD" '.annotations = $pod
	| .process.args = ["/bin/sh", "-c", "while [ ! -e /w/stop-c ]; do sleep 0.1; done"]' \
	"$T/b/config.json" >"$T/g/config.json" || fail "jq on the user's spec"
RL_IDS+=("$SHORT")
rt_user run -d --bundle "$T/g" "$SHORT" >"$T/u.out" 2>&1 </dev/null || fail "the user's runc run: $(cat "$T/u.out")"
make_bundle "$A" "while [ ! -e /tmp/stop-root ]; do sleep 0.1; done" ".annotations = $POD"
run_detached "$A" "$T/$A"
wait_until 60 sh -c '"$0" --socket "$1" containers | grep -q "^$2 /k8s/prod/db-0/db "' \
	"$DEVWLCTL" "$T/control.sock" "$A" || fail "root's $A: $(ctl containers)"
ctl containers | grep -q "^$SHORT /users/65534/$SHORT .* 65534 -$" ||
	fail "the user's $SHORT: $(ctl containers)"
# The user's container's /dev, from the host (runc exec of a rootless container with a
# seccomp listener fails here: pidfd_getfd).
upid=$(rt_user state "$SHORT" | jq -r .pid) && [ "$upid" -gt 0 ] || fail "the user's $SHORT has no pid"
UDEV=/proc/$upid/root/dev
# on_dev NAME PATH: attach c 1:5 at PATH to the container NAME means; whose it is.
on_dev() {
	ctl attach "$1" "c 1:5" "$2" --access r >"$T/ctl.out" 2>&1 || fail "attach $1: $(cat "$T/ctl.out")"
	ctl containers --devices | awk -v p="$2" '$5 == p {print $1}'
}
[ "$(on_dev "$SHORT" /dev/zshort)" = "$A" ] || fail "attach $SHORT reached: $(ctl containers --devices)"
runc exec "$A" test -c /dev/zshort || fail "the node is not in root's $A"
[ -e "$UDEV/null" ] && [ ! -e "$UDEV/zshort" ] || fail "the user's $SHORT: $(ls -l "$UDEV")"
ctl detach "$SHORT" /dev/zshort >"$T/ctl.out" 2>&1 || fail "detach $SHORT: $(cat "$T/ctl.out")"
runc exec "$A" test -e /dev/zshort && fail "detach $SHORT left root's node"
[ "$(on_dev prod/db-0/db /dev/zpod)" = "$A" ] || fail "attach prod/db-0/db reached: $(ctl containers --devices)"
runc exec "$A" test -c /dev/zpod || fail "the node is not in root's $A"
[ -e "$UDEV/null" ] && [ ! -e "$UDEV/zpod" ] || fail "the user's $SHORT: $(ls -l "$UDEV")"
pass "c: the user's runc container $SHORT claiming prod/db-0/db: attach $SHORT and prod/db-0/db reach root's $SHORT…, not the user's"
touch "$W/stop-c" "$T/rootfs/tmp/stop-root"
exit 0
