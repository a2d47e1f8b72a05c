# Shared by the tests of real clients (tests/oci/100–119: Docker, containerd, podman):
# the shipped seccomp profile pointed at this test's devwld, a policy, a busybox image,
# the workload whose outcomes every client test checks, and the cleanup of what a
# client daemon leaves behind. Sourced by bash after lib.sh.

EXAMPLES=$HERE/../../examples
# Every daemon's root, state and sockets live below CLIENT_DIR, so its processes
# (shims included) and mounts can be found by that path at the end.
CLIENT_DIR=$T/client
mkdir -p "$CLIENT_DIR"

# client_cmd CMD PACKAGE: skip unless the client is installed.
client_cmd() {
	command -v "$1" >/dev/null || skip "$1 not installed (apt-get install $2)"
}

# The shipped profile (examples/oci-hook/podman-profile.json) with this test's listener.
client_profile() {
	jq --arg lp "$T/listen.sock" '.listenerPath = $lp' \
		"$EXAMPLES/oci-hook/podman-profile.json" >"$T/profile.json" || fail "jq on the profile"
}

# /containers (every client's default node) and /k8s grant the standard nodes and /dev/zero but
# not /dev/full (1:7) nor /dev/kmsg (1:11): both are in the device cgroup of Docker,
# containerd and podman (the "c *:* m" rule lets any mknod through), so EPERM for them
# can only come from devwld. org.devwl.node and listenerMetadata may name nodes below
# /apps, which also grants mknod without CAP_MKNOD.
client_policy() {
	cat >"$T/policy.json" <<'JSON'
{
  "version": 1,
  "nodes": [
    { "path": "/containers",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm"] },
    { "path": "/k8s",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm"] },
    { "path": "/apps", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm"],
      "mknod_needs_cap": false }
  ],
  "containers": { "node_annotation": ["/apps"], "node_metadata": ["/apps"] }
}
JSON
}

# A plain tar of the busybox root file system (docker import, podman import).
client_rootfs_tar() {
	[ -d "$T/rootfs" ] || make_rootfs
	tar -C "$T/rootfs" -cf "$T/busybox.tar" . || fail "tar of the rootfs"
}

# The same root file system as a one-layer OCI image archive named REF (ctr image import),
# running CMD (a JSON array, default ["sh"]) unless told otherwise. Its PATH is the image's
# to give, as in any real image: the CRI plugin, unlike ctr, adds none.
client_oci_archive() {
	local ref=$1 cmd=${2:-'["sh"]'} o=$T/oci layer cfg man d
	client_rootfs_tar
	mkdir -p "$o/blobs/sha256"
	d=$(sha256sum "$T/busybox.tar" | cut -d' ' -f1)
	cp "$T/busybox.tar" "$o/blobs/sha256/$d"
	layer=$(jq -nc --arg d "sha256:$d" --argjson s "$(stat -c %s "$T/busybox.tar")" \
		'{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $d, size: $s}')
	jq -nc --arg d "sha256:$d" --argjson cmd "$cmd" '{architecture: "amd64", os: "linux",
		config: {Env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], Cmd: $cmd},
		rootfs: {type: "layers", diff_ids: [$d]}}' >"$o/config"
	cfg=$(jq -nc --arg d "sha256:$(sha256sum "$o/config" | cut -d' ' -f1)" \
		--argjson s "$(stat -c %s "$o/config")" \
		'{mediaType: "application/vnd.oci.image.config.v1+json", digest: $d, size: $s}')
	mv "$o/config" "$o/blobs/sha256/$(jq -r '.digest[7:]' <<<"$cfg")"
	jq -nc --argjson c "$cfg" --argjson l "$layer" '{schemaVersion: 2,
		mediaType: "application/vnd.oci.image.manifest.v1+json", config: $c,
		layers: [$l]}' >"$o/manifest"
	man=$(jq -nc --arg d "sha256:$(sha256sum "$o/manifest" | cut -d' ' -f1)" \
		--argjson s "$(stat -c %s "$o/manifest")" --arg ref "$ref" \
		'{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $d, size: $s,
		  annotations: {"io.containerd.image.name": $ref,
				"org.opencontainers.image.ref.name": ($ref | sub(".*:"; ""))}}')
	mv "$o/manifest" "$o/blobs/sha256/$(jq -r '.digest[7:]' <<<"$man")"
	jq -nc --argjson m "$man" '{schemaVersion: 2, manifests: [$m]}' >"$o/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$o/oci-layout"
	tar -C "$o" -cf "$T/busybox-oci.tar" oci-layout index.json blobs || fail "tar of the image"
}

# What every client test runs in its container: one granted open, one denied open,
# one granted mknod (then read through it), one denied mknod.
CLIENT_SCRIPT='echo x > /dev/null && echo NULL_OK
echo x > /dev/full; echo FULL_RC=$?
mknod /tmp/zero c 1 5 && [ "$(head -c 4 /tmp/zero | od -An -tx1 | tr -d " ")" = 00000000 ] && echo MKNOD_OK
mknod /tmp/kmsg c 1 11; echo KMSG_RC=$?'

# client_check OUT ID NODE WHO: the outcomes of CLIENT_SCRIPT in OUT, and devwld's
# record of them for container ID on NODE.
client_check() {
	local out=$1 id=$2 node=$3 who=$4
	grep -q NULL_OK "$out" || fail "$who: open /dev/null failed: $(cat "$out")"
	grep -q "can't create /dev/full: Operation not permitted" "$out" && grep -q FULL_RC=1 "$out" ||
		fail "$who: /dev/full was not denied EPERM: $(cat "$out")"
	grep -q MKNOD_OK "$out" || fail "$who: mknod c 1:5 and read: $(cat "$out")"
	grep -q "mknod: /tmp/kmsg: Operation not permitted" "$out" && grep -q KMSG_RC=1 "$out" ||
		fail "$who: mknod c 1:11 was not denied EPERM: $(cat "$out")"
	audit_has "$id" "$node" openat "c 1:7" deny && audit_has "$id" "$node" mknodat "c 1:11" deny &&
		audit_has "$id" "$node" mknodat "c 1:5" allow && audit_has "$id" "$node" openat "c 1:3" allow ||
		fail "$who: devwld's audit lacks the decisions for $id on $node: $(tail -5 "$T/audit.jsonl")"
	pass "$who: granted open and mknod work, /dev/full and mknod c 1:11 fail EPERM, audited on $node"
}

# audit_has ID NODE SYSCALL DEVICE DECISION
audit_has() {
	jq -e -s --arg id "$1" --arg node "$2" --arg sc "$3" --arg dev "$4" --arg dec "$5" \
		'any(.[]; .container == $id and .node == $node and .syscall == $sc and
			  .device == $dev and .decision == $dec)' "$T/audit.jsonl" >/dev/null
}

# wait_gone ID: devwld saw the container's last process exit and dropped it (30 s: the
# machine may be loaded).
wait_gone() {
	wait_for "$T/devwld.log" "container $1: gone" 30 || fail "devwld did not see $1 exit"
	ctl containers | grep -q "^$1 " && fail "devwlctl containers still lists $1"
	true
}

# Host paths a client daemon creates outside its own directories whatever it is told
# (dockerd's /etc/docker/key.json, containerd's shims' /run/containerd/{s,runc}, ...).
# Other tests (another worktree's ctest) may be using them at the same time, so the end
# removes only what is this test's alone (client_own: e.g. the runc state of its own
# containerd namespace) and then, of the directories that did not exist at the start
# (client_note_paths), those left empty.
CLIENT_MADE=()
CLIENT_OWN=()
client_note_paths() {
	local p
	for p; do
		[ -e "$p" ] || CLIENT_MADE+=("$p")
	done
}
client_own() { CLIENT_OWN+=("$@"); }

# pids_under DIR: processes whose command line names DIR (daemons and their shims).
pids_under() {
	local p
	for p in /proc/[0-9]*; do
		{ tr "\0" " " <"$p/cmdline"; } 2>/dev/null | grep -q -- "$1" && echo "${p#/proc/}"
	done
}

# stop_pids SIGNAL-FIRST PID...: TERM (or the given signal), then KILL after 10 s.
stop_pids() {
	local sig=$1 pid i
	shift
	[ $# -gt 0 ] || return 0
	kill "-$sig" "$@" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		for pid; do
			kill -0 "$pid" 2>/dev/null && break
			pid=
		done
		[ -z "$pid" ] && return 0
		sleep 0.1
	done
	kill -KILL "$@" 2>/dev/null
	sleep 0.2
}

# client_cleanup: after the client's own stop, anything still running from CLIENT_DIR,
# every mount below $T, the processes and cgroup CGROUP_PARENT in every hierarchy, the
# host paths made, then lib.sh's cleanup (devwld, $T).
CGROUP_PARENT=devwl-client-$$
client_cleanup() {
	local st=$? m d p
	[ "$(type -t client_stop)" = function ] && client_stop
	stop_pids KILL $(pids_under "$CLIENT_DIR/")
	for m in $(awk -v t="$T" 'index($5, t "/") == 1 || $5 == t {print $5}' /proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	# A container whose runtime lost track of it still lives in our cgroup.
	stop_pids KILL $(cat /sys/fs/cgroup/*/"$CGROUP_PARENT"/*/cgroup.procs 2>/dev/null | sort -u)
	for d in /sys/fs/cgroup/*/"$CGROUP_PARENT" /sys/fs/cgroup/"$CGROUP_PARENT"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	for p in "${CLIENT_OWN[@]}"; do
		rm -rf "$p"
	done
	for p in "${CLIENT_MADE[@]}"; do
		[ -d "$p" ] && find "$p" -depth -type d -empty -delete 2>/dev/null
	done
	(exit "$st")
	cleanup
}
trap client_cleanup EXIT
