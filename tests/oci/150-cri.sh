# The Kubernetes node path as kubelet drives it: containerd's CRI plugin over its gRPC
# socket, called by the tests' own CRI client (tests/oci/cri-client.py; Debian 12 has no
# crictl), against this test's devwld. A containerd of the test's own (config, root,
# state, sockets and runc's state in $T, the CRI streaming server on a free loopback
# port) runs host-network pods (no CNI), with runc, whose pause image is a busybox
# imported offline. Pods opt in with a Localhost seccomp profile: exactly
# examples/k8s/seccomp-mknod-only.json, its listenerPath this test's devwld. One pod names
# it in the SecurityProfile field (seccomp), one in the older seccomp_profile_path
# ("localhost/PATH"); each is mapped to /k8s/NS/POD/CTR and its sandbox to
# /k8s/NS/POD/POD, in kernel mode; a granted mknod works, a denied one and an open the
# node denies fail EPERM (read from the log CRI writes); StopContainer, StopPodSandbox
# and RemovePodSandbox leave no container and no on-demand node behind. A pod whose
# profile is not on the node does not start; a privileged pod with the profile is never
# seen by devwld: containerd drops its seccomp section. A container whose CRI config
# carries a cdi.k8s.io/ annotation, passed on into the OCI config by the runtime's
# container_annotations, gets the CDI device it names (a spec in devwld's --cdi-dir) on
# its own node, as /k8s opts in with "cdi_annotations" (containerd before 1.7 injects no
# CDI device itself: the device is one the runtime gives every container anyway).
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/clients.sh"
. "$HERE/containerd.sh"

# Debian's python3, where python3-grpcio is, whatever python3 comes first in PATH.
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import grpc' 2>/dev/null ||
	skip "python3-grpcio not installed (apt-get install python3-grpcio)"
containerd config default 2>/dev/null | grep -q '"io.containerd.grpc.v1.cri"' ||
	skip "containerd has no CRI plugin (io.containerd.grpc.v1.cri not in its default config)"
CRI_CLIENT=$HERE/cri-client.py
PROFILE_SRC=$EXAMPLES/k8s/seccomp-mknod-only.json
[ -f "$PROFILE_SRC" ] || fail "no $PROFILE_SRC"
D=$CLIENT_DIR

# cri_call METHOD [REQUEST-JSON]: the response (or the error) in CRI_OUT; its status.
cri_call() { CRI_OUT=$(timeout 120 "$PY" "$CRI_CLIENT" "$D/containerd.sock" "$@" 2>&1); }
# cri METHOD [REQUEST-JSON]: the response in CRI_OUT, or fail naming the call.
cri() {
	cri_call "$@" || fail "CRI $1: $CRI_OUT; containerd.log: $(tail -5 "$D/containerd.log")"
}
# CRI's containers live in containerd's namespace k8s.io (of this containerd only).
c() { timeout 60 ctr -a "$D/containerd.sock" -n k8s.io "$@"; }

# --- 0. the client refuses what is not a CRI response -----------------------------------
decode() { printf "$2" | "$PY" "$CRI_CLIENT" --decode "$1" 2>&1; }
decode ContainerStatusResponse '\x0a\x07\x0a\x01' | grep -q "runs past the end" &&
	decode ContainerStatusResponse '\x08\x01' | grep -q "status (field 1) came with wire type 0" &&
	decode ContainerStatusResponse '\x0b' | grep -q "wire type 3" &&
	decode ContainerStatusResponse '\x0a\x03\x0a\x01\xff' | grep -q "id, byte 4: not UTF-8" &&
	[ "$(decode ContainerStatusResponse '\x0a\x05\x18\x02\xf0\x01\x05')" = \
		'{"status": {"state": "CONTAINER_EXITED"}}' ] ||
	fail "cri-client's decoder: $(decode ContainerStatusResponse '\x0a\x07\x0a\x01')"
pass "cri-client: truncated, mistyped and non-UTF-8 responses are errors; unknown fields are skipped"

client_policy
# /k8s grants what containers' CDI annotations name, c 1:7 at most, which each
# container's node starts without.
jq '(.nodes[] | select(.path == "/k8s")) |= (.cdi_annotations = true | .rules += ["allow c 1:7 rw"])
	| .containers.container_rules = ["deny c 1:7 rwm"]' "$T/policy.json" >"$T/policy.new" &&
	mv "$T/policy.new" "$T/policy.json" || fail "jq on the policy"
mkdir "$T/cdi"
cat >"$T/cdi/dev.json" <<'SPEC'
{ "cdiVersion": "0.6.0", "kind": "test.devwl.org/dev",
  "devices": [ { "name": "full",
                 "containerEdits": { "deviceNodes": [ { "path": "/dev/full", "permissions": "rw" } ] } } ] }
SPEC
start_devwld --cdi-dir "$T/cdi"
jq --arg lp "$T/listen.sock" '.listenerPath = $lp' "$PROFILE_SRC" >"$T/k8s-profile.json" ||
	fail "jq on $PROFILE_SRC"
PROFILE=$T/k8s-profile.json

IMAGE=docker.io/library/devwl-busybox:cri
# The streaming server (exec, attach, port-forward) listens on TCP whatever the config
# says; port 0 lets the kernel pick a free one. restrict_oom_score_adj: the pause
# container's -998 needs CAP_SYS_RESOURCE, which a test host in a container may lack; no
# lower than containerd's own, as for a containerd that runs in a user namespace.
containerd_config
cat >>"$CTD_CONFIG" <<TOML
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      container_annotations = ["cdi.k8s.io/*"]
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$D/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$D/cni/bin"
    conf_dir = "$D/cni/net.d"
TOML
containerd_start
c plugins ls 2>&1 | grep -q 'io.containerd.grpc.v1 *cri .* ok' ||
	skip "containerd's CRI plugin did not load here:" \
		"$(grep -m1 'failed to load plugin io.containerd.grpc.v1.cri' "$D/containerd.log")"
VERSION=$(containerd --version | awk '{print $3}')
# The CRI service answers "not initialized yet" for a while after containerd is up.
wait_until 60 cri_call Version '{"version": "v1"}' ||
	fail "the CRI service not ready after 60 s: $CRI_OUT"
CRI_VERSION=$(jq -r '"\(.runtime_name) \(.runtime_version), API \(.runtime_api_version)"' <<<"$CRI_OUT")
echo "# containerd $VERSION (CRI: $CRI_VERSION), runc $(runc --version | sed -n 's/^runc version //p')"

# The pause image and the workloads' image: busybox, sleeping unless told otherwise.
client_oci_archive "$IMAGE" '["sleep", "1000000"]'
c images import --snapshotter native "$T/busybox-oci.tar" >"$T/import.out" 2>&1 ||
	fail "ctr images import: $(cat "$T/import.out")"
# The CRI plugin learns of imported images from containerd's events: as kubelet does,
# ask ImageStatus before using the image (else RunPodSandbox would try to pull it).
image_seen() {
	cri ImageStatus "$(jq -nc --arg i "$IMAGE" '{image: {image: $i}}')"
	jq -e .image.id <<<"$CRI_OUT" >/dev/null
}
wait_until 60 image_seen || fail "the CRI plugin never saw $IMAGE: $CRI_OUT"

# Kernel mode is asked for by the profile (mode=kernel); every container here has a
# cgroup of its own below CGROUP_PARENT, so it is in force wherever the host can program
# a device cgroup at all.
KERNEL=no
host_can_v1_devices || host_can_v2_devices && KERNEL=yes

# security_context HOW PRIVILEGED: the seccomp part of a pod's or a container's
# security context, naming $PROFILE the way HOW says.
security_context() {
	case $1 in
	field) jq -nc --arg p "$PROFILE" --argjson priv "$2" \
		'{privileged: $priv, seccomp: {profile_type: "Localhost", localhost_ref: $p}}' ;;
	path) jq -nc --arg p "localhost/$PROFILE" --argjson priv "$2" \
		'{privileged: $priv, seccomp_profile_path: $p}' ;;
	esac
}

# pod_config NS POD HOW PRIVILEGED: the PodSandboxConfig of a host-network pod.
pod_config() {
	jq -nc --arg ns "$1" --arg pod "$2" --arg uid "$(cat /proc/sys/kernel/random/uuid)" \
		--arg logdir "$D/pods/$1_$2" --arg cg "/$CGROUP_PARENT" \
		--argjson sc "$(security_context "$3" "$4")" '{
		metadata: {name: $pod, namespace: $ns, uid: $uid, attempt: 0},
		log_directory: $logdir,
		linux: {cgroup_parent: $cg,
			security_context: ({namespace_options: {network: "NODE"}} + $sc)}}'
}

# start_pod NS POD CTR HOW PRIVILEGED SCRIPT [ANNOTATIONS]: RunPodSandbox, then
# CreateContainer and StartContainer of CTR running SCRIPT (its config's annotations a
# JSON object); POD_ID, CTR_ID and LOG (the file CRI writes the container's output to)
# for the rest.
start_pod() {
	local ns=$1 pod=$2 ctr=$3 annos=${7:-"{}"} sc cfg ccfg
	sc=$(security_context "$4" "$5")
	cfg=$(pod_config "$ns" "$pod" "$4" "$5")
	mkdir -p "$D/pods/${ns}_$pod"
	cri RunPodSandbox "$(jq -nc --argjson c "$cfg" '{config: $c}')"
	POD_ID=$(jq -r .pod_sandbox_id <<<"$CRI_OUT")
	ccfg=$(jq -nc --arg ctr "$ctr" --arg image "$IMAGE" --arg script "$6" --argjson sc "$sc" \
		--argjson annos "$annos" '{
		metadata: {name: $ctr, attempt: 0}, image: {image: $image}, annotations: $annos,
		command: ["sh", "-c", $script], log_path: "\($ctr)/0.log",
		linux: {security_context: ({namespace_options: {network: "NODE", pid: "CONTAINER"}} + $sc)}}')
	cri CreateContainer "$(jq -nc --arg p "$POD_ID" --argjson c "$ccfg" --argjson s "$cfg" \
		'{pod_sandbox_id: $p, config: $c, sandbox_config: $s}')"
	CTR_ID=$(jq -r .container_id <<<"$CRI_OUT")
	cri StartContainer "$(jq -nc --arg id "$CTR_ID" '{container_id: $id}')"
	cri ContainerStatus "$(jq -nc --arg id "$CTR_ID" '{container_id: $id}')"
	LOG=$(jq -r .status.log_path <<<"$CRI_OUT")
	jq -e '.status.state == "CONTAINER_RUNNING"' <<<"$CRI_OUT" >/dev/null &&
		[ "$LOG" = "$D/pods/${ns}_$pod/$ctr/0.log" ] || fail "$ns/$pod: ContainerStatus: $CRI_OUT"
	wait_for "$LOG" READY 60 || fail "$ns/$pod/$ctr never got READY: $(cat "$LOG" 2>&1)"
}

# stop_pod: StopContainer (SIGTERM, which the script's trap answers), RemoveContainer,
# StopPodSandbox, RemovePodSandbox, checking the container's exit on the way.
stop_pod() {
	local req
	req=$(jq -nc --arg id "$CTR_ID" '{container_id: $id}')
	cri StopContainer "$(jq -nc --arg id "$CTR_ID" '{container_id: $id, timeout: 30}')"
	cri ContainerStatus "$req"
	jq -e '.status.state == "CONTAINER_EXITED" and (.status.exit_code // 0) == 0' \
		<<<"$CRI_OUT" >/dev/null || fail "after StopContainer: $CRI_OUT"
	cri RemoveContainer "$req"
	req=$(jq -nc --arg id "$POD_ID" '{pod_sandbox_id: $id}')
	cri StopPodSandbox "$req"
	cri RemovePodSandbox "$req"
}

# What the log says, without CRI's "TIME STREAM TAG " prefix.
log_text() { sed 's/^[^ ]* [^ ]* [^ ]* //' "$LOG"; }

# listed ID: ID's line of devwlctl containers (ID NODE PROCESSES NOTIFICATIONS MODE OWNER).
listed() { ctl containers | awk -v id="$1" '$1 == id'; }

SCRIPT='trap "echo TERM; exit 0" TERM
mknod /tmp/null c 1 3 && [ -c /tmp/null ] && echo x >/tmp/null && echo MKNOD_OK
mknod /tmp/kmsg c 1 11; echo KMSG_RC=$?
echo x >/dev/full; echo FULL_RC=$?
echo READY
while :; do sleep 1; done'

# --- 1. and 2. a pod per way of naming the Localhost profile ----------------------------
# check_pod NS POD CTR HOW
check_pod() {
	local ns=$1 pod=$2 ctr=$3 how=$4 node=/k8s/$1/$2/$3 out=$T/$1.log n mode
	start_pod "$ns" "$pod" "$ctr" "$how" false "$SCRIPT"
	log_text >"$out"
	[ "$(listed "$CTR_ID" | cut -d' ' -f2)" = "$node" ] ||
		fail "$how: the container is not on $node: $(ctl containers; grep "$CTR_ID" "$T/devwld.log")"
	[ "$(listed "$POD_ID" | cut -d' ' -f2)" = "/k8s/$ns/$pod/POD" ] ||
		fail "$how: the sandbox is not on /k8s/$ns/$pod/POD: $(ctl containers)"
	pass "$how: devwlctl containers: $(listed "$CTR_ID" | cut -c1-12) on $node, the sandbox on /k8s/$ns/$pod/POD"

	grep -qx MKNOD_OK "$out" || fail "$how: granted mknod c 1:3: $(cat "$out")"
	grep -q "mknod: /tmp/kmsg: Operation not permitted" "$out" && grep -qx KMSG_RC=1 "$out" ||
		fail "$how: mknod c 1:11 was not denied EPERM: $(cat "$out")"
	audit_has "$CTR_ID" "$node" mknodat "c 1:3" allow &&
		audit_has "$CTR_ID" "$node" mknodat "c 1:11" deny ||
		fail "$how: devwld's audit lacks the mknods of $CTR_ID on $node: $(tail -5 "$T/audit.jsonl")"
	pass "$how: mknod c 1:3 granted, mknod c 1:11 EPERM (the container's CRI log), audited on $node"

	if [ $KERNEL = yes ]; then
		for n in "$CTR_ID" "$POD_ID"; do
			mode=$(listed "$n" | cut -d' ' -f5)
			case $mode in
			kernel-v1 | kernel-v2) ;;
			*) fail "$how: $n is in mode '$mode', not kernel: $(grep "$n" "$T/devwld.log")" ;;
			esac
		done
		grep -q "can't create /dev/full: Operation not permitted" "$out" &&
			grep -qx FULL_RC=1 "$out" || fail "$how: /dev/full (denied by $node) opened: $(cat "$out")"
		pass "$how: container and sandbox in $mode; the untrapped open of /dev/full fails EPERM from the kernel"
	else
		echo "# kernel mode not checked: no programmable device cgroup here ($host_why)"
	fi

	if [ "$how" = field ]; then
		# Hot-plug by the container's Kubernetes name, as an operator knows it.
		ctl attach "$ns/$pod/$ctr" "c 1:3" /tmp/attached-null >"$T/ctl.out" 2>&1 ||
			fail "attach by CRI name $ns/$pod/$ctr: $(cat "$T/ctl.out")"
		ctl containers --devices | grep -q "^$CTR_ID c 1:3 rw /tmp/attached-null " ||
			fail "containers --devices: $(ctl containers --devices)"
		pid=$(c task ls | awk -v id="$CTR_ID" '$1 == id {print $2}')
		[ "$(stat -c '%F %t:%T' "/proc/$pid/root/tmp/attached-null")" = "character special file 1:3" ] ||
			fail "no node in $ns/$pod/$ctr (pid $pid): $(ls -l "/proc/$pid/root/tmp/" 2>&1)"
		ctl detach "$ns/$pod/$ctr" /tmp/attached-null >"$T/ctl.out" 2>&1 || fail "detach: $(cat "$T/ctl.out")"
		[ ! -e "/proc/$pid/root/tmp/attached-null" ] || fail "detach left the node"
		pass "$how: devwlctl attach/detach by the Kubernetes name $ns/$pod/$ctr"
	fi

	stop_pod
	log_text | grep -qx TERM || fail "$how: no SIGTERM seen: $(log_text)"
	wait_gone "$CTR_ID"
	wait_gone "$POD_ID"
	for n in "$node" "/k8s/$ns/$pod/POD" "/k8s/$ns/$pod" "/k8s/$ns"; do
		ctl show "$n" >/dev/null 2>&1 && fail "$how: on-demand node $n left behind"
	done
	pass "$how: StopContainer (exit 0 on SIGTERM), StopPodSandbox, RemovePodSandbox: both gone from devwld, no node left"
}
check_pod team-a web-0 app field
check_pod team-b api-0 main path

# --- 3. a Localhost profile the node does not have: the pod does not start ---------------
PROFILE=$T/no-such-profile.json
req=$(jq -nc --argjson c "$(pod_config team-d gone-0 field false)" '{config: $c}')
if out=$(timeout 120 "$PY" "$CRI_CLIENT" "$D/containerd.sock" RunPodSandbox "$req" 2>&1); then
	fail "RunPodSandbox with a missing profile: $out"
fi
grep -q "$PROFILE" <<<"$out" || fail "RunPodSandbox with a missing profile: $out"
ctl containers | grep -q " /k8s/team-d/" && fail "a pod without its profile: $(ctl containers)"
PROFILE=$T/k8s-profile.json
pass "a Localhost profile missing on the node: RunPodSandbox fails ($(sed 's/.*UNKNOWN: //' <<<"$out" | cut -c1-80))"

# --- 4. privileged: containerd drops the seccomp section, devwld never sees the pod ------
start_pod team-c priv-0 app field true 'mknod /tmp/kmsg c 1 11; echo KMSG_RC=$?
echo READY; trap "exit 0" TERM; while :; do sleep 1; done'
log_text | grep -qx KMSG_RC=0 || fail "privileged: mknod c 1:11: $(log_text)"
for n in "$CTR_ID" "$POD_ID"; do
	grep -q "container $n" "$T/devwld.log" && fail "privileged: devwld saw $n: $(grep "$n" "$T/devwld.log")"
done
ctl containers | grep -q " /k8s/team-c/" && fail "privileged: $(ctl containers)"
stop_pod
pass "privileged pod with the Localhost profile: no seccomp, devwld never sees it, mknod c 1:11 works"

# --- 5. a CDI device named in the container's annotations --------------------------------
# The trapped mknod first: once it is answered devwld has registered the container, its
# grants and its cgroup, and the runtime's defaults (which allow /dev/full) are gone.
CDI_SCRIPT='trap "echo TERM; exit 0" TERM
mknod /tmp/null c 1 3
head -c 1 /dev/full >/dev/null; echo FULL_RC=$?
echo READY
while :; do sleep 1; done'
start_pod team-e cdi-0 app field false "$CDI_SCRIPT" '{"cdi.k8s.io/devwl-test": "test.devwl.org/dev=full"}'
node=/k8s/team-e/cdi-0/app
ctl selectors | grep -qxF "$node allow cdi:test.devwl.org/dev=full [annotation]: c 1:7 rw" ||
	fail "CDI annotation: selectors: $(ctl selectors); $(grep "$CTR_ID" "$T/devwld.log")"
# The audit is written by a thread of its own: in a moment.
granted() {
	jq -se --arg id "$CTR_ID" 'any(.[]; .event == "selector" and .container == $id
		and .cause == "cdi annotation" and .granted == ["c 1:7 rw"])' "$T/audit.jsonl" >/dev/null
}
wait_until 60 granted ||
	fail "CDI annotation: no audit record of the grant: $(grep selector "$T/audit.jsonl")"
if [ $KERNEL = yes ]; then
	log_text | grep -qx FULL_RC=0 || fail "CDI annotation: /dev/full (granted) not read: $(log_text)"
	pass "CDI annotation through containerd's CRI: c 1:7 rw bound on $node, read natively in kernel mode"
else
	pass "CDI annotation through containerd's CRI: c 1:7 rw bound on $node (kernel mode not checked: $host_why)"
fi
stop_pod
wait_gone "$CTR_ID"
ctl selectors | grep -qF "$node " && fail "CDI annotation: the binding outlived the container: $(ctl selectors)"
pass "CDI annotation: the binding goes with the container"
exit 0
