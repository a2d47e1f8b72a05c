# shellcheck shell=bash
# shellcheck disable=SC2034 # build, DEVWLD_PID...: for the script that sources this
# bench/lib.sh: what the shell benchmarks share (hotplug.sh, follow.sh). Sourced after
# NAME (the script's name in messages) and HELP (the last line of its header comment)
# are set.

repo=$(cd "$(dirname "$0")/.." && pwd)
build=$repo/build
quick=0
ops=
many=
pause=200

# bench_args "$@": --quick, --build DIR, --ops N, --containers N, --pause-us US, --help.
bench_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--quick) quick=1 ;;
		--build)
			build=$2
			shift
			;;
		--build=*) build=${1#--build=} ;;
		--ops)
			ops=$2
			shift
			;;
		--containers)
			many=$2
			shift
			;;
		--pause-us)
			pause=$2
			shift
			;;
		-h | --help)
			sed -n "2,${HELP}p" "$0" | sed 's/^# \{0,1\}//'
			exit 0
			;;
		*)
			echo "bench/$NAME: unknown argument $1" >&2
			exit 2
			;;
		esac
		shift
	done
	[ -n "$ops" ] || ops=$((quick ? 20 : 200))
	[ -n "$many" ] || many=$((quick ? 1 : 100))
	for n in "$ops" "$many" "$pause"; do
		[[ $n =~ ^[0-9]+$ ]] || {
			echo "bench/$NAME: not a number: $n" >&2
			exit 2
		}
	done
	[ "$ops" -ge 2 ] || {
		echo "bench/$NAME: --ops must be at least 2" >&2
		exit 2
	}
}

die() {
	echo "bench/$NAME: $*" >&2
	[ -s "$T/devwld.log" ] && tail -20 "$T/devwld.log" >&2
	exit 1
}

# nap_init, then nap SECONDS: a sleep without a fork, a read that times out on a FIFO
# nobody writes.
nap_init() {
	mkfifo "$T/nap"
	exec {NAP}<>"$T/nap"
}
nap() { read -r -t "$1" -u "$NAP" _ || :; }

# The v1 devices hierarchy's mount point, or nothing: the manual steps write a v1 device
# cgroup, and cgroup2 has no such file (its device access is a BPF program).
v1_devices() { awk '$0 ~ / - cgroup / && $NF ~ /(^|,)devices(,|$)/ {print $5; exit}' /proc/self/mountinfo; }

# start_devwld [ARG...]: devwld on $T/policy.json, its sockets in $T, ARGs added to its
# command line; DEVWLD_PID, and ctl.
start_devwld() {
	"$DEVWLD" --listen "$T/listen.sock" --control "$T/control.sock" --policy "$T/policy.json" \
		"$@" 2>>"$T/devwld.log" &
	DEVWLD_PID=$!
	for _ in $(seq 200); do
		[ -S "$T/listen.sock" ] && [ -S "$T/control.sock" ] && break
		nap 0.05
	done
	[ -S "$T/control.sock" ] || die "devwld did not start"
}
ctl() { "$DEVWLCTL" --socket "$T/control.sock" "$@"; }

# next_state FD: the next line of a workload ("NS STATE") into NS and ST; false after
# 30 s without one. A line is written by one write(2), but a read may still meet its
# first half at the end of the file: kept in PART until the rest comes.
declare -A PART=()
next_state() {
	local line i
	for ((i = 0; i < 30000; i++)); do
		if read -r -u "$1" line; then
			line=${PART[$1]:-}$line
			PART[$1]=
			NS=${line%% *} ST=${line#* }
			return 0
		fi
		PART[$1]=${PART[$1]:-}$line
		nap 0.001
	done
	return 1
}

# settle FD: past every line so far, into the state the workload is in now.
settle() { while read -r -t 0.05 -u "$1" _; do :; done; }

# pct FILE P: the P-th percentile (nearest rank) of the numbers in FILE.
pct() { sort -g "$1" | awk -v p="$2" '{ v[NR] = $1 } END { i = int((p * NR + 99) / 100); if (i < 1) i = 1; print v[i] }'; }

# rounds N BASE SIDE...: N rounds of the caller's one(), which times a side and leaves
# the time in LAST, over BASE and each SIDE, the order turning from round to round, and
# each SIDE's time over BASE's of the same round appended to $T/SIDE.ratio.
rounds() {
	# (Not "n": one() sees rounds()'s locals, and scripts name their own counts n.)
	local n_rounds=$1 base=$2 r i side
	shift 2
	local all=("$base" "$@")
	local -A took=()
	for ((r = 0; r < n_rounds; r++)); do
		for ((i = 0; i < ${#all[@]}; i++)); do
			side=${all[(i + r) % ${#all[@]}]}
			one "$side"
			took[$side]=$LAST
		done
		for side in "$@"; do
			awk -v a="${took[$side]}" -v b="${took[$base]}" \
				'BEGIN { printf "%.4f\n", (b > 0 ? a / b : 0) }' >>"$T/$side.ratio"
		done
	done
}

med() { pct "$1" 50; }
range() { sort -g "$1" | sed -n '1p;$p' | paste -sd' '; }

# ratio_rows TITLE BASE SIDE...: a markdown table of each SIDE's per-round ratios to BASE
# (rounds()): median, min and max.
ratio_rows() {
	local title=$1 base=$2 side lo hi
	shift 2
	printf '| %s | median | min – max |\n|---|---|---|\n' "$title"
	for side in "$@"; do
		read -r lo hi <<<"$(range "$T/$side.ratio")"
		printf '| %s / %s | %.2f | %.2f – %.2f |\n' "$side" "$base" "$(med "$T/$side.ratio")" "$lo" "$hi"
	done
}
