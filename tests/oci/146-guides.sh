# The offline images of the guides, their commands run as written: the busybox rootfs
# tar and a runc bundle of it with the shipped profile (examples/oci-hook/README.md,
# sections "An image without a registry" and 2), podman's import and run (its section
# 3) and containerd's image archive and import (examples/containerd/README.md). Only
# what a test must own is changed: the profiles' listenerPath (this test's devwld), the
# runc container's id, podman's storage and cgroup parent, containerd's socket and
# namespace. Docker's `docker import` is tests/oci/100-docker.sh's.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/clients.sh"
. "$HERE/containerd.sh"

client_cmd podman podman
PODMAN=$(type -P podman)
CTR=$(type -P ctr)
G=$T/guide
D=$CLIENT_DIR
mkdir -p "$G"

# guide_block GUIDE N: the Nth ```sh block of examples/GUIDE/README.md.
guide_block() { md_block "examples/$1/README.md" sh "$2"; }
# run_block GUIDE N OUT [FUNCTIONS]: that block in the guide's directory, as it would
# run typed in, with FUNCTIONS (definitions) standing in for commands.
run_block() {
	local text
	text=$(guide_block "$1" "$2")
	[ -n "$text" ] || fail "examples/$1/README.md has no sh block $2"
	(cd "$G" && eval "${4:-}" && eval "$text") >"$3" 2>&1
}

cp "$EXAMPLES/oci-hook/policy.json" "$T/policy.json"
for f in seccomp-runc.json podman-profile.json; do
	jq --arg lp "$T/listen.sock" '.listenerPath = $lp' "$EXAMPLES/oci-hook/$f" >"$G/$f" ||
		fail "jq on $f"
done
start_devwld

# --- 1. the root file system, as a tar --------------------------------------------------
run_block oci-hook 1 "$T/rootfs.out" || fail "the rootfs recipe: $(cat "$T/rootfs.out")"
tar -tf "$G/busybox.tar" | grep -qx './bin/sh' && [ -x "$G/rootfs/bin/busybox" ] &&
	[ -d "$G/rootfs/proc" ] && [ -d "$G/rootfs/tmp" ] ||
	fail "busybox.tar: $(tar -tf "$G/busybox.tar" | head)"
run_block oci-hook 1 "$T/rootfs.out" || fail "the rootfs recipe, run again: $(cat "$T/rootfs.out")"
pass "the rootfs recipe makes busybox.tar (and can be run again)"

# --- 2. a runc bundle of it --------------------------------------------------------------
ID=guide-$$
CONTAINERS+=("$ID")
# The container gets this test's id; any other runc command runs as written.
run_block oci-hook 2 "$T/runc.out" "runc() {
	if [ \"\$*\" = 'run --bundle bundle demo' ]; then command runc run --bundle bundle $ID
	else command runc \"\$@\"; fi
}"
grep -qx 'null ok' "$T/runc.out" && grep -q 'mknod: /tmp/kmsg: Operation not permitted' "$T/runc.out" ||
	fail "the runc bundle: $(cat "$T/runc.out")"
audit_has "$ID" /containers/example openat "c 1:3" allow &&
	audit_has "$ID" /containers/example mknodat "c 1:11" deny ||
	fail "devwld's audit lacks the runc bundle's decisions: $(tail -3 "$T/audit.jsonl")"
pass "the runc bundle prints what the guide says, decided by devwld on /containers/example"

# --- 3. podman import and run ------------------------------------------------------------
pm() {
	timeout 60 "$PODMAN" --root "$D/root" --runroot "$D/run" --tmpdir "$D/tmp" \
		--storage-driver vfs --events-backend none "$@"
}
# containerd.sh's client_stop (its namespace's containers, then containerd), and podman's.
eval "containerd_stop () $(declare -f client_stop | tail -n +2)"
client_stop() {
	containerd_stop
	[ -d "$D/root" ] && pm rm -af -t 0 >/dev/null 2>&1
}
# c/image's blob cache goes to /var/lib/containers/cache whatever --root says.
client_note_paths /var/lib/containers /run/containers /run/libpod
[ -e /var/lib/containers ] || client_own /var/lib/containers/cache/blob-info-cache-v1.boltdb
pm info >/dev/null 2>"$T/info.err" || skip "podman cannot run here: $(cat "$T/info.err")"
# podman with this test's storage, its containers in this test's cgroup.
run_block oci-hook 3 "$T/podman.out" 'sudo() { "$@"; }
podman() {
	local a args=()
	for a; do
		args+=("$a")
		[ "$a" = run ] && args+=(--cgroup-parent "/$CGROUP_PARENT")
	done
	pm "${args[@]}"
}'
pm image exists localhost/busybox || fail "podman import: $(cat "$T/podman.out")"
grep -q 'mknod: /tmp/kmsg: Operation not permitted' "$T/podman.out" ||
	fail "podman run: $(cat "$T/podman.out")"
id=$(sed -n 's|^devwld: container \([0-9a-f]*\): node /apps/web.*|\1|p' "$T/devwld.log" | head -1)
[ -n "$id" ] && audit_has "$id" /apps/web mknodat "c 1:11" deny ||
	fail "no denial on /apps/web: $(tail -5 "$T/devwld.log")"
wait_gone "$id"
pass "podman imports busybox.tar and its container is on /apps/web, mknod c 1:11 denied"

# --- 4. containerd: the image archive, imported and run ----------------------------------
# The shims keep runc's state in /run/containerd/runc/NAMESPACE whatever the config says.
client_own "/run/containerd/runc/$CGROUP_PARENT"
c() { timeout 60 "$CTR" -a "$D/containerd.sock" -n "$CGROUP_PARENT" "$@"; }
containerd_config io.containerd.grpc.v1.cri
containerd_start
# native: $T may be on an overlay file system, where overlayfs cannot stack.
export CONTAINERD_SNAPSHOTTER=native
run_block containerd 1 "$T/ctr.out" 'ctr() {
	[ "$1 $2" = "-n default" ] || { echo "the guide runs ctr $*" >&2; return 1; }
	shift 2
	c "$@"
}' || fail "the containerd guide's image: $(cat "$T/ctr.out")"
IMAGE=docker.io/library/busybox:latest
c run --rm --seccomp --seccomp-profile "$G/podman-profile.json" \
	"$IMAGE" ctr-guide sh -c 'echo x > /dev/null && echo null ok; mknod /tmp/kmsg c 1 11' \
	>"$T/ctr-run.out" 2>&1
grep -qx 'null ok' "$T/ctr-run.out" && grep -q 'mknod: /tmp/kmsg: Operation not permitted' "$T/ctr-run.out" &&
	audit_has ctr-guide /containers/ctr-guide mknodat "c 1:11" deny ||
	fail "ctr run of the imported image: $(cat "$T/ctr-run.out")"
wait_gone ctr-guide
pass "containerd imports the guide's busybox archive as $IMAGE; its container runs on devwld"
exit 0
