# Shared by the tests in tests/oci: a busybox bundle, a devwld on temporary sockets,
# and cleanup of every container, process and directory the test made.
# Sourced by bash; RT (runc or crun) is set by the test before sourcing.
set -u

skip() {
	echo "SKIP: $*" >&2
	exit 77
}
fail() {
	echo "FAIL: $*" >&2
	[ -n "${T:-}" ] && [ -f "$T/devwld.log" ] && sed 's/^/  devwld.log: /' "$T/devwld.log" | tail -40 >&2
	exit 1
}
pass() {
	echo "ok - $*"
}

# What the host can do, asked without devwl (host_cgroup2, host_can_v2_devices...).
. "$(dirname "${BASH_SOURCE[0]}")/../host-probe.sh"

[ "$(id -u)" = 0 ] || skip "needs root (runtimes, cgroups, seccomp listeners)"
for cmd in ${RT:-} jq busybox; do
	command -v "$cmd" >/dev/null || skip "$cmd not installed (apt-get install runc crun busybox-static jq)"
done
BUSYBOX=$(command -v busybox)
file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || {
	[ -x /bin/busybox ] && BUSYBOX=/bin/busybox
}

BUILD=${DEVWL_BUILD:?DEVWL_BUILD must name the build directory}
# The top of the source tree (the guides' tests read its markdown).
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEVWLD=${DEVWLD:-$BUILD/supervisor/devwld}
DEVWLCTL=${DEVWLCTL:-$BUILD/tools/devwlctl}
OCI_HOOK=${OCI_HOOK:-$BUILD/tools/devwl-oci-hook}
OCI_BIN=${OCI_BIN:-$BUILD/tests/oci}
[ -x "$DEVWLD" ] || fail "devwld not built at $DEVWLD (the build should have made it)"

T=$(mktemp -d /tmp/devwl-oci.XXXXXX)
chmod 755 "$T"
CONTAINERS=()
DEVWLD_PID=
CHILD_PIDS=()
LOOPS=()

cleanup() {
	local id pid l status=$?
	for id in "${CONTAINERS[@]}"; do
		$RT kill "$id" KILL >/dev/null 2>&1
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			$RT delete -f "$id" >/dev/null 2>&1 && break
			sleep 0.2
		done
	done
	# A job started through a function (as_nobody CMD &) is a subshell whose child is
	# CMD: both go.
	for pid in "${CHILD_PIDS[@]}"; do
		pkill -9 -P "$pid" 2>/dev/null
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	if [ -n "$DEVWLD_PID" ]; then
		kill "$DEVWLD_PID" 2>/dev/null
		wait "$DEVWLD_PID" 2>/dev/null
	fi
	# Still open somewhere (a container not yet gone): the kernel detaches it at the close.
	for l in "${LOOPS[@]}"; do
		loop_detach_ours "$l"
	done
	if [ -e "$T/loops" ]; then
		while read -r l; do loop_detach_ours "$l"; done <"$T/loops"
	fi
	# Under -DDEVWL_SANITIZE=ON a report (at exit, for leaks) fails the test.
	if grep -q "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:" \
		"$T/devwld.log" 2>/dev/null; then
		echo "FAIL: sanitizer report in devwld.log:" >&2
		grep -A20 "ERROR: \|runtime error:" "$T/devwld.log" | head -60 >&2
		status=1
	fi
	if [ -n "${KEEP:-}" ]; then
		echo "kept $T" >&2
	else
		rm -rf "$T"
	fi
	exit "$status"
}
trap cleanup EXIT

# A busybox root file system, shared by the bundles of one test.
make_rootfs() {
	local root=$T/rootfs a
	mkdir -p "$root"/{bin,proc,sys,dev,tmp,etc}
	cp "$BUSYBOX" "$root/bin/busybox"
	# One process for the 269 links (one ln each costs seconds on a loaded machine);
	# chrooted, so that they name /bin/busybox of the root, not of the host.
	chroot "$root" /bin/busybox --install -s /bin || fail "busybox --install in $root"
	echo 'root:x:0:0:root:/:/bin/sh' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
}

# md_block FILE LANG N: the Nth ```LANG block of FILE (relative to the top of the tree):
# the guides' tests run their commands as written, never a copy.
md_block() {
	awk -v lang='```'"$2" -v n="$3" '$0 == lang {i++; f = (i == n); next} /^```/ {f = 0; next} f' \
		"$TOP/$1"
}

# The seccomp section of both examples: NOTIFY for every call that can reach a device.
seccomp_json() {
	local meta=${1:-}
	jq -n --arg lp "$T/listen.sock" --arg meta "$meta" '{
		defaultAction: "SCMP_ACT_ALLOW",
		listenerPath: $lp,
		architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
		syscalls: [
			{names: ["mknod", "mknodat", "open", "openat", "openat2", "creat",
				 "open_by_handle_at"], action: "SCMP_ACT_NOTIFY"},
			{names: ["io_uring_setup"], action: "SCMP_ACT_ERRNO", errnoRet: 1}
		]} + (if $meta == "" then {} else {listenerMetadata: $meta} end)'
}

# make_bundle NAME SCRIPT [JQ-FILTER]: a bundle at $T/NAME running `sh -c SCRIPT`.
make_bundle() {
	local name=$1 script=$2 extra=${3:-.}
	local dir=$T/$name
	mkdir -p "$dir"
	[ -d "$T/rootfs" ] || make_rootfs
	(cd "$dir" && runc spec 2>/dev/null || crun spec) || fail "cannot write a spec"
	jq --arg root "$T/rootfs" --arg script "$script" --argjson sc "$(seccomp_json)" '
		.root = {path: $root, readonly: false}
		| .process.terminal = false
		| .process.args = ["sh", "-c", $script]
		| .linux.seccomp = $sc' "$dir/config.json" | jq "$extra" >"$dir/config.new" ||
		fail "jq on the config"
	mv "$dir/config.new" "$dir/config.json"
}

# DEVWLD_WRAP: a command prefix for devwld, e.g. valgrind (tests/oci/valgrind.sh).
# DEVWLD_POLICY: the policy file [$T/policy.json]; empty: devwld runs without --policy.
start_devwld() {
	local policy=${DEVWLD_POLICY-$T/policy.json}
	${DEVWLD_WRAP:-} "$DEVWLD" --listen "$T/listen.sock" --control "$T/control.sock" \
		${policy:+--policy "$policy"} --audit "$T/audit.jsonl" "$@" 2>>"$T/devwld.log" &
	DEVWLD_PID=$!
	# Bounds here are for a machine loaded by other work (and ASan): generous, since a
	# wait ends as soon as its condition holds.
	for _ in $(seq 1200); do
		[ -S "$T/listen.sock" ] && [ -S "$T/control.sock" ] && return 0
		kill -0 "$DEVWLD_PID" 2>/dev/null || fail "devwld exited at start"
		sleep 0.05
	done
	fail "devwld not ready after 60 s"
}

# need_test_hooks: skip unless devwld was built with -DDEVWL_TEST_HOOKS=ON.
need_test_hooks() {
	[ "${DEVWL_TEST_HOOKS:-0}" = 1 ] ||
		skip "$* needs devwld's test hooks (configure with -DDEVWL_TEST_HOOKS=ON, as scripts/devwl test does)"
}

ctl() {
	"$DEVWLCTL" --socket "$T/control.sock" "$@"
}

# The runtime, run from a private mount namespace where that is needed (crun 1.8.1
# refuses a hybrid cgroup layout while its cgroup2 mount lists a controller): on a hybrid
# host, with the cgroup2 mounts unmounted there; on a v2-only one, as it is.
rt_create() {
	if [ "$RT" = crun ] && host_v1 devices >/dev/null; then
		timeout 120 unshare -m --propagation private sh -c \
			'for m in $(awk '"'"'$0 ~ / - cgroup2 / {print $5}'"'"' /proc/self/mountinfo); do
				umount "$m" 2>/dev/null
			done; exec "$@"' sh crun "$@"
	elif [ "$RT" = crun ]; then
		timeout 120 crun "$@"
	else
		timeout 120 runc "$@"
	fi
}

# run_detached ID BUNDLE: start the container in the background, output to $T/ID.out.
run_detached() {
	local id=$1 bundle=$2
	CONTAINERS+=("$id")
	rt_create run -d --bundle "$bundle" "$id" >"$T/$id.out" 2>&1 </dev/null ||
		fail "$RT run -d $id: $(cat "$T/$id.out")"
}

# run_fg ID BUNDLE: run to completion; output in $T/ID.out, exit status returned.
run_fg() {
	local id=$1 bundle=$2 rc=0
	CONTAINERS+=("$id")
	rt_create run --bundle "$bundle" "$id" >"$T/$id.out" 2>&1 </dev/null || rc=$?
	return $rc
}

# wait_for FILE PATTERN [SECONDS]: at least 60 s, whatever SECONDS asks (load).
wait_for() {
	local file=$1 pattern=$2 secs=${3:-60} i
	[ "$secs" -ge 60 ] || secs=60
	for ((i = 0; i < secs * 20; i++)); do
		grep -q -- "$pattern" "$file" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# make_loop: a loop device (LOOP, its minor LMIN) on the 1 MiB file $T/disk, which starts
# with DEVWLDISK; detached at the end. Skips where the host has no loop device to give.
make_loop() {
	command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
	[ -e /dev/loop-control ] || skip "no /dev/loop-control (loop driver not loaded)"
	truncate -s 1M "$T/disk" || fail "truncate"
	printf 'DEVWLDISK' | dd of="$T/disk" conv=notrunc status=none || fail "writing $T/disk"
	LOOP=$(losetup -f --show "$T/disk") || skip "losetup -f: no free loop device here"
	LOOPS+=("$LOOP")
	LMIN=$(($(stat -c '0x%T' "$LOOP")))
}

# loop_of FILE [DEV]: a loop device for FILE (DEV, or the first free); prints it. Noted
# in $T/loops, not LOOPS, since it runs in a $(...) subshell: detached at the end.
# loop_detach_ours DEV: losetup -d DEV while a file of this test backs it. A device the
# test detached itself is free for anyone: detached again by number at the end, it was
# another test's (tests/lifecycle/README.md, Divergences: its loop files vanished).
loop_detach_ours() {
	case $(losetup -n -O BACK-FILE "$1" 2>/dev/null) in
	"$T"/* | "$(realpath "$T")"/*) losetup -d "$1" 2>/dev/null ;;
	esac
}

loop_of() {
	local dev
	if [ $# = 2 ]; then
		losetup "$2" "$1" || return 1
		dev=$2
	else
		dev=$(losetup -f --show "$1") || return 1
	fi
	echo "$dev" >>"$T/loops"
	echo "$dev"
}

# stat_of NAME: one value of `devwlctl stats`.
stat_of() { ctl stats | awk -v k="$1" '$1 == k {print $2}'; }

# follow_events FILE: `devwlctl events --json` into FILE (its errors in FILE.err) in the
# background, once devwld counts it as its one subscriber.
follow_events() {
	"$DEVWLCTL" --socket "$T/control.sock" events --json >"$1" 2>"$1.err" &
	CHILD_PIDS+=("$!")
	for _ in $(seq 100); do
		[ "$(stat_of events_subscribers)" = 1 ] && return 0
		sleep 0.05
	done
	fail "devwlctl events did not subscribe: $(cat "$1.err")"
}

# start_loop_container ID: a runc busybox container opening /dev/zero and /etc/passwd in
# a loop until /tmp/stop exists in it; "ERR ..." lines in $T/ID.out count failed opens.
start_loop_container() {
	make_rootfs
	# true, not ":": a failed redirection of a special builtin ends the shell (POSIX),
	# and a crash test's held call does fail (ENOSYS).
	make_bundle loop '
n=0
while [ ! -e /tmp/stop ]; do
	true </dev/zero || echo "ERR zero $n"
	true </etc/passwd || echo "ERR passwd $n"
	n=$((n + 1))
done
echo "DONE $n"'
	run_detached "$1" "$T/loop"
}

# start_hammers N [FILE]: devwl-run --connect workloads h1..hN on node /w opening
# /dev/zero (and FILE) until $T/stop exists (tests/oci/hammer.c); their pids are added
# to HAMMER_PIDS, output in $T/hI.out.
HAMMER=${OCI_BIN:-}/hammer
HAMMER_PIDS=()
start_hammers() {
	local i
	for ((i = 1; i <= $1; i++)); do
		"$RUN" --connect "$T/listen.sock" --node /w --id "h$i" -- \
			"$HAMMER" "$T/stop" /dev/zero ${2:+"$2"} >"$T/h$i.out" 2>&1 &
		HAMMER_PIDS+=("$!")
		CHILD_PIDS+=("$!")
	done
}

# wait_until SECONDS CMD...: until CMD succeeds (at most SECONDS); its status.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.05
	done
}

# wait_containers N: until devwlctl lists N containers (60 s), else fail.
wait_containers() {
	for _ in $(seq 1200); do
		[ "$(ctl containers | wc -l)" = "$1" ] && return 0
		sleep 0.05
	done
	fail "workloads not attached: $(ctl containers)"
}

# need_stall: skip unless what start_stall runs ($RUN, tests/oci/uffd-stall) is built.
need_stall() {
	local f
	for f in "$RUN" "$OCI_BIN/uffd-stall"; do
		[ -x "$f" ] || fail "$f not built (the build should have made it)"
	done
}

# start_stall ID DIR [ARGS...]: a devwl-run workload (tests/oci/uffd-stall, node /w) whose
# open stalls devwld on a userfaultfd page until DIR/release; returns once the fault is
# held, its pid in STALL_PID and its output in $T/ID.out. Skips without userfaultfd.
start_stall() {
	local id=$1 dir=$2
	shift 2
	mkdir "$dir"
	# --keep-caps: userfaultfd for kernel-mode faults needs CAP_SYS_PTRACE (or the sysctl
	# vm.unprivileged_userfaultfd), which devwl-run drops from a root command otherwise.
	"$RUN" --keep-caps --connect "$T/listen.sock" --node /w --id "$id" "$@" -- \
		"$OCI_BIN/uffd-stall" "$dir" >"$T/$id.out" 2>&1 &
	STALL_PID=$!
	CHILD_PIDS+=("$STALL_PID")
	for _ in $(seq 200); do
		[ -e "$dir/stalled" ] && return 0
		kill -0 "$STALL_PID" 2>/dev/null || break
		sleep 0.05
	done
	[ -e "$dir/stalled" ] && return 0
	wait "$STALL_PID"
	[ $? = 77 ] && skip "no userfaultfd here: $(cat "$T/$id.out")"
	fail "the stalled workload $id never faulted: $(cat "$T/$id.out")"
}

# quiet_failures SECONDS PID...: wait for the quiet-N workloads (PID i is quiet-i, its
# output in $T/quiet-i.out), each at most SECONDS (a hang guard, not a measurement); how
# many were not done or failed goes to QUIET_BAD (not printed: a $( ) subshell cannot
# wait for our children), why on stderr.
quiet_failures() {
	local secs=$1 bad=0 i=0 pid w
	shift
	for pid in "$@"; do
		i=$((i + 1))
		for ((w = 0; w < secs * 20; w++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$pid" 2>/dev/null; then
			bad=$((bad + 1))
			echo "quiet-$i: not done after $secs s" >&2
		elif ! wait "$pid"; then
			bad=$((bad + 1))
			echo "quiet-$i: $(cat "$T/quiet-$i.out")" >&2
		fi
	done
	QUIET_BAD=$bad
}

# own_device_cgroup PID (the kernel-mode tests): what the host says of the container's
# cgroups, without devwld:
# it has a device cgroup of its own (not the top, not one holding us) that can be
# programmed, v1 devices or cgroup2, else prints why not.
own_device_cgroup() {
	local kind ours theirs
	for kind in v1 v2; do
		if [ $kind = v1 ]; then
			host_can_v1_devices || { echo "v1: $host_why;"; continue; }
			ours=$(awk -F: '$2 == "devices" {print $3}' /proc/self/cgroup)
			theirs=$(awk -F: '$2 == "devices" {print $3}' "/proc/$1/cgroup")
		else
			host_can_v2_devices || { echo "v2: $host_why;"; continue; }
			ours=$(awk -F: '$1 == 0 {print $3}' /proc/self/cgroup)
			theirs=$(awk -F: '$1 == 0 {print $3}' "/proc/$1/cgroup")
		fi
		case $ours/ in
		"$theirs"/*) echo "$kind: its cgroup '$theirs' holds ours '$ours';" ;;
		*) return 0 ;;
		esac
	done
	return 1
}

# need_user_runs: RUN (devwl-run) and PROBE (the live probe) where uid 65534 can run them
# (a 0700 checkout's build tree is out of its reach), and $T open to it; skips where uid
# 65534 cannot make user namespaces, the runtime of another uid these tests stand for.
need_user_runs() {
	RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
	PROBE=$BUILD/tests/live/probe
	[ -x "$RUN" ] && [ -x "$PROBE" ] || fail "devwl-run or the live probe not built"
	command -v setpriv >/dev/null || skip "no setpriv"
	RUN=$(for_others "$RUN") && PROBE=$(for_others "$PROBE") || exit 1
	as_nobody unshare -Urm true 2>/dev/null || skip "uid 65534 cannot make user namespaces here"
	chmod 755 "$T"
}

# need_user_client: CLIENT, the stand-in runtime (tests/oci/oci-client), where uid 65534
# can run it as well as root.
need_user_client() {
	CLIENT=$OCI_BIN/oci-client
	[ -x "$CLIENT" ] || fail "oci-client not built at $CLIENT (the build should have made it)"
	command -v setpriv >/dev/null || skip "no setpriv"
	CLIENT=$(for_others "$CLIENT") || exit 1
}
