# A rootless image build in a runc container served by devwld: the build of tests/live/82
# (buildah on fuse-overlayfs; tests/rootless-build.sh's context and storage) run by root of
# a container whose user namespace maps it to uid 65534 and the ids above to a subuid
# range, its root the host's /usr and /etc, with the full profile (devwld decides every
# open, the copier's in the FUSE mount among them) and the mknod-only one (devwld
# programs the container's device cgroup). runc's own device rules do not name /dev/fuse:
# devwld's node is what grants it. Granted, it builds and its RUN reads the COPY'd file
# from a fuse-overlayfs root; on a node without it the build fails at once, fuse-overlayfs
# saying it cannot open /dev/fuse. RB_TOOL=podman runs the same with `podman build`
# (tests/oci/199).
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/../rootless-build.sh"
KM_PROFILE=$HERE/../../examples/oci-hook/seccomp-mknod-only.json
[ -f "$KM_PROFILE" ] || fail "no $KM_PROFILE"
tool=${RB_TOOL:-buildah}
why=$(rb_missing "$tool")
[ -z "$why" ] || skip "$why"
trap 's=$?; rb_restore; (exit $s); cleanup' EXIT
BASE=3000000000
rb_setup "$T/b" $BASE "$tool" || fail "setting up the build in $T/b"
# The storage as the container sees it: the build's directory at /b.
sed -i "s|$T/b|/b|g" "$T/b/home/.config/containers/storage.conf"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers",
               "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:7 rwm",
                         "allow c 1:8 rwm", "allow c 1:9 rwm", "allow c 5:0 rwm",
                         "allow c 5:2 rwm", "allow c 136:* rwm", "allow c 10:229 rwm"] },
             { "path": "/nofuse",
               "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:7 rwm",
                         "allow c 1:8 rwm", "allow c 1:9 rwm", "allow c 5:0 rwm",
                         "allow c 5:2 rwm", "allow c 136:* rwm"] } ] }
JSON
start_devwld

R=$T/root
mkdir -p "$R"/{usr,etc,proc,dev,sys,tmp,var/tmp,b}
for l in bin lib lib64 sbin; do ln -s usr/$l "$R/$l"; done
chmod 1777 "$R/tmp" "$R/var/tmp"
CAP_NAMES=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP
	LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER
	SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE
	SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP
	MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF
	CHECKPOINT_RESTORE)
bnd=$((16#$(awk '$1 == "CapBnd:" {print $2}' /proc/self/status)))
# Every capability, in the container's user namespace: buildah's RUN sets its own set.
ALL_CAPS=$(for i in "${!CAP_NAMES[@]}"; do
	((bnd >> i & 1)) && echo "\"CAP_${CAP_NAMES[i]}\""
done | jq -sc .)

# The build's command in the container (as tests/rootless-build.sh runs it on the host).
if [ "$tool" = podman ]; then
	BUILD_ARGS='["podman", "build", "--layers=false", "--isolation=chroot"]'
else
	BUILD_ARGS='["buildah", "build", "--layers=false"]'
fi

# build PROFILE NODE ID: the build in container ID, on devwld's NODE; its output in
# $T/ID.out, its status returned (124: it did not end within 150 s).
build() {
	local how=$1 node=$2 id=$3-$$ sc
	case $how in
	full) sc=$(seccomp_json "node=$node") ;;
	kernel)
		sc=$(jq -c '.listenerPath = $lp | .listenerMetadata = $m' --arg lp "$T/listen.sock" \
			--arg m "node=$node mode=kernel" "$KM_PROFILE") || fail "jq on $KM_PROFILE"
		;;
	esac
	mkdir -p "$T/$id"
	(cd "$T/$id" && runc spec --rootless) || fail "runc spec"
	jq --arg root "$R" --arg b "$T/b" --argjson caps "$ALL_CAPS" --argjson base $BASE \
		--argjson sc "$sc" --argjson build "$BUILD_ARGS" '
		.root = {path: $root, readonly: false}
		| .process.terminal = false
		| .process.user = {uid: 0, gid: 0}
		| .process.env = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/b/home",
			"XDG_RUNTIME_DIR=/b/home/run", "BUILDAH_ISOLATION=chroot",
			"CONTAINERS_STORAGE_CONF=/b/home/.config/containers/storage.conf",
			"_CONTAINERS_USERNS_CONFIGURED=1", "_CONTAINERS_ROOTLESS_UID=65534",
			"_CONTAINERS_ROOTLESS_GID=65534"]
		| .process.args = $build + ["-t", "devwl-build", "-f", "/b/ctx/Containerfile",
			"/b/ctx"]
		| .process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps,
			inheritable: $caps, ambient: $caps}
		| .linux.uidMappings = [{containerID: 0, hostID: 65534, size: 1},
			{containerID: 1, hostID: $base, size: 65536}]
		| .linux.gidMappings = .linux.uidMappings
		| .linux.seccomp = $sc
		| .mounts |= map(select(.destination != "/sys/fs/cgroup"))
		| .mounts += [
			{destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]},
			{destination: "/etc", type: "bind", source: "/etc", options: ["rbind", "ro"]},
			{destination: "/b", type: "bind", source: $b, options: ["rbind"]},
			{destination: "/dev/fuse", type: "bind", source: ($b + "/fuse"),
			 options: ["bind"]}]' \
		"$T/$id/config.json" >"$T/$id/config.new" || fail "jq on the config"
	mv "$T/$id/config.new" "$T/$id/config.json"
	run_fg "$id" "$T/$id"
	local rc=$?
	cp "$T/$id.out" "$T/$3.out"
	return $rc
}

for how in full kernel; do
	start=$SECONDS
	build $how /containers/b-$how b-$how || fail "$how: the build failed ($?): $(tail -20 "$T/b-$how.out")"
	out=$T/b-$how.out
	grep -qx devwl-build "$out" && grep -qx 'root: fuse.fuse-overlayfs' "$out" &&
		grep -Eq "^ +1 +$BASE +65536$" "$out" &&
		grep -q '^Successfully tagged localhost/devwl-build:latest$' "$out" ||
		fail "$how: the RUN did not read the COPY'd file from fuse-overlayfs: $(cat "$out")"
	pass "$how profile: rootless $tool build in runc (COPY, RUN on fuse-overlayfs) in $((SECONDS - start)) s"
done
# An error devwld answers is the kernel's own (openat2 feature probes: EINVAL); a
# refusal, or a call it could not decide, is EPERM.
refused=$(grep '"decision":"deny"\|"errno":"EPERM"' "$T/audit.jsonl" | head -5)
[ -z "$refused" ] || fail "devwld refused something in the builds: $refused"
pass "devwld refused nothing in the builds"

for how in full kernel; do
	start=$SECONDS
	build $how /nofuse n-$how
	rc=$?
	[ $rc = 124 ] && fail "$how without the grant: the build hung: $(tail -5 "$T/n-$how.out")"
	[ $rc = 0 ] && fail "$how without the grant: the build succeeded"
	grep -q 'failed to open /dev/fuse: Operation not permitted' "$T/n-$how.out" ||
		fail "$how without the grant: not refused as /dev/fuse: $(tail -5 "$T/n-$how.out")"
	pass "$how profile without /dev/fuse: the build fails in $((SECONDS - start)) s, fuse-overlayfs cannot open /dev/fuse"
done
exit 0
