# A containerd of the test's own, for the containerd tests (110 ctr, 150 CRI); sourced
# after clients.sh. Its config, root, state and sockets are below CLIENT_DIR, so that
# client_cleanup finds its processes (shims included) and mounts there. The test defines
# c (ctr on $CLIENT_DIR/containerd.sock, in the test's namespace), writes the config with
# containerd_config, appends its plugins' sections to $CTD_CONFIG and calls
# containerd_start.
client_cmd containerd containerd
client_cmd ctr containerd
CTD_CONFIG=$CLIENT_DIR/config.toml
# containerd 1.6's shims put their sockets in /run/containerd/s whatever the config says.
client_note_paths /run/containerd

# containerd_config [PLUGIN...]: the head of the config, with PLUGIN... disabled, and the
# snapshotters that need file systems of their own.
containerd_config() {
	local d=$CLIENT_DIR p list=
	for p in "$@" io.containerd.snapshotter.v1.{btrfs,zfs,devmapper,aufs}; do
		list+="${list:+, }\"$p\""
	done
	cat >"$CTD_CONFIG" <<TOML
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = [$list]
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
TOML
}

# containerd_start: containerd on $CTD_CONFIG (CTD_PID), ready; skips where it cannot start.
containerd_start() {
	containerd --config "$CTD_CONFIG" >"$CLIENT_DIR/containerd.log" 2>&1 &
	CTD_PID=$!
	wait_until 60 containerd_up ||
		skip "containerd not ready after 60 s: $(tail -3 "$CLIENT_DIR/containerd.log")"
}
containerd_up() {
	c version >/dev/null 2>&1 && return 0
	kill -0 "$CTD_PID" 2>/dev/null ||
		skip "containerd cannot start here: $(tail -3 "$CLIENT_DIR/containerd.log")"
	return 1
}

# client_cleanup's first step: every container of the test's namespace killed and
# deleted, then containerd stopped.
client_stop() {
	local id
	if [ -S "$CLIENT_DIR/containerd.sock" ]; then
		for id in $(c containers list -q 2>/dev/null); do
			c task kill -s KILL "$id" >/dev/null 2>&1
			c task delete -f "$id" >/dev/null 2>&1
			c containers delete "$id" >/dev/null 2>&1
		done
	fi
	[ -n "${CTD_PID:-}" ] && stop_pids TERM "$CTD_PID"
}

# containerd_import REF [CMD]: the busybox image (client_oci_archive REF CMD) imported as
# REF into the test's namespace, for the native snapshotter.
containerd_import() {
	client_oci_archive "$@"
	c images import --snapshotter native "$T/busybox-oci.tar" >"$T/import.out" 2>&1 ||
		fail "ctr images import: $(cat "$T/import.out")"
}
