#!/bin/bash
# A rootless image build, for real: `buildah build` of a small image (FROM scratch; COPY a
# static busybox and a file; RUN busybox in it) by an unprivileged user with its own
# /etc/subuid and /etc/subgid ranges, on fuse-overlayfs in its user namespace, under
# devwl-run in kernel and authoritative mode with /dev/fuse granted: it builds, the RUN
# reads the COPY'd file from a fuse-overlayfs root. In authoritative mode buildah's copier
# chroots into that FUSE mount, where devwl cannot look (doc/DESIGN.md, "Not resolved"):
# those opens are left to the caller's device cgroup and audited as not resolved, and
# nothing is refused. Without the grant the same build fails at once, fuse-overlayfs
# saying it cannot open /dev/fuse, and devwl (authoritative) audits the refusal.
#
# The user namespace is made before devwl-run, by the user, through newuidmap from its
# subuid ranges, and joined under it (as a rootless runtime joins its pause process):
# devwl-run sets no_new_privs, so a setuid newuidmap run under it cannot write the maps,
# and buildah would fall back to a single id, with which its RUN cannot set groups.
# The host's /dev/fuse is replaced, in the test's mount namespace, by a 0666 node as
# udev makes it on a desktop (here it may be root's 0600).
set -u
. "$(dirname "$0")/lib.sh"
live_init "the baseline cgroup, /etc/subuid, a FUSE node over /dev/fuse"
for p in buildah fuse-overlayfs newuidmap newgidmap setpriv nsenter timeout; do
	command -v $p >/dev/null || skip "no $p (Debian packages buildah, fuse-overlayfs, uidmap)"
done
unshare --help | grep -q -- --map-users || skip "unshare has no --map-users (util-linux < 2.38)"
[ -c /dev/fuse ] || skip "no /dev/fuse on this host"
BB=$(command -v busybox) && file -L "$BB" | grep -q 'statically linked' || skip "no static busybox"
setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urm true 2>/dev/null ||
	skip "uid 65534 cannot make user namespaces here"

# The user's subordinate ids, far above any real user's; the files as they were on exit.
BASE=3000000000
cp -a /etc/subuid "$T/subuid" 2>/dev/null || : >"$T/subuid.none"
cp -a /etc/subgid "$T/subgid" 2>/dev/null || : >"$T/subgid.none"
restore() {
	local f
	for f in subuid subgid; do
		if [ -e "$T/$f.none" ]; then
			rm -f "/etc/$f"
		else
			cat "$T/$f" >"/etc/$f"
		fi
	done
	rm -rf "$T"
}
trap restore EXIT
echo "65534:$BASE:65536" >>/etc/subuid
echo "65534:$BASE:65536" >>/etc/subgid

chmod 755 "$T"
H=$T/home
mkdir -p "$T/ctx" "$H/.config/containers" "$H/run"
cp "$BB" "$T/ctx/busybox"
echo devwl-82 >"$T/ctx/hello"
cat >"$T/ctx/Containerfile" <<'EOF'
FROM scratch
COPY busybox /bin/busybox
COPY hello /hello
RUN ["/bin/busybox", "sh", "-c", "/bin/busybox cat /hello && /bin/busybox awk '$2 == \"/\" {print \"root:\", $3}' /proc/self/mounts && /bin/busybox cat /proc/self/uid_map && /bin/busybox cp /hello /copied"]
EOF
cat >"$H/.config/containers/storage.conf" <<EOF
[storage]
driver = "overlay"
runroot = "$H/run/containers"
graphroot = "$H/storage"
[storage.options.overlay]
mount_program = "$(command -v fuse-overlayfs)"
EOF
chown -R 65534:65534 "$H" "$T/ctx"
chmod 700 "$H/run"
mknod -m 666 "$T/fuse" c 10 229 || fail "mknod $T/fuse"

# Run as root in a mount namespace of its own: /dev/fuse replaced, the user's namespace
# made (newuidmap, from the ranges above) and held by a sleep, then devwl-run with the
# arguments given, the user joining that namespace to run buildah.
cat >"$T/in.sh" <<SH
mount --bind $T/fuse /dev/fuse || exit 3
setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Um --map-root-user \
	--map-users=$BASE,1,65536 --map-groups=$BASE,1,65536 sleep 300 &
holder=\$!
while [ "\$(cat /proc/\$holder/comm 2>/dev/null)" != sleep ]; do
	kill -0 \$holder 2>/dev/null || exit 4
	sleep 0.02
done
"\$@" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
	nsenter -U -m -t \$holder env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=$H \
	XDG_RUNTIME_DIR=$H/run XDG_CONFIG_HOME=$H/.config XDG_DATA_HOME=$H/.local/share \
	_CONTAINERS_USERNS_CONFIGURED=1 _CONTAINERS_ROOTLESS_UID=65534 \
	_CONTAINERS_ROOTLESS_GID=65534 BUILDAH_ISOLATION=chroot \
	buildah build --layers=false -t devwl-82 -f $T/ctx/Containerfile $T/ctx
rc=\$?
kill \$holder
exit \$rc
SH

# build MODE [devwl-run options...]: the build's output in $T/MODE.out, its audit in
# $T/MODE.jsonl; returns its status (124: it did not end within 150 s).
build() {
	local mode=$1
	shift
	timeout -k 5 150 unshare -m bash "$T/in.sh" "$RUN" --mode="$mode" --audit "$T/$mode.jsonl" \
		"$@" >"$T/$mode.out" 2>&1
}

for mode in kernel authoritative; do
	start=$SECONDS
	build $mode --allow 'c 10:229 rwm' || fail "$mode: the build failed ($?): $(tail -20 "$T/$mode.out")"
	out=$T/$mode.out
	grep -qx devwl-82 "$out" || fail "$mode: the RUN did not read the COPY'd file: $(cat "$out")"
	grep -qx 'root: fuse.fuse-overlayfs' "$out" ||
		fail "$mode: the RUN's root is not fuse-overlayfs: $(cat "$out")"
	grep -Eq "^ +1 +$BASE +65536$" "$out" ||
		fail "$mode: the RUN's ids are not the user's subuid range: $(cat "$out")"
	grep -q '^Successfully tagged localhost/devwl-82:latest$' "$out" || fail "$mode: not committed: $(cat "$out")"
	# An error devwl answers is the kernel's own (openat2 feature probes: EINVAL); a
	# refusal, or a call devwl could not decide, is EPERM.
	refused=$(grep '"decision":"deny"\|"errno":"EPERM"' "$T/$mode.jsonl" | head -5)
	[ -z "$refused" ] || fail "$mode: devwl refused something: $refused"
	echo "ok - $mode: rootless buildah build (COPY, RUN on fuse-overlayfs) in $((SECONDS - start)) s"
done
a=$T/authoritative.jsonl
grep '"path":"/dev/fuse"' "$a" | grep '"device":"c 10:229"' | grep -q '"decision":"allow"' ||
	fail "authoritative: no granted open of /dev/fuse in the audit"
grep -q '"decision":"continue","reason":"not resolved by devwl' "$a" ||
	fail "authoritative: nothing audited as not resolved (the copier's chroot into the FUSE mount)"
echo "ok - authoritative: /dev/fuse granted, the copier's opens in the FUSE mount left to the cgroup, audited as not resolved"

for mode in kernel authoritative; do
	start=$SECONDS
	build $mode
	rc=$?
	[ $rc = 124 ] && fail "$mode without the grant: the build hung: $(tail -5 "$T/$mode.out")"
	[ $rc = 0 ] && fail "$mode without the grant: the build succeeded"
	grep -q 'failed to open /dev/fuse: Operation not permitted' "$T/$mode.out" ||
		fail "$mode without the grant: not refused as /dev/fuse: $(tail -5 "$T/$mode.out")"
	echo "ok - $mode without /dev/fuse: the build fails in $((SECONDS - start)) s, fuse-overlayfs cannot open /dev/fuse"
done
grep '"path":"/dev/fuse"' "$a" | grep '"device":"c 10:229"' | grep -q '"decision":"deny".*"reason":"policy"' ||
	fail "authoritative without the grant: the refusal of /dev/fuse not audited: $(grep /dev/fuse "$a")"
echo PASS
