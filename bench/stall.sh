#!/bin/bash
# One stuck call: ten quiet containers opening a device every INTERVAL_US, once
# with nothing else going on and once while another container's call is stuck on a
# userfaultfd page (tests/oci/uffd-stall), side by side: devwld's p99 handling time
# (handling_ns of their --audit-all records) and the p99 latency the workloads see.
# The page is held for STALL_S seconds at least (the loaded phase lasts that long), so
# the watchdog (--handler-timeout, 3 s by default) answers the stuck call meanwhile and
# its thread stays stuck after that, as on a FUSE server that never answers.
#
#   bench/stall.sh [BUILD-DIR]      (root; default BUILD-DIR: build)
#
# Knobs: QUIET=10 INTERVAL_US=2000 STALL_S=10 COUNT (default: STALL_S worth of opens)
# DEVWLD_ARGS="" (e.g. "--handler-threads 1") KEEP=1.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$HERE/../build}" && pwd) || exit 1
QUIET=${QUIET:-10}
INTERVAL_US=${INTERVAL_US:-2000}
STALL_S=${STALL_S:-10}
COUNT=${COUNT:-$(((STALL_S * 1000000 + INTERVAL_US - 1) / INTERVAL_US))}
DEVWLD_ARGS=${DEVWLD_ARGS:-}
DEVWLD=$BUILD/supervisor/devwld
RUN=$BUILD/tools/devwl-run
CTL=$BUILD/tools/devwlctl
STALL=$BUILD/tests/oci/uffd-stall
[ "$(id -u)" = 0 ] || { echo "stall: needs root" >&2; exit 77; }
for f in "$DEVWLD" "$RUN" "$CTL" "$STALL"; do
	[ -x "$f" ] || { echo "stall: $f not built" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "stall: needs jq" >&2; exit 1; }
T=$(mktemp -d /tmp/devwl-stall.XXXXXX)
DEVWLD_PID=
STALL_PID=
cleanup() {
	[ -n "$STALL_PID" ] && mkdir -p "$T/s/release" && wait "$STALL_PID" 2>/dev/null
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
"$DEVWLD" --listen "$T/listen.sock" --control "$T/control.sock" --audit "$T/audit.jsonl" \
	--audit-all --no-watch --state "$T/state.json" $DEVWLD_ARGS 2>"$T/devwld.log" &
DEVWLD_PID=$!
for _ in $(seq 100); do
	[ -S "$T/control.sock" ] && break
	sleep 0.05
done
echo "devwld ${DEVWLD_ARGS:-(defaults)}; $QUIET quiet containers, an open of /dev/null every" \
	"$INTERVAL_US us, $COUNT each; the call held stuck for ${STALL_S} s at least;" \
	"$(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"

# phase NAME: the quiet containers, all at once, to completion.
phase() {
	local pids=() i t0=$(date +%s%N)
	for i in $(seq "$QUIET"); do
		"$RUN" --connect "$T/listen.sock" --id "$1-$i" -- \
			"$LOAD" quiet /dev/null "$INTERVAL_US" "$COUNT" >"$T/$1-$i.out" 2>&1 &
		pids+=("$!")
	done
	for i in "${pids[@]}"; do wait "$i" || echo "stall: a quiet workload failed" >&2; done
	echo $((($(date +%s%N) - t0) / 1000000)) >"$T/$1.ms"
}
p99() { sort -n | awk '{v[NR] = $1} END {i = int(NR * 0.99); if (i < 1) i = 1; printf "%.1f", v[i] / 1000}'; }
handling() { grep "\"container\":\"$1-" "$T/audit.jsonl" | jq -r 'select(.device != null) | .handling_ns' | p99; }
# seen PHASE FIELD: the worst of the workloads' p99_us (9) or max_us (11).
seen() { awk -v f="$2" '/^quiet /{print $f}' "$T"/"$1"-*.out | sort -n | tail -1; }

phase unloaded
mkdir "$T/s"
"$RUN" --keep-caps --connect "$T/listen.sock" --id stuck -- "$STALL" "$T/s" >"$T/stall.out" 2>"$T/stall.err" &
STALL_PID=$!
for _ in $(seq 200); do [ -e "$T/s/stalled" ] && break; sleep 0.05; done
[ -e "$T/s/stalled" ] || { echo "stall: no stall ($(cat "$T/stall.out" "$T/stall.err"))" >&2; exit 1; }
stalled_ns=$(date +%s%N)
phase loaded
[ -e "$T/s/released" ] && echo "stall: the fault was released during the loaded phase" >&2
# Held for STALL_S at least, whatever the phase took.
while [ $((($(date +%s%N) - stalled_ns) / 1000000)) -lt $((STALL_S * 1000)) ]; do sleep 0.1; done
hu=$(handling unloaded)
hl=$(handling loaded)
printf '%-28s %12s %12s %7s\n' "" unloaded "one stuck" ratio
printf '%-28s %9s us %9s us %6sx\n' "devwld handling p99" "$hu" "$hl" \
	"$(awk -v u="$hu" -v l="$hl" 'BEGIN {printf "%.2f", (u > 0) ? l / u : 0}')"
# The workloads' own view includes the wait for a free thread, which handling_ns does not;
# a wait of the timeout's length (one thread, all stuck) is one call in thousands: max.
for f in 9:p99 11:max; do
	wu=$(seen unloaded "${f%:*}")
	wl=$(seen loaded "${f%:*}")
	printf '%-28s %9s us %9s us %6sx\n' "worst workload ${f#*:} (open)" "$wu" "$wl" \
		"$(awk -v u="$wu" -v l="$wl" 'BEGIN {printf "%.2f", (u > 0) ? l / u : 0}')"
done
n_u=$(grep -c '"container":"unloaded-' "$T/audit.jsonl")
n_l=$(grep -c '"container":"loaded-' "$T/audit.jsonl")
stats=$("$CTL" --socket "$T/control.sock" stats | grep -E '^(watchdog_answered|handler_stuck) ' | tr '\n' ' ')
mkdir -p "$T/s/release"
held_ms=$((($(date +%s%N) - stalled_ns) / 1000000))
wait "$STALL_PID"
STALL_PID=
# A start-up call waiting for a thread (before the workload's timed loop) shows here.
echo "phases took $(cat "$T/unloaded.ms") ms unloaded, $(cat "$T/loaded.ms") ms with the call stuck" \
	"($((COUNT * INTERVAL_US / 1000)) ms of opens each)"
echo "samples: $n_u unloaded, $n_l with the call stuck; the page was held ${held_ms} ms"
echo "stuck call: $(grep -m1 '^open ' "$T/stall.out" || echo 'no answer'); before release: $stats"
grep -m1 -o 'watchdog: container stuck: a call stuck for [0-9]* ms [a-zA-Z ]*' "$T/devwld.log" ||
	echo "stall: the watchdog did not answer the stuck call" >&2
