# podman for the podman tests (115, 154), as examples/oci-hook/README.md runs it (runc,
# cgroupfs), with storage, run state and hooks ($CLIENT_DIR/hooks.d, empty unless the
# test fills it) below CLIENT_DIR; sourced after clients.sh. The test calls podman_start;
# pm runs podman so, PODMAN_RUN holds the options of every `pm run`.
client_cmd podman podman
pm() {
	timeout 60 podman --root "$CLIENT_DIR/root" --runroot "$CLIENT_DIR/run" \
		--tmpdir "$CLIENT_DIR/tmp" --storage-driver vfs --events-backend none \
		--hooks-dir "$CLIENT_DIR/hooks.d" --runtime runc --cgroup-manager=cgroupfs "$@"
}
mkdir -p "$CLIENT_DIR/hooks.d"
# --pull never: a missing image must fail here, not reach for a registry. Without the
# ulimits runc 1.1.5 refuses podman's rlimits on some hosts (the README says why).
PODMAN_RUN=(run --pull never --network none --cgroup-parent "/$CGROUP_PARENT"
	--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)

client_stop() {
	[ -d "$CLIENT_DIR/root" ] && pm rm -af -t 0 >/dev/null 2>&1
}
# c/image's blob cache goes to /var/lib/containers/cache whatever --root says.
client_note_paths /var/lib/containers /run/containers /run/libpod
[ -e /var/lib/containers ] || client_own /var/lib/containers/cache/blob-info-cache-v1.boltdb

# podman_start: podman's storage set up (PODMAN_VERSION) and the image
# localhost/devwl-busybox:test of the busybox root file system; skips where podman
# cannot run.
podman_start() {
	# podman info sets up the storage and runtime: where it fails, podman cannot run here.
	PODMAN_VERSION=$(pm info --format '{{.Version.Version}}' 2>"$T/version.err") ||
		skip "podman cannot run here: $(cat "$T/version.err")"
	echo "# podman $PODMAN_VERSION, runc $(runc --version | sed -n 's/^runc version //p')"
	client_rootfs_tar
	pm import "$T/busybox.tar" localhost/devwl-busybox:test >"$T/import.out" 2>&1 ||
		fail "podman import: $(cat "$T/import.out")"
}
