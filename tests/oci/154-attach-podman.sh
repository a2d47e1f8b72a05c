# Hot-plug (devwlctl attach/detach, devwld(8) HOT-PLUG) into podman's containers: one
# long-running container with the full profile (examples/oci-hook/podman-profile.json,
# every open trapped) and one with the mknod-only profile (kernel mode), each given a
# loop device it was refused (container_rules), by an id prefix; its own process reads
# and writes the disk (checked on the host), `podman exec` sees the node; detached, the
# node is gone and new opens fail EPERM (clients.sh, attach_proof).
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/clients.sh"
. "$HERE/podman.sh"

client_attach_policy
client_profile
client_km_profile
make_loop
start_devwld
podman_start

for kind in full kernel; do
	case $kind in
	full) profile=$T/profile.json label=full ;;
	kernel) profile=$T/km-profile.json label=mknod-only ;;
	esac
	id=$(pm "${PODMAN_RUN[@]}" -d --security-opt "seccomp=$profile" localhost/devwl-busybox:test \
		sh -c "$ATTACH_WORKLOAD") || fail "podman run -d ($kind): $id"
	wait_until 60 client_listed "$id" || fail "$id never reached devwld: $(pm logs "$id" 2>&1)"
	pid=$(pm inspect --format '{{.State.Pid}}' "$id") || fail "podman inspect $id"
	attach_proof "podman, $label profile" "$id" "${id:0:12}" "$pid" "$kind" pm exec "$id"
	touch "/proc/$pid/root/tmp/stop"
	[ "$(pm wait "$id")" = 0 ] || fail "container exit: $(pm logs "$id" 2>&1)"
	wait_gone "$id"
	pm rm "$id" >/dev/null || fail "podman rm $id"
done
exit 0
