# shellcheck shell=bash
# Sourced by tests/live/82-buildah-build.sh, tests/live/83-podman-build.sh and
# bench/imagebuild.sh: a rootless image build by uid 65534 with buildah (or podman build,
# the same library) on fuse-overlayfs, set up once for each.
#
#   rb_missing [TOOL]     print what this host lacks for it (nothing: it can run)
#   rb_setup DIR BASE [TOOL]
#                         the build context, the user's home and storage in DIR (0755,
#                         root's), subuid and subgid ranges BASE..BASE+65535 for uid 65534
#                         added to /etc/subuid and /etc/subgid (rb_restore puts them back);
#                         TOOL buildah (the default) or podman
#   rb_build OUT CMD...   one build as root runs it: CMD... (e.g. devwl-run ... --, or env)
#                         runs the user's buildah; output in OUT, status returned (124: it
#                         did not end within 150 s)
#   rb_restore            /etc/subuid and /etc/subgid as they were before rb_setup
#
# The user's namespace is made before CMD, by the user, through newuidmap from its subuid
# ranges, and joined under CMD (as a rootless runtime joins its pause process): devwl-run
# sets no_new_privs, so a setuid newuidmap run under it cannot write the maps (buildah then
# falls back to one id, and its RUN cannot set groups). The host's /dev/fuse is replaced, in
# the build's mount namespace, by a 0666 node as udev makes it (here it may be root's 0600).
# The image: FROM scratch, COPY a static busybox and a file, RUN busybox, which prints the
# file, the root's filesystem type ("root: fuse.fuse-overlayfs") and its uid_map, in one
# write: buildah's chroot isolation was seen to lose the lines after a RUN's first write
# when the RUN ends at once. podman builds the same way (--isolation=chroot), offline (FROM
# scratch pulls nothing); its containers.conf keeps it from the systemd it does not have in
# the user's session: its events to a file, its cgroups by cgroupfs.

rb_missing() {
	local p
	for p in ${1:-buildah} fuse-overlayfs newuidmap newgidmap setpriv nsenter timeout file; do
		command -v $p >/dev/null || {
			echo "no $p (Debian packages buildah, fuse-overlayfs, uidmap)"
			return
		}
	done
	unshare --help | grep -q -- --map-users || {
		echo "unshare has no --map-users (util-linux < 2.38)"
		return
	}
	[ -c /dev/fuse ] || {
		echo "no /dev/fuse on this host"
		return
	}
	file -L "$(command -v busybox)" 2>/dev/null | grep -q 'statically linked' || {
		echo "no static busybox"
		return
	}
	setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urm true 2>/dev/null ||
		echo "uid 65534 cannot make user namespaces here"
}

RB_DIR=
rb_setup() {
	local d=$1 base=$2 tool=${3:-buildah} h=$1/home f build
	mkdir -p "$d" || return 1
	RB_DIR=$d
	for f in subuid subgid; do
		if [ -e /etc/$f ]; then
			cp -a /etc/$f "$d/$f.orig" || return 1
		else
			: >"$d/$f.none" || return 1
		fi
		echo "65534:$base:65536" >>/etc/$f || return 1
	done
	chmod 755 "$d"
	mkdir -p "$d/ctx" "$h/.config/containers" "$h/run" || return 1
	cp "$(command -v busybox)" "$d/ctx/busybox" || return 1
	echo devwl-build >"$d/ctx/hello"
	cat >"$d/ctx/Containerfile" <<'EOF'
FROM scratch
COPY busybox /bin/busybox
COPY hello /hello
RUN ["/bin/busybox", "sh", "-c", "{ /bin/busybox cat /hello && /bin/busybox awk '$2 == \"/\" {print \"root:\", $3}' /proc/self/mounts && /bin/busybox cat /proc/self/uid_map; } >/report && /bin/busybox cp /hello /copied && /bin/busybox cat /report"]
EOF
	cat >"$h/.config/containers/storage.conf" <<EOF
[storage]
driver = "overlay"
runroot = "$h/run/containers"
graphroot = "$h/storage"
[storage.options.overlay]
mount_program = "$(command -v fuse-overlayfs)"
EOF
	build="buildah build --layers=false"
	if [ "$tool" = podman ]; then
		build="podman build --layers=false --isolation=chroot"
		printf '%s\n' "[engine]" 'events_logger = "file"' 'cgroup_manager = "cgroupfs"' \
			>"$h/.config/containers/containers.conf"
	fi
	chown -R 65534:65534 "$h" "$d/ctx"
	chmod 700 "$h/run"
	mknod -m 666 "$d/fuse" c 10 229 || return 1
	# Run as root in a mount namespace of its own (rb_build).
	cat >"$d/in.sh" <<SH
mount --bind $d/fuse /dev/fuse || exit 3
setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Um --map-root-user \
	--map-users=$base,1,65536 --map-groups=$base,1,65536 sleep 300 &
holder=\$!
trap 'kill \$holder 2>/dev/null' EXIT
trap 'exit 143' TERM
while [ "\$(cat /proc/\$holder/comm 2>/dev/null)" != sleep ]; do
	kill -0 \$holder 2>/dev/null || exit 4
	sleep 0.02
done
"\$@" setpriv --reuid=65534 --regid=65534 --clear-groups \
	nsenter -U -m -t \$holder env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=$h \
	XDG_RUNTIME_DIR=$h/run XDG_CONFIG_HOME=$h/.config XDG_DATA_HOME=$h/.local/share \
	_CONTAINERS_USERNS_CONFIGURED=1 _CONTAINERS_ROOTLESS_UID=65534 \
	_CONTAINERS_ROOTLESS_GID=65534 BUILDAH_ISOLATION=chroot \
	$build -t devwl-build -f $d/ctx/Containerfile $d/ctx
SH
}

rb_build() {
	local out=$1
	shift
	timeout -k 5 150 unshare -m bash "$RB_DIR/in.sh" "$@" >"$out" 2>&1
}

rb_restore() {
	local f
	[ -n "$RB_DIR" ] || return 0
	for f in subuid subgid; do
		if [ -e "$RB_DIR/$f.none" ]; then
			rm -f /etc/$f
		elif [ -e "$RB_DIR/$f.orig" ]; then
			cat "$RB_DIR/$f.orig" >/etc/$f
		fi
	done
}
