#!/bin/bash
# bench/follow.sh [--quick] [--build DIR] [--ops N] [--containers N] [--pause-us US]:
# how soon a device a selector names is in force after it appears, devwld following a
# "loop:FILE" binding against what a script without devwl does on the same event.
#
# Workloads run tests/oci/hammer.c --watch on a loop device's path (an open every
# --pause-us, each change of result printed with its CLOCK_REALTIME time):
#   devwl   devwl-run --connect to devwld, node /lab, whose rules end with
#           "allow loop:FILE r" (a binding devwld follows; kernel mode where it can be:
#           devwld then programs the workload's device cgroup)
#   manual  a plain v1 device cgroup ("deny a") and a udev-rule-like step: a shell loop
#           reading /sys/block/loopN/loop/backing_file every millisecond that, when it
#           names FILE, writes "b 7:N r" into devices.allow (devices.deny when it stops)
# grant: from the moment LOOP_CONFIGURE returns (bench/loop-bind.c, `losetup LOOP FILE`;
# the kernel sends the uevent within the call) to the workload's first open that
# succeeds; revoke: from LOOP_CLR_FD and the last close (`losetup -d`) to its first open
# refused. Exec times are in neither. Then a replug in an attached container, if this
# devwld can attach by selector (`devwlctl attach CONTAINER 'loop:FILE' /dev/xdisk`, FILE
# bound first: it must name a device): from the unbind to the node gone from a runc
# container, and from the bind to the node back and openable; the manual side adds
# `nsenter -m -t PID rm` and `mknod` to its step. devwl and manual alternate, --ops of each,
# first with 1 container, then with idle ones added up to --containers (devwl:
# devwl-run --connect sleepers on /lab, which devwld reprograms too, the workload
# started again after them so that it is the last; manual: as many cgroups, each
# written, the workload's last). Prints p50/p99 in ms of each side and their ratio
# (devwl/manual).
# Needs root, losetup, a v1 devices controller for the manual side (n/a without), and
# runc, jq and busybox for the attach rows.
#   --quick         20 operations of each, 1 container only (under a minute)
#   --build DIR     the build directory (default build/ next to bench/)
#   --ops N         operations of each kind and side (default 200)
#   --containers N  containers in the second round (default 100; 1: no second round)
#   --pause-us US   the workloads' pause between opens (default 200): the resolution
set -u

# shellcheck disable=SC2034 # read by lib.sh
NAME=follow.sh HELP=33
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_args "$@"
[ "$(id -u)" = 0 ] || {
	echo "bench/follow.sh: needs root (devwld, device cgroups, loop devices)" >&2
	exit 1
}
command -v losetup >/dev/null || {
	echo "bench/follow.sh: n/a (losetup not installed)"
	exit 0
}
[ -e /dev/loop-control ] || {
	echo "bench/follow.sh: n/a (no loop driver: /dev/loop-control)"
	exit 0
}

build=$(mkdir -p "$build" && cd "$build" && pwd)
DEVWLD=$build/supervisor/devwld
DEVWLCTL=$build/tools/devwlctl
RUN=$build/tools/devwl-run
WATCH=$build/tests/oci/hammer-static
LOOPBIND=$build/bench/loop-bind
if ! [ -x "$DEVWLD" ] || ! [ -x "$DEVWLCTL" ] || ! [ -x "$RUN" ] || ! [ -x "$WATCH" ] ||
	! [ -x "$LOOPBIND" ]; then
	echo "bench/follow.sh: building in $build ..." >&2
	{ cmake -S "$repo" -B "$build" >/dev/null &&
		make -C "$build" -j"$(nproc)" devwld devwlctl devwl-run hammer-static loop-bind \
			>/dev/null; } || {
		echo "bench/follow.sh: build failed (hammer-static needs BUILD_TESTING)" >&2
		exit 1
	}
fi

T=$(mktemp -d /tmp/devwl-follow.XXXXXX)
chmod 755 "$T"
DEVWLD_PID=
PIDS=()
IDS=()
MCG=
# Each kind's loop device and its minor: grant, manual, attach, mattach.
declare -A LOOP=() MIN=()
MADE=()
cleanup() {
	local pid id l cg f bf
	: >"$T/stop"
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	for id in "${IDS[@]}"; do runc delete -f "$id" >/dev/null 2>&1; done
	if [ -n "$DEVWLD_PID" ]; then
		kill "$DEVWLD_PID" 2>/dev/null
		wait "$DEVWLD_PID" 2>/dev/null
	fi
	# The loop devices this run made: unbound, then removed.
	for f in grant manual attach mattach; do
		l=${LOOP[$f]:-}
		[ -n "$l" ] || continue
		bf=$(cat "/sys/block/${l#/dev/}/loop/backing_file" 2>/dev/null)
		[ "$bf" != "$T/$f.img" ] || losetup -d "$l" 2>/dev/null
	done
	for l in "${MADE[@]}"; do "$LOOPBIND" --remove "$l" 2>/dev/null; done
	if [ -n "$MCG" ] && [ -d "$MCG" ]; then
		for cg in "$MCG"/*/; do rmdir "$cg" 2>/dev/null; done
		rmdir "$MCG" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

nap_init

# The manual step writes a v1 device cgroup; cgroup2 has no such file.
V1=$(v1_devices)

# One loop device for each side and kind, made for this run (LOOP_CTL_ADD) at a number
# far above what `losetup -f` hands out, so that each workload watches a path known in
# advance and no other user of loop devices on this host takes it while it is unbound.
n=$((200 + $$ % 500))
for f in grant manual attach mattach; do
	truncate -s 1M "$T/$f.img"
	for ((tries = 0; tries < 100; tries++, n++)); do
		"$LOOPBIND" --add "$n" 2>>"$T/cmd.log" && break
		[ $? = 3 ] || die "cannot make loop device $n: $(tail -1 "$T/cmd.log")"
	done
	LOOP[$f]=/dev/loop$n
	MADE+=("$n")
	for _ in $(seq 200); do
		[ -b "${LOOP[$f]}" ] && break
		nap 0.01
	done
	[ -b "${LOOP[$f]}" ] || die "${LOOP[$f]} never appeared"
	MIN[$f]=$(($(stat -c 0x%T "${LOOP[$f]}")))
	n=$((n + 1))
done
MAJ=$(($(stat -c 0x%t "${LOOP[grant]}")))
# bind KIND / unbind KIND: the uevent each measurement starts from; print the time.
bind() { "$LOOPBIND" "${LOOP[$1]}" "$T/$1.img"; }
unbind() { "$LOOPBIND" -d "${LOOP[$1]}"; }

cat >"$T/policy.json" <<JSON
{ "version": 1,
  "nodes": [ { "path": "/lab", "rules": ["deny a", "allow loop:$T/grant.img r"] },
             { "path": "/att",
               "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                         "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm",
                         "allow c 136:* rwm", "allow b 7:* rw"] } ],
  "containers": { "default_template": "/att/{id}", "container_rules": ["deny b 7:* rwm"] } }
JSON
start_devwld
ctl selectors | grep -qF "loop:$T/grant.img r" || die "devwld holds no loop: binding: $(ctl selectors)"

# start_a N: the devwl workload, on /lab, its lines on AFD. devwld programs containers
# in the order they came: the second round starts another after the idle ones, so that
# it is programmed last, as the manual step writes its workload's cgroup last.
APID=
start_a() {
	local out=$T/a$1.out
	if [ -n "$APID" ]; then
		kill "$APID" 2>/dev/null
		wait "$APID" 2>/dev/null
	fi
	A=follow-$$-$1
	"$RUN" --connect "$T/listen.sock" --node /lab --id "$A" -- \
		"$WATCH" --watch "$T/stop" "${LOOP[grant]}" "$pause" >"$out" 2>&1 &
	APID=$!
	PIDS+=("$APID")
	for _ in $(seq 200); do
		ctl containers 2>/dev/null | grep -q "^$A " && break
		nap 0.05
	done
	AMODE=$(ctl containers | awk -v id="$A" '$1 == id {print $5}')
	[ -n "$AMODE" ] || die "$A never reached devwld: $(cat "$out")"
	exec {AFD}<"$out"
}
start_a 1

# The manual workload, in a v1 device cgroup of its own that denies everything.
BCG=
if [ -n "$V1" ]; then
	MCG=$V1/devwl-follow-$$
	mkdir -p "$MCG/w" && echo a >"$MCG/w/devices.deny" || die "cannot make $MCG/w"
	BCG=$MCG/w
	(
		echo "$BASHPID" >"$BCG/cgroup.procs" || exit 1
		exec "$WATCH" --watch "$T/stop" "${LOOP[manual]}" "$pause"
	) >"$T/b.out" 2>&1 &
	PIDS+=("$!")
fi

# The attach rows: a runc container under devwld and one without a listener, if runc
# can run them and devwld takes an attach by selector.
ATTACH=
att_setup() {
	local root=$T/rootfs km a
	command -v runc >/dev/null && command -v jq >/dev/null && command -v busybox >/dev/null &&
		command -v nsenter >/dev/null || {
		ATTACH="n/a: runc, jq, busybox or nsenter not installed"
		return 0
	}
	mkdir -p "$root"/{bin,proc,sys,dev,tmp,etc}
	cp "$(command -v busybox)" "$root/bin/busybox"
	for a in sh sleep mknod rm; do ln -s busybox "$root/bin/$a"; done
	cp "$WATCH" "$root/bin/watch-open"
	km=$(jq -c --arg lp "$T/listen.sock" '.listenerPath = $lp | .listenerMetadata = "mode=kernel"' \
		"$repo/examples/oci-hook/seccomp-mknod-only.json") || die "the mknod-only profile"
	bundle devwl "$km" watch-open --watch /tmp/stop /dev/xdisk "$pause"
	bundle manual "" watch-open --watch /tmp/stop /dev/xdisk "$pause"
	C=follow-att-$$ D=follow-man-$$
	runc_run "$C" devwl
	for _ in $(seq 200); do
		ctl containers 2>/dev/null | grep -q "^$C " && break
		nap 0.05
	done
	# An attach by selector must name one device now: FILE is bound first, and each
	# measurement is a replug, unbind then bind.
	bind attach >/dev/null || die "cannot bind ${LOOP[attach]}"
	ctl attach "$C" "loop:$T/attach.img" /dev/xdisk >"$T/attach.err" 2>&1 || {
		# A devwld without it takes a device path or numbers only.
		grep -q "a host path" "$T/attach.err" ||
			die "devwlctl attach $C loop:FILE /dev/xdisk: $(cat "$T/attach.err")"
		ATTACH="skipped: attach by selector not supported by this build"
		echo "  ($(head -1 "$T/attach.err"))" >"$T/attach.why"
		return 0
	}
	[ -n "$BCG" ] || return 0
	runc_run "$D" manual
	DPID=$(runc state "$D" | jq .pid)
	DCG=$V1$(awk -F: '$2 == "devices" {print $3}' "/proc/$DPID/cgroup")
	[ -w "$DCG/devices.allow" ] || die "no devices.allow in $DCG"
	# The same start for the manual side: bound, and its node made.
	bind mattach >/dev/null || die "cannot bind ${LOOP[mattach]}"
	m_attach || die "the manual attach failed"
}
# bundle NAME SECCOMP ARGS...: a bundle at $T/NAME; SECCOMP a JSON seccomp section or "".
bundle() {
	local name=$1 sc=$2
	shift 2
	mkdir -p "$T/$name"
	(cd "$T/$name" && runc spec) || die "runc spec"
	jq --arg root "$T/rootfs" --argjson sc "${sc:-null}" \
		--argjson args "$(printf '%s\n' "$@" | jq -R . | jq -cs .)" '
		.root = {path: $root, readonly: false} | .process.terminal = false
		| .process.args = $args
		| if $sc == null then del(.linux.seccomp) else .linux.seccomp = $sc end' \
		"$T/$name/config.json" >"$T/$name/c.json" || die "jq"
	mv "$T/$name/c.json" "$T/$name/config.json"
}
runc_run() {
	IDS+=("$1")
	runc run -d --bundle "$T/$2" "$1" </dev/null >"$T/$1.out" 2>&1 ||
		die "runc run $1: $(cat "$T/$1.out")"
}

# manual_watch FILE DEV ON OFF STOP GRANTED: the manual step, as a udev rule's script
# would do it without devwl: poll the loop device's sysfs every millisecond (no fork:
# builtins only) and, when it comes to back FILE, run ON; when it no longer does, OFF.
# GRANTED: 1 if ON is done already. Runs until STOP exists.
manual_watch() {
	local file=$1 dev=${2#/dev/} on=$3 off=$4 stop=$5 granted=$6 bf
	while [ ! -e "$stop" ]; do
		bf=
		{ read -r bf <"/sys/block/$dev/loop/backing_file"; } 2>/dev/null
		if [ "$bf" = "$file" ] && [ $granted = 0 ]; then
			$on
			granted=1
		elif [ "$bf" != "$file" ] && [ $granted = 1 ]; then
			$off
			granted=0
		fi
		nap 0.001
	done
}
MIDLE=()
m_grant() {
	local cg
	for cg in "${MIDLE[@]}"; do echo "b $MAJ:${MIN[manual]} r" >"$cg/devices.allow"; done
	echo "b $MAJ:${MIN[manual]} r" >"$BCG/devices.allow"
}
m_revoke() {
	local cg
	for cg in "${MIDLE[@]}"; do echo "b $MAJ:${MIN[manual]} r" >"$cg/devices.deny"; done
	echo "b $MAJ:${MIN[manual]} r" >"$BCG/devices.deny"
}
m_attach() {
	echo "b $MAJ:${MIN[mattach]} rw" >"$DCG/devices.allow" &&
		nsenter -m -t "$DPID" mknod /dev/xdisk b "$MAJ" "${MIN[mattach]}"
}
m_detach() {
	nsenter -m -t "$DPID" rm /dev/xdisk && echo "b $MAJ:${MIN[mattach]} rw" >"$DCG/devices.deny"
}
att_setup

# Each workload's lines, read as they come ("NS STATE").
[ -z "$BCG" ] || exec {BFD}<"$T/b.out"
if [ -z "$ATTACH" ]; then
	exec {CFD}<"$T/$C.out"
	[ -z "$BCG" ] || exec {DFD}<"$T/$D.out"
fi

# op FD WANT-REGEX CMD...: run CMD, print ms from the time it prints (ns) to the first
# state matching WANT-REGEX.
op() {
	local fd=$1 want=$2 t0
	shift 2
	t0=$("$@" 2>>"$T/cmd.log") || die "$*: $(tail -3 "$T/cmd.log")"
	while next_state "$fd"; do
		[[ $ST =~ $want ]] && {
			awk -v ns="$NS" -v t0="$t0" 'BEGIN { printf "%.3f\n", (ns - t0) / 1e6 }'
			return 0
		}
	done
	die "$* : the workload never reached /$want/ (last: $ST)"
}


# line NAME A-FILE B-FILE: one table row.
line() {
	local ap50 ap99 bp50=n/a bp99=n/a r50=n/a r99=n/a
	ap50=$(pct "$2" 50) ap99=$(pct "$2" 99)
	if [ -s "$3" ]; then
		bp50=$(printf %.2f "$(pct "$3" 50)") bp99=$(printf %.2f "$(pct "$3" 99)")
		r50=$(awk -v a="$ap50" -v b="$bp50" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
		r99=$(awk -v a="$ap99" -v b="$bp99" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
	fi
	printf '%-44s %9.2f %9.2f %10s %10s %7s %7s\n' "$1" "$ap50" "$ap99" "$bp50" "$bp99" \
		"$r50" "$r99"
}

RN=0
# round LABEL: ops alternating, devwl then manual, grant then revoke (then attach and
# detach); one table row per kind.
round() {
	local i k wpid
	RN=$((RN + 1))
	for k in a-grant a-revoke b-grant b-revoke a-attach a-detach b-attach b-detach true; do
		: >"$T/$k"
	done
	if [ -n "$BCG" ]; then
		manual_watch "$T/manual.img" "${LOOP[manual]}" m_grant m_revoke "$T/mstop.$RN" 0 \
			2>>"$T/cmd.log" &
		wpid=$!
		PIDS+=("$wpid")
		settle "$BFD"
	fi
	if [ -z "$ATTACH" ] && [ -n "$BCG" ]; then
		manual_watch "$T/mattach.img" "${LOOP[mattach]}" m_attach m_detach "$T/mstop.$RN" 1 \
			2>>"$T/cmd.log" &
		PIDS+=("$!")
		settle "$DFD"
	fi
	settle "$AFD"
	[ -n "$ATTACH" ] || settle "$CFD"
	# Two warm-up cycles of each (first exec of loop-bind, page cache).
	for ((i = -2; i < ops; i++)); do
		k=$T/x
		((i >= 0)) && k=$T
		op "$AFD" "^ok b $MAJ:${MIN[grant]}\$" bind grant >>"$k/a-grant" || exit 1
		[ -z "$BCG" ] || op "$BFD" "^ok b $MAJ:${MIN[manual]}\$" bind manual >>"$k/b-grant" || exit 1
		op "$AFD" '^EPERM$' unbind grant >>"$k/a-revoke" || exit 1
		[ -z "$BCG" ] || op "$BFD" '^EPERM$' unbind manual >>"$k/b-revoke" || exit 1
		if [ -z "$ATTACH" ]; then
			op "$CFD" '^(ENOENT|EPERM)$' unbind attach >>"$k/a-detach" || exit 1
			[ -z "$BCG" ] || op "$DFD" '^(ENOENT|EPERM)$' unbind mattach >>"$k/b-detach" ||
				exit 1
			op "$CFD" "^ok b $MAJ:${MIN[attach]}\$" bind attach >>"$k/a-attach" || exit 1
			[ -z "$BCG" ] ||
				op "$DFD" "^ok b $MAJ:${MIN[mattach]}\$" bind mattach >>"$k/b-attach" || exit 1
		fi
		t0=${EPOCHREALTIME/./}
		/bin/true
		echo $((${EPOCHREALTIME/./} - t0)) >>"$k/true"
	done
	: >"$T/mstop.$RN"
	line "grant (bound -> open ok), $1" "$T/a-grant" "$T/b-grant"
	line "revoke (unbound -> EPERM), $1" "$T/a-revoke" "$T/b-revoke"
	if [ -z "$ATTACH" ]; then
		line "replug: unbound -> node gone, $1" "$T/a-detach" "$T/b-detach"
		line "replug: bound -> node back, $1" "$T/a-attach" "$T/b-attach"
	else
		printf '%-44s %s\n' "attach by selector, $1" "$ATTACH"
	fi
	awk -v a="$(pct "$T/true" 50)" -v b="$(pct "$T/true" 99)" -v n="$1" 'BEGIN {
		printf "  yardstick, %s: /bin/true from this shell, p50 %.2f ms, p99 %.2f ms\n",
			n, a / 1000, b / 1000 }'
}

mkdir -p "$T/x"
manual="sysfs polled every 1 ms + v1 devices.allow/deny (+ nsenter mknod/rm to attach)"
[ -n "$BCG" ] || manual="n/a: no v1 devices controller here (cgroup2 has no devices.allow)"
echo "selector following, ms from a loop device's bind/unbind (the uevent) to the workload's"
echo "first open that shows it (bench/follow.sh): $ops of each, devwl and manual alternately;"
echo "devwl: devwld following loop:FILE, its workload $AMODE;"
echo "manual: $manual"
printf '%-44s %9s %9s %10s %10s %7s %7s\n' row "devwl p50" "p99" "manual p50" "p99" "p50 A/B" \
	"p99 A/B"
round "1 container"
[ ! -s "$T/attach.why" ] || cat "$T/attach.why"
if [ "$many" -gt 1 ]; then
	t0=$SECONDS
	# Bounded: a machine that takes more than 5 minutes for them measures with fewer.
	for ((i = 1; i < many && SECONDS - t0 < 300; i++)); do
		"$RUN" --connect "$T/listen.sock" --node /lab --id "follow-idle-$$-$i" -- \
			sleep 1000000 >>"$T/idle.log" 2>&1 &
		PIDS+=("$!")
		if [ -n "$BCG" ]; then
			mkdir "$MCG/i$i" && echo a >"$MCG/i$i/devices.deny" || die "cannot make $MCG/i$i"
			MIDLE+=("$MCG/i$i")
		fi
	done
	for _ in $(seq 1200); do
		[ "$(ctl containers | awk '$2 == "/lab"' | wc -l)" -ge "$i" ] && break
		nap 0.05
	done
	start_a 2
	have=$(ctl containers | awk '$2 == "/lab"' | wc -l)
	started="$((i - 1)) idle workloads (devwl-run --connect ... sleep) started in $((SECONDS - t0)) s"
	round "$i containers"
	echo "  $started; devwld holds $have on /lab; the manual step writes $((${#MIDLE[@]} + 1)) cgroups"
fi
echo "  workload open every $pause us"
echo "  $(nproc) CPUs, $(uname -r), $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
