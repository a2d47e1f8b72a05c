# Hot-plug (devwlctl attach/detach, devwld(8) HOT-PLUG) into Docker's containers, through
# the shipped wrapper examples/docker/devwl-runc (Docker 20.10 drops listenerPath and
# listenerMetadata: 100-docker.sh): one long-running container with the full profile
# (every open trapped) and one with the mknod-only profile, whose "mode=kernel" the
# wrapper's --devwl-metadata gives. Each is given a loop device it was refused
# (container_rules), named by a prefix of its 64-hex id; its own process reads and writes
# the disk (checked on the host), `docker exec` sees the node; detached, the node is gone
# and new opens fail EPERM (clients.sh, attach_proof).
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/clients.sh"
. "$HERE/docker.sh"

client_attach_policy
client_profile
client_km_profile
make_loop
start_devwld
jq -n --arg p "$WRAPPER" --arg l "$T/listen.sock" '{runtimes: {
	devwl: {path: $p, runtimeArgs: ["--devwl-listener=" + $l]},
	"devwl-kernel": {path: $p, runtimeArgs: ["--devwl-listener=" + $l,
		"--devwl-metadata=mode=kernel"]}}}' >"$CLIENT_DIR/daemon.json"
docker_start

for kind in full kernel; do
	case $kind in
	full) profile=$T/profile.json label=full runtime=devwl ;;
	kernel) profile=$T/km-profile.json label=mknod-only runtime=devwl-kernel ;;
	esac
	id=$(dk run --pull never --network none -d --runtime "$runtime" \
		--security-opt "seccomp=$profile" devwl-busybox:test sh -c "$ATTACH_WORKLOAD") ||
		fail "docker run -d --runtime $runtime: $id"
	[[ $id =~ ^[0-9a-f]{64}$ ]] || fail "docker's id: $id"
	wait_until 60 client_listed "$id" || fail "$id never reached devwld: $(dk logs "$id" 2>&1)"
	pid=$(dk inspect -f '{{.State.Pid}}' "$id") || fail "docker inspect $id"
	attach_proof "docker, $label profile" "$id" "${id:0:12}" "$pid" "$kind" dk exec "$id"
	touch "/proc/$pid/root/tmp/stop"
	[ "$(dk wait "$id")" = 0 ] || fail "container exit: $(dk logs "$id" 2>&1)"
	wait_gone "$id"
	dk rm "$id" >/dev/null || fail "docker rm $id"
done
exit 0
