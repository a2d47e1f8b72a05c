#!/bin/bash
# bench/rootless.sh [--quick] [--build DIR] [--ops N]: what devwld costs open-heavy work
# in a rootless runc container, against the same container without devwl.
#
# uid 65534 runs runc (`runc --root DIR run`, its rootless spec) as tests/oci/rootless.sh
# sets it up for tests/oci/185, against a root devwld with --allow-uid 65534; the
# container runs `grep -r` over 10,000 small files (100 directories) of its root file
# system, each of which it must open, three ways:
#   none    no seccomp filter (no devwl)
#   full    the full profile (examples/oci-hook/podman-profile.json: every open traps
#           and devwld decides it; what examples/rootless/README.md says to give)
#   kernel  the mknod-only profile with mode=kernel (only mknod traps; devwld leaves a
#           user's container unprogrammed, devwld(8) USERS)
# in rounds, each side once a round, the order turning from round to round. Times the
# grep inside the container (/proc/uptime, 10 ms steps) and the whole `runc run`. Prints
# the median seconds of each side with their min-max, and the medians (with min-max) of
# the per-round ratios full/none and kernel/none.
# Needs root, runc, jq, setpriv, a static busybox and user namespaces for uid 65534.
#   --quick      3 rounds (about 30 s on a quiet machine)
#   --build DIR  the build directory (default build/ next to bench/)
#   --ops N      rounds (default 9)
set -u

# shellcheck disable=SC2034 # read by lib.sh
NAME=rootless.sh HELP=21
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_args "$@"
[[ " $* " == *" --ops "* ]] || ops=$((quick ? 3 : 9))
files=10000

[ "$(id -u)" = 0 ] || {
	echo "bench/$NAME: needs root (devwld, and a user's container beside it)" >&2
	exit 1
}
for cmd in runc jq setpriv busybox; do
	command -v "$cmd" >/dev/null || {
		echo "bench/$NAME: $cmd not installed" >&2
		exit 1
	}
done
[ -x "$build/supervisor/devwld" ] || {
	echo "bench/$NAME: no $build/supervisor/devwld: build devwld first" >&2
	exit 1
}

# The set-up of tests/oci/185: its lib.sh (T, devwld and its cleanup) and rootless.sh
# (the user, the bundle $T/b with the full profile, $T/kprofile.json); their devwld
# starts with --audit, which records device decisions only (a grep makes none).
export DEVWL_BUILD=$build
RT=runc
HERE=$repo/tests/oci
# shellcheck source=tests/oci/lib.sh
. "$HERE/lib.sh"
# shellcheck source=tests/oci/rootless.sh
. "$HERE/rootless.sh"
trap 'exit 130' INT TERM
rootless_setup >/dev/null

# $files files of two lines in 100 directories, the user's; each side's grep must count
# every one, or the run is void.
for ((d = 0; d < 100; d++)); do
	mkdir -p "$T/rootfs/data/$d"
	for ((f = d; f < files; f += 100)); do
		printf 'devwl %d\nsome text\n' "$f" >"$T/rootfs/data/$d/$f"
	done
done
chown -R 65534:65534 "$T/rootfs/data"
cat >"$W/work.sh" <<'SH'
read -r a _ </proc/uptime
n=$(grep -r devwl /data | wc -l)
read -r b _ </proc/uptime
echo "$n $a $b" >/w/out
SH

sides=(none full kernel)
rootless_bundle "$T/s-none" 'del(.linux.seccomp)'
rootless_bundle "$T/s-full" .
# shellcheck disable=SC2016 # $kp is jq's
rootless_bundle "$T/s-kernel" '.linux.seccomp = $kp[0]'
RUNS=0
# one SIDE: one container run; the grep's seconds appended to $T/SIDE.s (and in LAST),
# the whole run's to $T/SIDE.run.
one() {
	local side=$1 id t0 t1 n a b
	RUNS=$((RUNS + 1))
	id=rb-$side-$RUNS
	RL_IDS+=("$id")
	rm -f "$W/out"
	t0=$(date +%s%N)
	rt_user run --bundle "$T/s-$side" "$id" >"$T/run.out" 2>&1 </dev/null ||
		die "$side: runc run failed: $(tail -5 "$T/run.out")"
	t1=$(date +%s%N)
	read -r n a b <"$W/out" || die "$side: the container wrote nothing: $(tail -5 "$T/run.out")"
	[ "$n" = "$files" ] || die "$side: grep found $n of $files files"
	LAST=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b - a }')
	echo "$LAST" >>"$T/$side.s"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }' >>"$T/$side.run"
}

# One run of each first, not counted: page cache and runc warm for every side.
for side in "${sides[@]}"; do one "$side"; done
rm -f "$T"/*.s "$T"/*.run
rounds "$ops" none full kernel
grep -q "container rb-full-.*: node /users/65534/" "$T/devwld.log" ||
	die "devwld never served a full-profile container"

printf '%s rounds; grep -r over %s files in a rootless runc container (uid 65534)\n' "$ops" "$files"
printf '| side | grep median s | min – max | runc run median s | min – max |\n|---|---|---|---|---|\n'
for side in "${sides[@]}"; do
	read -r lo hi <<<"$(range "$T/$side.s")"
	read -r rlo rhi <<<"$(range "$T/$side.run")"
	printf '| %s | %.2f | %.2f – %.2f | %.2f | %.2f – %.2f |\n' "$side" "$(med "$T/$side.s")" "$lo" "$hi" \
		"$(med "$T/$side.run")" "$rlo" "$rhi"
done
ratio_rows "ratio of the grep (per round)" none full kernel
exit 0
