#!/bin/bash
# Fairness under a flood: one container opening a device as fast as its
# threads can, ten quiet ones opening it every 5 ms. Each quiet container runs through
# the whole measurement; the flood covers its middle third. A quiet container's opens
# before and after the flood are its unloaded sample, those during the flood (after a
# 0.5 s ramp) its loaded sample, so both come from the same process, close in time,
# and background noise on the machine hits both alike. Measured as the workload sees
# it (the time its open() takes: waiting for devwld included) and as devwld counts it
# (handling_ns of its --audit-all records). Target: loaded p99 <= 2x unloaded p99.
#
#   bench/fairness.sh [BUILD-DIR]      (root; default BUILD-DIR: build)
#
# Knobs (environment): QUIET=10 INTERVAL_US=5000 COUNT=3000 FLOOD_THREADS=4
# DEVWLD_ARGS="" (e.g. "--burst 1"), DEVWLD_PREFIX="" (e.g. "nice -n -10"),
# FLOOD=flood (or "spin": the same threads burning CPU without a trapped call, to
# tell the cost of sharing the CPUs from devwld's own scheduling), FLOOD_PREFIX and
# QUIET_PREFIX (e.g. "taskset -c 1" and "taskset -c 0": the flood kept off the CPU
# that devwld and the quiet ones use, as a CPU quota would), KEEP=1 keeps the work
# directory.
# Exit status: 0 target met, 3 target missed, 1 a wrong answer or a failure, 77 not root.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$HERE/../build}" && pwd) || exit 1
QUIET=${QUIET:-10}
INTERVAL_US=${INTERVAL_US:-5000}
COUNT=${COUNT:-3000}
FLOOD_THREADS=${FLOOD_THREADS:-4}
DEVWLD_ARGS=${DEVWLD_ARGS:-}
DEVWLD_PREFIX=${DEVWLD_PREFIX:-}
FLOOD=${FLOOD:-flood}
FLOOD_PREFIX=${FLOOD_PREFIX:-}
QUIET_PREFIX=${QUIET_PREFIX:-}
DEVWLD=$BUILD/supervisor/devwld
RUN=$BUILD/tools/devwl-run
CTL=$BUILD/tools/devwlctl
DEV=/dev/null

[ "$(id -u)" = 0 ] || { echo "fairness: needs root (seccomp listener, device cgroup)" >&2; exit 77; }
for f in "$DEVWLD" "$RUN" "$CTL"; do
	[ -x "$f" ] || { echo "fairness: $f not built" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "fairness: needs jq" >&2; exit 1; }

T=$(mktemp -d /tmp/devwl-fair.XXXXXX)
DEVWLD_PID=
cleanup() {
	[ -n "$DEVWLD_PID" ] && kill "$DEVWLD_PID" 2>/dev/null && wait "$DEVWLD_PID" 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT

LOAD=$BUILD/bench/fair-load
if [ ! -x "$LOAD" ]; then
	LOAD=$T/fair-load
	${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -Wall -pthread "$HERE/fair-load.c" -o "$LOAD" || exit 1
fi

# shellcheck disable=SC2086
$DEVWLD_PREFIX "$DEVWLD" --listen "$T/listen.sock" --control "$T/control.sock" --audit "$T/audit.jsonl" \
	--audit-all --no-watch $DEVWLD_ARGS 2>"$T/devwld.log" &
DEVWLD_PID=$!
for _ in $(seq 100); do
	[ -S "$T/listen.sock" ] && [ -S "$T/control.sock" ] && break
	sleep 0.05
done
[ -S "$T/control.sock" ] || { echo "fairness: devwld did not start" >&2; cat "$T/devwld.log" >&2; exit 1; }

total_ms=$((COUNT * INTERVAL_US / 1000))
flood_s=$(((total_ms / 3 + 999) / 1000))
echo "devwld ${DEVWLD_PREFIX:+($DEVWLD_PREFIX) }${DEVWLD_ARGS:-(defaults)};" \
	"${FLOOD_PREFIX:+flood: $FLOOD_PREFIX; }${QUIET_PREFIX:+quiet: $QUIET_PREFIX; }$QUIET quiet containers, an open of $DEV every" \
	"$INTERVAL_US us, $COUNT each ($((total_ms / 1000)) s); $FLOOD: $FLOOD_THREADS threads for" \
	"$flood_s s in the middle; $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"

ok=1
pids=()
for i in $(seq "$QUIET"); do
	$QUIET_PREFIX "$RUN" --connect "$T/listen.sock" --id "quiet-$i" -- \
		"$LOAD" quiet "$DEV" "$INTERVAL_US" "$COUNT" "$T/raw-$i" >"$T/quiet-$i.out" 2>&1 &
	pids+=("$!")
done
sleep "$(awk -v ms="$total_ms" -v s="$flood_s" 'BEGIN {print (ms / 1000 - s) / 2}')"
$FLOOD_PREFIX "$RUN" --connect "$T/listen.sock" --id flood -- "$LOAD" "$FLOOD" "$DEV" "$FLOOD_THREADS" "$flood_s" \
	>"$T/flood.out" 2>&1 || { echo "fairness: the flood failed: $(cat "$T/flood.out")" >&2; ok=0; }
for p in "${pids[@]}"; do
	wait "$p" || ok=0
done
[ "$ok" = 1 ] || { echo "fairness: a quiet workload failed:" >&2; cat "$T"/quiet-*.out >&2; }
cat "$T/flood.out"
"$CTL" --socket "$T/control.sock" stats | grep -E '^(notifications|errors|gone|handling_p99_ns) ' |
	tr '\n' ' '
echo

kv() { awk -v k="$2" '{for (i = 1; i < NF; i++) if ($i == k) {print $(i + 1); exit}}' "$1"; }
start_ns=$(kv "$T/flood.out" start_ns)
end_ns=$(kv "$T/flood.out" end_ns)
start_utc=$(kv "$T/flood.out" start_utc)
end_utc=$(kv "$T/flood.out" end_utc)
[ -n "$start_ns" ] || exit 1
ramp=500000000

# p99 in µs of the numbers on stdin.
p99() { sort -n | awk '{v[NR] = $1} END {i = int(NR * 0.99); if (i < 1) i = 1; printf "%.1f", v[i] / 1000}'; }
# sample FILE loaded|unloaded: the latencies (ns) of the opens of that phase.
sample() {
	awk -v s="$start_ns" -v e="$end_ns" -v r="$ramp" -v want="$2" '{
		in_flood = $1 >= s + r && $1 + $2 <= e
		clear = $1 + $2 < s || $1 > e + r
		if ((want == "loaded" && in_flood) || (want == "unloaded" && clear)) print $2 }' "$1"
}
# devwld's handling_ns of one quiet container's device opens, per phase.
grep '"container":"quiet-' "$T/audit.jsonl" | jq -r 'select(.device != null) |
	[.container, .time, .handling_ns] | @tsv' >"$T/handling.tsv"
handling() {
	awk -v c="$1" -v s="$start_utc" -v e="$end_utc" -v want="$2" '$1 == c {
		in_flood = $2 > s && $2 < e; if ((want == "loaded") == in_flood) print $3 }' \
		"$T/handling.tsv" | p99
}

printf '%-6s %13s %13s %7s   %16s %16s\n' quiet "p99 unloaded" "p99 loaded" ratio \
	"handling p99 u" "handling p99 l"
worst=0
for i in $(seq "$QUIET"); do
	u=$(sample "$T/raw-$i" unloaded | p99)
	l=$(sample "$T/raw-$i" loaded | p99)
	r=$(awk -v u="$u" -v l="$l" 'BEGIN {printf "%.2f", (u > 0) ? l / u : 0}')
	worst=$(awk -v a="$worst" -v b="$r" 'BEGIN {print (b > a) ? b : a}')
	printf '%-6s %10s us %10s us %6sx   %13s us %13s us\n' "$i" "$u" "$l" "$r" \
		"$(handling "quiet-$i" unloaded)" "$(handling "quiet-$i" loaded)"
done
all_u=$(for i in $(seq "$QUIET"); do sample "$T/raw-$i" unloaded; done | p99)
all_l=$(for i in $(seq "$QUIET"); do sample "$T/raw-$i" loaded; done | p99)
n_l=$(for i in $(seq "$QUIET"); do sample "$T/raw-$i" loaded; done | wc -l)
printf '%-6s %10s us %10s us %6sx   (%s opens under the flood)\n' all "$all_u" "$all_l" \
	"$(awk -v u="$all_u" -v l="$all_l" 'BEGIN {printf "%.2f", l / u}')" "$n_l"
wrong=$(cat "$T"/quiet-*.out | awk '/^quiet /{w += $5} END {print w + 0}')
echo "wrong answers: $wrong; worst per-container p99 ratio: ${worst}x (target <= 2x)"
[ "$ok" = 1 ] && [ "$wrong" = 0 ] || exit 1
if awk -v w="$worst" 'BEGIN {exit !(w <= 2)}'; then
	echo "fairness: target met"
else
	echo "fairness: target missed"
	exit 3
fi
