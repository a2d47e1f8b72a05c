#!/bin/bash
# tests/live/82-buildah-build.sh with podman: `podman build` (Debian's podman 4.3, the
# buildah library inside; --isolation=chroot, offline: FROM scratch) of the same small
# image (COPY a static busybox and a file; RUN busybox in it) by an unprivileged user with
# its own /etc/subuid and /etc/subgid ranges, on fuse-overlayfs in its user namespace,
# under devwl-run in kernel and authoritative mode with /dev/fuse granted: it builds, the
# RUN reads the COPY'd file from a fuse-overlayfs root, nothing is refused. Without the
# grant the build fails at once, fuse-overlayfs saying it cannot open /dev/fuse, and devwl
# (authoritative) audits the refusal. The set-up: tests/rootless-build.sh (podman's
# containers.conf: events to a file, cgroupfs; the user's session has no systemd).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../rootless-build.sh"
live_init "the baseline cgroup, /etc/subuid, a FUSE node over /dev/fuse"
why=$(rb_missing podman)
[ -z "$why" ] || skip "$why"
BASE=3000000000
trap 'rb_restore; rm -rf "$T"' EXIT
rb_setup "$T" $BASE podman || fail "setting up the build in $T"

build() {
	local mode=$1
	shift
	rb_build "$T/$mode.out" "$RUN" --mode="$mode" --audit "$T/$mode.jsonl" "$@" --
}

for mode in kernel authoritative; do
	start=$SECONDS
	build $mode --allow 'c 10:229 rwm' || fail "$mode: the build failed ($?): $(tail -20 "$T/$mode.out")"
	out=$T/$mode.out
	grep -qx devwl-build "$out" || fail "$mode: the RUN did not read the COPY'd file: $(cat "$out")"
	grep -qx 'root: fuse.fuse-overlayfs' "$out" ||
		fail "$mode: the RUN's root is not fuse-overlayfs: $(cat "$out")"
	grep -Eq "^ +1 +$BASE +65536$" "$out" ||
		fail "$mode: the RUN's ids are not the user's subuid range: $(cat "$out")"
	grep -q '^Successfully tagged localhost/devwl-build:latest$' "$out" || fail "$mode: not committed: $(cat "$out")"
	refused=$(grep '"decision":"deny"\|"errno":"EPERM"' "$T/$mode.jsonl" | head -5)
	[ -z "$refused" ] || fail "$mode: devwl refused something: $refused"
	echo "ok - $mode: rootless podman build (COPY, RUN on fuse-overlayfs) in $((SECONDS - start)) s"
done
grep '"path":"/dev/fuse"' "$T/authoritative.jsonl" | grep '"device":"c 10:229"' | grep -q '"decision":"allow"' ||
	fail "authoritative: no granted open of /dev/fuse in the audit"
echo "ok - authoritative: /dev/fuse granted (audited)"

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
grep '"path":"/dev/fuse"' "$T/authoritative.jsonl" | grep '"device":"c 10:229"' |
	grep -q '"decision":"deny".*"reason":"policy"' ||
	fail "authoritative without the grant: the refusal of /dev/fuse not audited: $(grep /dev/fuse "$T/authoritative.jsonl")"
echo PASS
