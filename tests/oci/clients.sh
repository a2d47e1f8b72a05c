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

# pids_under DIR: processes whose command line names DIR (daemons and their shims). Read
# by bash itself: two processes forked per /proc entry took 20-30 s of a loaded host.
pids_under() {
	local p args
	for p in /proc/[0-9]*; do
		mapfile -d '' args 2>/dev/null <"$p/cmdline" || continue
		[[ "${args[*]}" == *"$1"* ]] && echo "${p#/proc/}"
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

# --- Hot-plug through a client (tests/oci/154 podman, 155 Docker, 156 containerd) --------

# client_attach_policy: client_policy, with the loop driver (b 7:*) allowed on /containers
# and taken from each container's own node as it is made ("container_rules"): only an
# attach gives a container a loop device.
client_attach_policy() {
	client_policy
	jq '(.nodes[] | select(.path == "/containers") | .rules) += ["allow b 7:* rw"]
		| .containers.container_rules = ["deny b 7:* rwm"]' "$T/policy.json" >"$T/policy.new" &&
		mv "$T/policy.new" "$T/policy.json" || fail "jq on the policy"
}

# The mknod-only profile (examples/oci-hook/seccomp-mknod-only.json: only mknod of device
# nodes traps, the device cgroup decides opens) with this test's listener, as
# $T/km-profile.json. Its listenerMetadata keeps "mode=kernel" and drops the shipped
# "node=": each container gets /containers/ID of its own, as with the full profile.
client_km_profile() {
	jq --arg lp "$T/listen.sock" '.listenerPath = $lp | .listenerMetadata = "mode=kernel"' \
		"$EXAMPLES/oci-hook/seccomp-mknod-only.json" >"$T/km-profile.json" ||
		fail "jq on the mknod-only profile"
}

# The long-running container of the attach tests: it runs each script attach_wl drops in
# as /tmp/req.N, in order, its output to /tmp/out.N, until /tmp/stop exists. The
# container's own process, not an exec'ed one, opens what the scripts open.
ATTACH_WORKLOAD='echo READY; n=0
while [ ! -e /tmp/stop ]; do
	if [ -e /tmp/req.$n ]; then
		sh /tmp/req.$n >/tmp/out.$n.part 2>&1
		mv /tmp/out.$n.part /tmp/out.$n
		n=$((n + 1))
	else
		sleep 0.1
	fi
done
echo STOPPED'

# attach_wl PID SCRIPT: SCRIPT run by the ATTACH_WORKLOAD whose process is PID (handed in
# from the host through /proc/PID/root); its output in $T/wl.out.
ATTACH_REQ=()
attach_wl() {
	local root=/proc/$1/root n=${ATTACH_REQ[$1]:-0}
	ATTACH_REQ[$1]=$((n + 1))
	printf '%s\n' "$2" >"$root/tmp/req.$n.part" && mv "$root/tmp/req.$n.part" "$root/tmp/req.$n" ||
		fail "cannot hand the workload $1 its script"
	wait_until 60 test -e "$root/tmp/out.$n" || fail "the workload $1 did not run script $n: $2"
	cat "$root/tmp/out.$n" >"$T/wl.out"
}

# client_listed ID: devwlctl containers lists ID.
client_listed() { ctl containers | grep -q "^$1 "; }

# openat_denials ID DEVICE: how many opens of DEVICE by ID devwld's audit records denied.
openat_denials() {
	jq -s --arg id "$1" --arg dev "$2" '[.[] | select(.container == $id and
		.syscall == "openat" and .device == $dev and .decision == "deny")] | length' \
		"$T/audit.jsonl"
}

# attach_probe NAME: a script checking $LOOP, /tmp/loop-host and mknod /tmp/NAME of it;
# attach_refused WHO WHEN NAME ROOT: its output in $T/wl.out says all three are refused.
attach_probe() {
	printf '%s\n' "test -e $LOOP && echo PRESENT" 'head -c 9 /tmp/loop-host; echo OPEN_RC=$?' \
		"mknod /tmp/$1 b 7 $LMIN; echo MKNOD_RC=\$?"
}
attach_refused() {
	local who=$1 when=$2 name=$3 root=$4 out
	out=$(cat "$T/wl.out")
	grep -q PRESENT <<<"$out" && fail "$who: $LOOP in the container $when: $out"
	grep -q "head: /tmp/loop-host: Operation not permitted" <<<"$out" &&
		grep -q OPEN_RC=1 <<<"$out" || fail "$who: open of b 7:$LMIN $when: $out"
	grep -q "mknod: /tmp/$name: Operation not permitted" <<<"$out" &&
		grep -q MKNOD_RC=1 <<<"$out" && [ ! -e "$root/tmp/$name" ] ||
		fail "$who: mknod b 7:$LMIN $when: $out"
}

# attach_proof WHO ID NAME PID KIND EXEC...: hot-plug of $LOOP (make_loop) into the
# running container ID (ATTACH_WORKLOAD, process PID, on /containers/ID), named NAME to
# devwlctl (an id or a prefix). KIND: full (every open traps: devwld refuses) or kernel
# (the mknod-only profile: the container's device cgroup, which devwld programs, refuses).
# EXEC... runs a command in the container the client's way (docker exec ID). Before the
# attach the device is absent, and a node of it made from the host, or by mknod, refused;
# attached, the workload reads the disk's bytes and writes some the host's file then
# holds, an exec'ed process sees the node; detached, the node is gone and a new open
# refused. The caller stops the container (/tmp/stop in it).
attach_proof() {
	local who=$1 id=$2 name=$3 pid=$4 kind=$5 root=/proc/$4/root node mode n0 d0 tag
	local dev="b 7:$LMIN" hex
	shift 5
	hex=$(printf %x "$LMIN")
	read -r node mode < <(ctl containers | awk -v id="$id" '$1 == id {print $2, $5}')
	[ "$node" = "/containers/$id" ] || fail "$who: $id is not on /containers/$id: $(ctl containers)"
	case $kind/$mode in
	full/* | kernel/kernel-v1 | kernel/kernel-v2) ;;
	*) fail "$who: kernel mode not in force ($mode): $(grep "container $id" "$T/devwld.log" | tail -3)" ;;
	esac

	# A node the container could not make: put there from the host, only the device
	# cgroup (kernel) or devwld (full) stands between it and the disk.
	mknod "$root/tmp/loop-host" b 7 "$LMIN" || fail "$who: mknod in the container's /tmp from the host"
	attach_wl "$pid" "$(attach_probe loop-made)"
	attach_refused "$who" "before the attach" loop-made "$root"
	audit_has "$id" "/containers/$id" mknodat "$dev" deny || fail "$who: no mknod denial audited"
	d0=$(openat_denials "$id" "$dev")
	if [ "$kind" = full ]; then
		[ "$d0" -ge 1 ] || fail "$who: the open of $dev was not devwld's denial: $(tail -3 "$T/audit.jsonl")"
	else
		[ "$d0" = 0 ] || fail "$who: an open was trapped under the mknod-only profile"
	fi
	pass "$who: before the attach $LOOP is absent; a node of it made from the host and mknod $dev fail EPERM ($mode)"

	ctl attach "$name" "$LOOP" >"$T/ctl.out" 2>&1 || fail "$who: devwlctl attach $name $LOOP: $(cat "$T/ctl.out")"
	ctl containers --devices | grep -q "^$id $dev rw $LOOP " ||
		fail "$who: containers --devices: $(ctl containers --devices)"
	n0=$(stat_of notifications)
	tag="attached-by-$kind-$$"
	attach_wl "$pid" "head -c 9 $LOOP; echo
printf $tag | dd of=$LOOP bs=512 seek=1 conv=notrunc,fsync 2>&1 && echo WROTE"
	[ "$(head -1 "$T/wl.out")" = DEVWLDISK ] || fail "$who: reading $LOOP: $(cat "$T/wl.out")"
	grep -q WROTE "$T/wl.out" || fail "$who: writing $LOOP: $(cat "$T/wl.out")"
	[ "$(dd if="$T/disk" bs=512 skip=1 count=1 status=none | head -c ${#tag})" = "$tag" ] ||
		fail "$who: the host's file does not hold what the container wrote"
	if [ "$kind" = kernel ]; then
		[ "$(stat_of notifications)" = "$n0" ] || fail "$who: the workload's opens trapped in kernel mode"
	else
		audit_has "$id" "/containers/$id" openat "$dev" allow ||
			fail "$who: devwld's audit has no granted open of $dev"
	fi
	pass "$who: attached as $name; the workload reads $LOOP and writes it (data checked on the host)"

	"$@" sh -c "stat -c '%F %t:%T' $LOOP && head -c 9 $LOOP" >"$T/exec.out" 2>&1 ||
		fail "$who: exec: $(cat "$T/exec.out")"
	[ "$(cat "$T/exec.out")" = "block special file 7:$hex
DEVWLDISK" ] || fail "$who: what the exec'ed process sees: $(cat "$T/exec.out")"
	pass "$who: an exec'ed process sees the node and reads the disk"

	ctl detach "$name" "$LOOP" >"$T/ctl.out" 2>&1 || fail "$who: devwlctl detach: $(cat "$T/ctl.out")"
	ctl containers --devices | grep -q "^$id " && fail "$who: after detach: $(ctl containers --devices)"
	attach_wl "$pid" "$(attach_probe loop-made2)"
	attach_refused "$who" "after the detach" loop-made2 "$root"
	"$@" sh -c "test -e $LOOP && echo PRESENT; head -c 9 /tmp/loop-host" >"$T/exec.out" 2>&1
	grep -q PRESENT "$T/exec.out" && fail "$who: $LOOP in the exec'ed process's view after detach"
	grep -q "head: /tmp/loop-host: Operation not permitted" "$T/exec.out" ||
		fail "$who: an exec'ed process's open after detach: $(cat "$T/exec.out")"
	if [ "$kind" = full ]; then
		[ "$(openat_denials "$id" "$dev")" -ge $((d0 + 2)) ] ||
			fail "$who: the opens after detach were not devwld's denials"
	fi
	pass "$who: detached: the node is gone, the workload's and an exec'ed process's opens fail EPERM"
}

# guide_hotplug GUIDE N [ID]: the Nth ```sh block of examples/GUIDE/README.md, its hot-plug
# block (a disk image on a loop device, attached to a running container, read with the
# runtime's exec, detached), run as written in this shell, in $T/guide, under the
# functions the caller defines for the runtime's command (on the test's own daemon);
# devwlctl is the test's devwld's, and each loop device made is noted for cleanup. The
# block's id (or ID, the name it gives its container) and loop are the caller's
# afterwards, its output in $T/guide.out. Fails
# unless devwlctl says what it attached and detached and the exec reads the disk.
guide_hotplug() {
	local text out min hex
	text=$(md_block "examples/$1/README.md" sh "$2")
	grep -q 'devwlctl attach' <<<"$text" || fail "block $2 of examples/$1/README.md is no hot-plug block"
	devwlctl() { ctl "$@"; }
	losetup() { command losetup "$@" | tee -a "$T/loops"; }
	id='' loop=''
	mkdir -p "$T/guide" && cd "$T/guide" || fail "cd $T/guide"
	eval "$text" >"$T/guide.out" 2>&1
	cd - >/dev/null || fail "cd back"
	unset -f devwlctl losetup
	[ -n "$id" ] || id=${3:-}
	out=$(cat "$T/guide.out")
	[ -n "$id" ] && [ -b "$loop" ] || fail "examples/$1/README.md's block made no container or loop device: $out"
	min=$(($(stat -c '0x%T' "$loop")))
	hex=$(printf %x "$min")
	grep -q "^attached b 7:$min ($loop) rw to container $id.* at $loop" <<<"$out" ||
		fail "devwlctl attach said: $out"
	grep -qx "block special file 7:$hex" <<<"$out" && grep -qx DEVWLDISK <<<"$out" ||
		fail "the exec after the attach: $out"
	grep -q "^detached b 7:$min rw from container $id.*: $loop removed" <<<"$out" ||
		fail "devwlctl detach said: $out"
	ctl containers --devices | grep -q "^$id " && fail "still attached: $(ctl containers --devices)"
}
