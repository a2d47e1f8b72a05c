# Hot-plug (devwlctl attach/detach, devwld(8) HOT-PLUG) into containerd's containers, run
# with `ctr run --seccomp-profile` (containerd carries listenerPath and listenerMetadata:
# 110-containerd.sh): one long-running container with the full profile (every open
# trapped) and one with the mknod-only profile (kernel mode). Each is given a loop device
# it was refused (container_rules), named by ctr's id; its own process reads and writes
# the disk (checked on the host), `ctr task exec` sees the node; detached, the node is
# gone and new opens fail EPERM (clients.sh, attach_proof). Then the guide's own hot-plug
# block, run as written (clients.sh, guide_hotplug).
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/clients.sh"
. "$HERE/containerd.sh"

# The namespace is also the parent of ctr's cgroups (/NAMESPACE/ID): client_cleanup's.
c() { timeout 60 ctr -a "$CLIENT_DIR/containerd.sock" -n "$CGROUP_PARENT" "$@"; }
# ctr_exec ID CMD...: CMD run in the container by `ctr task exec` (exec ids are unique).
EXECS=0
ctr_exec() {
	local id=$1
	shift
	EXECS=$((EXECS + 1))
	c task exec --exec-id "probe-$EXECS" "$id" "$@"
}
task_stopped() { c task ls | awk -v id="$1" '$1 == id && $3 == "STOPPED" {f = 1} END {exit !f}'; }

client_attach_policy
client_profile
client_km_profile
make_loop
start_devwld
# The shims keep runc's state in /run/containerd/runc/NAMESPACE whatever the config says.
client_own "/run/containerd/runc/$CGROUP_PARENT"
containerd_config io.containerd.grpc.v1.cri
containerd_start
IMAGE=docker.io/library/devwl-busybox:test
containerd_import "$IMAGE"

for kind in full kernel; do
	case $kind in
	full) profile=$T/profile.json label=full ;;
	kernel) profile=$T/km-profile.json label=mknod-only ;;
	esac
	id=attach-$kind-$$
	c run -d --snapshotter native --seccomp --seccomp-profile "$profile" "$IMAGE" "$id" \
		sh -c "$ATTACH_WORKLOAD" >"$T/run.out" 2>&1 || fail "ctr run -d $id: $(cat "$T/run.out")"
	wait_until 60 client_listed "$id" || fail "$id never reached devwld: $(c task ls 2>&1)"
	pid=$(c task ls | awk -v id="$id" '$1 == id {print $2}')
	[ -n "$pid" ] || fail "no task $id: $(c task ls 2>&1)"
	attach_proof "containerd, $label profile" "$id" "$id" "$pid" "$kind" ctr_exec "$id"
	touch "/proc/$pid/root/tmp/stop"
	wait_gone "$id"
	wait_until 60 task_stopped "$id" || fail "task $id not stopped: $(c task ls 2>&1)"
	# ctr task delete fails with the task's exit status where it is not 0.
	c task delete "$id" >"$T/delete.out" 2>&1 || fail "ctr task delete $id: $(cat "$T/delete.out")"
	c containers delete "$id" >/dev/null 2>&1 || fail "ctr containers delete $id"
done

# examples/containerd/README.md's hot-plug block as written, but ctr is this test's
# containerd (its namespace, the native snapshotter), and the profile and image its own.
ctr() {
	local a args=()
	for a; do
		case $a in
		/etc/devwl/profile.json) a=$T/profile.json ;;
		docker.io/library/busybox:latest) a=$IMAGE ;;
		esac
		args+=("$a")
		[ "$a" = run ] && args+=(--snapshotter native)
	done
	c "${args[@]}"
}
guide_hotplug containerd 2 web
unset -f ctr
c task kill -s KILL "$id" >/dev/null 2>&1
wait_until 60 task_stopped "$id" || fail "task $id not stopped: $(c task ls 2>&1)"
c task delete "$id" >/dev/null 2>&1
c containers delete "$id" >/dev/null 2>&1 || fail "ctr containers delete $id"
pass "examples/containerd/README.md's hot-plug block: $loop attached to $id, read in ctr task exec, detached"
exit 0
