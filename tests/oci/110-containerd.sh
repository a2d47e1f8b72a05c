# containerd (Debian 12's containerd, the runtime of a Kubernetes node) as a real client:
# a containerd of this test's own (its own config, root, state and unix sockets in $T;
# the CRI plugin, whose streaming server would listen on TCP, is disabled), a busybox
# image from `ctr image import`, and the shipped profile with `ctr run --seccomp-profile`,
# which containerd reads straight into the runtime-spec struct: listenerPath reaches
# runc. Then the annotations containerd's CRI plugin sets (pkg/cri/annotations, set in
# pkg/cri/server/container_create_linux.go and sandbox_run_linux.go) given with
# `ctr run --annotation`, mapped by devwld to /k8s/NS/POD/CONTAINER and .../POD.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/clients.sh"
. "$HERE/containerd.sh"

D=$CLIENT_DIR
# The namespace is also the parent of ctr's cgroups (/NAMESPACE/ID): client_cleanup's.
c() { timeout 60 ctr -a "$D/containerd.sock" -n "$CGROUP_PARENT" "$@"; }

client_policy
client_profile
start_devwld

# The shims keep runc's state in /run/containerd/runc/NAMESPACE whatever the config says.
client_own "/run/containerd/runc/$CGROUP_PARENT"
containerd_config io.containerd.grpc.v1.cri
containerd_start
VERSION=$(c version | awk '/^Server:/ {s = 1} s && $1 == "Version:" {print $2; exit}')
echo "# containerd $VERSION, runc $(runc --version | sed -n 's/^runc version //p')"

IMAGE=docker.io/library/devwl-busybox:test
containerd_import "$IMAGE"
RUN=(run --snapshotter native --seccomp --seccomp-profile "$T/profile.json")

# --- 1. ctr run --seccomp-profile: listenerPath reaches runc; grant, deny, exit -----------
c "${RUN[@]}" --rm "$IMAGE" ctr-plain sh -c "$CLIENT_SCRIPT" >"$T/plain.out" 2>&1 ||
	fail "ctr run: $(cat "$T/plain.out")"
client_check "$T/plain.out" ctr-plain /containers/ctr-plain "ctr run --seccomp-profile"
wait_gone ctr-plain
pass "containerd $VERSION carries listenerPath; the container's exit is seen"

c "${RUN[@]}" --rm --annotation org.devwl.node=/apps/ctr "$IMAGE" ctr-anno sh -c "$CLIENT_SCRIPT" \
	>"$T/anno.out" 2>&1 || fail "ctr run --annotation: $(cat "$T/anno.out")"
client_check "$T/anno.out" ctr-anno /apps/ctr "ctr run --annotation org.devwl.node=/apps/ctr"
wait_gone ctr-anno

# --- 2. the CRI plugin's annotations: a pod's sandbox and its container ------------------
cri=(--annotation io.kubernetes.cri.sandbox-id=sb-$$
	--annotation io.kubernetes.cri.sandbox-namespace=team-a
	--annotation io.kubernetes.cri.sandbox-name=web-0
	--annotation io.kubernetes.cri.sandbox-uid=0c2b5a52-0000-4000-8000-000000000001)
c "${RUN[@]}" -d "${cri[@]}" --annotation io.kubernetes.cri.container-type=sandbox \
	--annotation io.kubernetes.cri.sandbox-log-directory=/var/log/pods/x \
	"$IMAGE" cri-sandbox sh -c 'while :; do sleep 1; done' >"$T/sandbox.out" 2>&1 ||
	fail "sandbox: $(cat "$T/sandbox.out")"
wait_for "$T/devwld.log" "container cri-sandbox: process" 30 || fail "the sandbox did not attach"
ctl containers | grep -q "^cri-sandbox /k8s/team-a/web-0/POD " ||
	fail "the sandbox's node: $(ctl containers; tail -3 "$T/devwld.log")"
c "${RUN[@]}" --rm "${cri[@]}" --annotation io.kubernetes.cri.container-type=container \
	--annotation io.kubernetes.cri.container-name=app \
	--annotation io.kubernetes.cri.image-name=$IMAGE \
	"$IMAGE" cri-app sh -c "$CLIENT_SCRIPT" >"$T/app.out" 2>&1 || fail "app: $(cat "$T/app.out")"
client_check "$T/app.out" cri-app /k8s/team-a/web-0/app "ctr run with the CRI plugin's annotations"
wait_gone cri-app
c task kill -s KILL cri-sandbox >"$T/kill.out" 2>&1 ||
	fail "ctr task kill: $(cat "$T/kill.out"); tasks: $(c task ls 2>&1); runc state:" \
		"$(ls /run/containerd/runc/"$CGROUP_PARENT" 2>&1)"
wait_gone cri-sandbox
for n in /k8s/team-a/web-0/app /k8s/team-a/web-0/POD /k8s/team-a/web-0 /k8s/team-a; do
	ctl show "$n" >/dev/null 2>&1 && fail "on-demand node $n left behind"
done
pass "io.kubernetes.cri.* → /k8s/team-a/web-0/app and .../POD (the sandbox), removed when they exit"
exit 0
