#!/bin/bash
# bench/hotplug.sh [--quick] [--build DIR] [--ops N] [--containers N] [--pause-us US]:
# hot-plug latency, devwlctl attach/detach against what an operator does without devwl.
#
# Two runc containers of a busybox root watch /dev/hp (tests/oci/hammer.c --watch: an
# open every --pause-us, each change of result printed with its CLOCK_REALTIME time):
#   devwl   under devwld (mknod-only profile, kernel mode: devwld programs its cgroup);
#           devwlctl attach ID LOOP /dev/hp, devwlctl detach ID /dev/hp
#   manual  no seccomp listener, runc's own v1 device cgroup; the operator's recipe:
#           echo "b MAJ:MIN rw" > CGROUP/devices.allow; nsenter -m -t PID mknod /dev/hp b ..
#           nsenter -m -t PID rm /dev/hp; echo "b MAJ:MIN rw" > CGROUP/devices.deny
# Attach latency: from just before the command to the workload's first open of the
# device; detach latency: to its first open refused or ENOENT (for both sides the node's
# removal, which comes first). devwl and manual alternate (attach, detach, attach,
# detach, ...), --ops of each; first with devwld holding the one container, then with
# idle ones (busybox sleep) added up to --containers. Prints p50/p99 in ms of each side
# and their ratio (devwl/manual).
# Needs root, runc, jq, busybox, losetup.
#   --quick         20 operations of each, 1 container only (under a minute)
#   --build DIR     the build directory (default build/ next to bench/)
#   --ops N         operations of each kind and side (default 200)
#   --containers N  containers under devwld in the second round (default 100; 1: no
#                   second round)
#   --pause-us US   the workload's pause between opens (default 200): the resolution
set -u

# shellcheck disable=SC2034 # read by lib.sh
NAME=hotplug.sh HELP=24
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_args "$@"
[ "$(id -u)" = 0 ] || {
	echo "bench/hotplug.sh: needs root (runc, device cgroups, loop devices)" >&2
	exit 1
}
for cmd in runc jq busybox losetup nsenter; do
	command -v $cmd >/dev/null || {
		echo "bench/hotplug.sh: n/a ($cmd not installed)"
		exit 0
	}
done

build=$(mkdir -p "$build" && cd "$build" && pwd)
DEVWLD=$build/supervisor/devwld
DEVWLCTL=$build/tools/devwlctl
WATCH=$build/tests/oci/hammer-static
if ! [ -x "$DEVWLD" ] || ! [ -x "$DEVWLCTL" ] || ! [ -x "$WATCH" ]; then
	echo "bench/hotplug.sh: building in $build ..." >&2
	{ cmake -S "$repo" -B "$build" >/dev/null &&
		make -C "$build" -j"$(nproc)" devwld devwlctl hammer-static >/dev/null; } || {
		echo "bench/hotplug.sh: build failed (hammer-static needs BUILD_TESTING)" >&2
		exit 1
	}
fi

T=$(mktemp -d /tmp/devwl-hotplug.XXXXXX)
chmod 755 "$T"
DEVWLD_PID=
LOOP=
IDS=()
cleanup() {
	local id
	for id in "${IDS[@]}"; do runc delete -f "$id" >/dev/null 2>&1; done
	if [ -n "$DEVWLD_PID" ]; then
		kill "$DEVWLD_PID" 2>/dev/null
		wait "$DEVWLD_PID" 2>/dev/null
	fi
	[ -z "$LOOP" ] || losetup -d "$LOOP"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

nap_init

# The manual recipe writes a v1 device cgroup; cgroup2 has no such file (its device
# access is a BPF program, which has nothing an operator could echo a rule into).
V1=$(v1_devices)

truncate -s 1M "$T/disk"
LOOP=$(losetup -f --show "$T/disk") || die "losetup -f: no free loop device"
MAJ=$(($(stat -c 0x%t "$LOOP"))) MIN=$(($(stat -c 0x%T "$LOOP")))
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/lab",
    "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
              "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
              "allow b 7:* rw"] } ],
  "containers": { "default_template": "/lab/{id}", "container_rules": ["deny b 7:* rwm"] } }
JSON
start_devwld

root=$T/rootfs
mkdir -p "$root"/{bin,proc,sys,dev,tmp,etc}
cp "$(command -v busybox)" "$root/bin/busybox"
for a in sh sleep mknod rm; do ln -s busybox "$root/bin/$a"; done
cp "$WATCH" "$root/bin/watch-open"
# bundle NAME SECCOMP ARGS...: a bundle at $T/NAME; SECCOMP a JSON seccomp section or "".
bundle() {
	local name=$1 sc=$2
	shift 2
	mkdir -p "$T/$name"
	(cd "$T/$name" && runc spec) || die "runc spec"
	jq --arg root "$root" --argjson sc "${sc:-null}" \
		--argjson args "$(printf '%s\n' "$@" | jq -R . | jq -cs .)" '
		.root = {path: $root, readonly: false} | .process.terminal = false
		| .process.args = $args
		| if $sc == null then del(.linux.seccomp) else .linux.seccomp = $sc end' \
		"$T/$name/config.json" >"$T/$name/c.json" || die "jq"
	mv "$T/$name/c.json" "$T/$name/config.json"
}
KM=$(jq -c --arg lp "$T/listen.sock" '.listenerPath = $lp | .listenerMetadata = "mode=kernel"' \
	"$repo/examples/oci-hook/seccomp-mknod-only.json") || die "the mknod-only profile"
# run ID BUNDLE: runc run -d, output to $T/ID.out.
run() {
	IDS+=("$1")
	runc run -d --bundle "$T/$2" "$1" </dev/null >"$T/$1.out" 2>&1 || die "runc run $1: $(cat "$T/$1.out")"
}
bundle devwl "$KM" watch-open --watch /tmp/stop /dev/hp "$pause"
bundle manual "" watch-open --watch /tmp/stop /dev/hp "$pause"
bundle idle "$KM" sleep 1000000
run hp-devwl-$$ devwl
run hp-manual-$$ manual
A=hp-devwl-$$ B=hp-manual-$$
for _ in $(seq 200); do
	ctl containers 2>/dev/null | grep -q "^$A " && break
	nap 0.05
done
AMODE=$(ctl containers | awk -v id="$A" '$1 == id {print $5}')
[ -n "$AMODE" ] || die "$A never reached devwld"
BPID=$(runc state "$B" | jq .pid)
BCG=
[ -z "$V1" ] || BCG=$V1$(awk -F: '$2 == "devices" {print $3}' "/proc/$BPID/cgroup")
[ -z "$BCG" ] || [ -w "$BCG/devices.allow" ] || die "no devices.allow in $BCG"

# Each workload's lines, read as they come ("NS STATE"; a line written by one write(2),
# but a read may still meet its first half at the end of the file).
exec {AFD}<"$T/$A.out" {BFD}<"$T/$B.out"

# op SIDE KIND FD WANT-REGEX CMD...: run CMD, print ms from its start to the first state
# matching WANT-REGEX.
op() {
	local fd=$1 want=$2 t0
	shift 2
	t0=${EPOCHREALTIME/./}
	"$@" >>"$T/cmd.log" 2>&1 || die "$*: $(tail -3 "$T/cmd.log")"
	while next_state "$fd"; do
		[[ $ST =~ $want ]] && {
			awk -v ns="$NS" -v us="$t0" 'BEGIN { printf "%.3f\n", (ns / 1000 - us) / 1000 }'
			return 0
		}
	done
	die "$* : the workload never reached /$want/ (last: $ST)"
}
a_attach() { ctl attach "$A" "$LOOP" /dev/hp; }
a_detach() { ctl detach "$A" /dev/hp; }
b_attach() {
	echo "b $MAJ:$MIN rw" >"$BCG/devices.allow" && nsenter -m -t "$BPID" mknod /dev/hp b "$MAJ" "$MIN"
}
b_detach() { nsenter -m -t "$BPID" rm /dev/hp && echo "b $MAJ:$MIN rw" >"$BCG/devices.deny"; }


# round LABEL: ops alternating, A then B, attach then detach; one table row per kind.
round() {
	local i k
	: >"$T/a-attach" && : >"$T/a-detach" && : >"$T/b-attach" && : >"$T/b-detach" && : >"$T/true"
	settle "$AFD"
	settle "$BFD"
	# Two warm-up cycles of each (first exec of devwlctl and nsenter, page cache).
	for ((i = -2; i < ops; i++)); do
		k=$T/x
		((i >= 0)) && k=$T
		op "$AFD" "^ok b $MAJ:$MIN\$" a_attach >>"$k/a-attach" || exit 1
		[ -z "$BCG" ] || op "$BFD" "^ok b $MAJ:$MIN\$" b_attach >>"$k/b-attach" || exit 1
		op "$AFD" '^(ENOENT|EPERM)$' a_detach >>"$k/a-detach" || exit 1
		[ -z "$BCG" ] || op "$BFD" '^(ENOENT|EPERM)$' b_detach >>"$k/b-detach" || exit 1
		# Yardstick: what one fork and exec costs this shell now (each side pays one
		# or two: devwlctl; nsenter, which execs mknod or rm).
		t0=${EPOCHREALTIME/./}
		/bin/true
		echo $((${EPOCHREALTIME/./} - t0)) >>"$k/true"
	done
	for k in attach detach; do
		local ap50 ap99 bp50=n/a bp99=n/a r50=n/a r99=n/a
		ap50=$(pct "$T/a-$k" 50) ap99=$(pct "$T/a-$k" 99)
		if [ -s "$T/b-$k" ]; then
			bp50=$(printf %.2f "$(pct "$T/b-$k" 50)") bp99=$(printf %.2f "$(pct "$T/b-$k" 99)")
			r50=$(awk -v a="$ap50" -v b="$bp50" 'BEGIN { printf "%.2f", a / b }')
			r99=$(awk -v a="$ap99" -v b="$bp99" 'BEGIN { printf "%.2f", a / b }')
		fi
		printf '%-34s %9.2f %9.2f %10s %10s %7s %7s\n' "$k, $1" "$ap50" "$ap99" "$bp50" "$bp99" \
			"$r50" "$r99"
	done
	awk -v a="$(pct "$T/true" 50)" -v b="$(pct "$T/true" 99)" -v n="$1" 'BEGIN {
		printf "  yardstick, %s: /bin/true from this shell, p50 %.2f ms, p99 %.2f ms\n",
			n, a / 1000, b / 1000 }'
}

mkdir -p "$T/x"
manual="nsenter mknod/rm + v1 devices.allow/deny"
[ -n "$BCG" ] || manual="n/a: no v1 devices controller here (cgroup2 has no devices.allow)"
echo "hot-plug latency, ms from the command to the workload's first open that shows it"
echo "(bench/hotplug.sh): $ops of each, devwl and manual alternately; devwl: devwlctl, its"
echo "container $AMODE; manual: $manual"
printf '%-34s %9s %9s %10s %10s %7s %7s\n' row "devwl p50" "p99" "manual p50" "p99" "p50 A/B" "p99 A/B"
round "1 container"
if [ "$many" -gt 1 ]; then
	t0=$SECONDS
	# Bounded: a machine that takes more than 5 minutes for them measures with fewer.
	for ((i = 1; i < many && SECONDS - t0 < 300; i++)); do run "hp-idle-$$-$i" idle; done
	for _ in $(seq 1200); do
		[ "$(ctl containers | wc -l)" -ge "$i" ] && break
		nap 0.05
	done
	have=$(ctl containers | wc -l)
	started="$((i - 1)) idle containers (busybox sleep) started in $((SECONDS - t0)) s, one runc run -d at a time"
	round "$((i)) containers"
	echo "  $started; devwld holds $have"
fi
echo "  the manual side's container is one more in each round; workload open every $pause us"
echo "  $(nproc) CPUs, $(uname -r), $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
