# The metrics' labels stay few by default (devwld(8) METRICS, --metrics-depth): with the
# default template /containers/{id} and depth, decisions count under subtree
# "/containers", never under a container's id, and no label of `devwlctl metrics` holds
# one; even a depth that reaches it stops short of the id. With --metrics-containers the
# per-container series appear, and a container's series (its own node's subtree, its
# notifications) go when it does. Stand-in runtimes (tests/oci/oci-client).
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_user_client
mkdir -m 777 "$T/sig" || fail "mkdir"
echo '{ "version": 1 }' >"$T/policy.json"

# decided SUBTREE: the allowed opens counted under SUBTREE, summed over the metrics.
decided() {
	ctl metrics | awk -v t="$1" '
		index($0, "devwl_decisions_total{subtree=\"" t "\",") == 1 && /decision="allow"/ { n += $NF }
		END { print n + 0 }'
}
start_devwld
for i in 1 2 3 4 5; do
	id=$(printf 'c0ffee%058d' "$i")
	OCI_CLIENT_METADATA= "$CLIENT" "$T/listen.sock" good "$id" /dev/null ok >"$T/c.out" 2>&1 ||
		fail "container $id: $(cat "$T/c.out")"
done
ctl metrics >"$T/m1" || fail "metrics"
grep -q c0ffee "$T/m1" && fail "a label carries a container id: $(grep c0ffee "$T/m1")"
[ "$(decided /containers)" -ge 5 ] || fail "no decisions under /containers: $(grep decisions_total "$T/m1")"
pass "default depth: $(grep -c '^devwl_decisions_total' "$T/m1") decision series for 5 containers, none naming one"

# --- 2. a depth that reaches the id, and --metrics-containers ------------------------------
kill "$DEVWLD_PID" && wait "$DEVWLD_PID" 2>/dev/null
DEVWLD_PID=
rm -f "$T/listen.sock" "$T/control.sock"
start_devwld --metrics-depth 16 --metrics-containers
id=$(printf 'c0ffee%058d' 9)
OCI_CLIENT_METADATA= "$CLIENT" "$T/listen.sock" good "$id" /dev/null ok >"$T/c.out" 2>&1 || fail "container $id: $(cat "$T/c.out")"
[ "$(decided /containers)" -ge 1 ] && ! ctl metrics | grep -q "^devwl_decisions_total{subtree=\"/containers/" ||
	fail "depth 16 named the id: $(ctl metrics | grep decisions_total)"
K=4f1c2a9be07d$(printf '1%.0s' $(seq 52))
POD='{"io.kubernetes.pod.namespace":"prod","io.kubernetes.pod.name":"db-0","io.kubernetes.container.name":"db"}'
OCI_CLIENT_METADATA= OCI_CLIENT_ANNOTATIONS=$POD "$CLIENT" "$T/listen.sock" run "$K" "$T/sig" >"$T/k.out" 2>&1 &
CHILD_PIDS+=("$!")
wait_for "$T/k.out" UP 30 || fail "the pod's container did not start: $(cat "$T/k.out")"
touch "$T/sig/go-$K"
wait_for "$T/k.out" OPENED 30 || fail "the pod's container made no call: $(cat "$T/k.out")"
wait_until 30 sh -c '[ "$("$0" --socket "$1" metrics | grep -c "subtree=\"/k8s/prod/db-0/db\"")" -gt 0 ]' \
	"$DEVWLCTL" "$T/control.sock" || fail "no series of its own node: $(ctl metrics | grep decisions_total)"
ctl metrics | grep -q "^devwl_container_notifications_total{container=\"$K\"" ||
	fail "--metrics-containers: no series of $K: $(ctl metrics | grep container_notifications)"
pass "depth 16: /containers/ID still counts under /containers; the pod's own node and --metrics-containers name it"
touch "$T/sig/stop-$K"
wait_until 30 sh -c '! "$0" --socket "$1" containers | grep -q "^$2 "' "$DEVWLCTL" "$T/control.sock" "$K" ||
	fail "$K never went: $(ctl containers)"
ctl metrics >"$T/m2" || fail "metrics"
grep -q "$K\|/k8s/prod/db-0/db" "$T/m2" && fail "series of a container that is gone: $(grep "$K\|/k8s/prod/db-0/db" "$T/m2")"
pass "gone, its series went with it"
exit 0
