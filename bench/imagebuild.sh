#!/bin/bash
# bench/imagebuild.sh [--quick] [--build DIR] [--ops N]: what devwl-run costs a rootless
# image build, against the same build without devwl.
#
# uid 65534 builds a small image with buildah on fuse-overlayfs in its user namespace
# (FROM scratch; COPY a static busybox and a file; RUN busybox: tests/rootless-build.sh,
# the set-up tests/live/82 runs) three ways, timing each from the start of its mount
# namespace (the user's namespace made, /dev/fuse bound: the same for every side) to the
# end of `buildah build`:
#   none           no devwl
#   kernel         devwl-run --mode=kernel --allow 'c 10:229 rwm' (the device cgroup
#                  decides every open; only mknod traps)
#   authoritative  devwl-run --mode=authoritative --allow 'c 10:229 rwm' (every open
#                  traps and is decided by devwl)
# in rounds, each side once a round, the order turning from round to round. Prints the
# median seconds of each side with their min-max, and the medians (with min-max) of the
# per-round ratios kernel/none and authoritative/none.
# Needs root, buildah, fuse-overlayfs, uidmap, a static busybox and /dev/fuse.
#   --quick      3 rounds (under a minute on a quiet machine)
#   --build DIR  the build directory (default build/ next to bench/)
#   --ops N      rounds (default 9)
# RB_TOOL=podman times `podman build` (--isolation=chroot) instead of buildah's.
set -u

# shellcheck disable=SC2034 # read by lib.sh
NAME=imagebuild.sh HELP=22
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_args "$@"
[[ " $* " == *" --ops "* ]] || ops=$((quick ? 3 : 9))
# shellcheck source=tests/rootless-build.sh
. "$repo/tests/rootless-build.sh"

[ "$(id -u)" = 0 ] || {
	echo "bench/$NAME: needs root (devwl-run's baseline cgroup, /etc/subuid, a FUSE node)" >&2
	exit 1
}
tool=${RB_TOOL:-buildah}
why=$(rb_missing "$tool")
[ -z "$why" ] || {
	echo "bench/$NAME: cannot run here: $why" >&2
	exit 1
}
RUN=$build/tools/devwl-run
[ -x "$RUN" ] || die "no $RUN: build devwl-run first"

T=$(mktemp -d /tmp/devwl-imagebuild.XXXXXX)
trap 'rb_restore; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
rb_setup "$T" 3000000000 "$tool" || die "setting up the build in $T"

sides=(none kernel authoritative)
# one SIDE: one build; its seconds appended to $T/SIDE.s, and in LAST.
one() {
	local side=$1 t0 t1 how=(env --)
	[ "$side" = none ] || how=("$RUN" --mode="$side" --allow 'c 10:229 rwm' --)
	t0=$(date +%s%N)
	rb_build "$T/$side.out" "${how[@]}" || die "$side: the build failed: $(tail -5 "$T/$side.out")"
	t1=$(date +%s%N)
	LAST=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	echo "$LAST" >>"$T/$side.s"
}

# A build of each first, not counted: storage and page cache warm for every side.
for side in "${sides[@]}"; do one "$side"; done
rm -f "$T"/*.s
rounds "$ops" none kernel authoritative

printf '%s rounds, %s build: FROM scratch, COPY busybox + a file, RUN busybox (rootless, fuse-overlayfs)\n' "$ops" "$tool"
printf '| side | median s | min – max |\n|---|---|---|\n'
for side in "${sides[@]}"; do
	read -r lo hi <<<"$(range "$T/$side.s")"
	printf '| %s | %.2f | %.2f – %.2f |\n' "$side" "$(med "$T/$side.s")" "$lo" "$hi"
done
ratio_rows "ratio (per round)" none kernel authoritative
