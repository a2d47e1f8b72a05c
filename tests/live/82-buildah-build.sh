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
# The set-up (the user's namespace made from its ranges before devwl-run, a 0666
# /dev/fuse): tests/rootless-build.sh. RB_TOOL=podman runs the same with `podman build`
# (tests/live/83).
set -u
tool=${RB_TOOL:-buildah}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../rootless-build.sh"
live_init "the baseline cgroup, /etc/subuid, a FUSE node over /dev/fuse"
why=$(rb_missing "$tool")
[ -z "$why" ] || skip "$why"
# The user's subordinate ids, far above any real user's; the files as they were on exit.
BASE=3000000000
trap 'rb_restore; rm -rf "$T"' EXIT
rb_setup "$T" $BASE "$tool" || fail "setting up the build in $T"

# build MODE [devwl-run options...]: the build under devwl-run, its output in
# $T/MODE.out, its audit in $T/MODE.jsonl; returns its status (124: it hung).
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
	# An error devwl answers is the kernel's own (openat2 feature probes: EINVAL); a
	# refusal, or a call devwl could not decide, is EPERM.
	refused=$(grep '"decision":"deny"\|"errno":"EPERM"' "$T/$mode.jsonl" | head -5)
	[ -z "$refused" ] || fail "$mode: devwl refused something: $refused"
	echo "ok - $mode: rootless $tool build (COPY, RUN on fuse-overlayfs) in $((SECONDS - start)) s"
done
a=$T/authoritative.jsonl
grep '"path":"/dev/fuse"' "$a" | grep '"device":"c 10:229"' | grep -q '"decision":"allow"' ||
	fail "authoritative: no granted open of /dev/fuse in the audit"
echo "ok - authoritative: /dev/fuse granted (audited)"
# buildah's copier chroots into the FUSE mount; podman build's (4.3, --isolation=chroot)
# was not seen to.
if [ "$tool" = buildah ]; then
	grep '"decision":"continue"' "$a" | grep -q '"reason":"not resolved by devwl' ||
		fail "authoritative: nothing audited as not resolved (the copier's chroot into the FUSE mount)"
	echo "ok - authoritative: the copier's opens in the FUSE mount left to the cgroup, audited as not resolved"
fi

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
