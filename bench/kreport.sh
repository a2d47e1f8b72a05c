#!/bin/bash
# bench/kreport.sh [--quick] [--build DIR] [--ops N]: what reporting allowed accesses
# (DEVWL_CGROUP_RECORD_ACCESSES, devwld's kernel mode on cgroup v2) costs the opens it
# reports, against the same program recording denials only.
#
# bench/bench-kreport opens /dev/null 500,000 times (--quick: 100,000) in a fresh cgroup2
# device cgroup programmed with a DENY node, two ways:
#   plain   the program records denials only (as before access reporting)
#   report  it also reports allowed accesses: a map lookup, a clock read and an atomic
#           add per open, one record a second
# in rounds, the order turning from round to round, both pinned to the last CPU (taskset):
# unpinned, a shared 2-CPU machine's migrations move either side by 2x from run to run,
# far more than what is measured. The device program runs only for
# device files, so a grep -r over regular files never reaches it: the open loop of a
# device is the work it can slow. Prints the median CPU ns per open of each side with their
# min-max, and the median (with min-max) of the per-round ratio report/plain; the target
# is 1.05. Needs root and a cgroup2 mount (tests/v2only.sh gives one on any host).
#   --quick      3 rounds
#   --build DIR  the build directory (default build/ next to bench/)
#   --ops N      rounds (default 9)
set -u

# shellcheck disable=SC2034 # read by lib.sh
NAME=kreport.sh HELP=17
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_args "$@"
[[ " $* " == *" --ops "* ]] || ops=$((quick ? 3 : 9))
n=$((quick ? 100000 : 500000))
B=$build/bench/bench-kreport
[ -x "$B" ] || {
	echo "bench/$NAME: no $B: build the benchmarks first" >&2
	exit 1
}
cpu=$(($(nproc) - 1))
T=$(mktemp -d /tmp/devwl-kreport.XXXXXX)
trap 'rm -rf "$T"' EXIT

one() {
	LAST=$(taskset -c "$cpu" "$B" "$1" "$n") || {
		rc=$?
		[ $rc = 77 ] && exit 77
		die "$1: bench-kreport failed ($rc)"
	}
	echo "$LAST" >>"$T/$1.ns"
}

one plain >/dev/null # warm: not counted
rm -f "$T"/*.ns
rounds "$ops" plain report
printf '%s rounds; %s opens of /dev/null in a cgroup2 device cgroup, on CPU %s\n' "$ops" "$n" "$cpu"
printf '| side | ns/open median | min – max |\n|---|---|---|\n'
for side in plain report; do
	read -r lo hi <<<"$(range "$T/$side.ns")"
	printf '| %s | %.0f | %.0f – %.0f |\n' "$side" "$(med "$T/$side.ns")" "$lo" "$hi"
done
ratio_rows "ratio of ns per open (per round), target <= 1.05" plain report
