#!/bin/bash
# bench/plugin.sh [--quick] [--build DIR] [--ops N] [--containers ROUNDS] [--baseline]: a
# trapped open and a granted mknod in a crun container, decided by devwl-plugin(7) inside
# crun against the same decided by devwld (crun's listenerPath).
#
# One busybox root, one policy (/containers: c 1:3 rwm granted, mknod without CAP_MKNOD),
# two bundles that differ only in who answers: "plugin" has the run.oci.seccomp.plugins
# annotation and org.devwl.policy, "devwld" the listenerPath of a devwld on that policy.
# Each container runs bench/ref/ref-workload-static twice: --ops opens of /dev/null
# (trapped; granted: both sides in kernel mode answer CONTINUE and the kernel opens it;
# with --baseline both open it and inject the fd) and --ops mknods of
# c 1:3 (granted; the supervisor makes the node), each ns per operation. The two sides
# alternate, container by container, for ROUNDS rounds (plugin first in odd rounds,
# devwld first in even ones); prints each round, the median of each side, and the median
# (min-max) of the rounds' ratios plugin/devwld. Needs root, crun, jq, busybox.
#   --quick          200 operations, 3 rounds
#   --build DIR      the build directory (default build/ next to bench/)
#   --ops N          operations per workload run (default 2000)
#   --containers R   rounds (default 9)
#   --baseline       both sides without kernel mode (DEVWL_PLUGIN_MODE=baseline, devwld
#                    --kernel-mode=never): the hand-off alone, the open injected
set -u

# shellcheck disable=SC2034 # read by lib.sh
NAME=plugin.sh HELP=21
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
mode=kernel
args=()
for a in "$@"; do
	if [ "$a" = --baseline ]; then mode=baseline; else args+=("$a"); fi
done
bench_args "${args[@]}"
# lib.sh's defaults are the hot-plug bench's; this one's where not given.
case " $* " in *" --ops"*) ;; *) ops=$((quick ? 200 : 2000)) ;; esac
case " $* " in *" --containers"*) ;; *) many=$((quick ? 3 : 9)) ;; esac
rounds=$many
[ "$(id -u)" = 0 ] || {
	echo "bench/plugin.sh: needs root (crun, seccomp listeners)" >&2
	exit 1
}
for cmd in crun jq busybox; do
	command -v $cmd >/dev/null || {
		echo "bench/plugin.sh: n/a ($cmd not installed)"
		exit 0
	}
done

build=$(mkdir -p "$build" && cd "$build" && pwd)
DEVWLD=$build/supervisor/devwld
DEVWLCTL=$build/tools/devwlctl
PLUGIN=$build/plugin/devwl-plugin.so
WORK=$build/bench/ref/ref-workload-static
if ! [ -x "$DEVWLD" ] || ! [ -f "$PLUGIN" ] || ! [ -x "$WORK" ]; then
	echo "bench/plugin.sh: building in $build ..." >&2
	{ cmake -S "$repo" -B "$build" >/dev/null &&
		make -C "$build" -j"$(nproc)" devwld devwlctl devwl-plugin ref-workload-static \
			>/dev/null; } || {
		echo "bench/plugin.sh: build failed (ref-workload-static needs a build without" \
			"sanitizers)" >&2
		exit 1
	}
fi
ldd "$PLUGIN" 2>/dev/null | grep -q libasan && {
	echo "bench/plugin.sh: $PLUGIN is a sanitizer build: timing it means nothing" >&2
	exit 1
}

T=$(mktemp -d /tmp/devwl-plugin-bench.XXXXXX)
chmod 755 "$T"
DEVWLD_PID=
IDS=()
cleanup() {
	local id
	for id in "${IDS[@]}"; do crun delete -f "$id" >/dev/null 2>&1; done
	if [ -n "$DEVWLD_PID" ]; then
		kill "$DEVWLD_PID" 2>/dev/null
		wait "$DEVWLD_PID" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
nap_init

mkdir -p "$T/policies"
cat >"$T/policies/bench.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers",
    "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
              "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm"],
    "mknod_needs_cap": false } ] }
JSON
cp "$T/policies/bench.json" "$T/policy.json"
if [ $mode = baseline ]; then
	start_devwld --kernel-mode=never
	export DEVWL_PLUGIN_MODE=baseline
else
	start_devwld
	unset DEVWL_PLUGIN_MODE
fi
# No audit on either side (bench/lib.sh starts devwld without --audit).
export DEVWL_PLUGIN_POLICY_DIR=$T/policies
unset DEVWL_PLUGIN_AUDIT

root=$T/rootfs
mkdir -p "$root"/{bin,proc,sys,dev,tmp/m,etc}
cp "$(command -v busybox)" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$WORK" "$root/bin/workload"
script="workload open $ops /dev/null && workload mknod $ops /tmp/m"
# The seccomp section of tests/oci: every call that can reach a device trapped.
sc=$(jq -n --arg lp "$T/listen.sock" '{defaultAction: "SCMP_ACT_ALLOW", listenerPath: $lp,
	architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
	syscalls: [{names: ["mknod", "mknodat", "open", "openat", "openat2", "creat",
		"open_by_handle_at"], action: "SCMP_ACT_NOTIFY"}]}')
# bundle NAME JQ-FILTER: the bench's bundle at $T/NAME, the filter applied last.
bundle() {
	mkdir -p "$T/$1"
	(cd "$T/$1" && crun spec) || die "crun spec"
	jq --arg root "$root" --arg script "$script" --argjson sc "$sc" '
		.root = {path: $root, readonly: false} | .process.terminal = false
		| .process.args = ["sh", "-c", $script] | .linux.seccomp = $sc' \
		"$T/$1/config.json" | jq "$2" >"$T/$1/c.json" || die "jq"
	mv "$T/$1/c.json" "$T/$1/config.json"
}
bundle devwld .
bundle plugin "del(.linux.seccomp.listenerPath)
	| .annotations[\"run.oci.seccomp.plugins\"] = \"$PLUGIN\"
	| .annotations[\"org.devwl.policy\"] = \"bench.json\""

# crun 1.8.1 refuses a hybrid cgroup layout whose cgroup2 mount lists a controller: on a
# host with a v1 devices hierarchy it runs where the cgroup2 mounts are unmounted (as
# tests/oci/lib.sh's rt_create does).
crun_run() {
	if [ -n "$(v1_devices)" ]; then
		# shellcheck disable=SC2016 # the inner shell expands them
		timeout 300 unshare -m --propagation private sh -c \
			'for m in $(awk '"'"'$0 ~ / - cgroup2 / {print $5}'"'"' /proc/self/mountinfo); do
				umount "$m" 2>/dev/null
			done; exec "$@"' sh crun "$@"
	else
		timeout 300 crun "$@"
	fi
}
# side NAME ROUND: one container of bundle NAME; appends its two ns_per_op to
# $T/NAME.open and $T/NAME.mknod and prints them.
side() {
	local id=bench-plugin-$1-$2-$$ out
	IDS+=("$id")
	crun_run run --bundle "$T/$1" "$id" >"$T/$id.out" 2>&1 </dev/null ||
		die "$1, round $2: $(cat "$T/$id.out")"
	mapfile -t out < <(sed -n 's/^ns_per_op=\([0-9.]*\) .*/\1/p' "$T/$id.out")
	[ ${#out[@]} = 2 ] || die "$1, round $2: $(cat "$T/$id.out")"
	echo "${out[0]}" >>"$T/$1.open"
	echo "${out[1]}" >>"$T/$1.mknod"
	printf '  %-7s open %8.0f ns   mknod %8.0f ns\n' "$1" "${out[0]}" "${out[1]}"
}

echo "bench/plugin.sh: $rounds rounds, $ops opens and $ops mknods per container," \
	"$mode mode, $(crun --version | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
	echo "round $r"
	if ((r % 2)); then
		side plugin $r
		side devwld $r
	else
		side devwld $r
		side plugin $r
	fi
	# This round's pair: plugin/devwld.
	for kind in open mknod; do
		paste -d' ' <(tail -1 "$T/plugin.$kind") <(tail -1 "$T/devwld.$kind") |
			awk '{ print $1 / $2 }' >>"$T/ratio.$kind"
	done
done
echo
printf '%-38s %10s %10s %6s %s\n' "median ns per call" plugin devwld ratio "(min-max of the rounds)"
for kind in open mknod; do
	desc="granted open of /dev/null (kernel opens)"
	[ $mode = baseline ] && desc="granted open of /dev/null (injected)"
	[ $kind = mknod ] && desc="granted mknod c 1:3 (node made)"
	printf '%-38s %10.0f %10.0f %6.2f (%.2f-%.2f)\n' "$desc" "$(pct "$T/plugin.$kind" 50)" \
		"$(pct "$T/devwld.$kind" 50)" "$(pct "$T/ratio.$kind" 50)" \
		"$(sort -g "$T/ratio.$kind" | head -1)" "$(sort -g "$T/ratio.$kind" | tail -1)"
done
