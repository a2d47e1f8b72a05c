# A dockerd of the test's own, for the Docker tests (100, 155); sourced after clients.sh.
# Unix sockets in CLIENT_DIR only, no bridge, no iptables, the vfs storage driver, its
# containers' cgroups below CGROUP_PARENT (client_cleanup's). The test writes the daemon's
# config to $CLIENT_DIR/daemon.json (its runtimes: examples/docker/devwl-runc) and calls
# docker_start; dk runs the docker client on it.
client_cmd dockerd docker.io
# /usr/local/bin may hold another docker client: use the one of the package.
DOCKER_CLI=/usr/bin/docker
[ -x "$DOCKER_CLI" ] || DOCKER_CLI=$(command -v docker) || skip "docker not installed (apt-get install docker.io)"
WRAPPER=$EXAMPLES/docker/devwl-runc
dk() { timeout 60 "$DOCKER_CLI" -H "unix://$CLIENT_DIR/docker.sock" "$@"; }

# client_cleanup's first step: every container removed, then dockerd stopped.
client_stop() {
	local ids
	if [ -S "$CLIENT_DIR/docker.sock" ]; then
		ids=$(dk ps -aq 2>/dev/null)
		[ -n "$ids" ] && dk rm -f $ids >/dev/null 2>&1
	fi
	[ -n "${DOCKERD_PID:-}" ] && stop_pids TERM "$DOCKERD_PID"
}
client_note_paths /etc/docker /run/docker /run/containerd
# The trust key dockerd 20.10 writes (no option moves it): ours if /etc/docker was.
[ -e /etc/docker ] || client_own /etc/docker/key.json

# docker_start: dockerd on $CLIENT_DIR/daemon.json (DOCKERD_PID), ready, its version in
# DOCKER_VERSION and an image devwl-busybox:test of the busybox root file system; skips
# where dockerd cannot start.
docker_start() {
	local d=$CLIENT_DIR i
	dockerd --config-file "$d/daemon.json" --iptables=false --ip-masq=false --ip-forward=false \
		--bridge=none --data-root "$d/data" --exec-root "$d/exec" --pidfile "$d/docker.pid" \
		-H "unix://$d/docker.sock" --storage-driver vfs --exec-opt native.cgroupdriver=cgroupfs \
		--cgroup-parent "/$CGROUP_PARENT" --containerd-namespace "$CGROUP_PARENT" \
		--containerd-plugins-namespace "$CGROUP_PARENT-plugins" >"$d/dockerd.log" 2>&1 &
	DOCKERD_PID=$!
	for ((i = 0; i < 300; i++)); do
		dk version >/dev/null 2>&1 && break
		kill -0 "$DOCKERD_PID" 2>/dev/null || skip "dockerd cannot start here: $(tail -3 "$d/dockerd.log")"
		sleep 0.1
	done
	dk version >/dev/null 2>&1 || skip "dockerd not ready after 30 s: $(tail -3 "$d/dockerd.log")"
	DOCKER_VERSION=$(dk version --format '{{.Server.Version}}')
	echo "# dockerd $DOCKER_VERSION, runc $(runc --version | sed -n 's/^runc version //p')"
	client_rootfs_tar
	dk import "$T/busybox.tar" devwl-busybox:test >/dev/null || fail "docker import"
}
