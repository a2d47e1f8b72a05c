# Hot-plug (devwlctl attach/detach, devwld(8) HOT-PLUG) into Docker's containers, through
# the shipped wrapper examples/docker/devwl-runc (Docker 20.10 drops listenerPath and
# listenerMetadata: 100-docker.sh): one long-running container with the full profile
# (every open trapped) and one with the mknod-only profile, whose "mode=kernel" the
# wrapper's --devwl-metadata gives. Each is given a loop device it was refused
# (container_rules), named by a prefix of its 64-hex id; its own process reads and writes
# the disk (checked on the host), `docker exec` sees the node; detached, the node is gone
# and new opens fail EPERM (clients.sh, attach_proof). Then the guide's own hot-plug block,
# run as written (clients.sh, guide_hotplug).
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

# examples/docker/README.md's hot-plug block as written, but docker is this test's dockerd,
# and the profile and the busybox image its own.
docker() {
	local a args=()
	for a; do
		case $a in
		seccomp=/etc/devwl/docker-profile.json) a=seccomp=$T/profile.json ;;
		busybox) a=devwl-busybox:test ;;
		esac
		args+=("$a")
	done
	dk "${args[@]}"
}
guide_hotplug docker 2
dk rm -f "$id" >/dev/null || fail "docker rm -f $id"
pass "examples/docker/README.md's hot-plug block: $loop attached by ${id:0:12}, read in docker exec, detached"

# README.md's Docker block ("Hot-plug"), as written but for a stand-in of the USB serial
# adapter it names, which this host does not have: /dev/ttyUSB0 made here as a node of the
# host's first serial port (c 4:64), which stty reads like any tty, and the README's
# "allow c 188:* rw" with "container_rules" "deny c 188:* rwm" made the same for 4:64.
# docker is as above.
if [ -e /dev/ttyUSB0 ] || ! stty -F /dev/ttyS0 >/dev/null 2>&1; then
	echo "# README.md's Docker block not run: $([ -e /dev/ttyUSB0 ] && echo "this host has a /dev/ttyUSB0 of its own" || echo "no serial port /dev/ttyS0 to stand in for one")"
	exit 0
fi
trap 'st=$?; rm -f /dev/ttyUSB0; (exit $st); client_cleanup' EXIT
mknod -m 0660 /dev/ttyUSB0 c 4 64 || fail "mknod /dev/ttyUSB0"
tty=4:64
jq '(.nodes[] | select(.path == "/containers") | .rules) += ["allow c 4:64 rw"]
	| .containers.container_rules += ["deny c 4:64 rwm"]' "$T/policy.json" >"$T/policy.new" &&
	mv "$T/policy.new" "$T/policy.json" && ctl reload >/dev/null || fail "the policy for c 4:64"
devwlctl() { ctl "$@"; }
md_block README.md sh 2 >"$T/readme.sh"
grep -q '^docker run -d --name lab' "$T/readme.sh" || fail "README.md's second sh block is not Docker's"
(. "$T/readme.sh") >"$T/readme.out" 2>&1
unset -f docker devwlctl
out=$(cat "$T/readme.out")
grep -q "^attached c $tty (/dev/ttyUSB0) rw to container [0-9a-f]\{64\}.* at /dev/ttyUSB0" <<<"$out" ||
	fail "README's devwlctl attach said: $out"
grep -q "^speed [0-9]* baud" <<<"$out" || fail "README's docker exec lab stty: $out"
grep -q " c $tty rw /dev/ttyUSB0 " <<<"$out" || fail "README's containers --devices: $out"
grep -q "^detached c $tty rw from container .*: /dev/ttyUSB0 removed" <<<"$out" ||
	fail "README's devwlctl detach said: $out"
dk rm -f lab >/dev/null || fail "docker rm -f lab"
pass "README.md's Docker block: the serial port c 4:64 as /dev/ttyUSB0 attached to lab, stty in docker exec, detached"
exit 0
