#!/bin/bash
# What learning costs: the same workload under devwl-run --learn and enforced with the
# policy it learnt, side by side, A B C A B C ... (a fresh devwl-run each run), medians
# and the median of the per-round ratios. Two workloads: N opens of /dev/null
# (ref-workload, ns per open) and a real one, mkfs.ext4 on a loop device attached
# beforehand (ms for the whole devwl-run). Enforced twice: mode auto (kernel mode where
# the cgroup can be programmed: opens not trapped) and authoritative (every open trapped
# and decided, as when learning): learn/authoritative is the recorder's own cost.
# Then devwld's learn mode (devwld(8), LEARN MODE): the same opens from processes devwld
# serves (devwl-run --connect hands over its notify fd as a runtime does), one on a node
# that learns, one on a node enforcing what it learnt, every open decided by devwld on
# both (--kernel-mode=never), in rounds whose order turns (bench/lib.sh rounds()), with the
# per-round ratios learn/enforced (ratio_rows()).
#
#   bench/learn.sh [--quick] [--build DIR] [--rounds N]      (root)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$HERE/../build
ROUNDS=7
OPENS=20000
while [ $# -gt 0 ]; do
	case $1 in
	--quick) ROUNDS=3 OPENS=5000 ;;
	--build) BUILD=$2 && shift ;;
	--rounds) ROUNDS=$2 && shift ;;
	*) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' && exit 2 ;;
	esac
	shift
done
BUILD=$(cd "$BUILD" && pwd) || exit 1
RUN=$BUILD/tools/devwl-run
WORK=$BUILD/bench/ref/ref-workload
[ "$(id -u)" = 0 ] || { echo "learn: needs root" >&2; exit 77; }
[ -x "$RUN" ] || { echo "learn: $RUN not built" >&2; exit 1; }
[ -x "$WORK" ] || cmake --build "$BUILD" --target ref-workload >/dev/null || exit 1
T=$(mktemp -d /tmp/devwl-learn.XXXXXX)
truncate -s 16M "$T/disk.img"
LOOP=$(losetup -f --show "$T/disk.img") || { rm -rf "$T"; exit 1; }
trap 'losetup -d "$LOOP"; rm -rf "$T"' EXIT
cat >"$T/ceiling.json" <<EOF
{"version": 1, "nodes": [
  {"path": "/", "rules": ["deny a", "allow c 1:* rwm", "allow c 5:* rwm", "allow b 7:* rwm"]},
  {"path": "/job"}]}
EOF
echo "$(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds"

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
now_ns() { date +%s%N; }

# row SLUG NAME UNIT CMD...: CMD's figure (its output's ns_per_op, or the run's wall time in
# ms) learning, then enforced (auto, authoritative), ROUNDS times interleaved.
row() {
	local slug=$1 name=$2 unit=$3 m t0 fig
	shift 3
	: >"$T/learn" && : >"$T/auto" && : >"$T/auth" && : >"$T/r_auto" && : >"$T/r_auth"
	"$RUN" --policy "$T/ceiling.json" --node /job --learn="$T/$slug.json" -- "$@" \
		>/dev/null 2>"$T/err" || { cat "$T/err" >&2; return 1; }
	for _ in $(seq "$ROUNDS"); do
		for m in learn auto auth; do
			local args=(--policy "$T/$slug.json" --node /job)
			case $m in
			learn) args=(--policy "$T/ceiling.json" --node /job --learn="$T/$slug.again.json") ;;
			auth) args+=(--mode=authoritative) ;;
			esac
			t0=$(now_ns)
			out=$("$RUN" "${args[@]}" -- "$@" 2>"$T/err") || { cat "$T/err" >&2; return 1; }
			if [ "$unit" = ns/op ]; then
				fig=$(sed -n 's/.*ns_per_op=\([0-9.]*\).*/\1/p' <<<"$out")
			else
				fig=$(( ($(now_ns) - t0) / 1000000 ))
			fi
			echo "$fig" >>"$T/$m"
		done
		paste -d' ' <(tail -n1 "$T/learn") <(tail -n1 "$T/auto") |
			awk '{ printf "%.3f\n", $1 / $2 }' >>"$T/r_auto"
		paste -d' ' <(tail -n1 "$T/learn") <(tail -n1 "$T/auth") |
			awk '{ printf "%.3f\n", $1 / $2 }' >>"$T/r_auth"
	done
	printf '%-28s learn %10s  auto %10s  authoritative %10s %-5s  learn/auto %6s x  learn/authoritative %6s x\n' \
		"$name" "$(median <"$T/learn")" "$(median <"$T/auto")" "$(median <"$T/auth")" "$unit" \
		"$(median <"$T/r_auto")" "$(median <"$T/r_auth")"
}

row open "open /dev/null x$OPENS" ns/op "$WORK" open "$OPENS" /dev/null || exit 1
row mkfs "mkfs.ext4 on a loop device" ms mkfs.ext4 -q -F "$LOOP" || exit 1
echo "policy learnt for mkfs.ext4:"
cat "$T/mkfs.json"

# ---- devwld ----------------------------------------------------------------------------
NAME=learn
HELP=15
. "$HERE/lib.sh"
DEVWLD=$BUILD/supervisor/devwld
DEVWLCTL=$BUILD/tools/devwlctl
nap_init
cat >"$T/policy.json" <<EOF
{"version": 1, "nodes": [
  {"path": "/b", "rules": ["deny a", "allow c 1:* rwm", "allow c 5:* rwm", "allow b 7:* rwm"]},
  {"path": "/b/learn", "rules": ["deny a"], "learn": true},
  {"path": "/b/enforced", "rules": ["deny a"]}],
 "containers": {"node_annotation": ["/b"]}}
EOF
"$DEVWLD" --listen "$T/listen.sock" --control "$T/control.sock" --policy "$T/policy.json" \
	--kernel-mode=never --audit /dev/null 2>>"$T/devwld.log" &
DEVWLD_PID=$!
trap 'kill "$DEVWLD_PID" 2>/dev/null; wait "$DEVWLD_PID" 2>/dev/null; losetup -d "$LOOP"; rm -rf "$T"' EXIT
for _ in $(seq 200); do [ -S "$T/control.sock" ] && break; nap 0.05; done
[ -S "$T/control.sock" ] || die "devwld did not start"
served() { "$RUN" --connect "$T/listen.sock" --node "/b/$1" -- "$WORK" open "$OPENS" /dev/null; }
# What the learning node touched, granted to the enforced one: the advice's rules.
served learn >/dev/null || die "learning run"
ctl advise /b/learn >"$T/advice.json" || die "advise /b/learn"
jq -r '.nodes[] | select(.path == "/b/learn") | .rules[] | select(startswith("allow "))[6:]' \
	"$T/advice.json" | while read -r rule; do ctl allow /b/enforced "$rule" >/dev/null || exit 1; done ||
	die "granting the advice to /b/enforced"
one() { # SIDE: ns per open, into LAST
	LAST=$(served "$1" | sed -n 's/.*ns_per_op=\([0-9.]*\).*/\1/p')
	[ -n "$LAST" ] || die "$1: no figure"
	echo "$LAST" >>"$T/$1.ns"
}
rounds "$ROUNDS" enforced learn
printf 'devwld, open /dev/null x%s: learn %s  enforced %s ns/op (medians)\n' "$OPENS" \
	"$(med "$T/learn.ns")" "$(med "$T/enforced.ns")"
ratio_rows "devwld, open /dev/null x$OPENS" enforced learn
