# shellcheck shell=bash
# Sourced by the shell tests and by scripts/devwl: what this host can do, found out
# without devwl (tests/host-probe.c, tests/hostprobe.h), so that a test skips only where
# the host cannot, and fails where devwl cannot although the host can.
#
#   host_cgroup2              print the first cgroup2 mount point (from mountinfo)
#   host_v1 CONTROLLER        print the mount point of that cgroup-v1 controller
#   host_can_v1_devices       a v1 devices cgroup can deny here (root, mounted, writable)
#   host_can_v2_devices       a cgroup-v2 device program loads and attaches here
#   host_can_baseline KIND    v1 or v2: the kernel baseline devwl-run makes is possible
#   host_can_record [pid]     a v2 device program can record denials (with the pid)
#   host_user_notif           seccomp user notification exists
#   host_ia32                 int $0x80 is a system call (ia32 emulation)
#   host_why                  after a failed host_can_*: why not
HOST_PROBE=${HOST_PROBE:-${DEVWL_BUILD:?DEVWL_BUILD not set}/tests/host-probe}
host_why=

host_probe() {
	if [ ! -x "$HOST_PROBE" ]; then
		# A program the build should have made is missing: a failure, never a skip.
		echo "FAIL: $HOST_PROBE was not built" >&2
		exit 1
	fi
	"$HOST_PROBE" "$@"
}
host_cgroup2() { host_probe cgroup2; }
host_v1() { host_probe v1 "$1"; }
host_can_v1_devices() {
	host_why="not root"
	[ "$(id -u)" = 0 ] || return 1
	host_why=$(host_probe v1-devices)
}
host_can_v2_devices() {
	host_why="not root"
	[ "$(id -u)" = 0 ] || return 1
	host_why=$(host_probe bpf-device)
}
host_can_baseline() {
	case $1 in
	v1) host_can_v1_devices ;;
	v2) host_can_v2_devices ;;
	*) return 2 ;;
	esac
}
# A device program can record its denials in a BPF ring buffer (with pid: and the task's).
host_can_record() {
	host_why=$(host_probe "bpf-ringbuf${1:+-$1}")
}
host_user_notif() { host_probe user-notif; }
host_ia32() { host_probe ia32; }

# as_nobody CMD...: run CMD as uid/gid 65534, no supplementary groups, no capabilities.
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }

# for_others FILE: a path to FILE that uid 65534 can execute: FILE itself where every
# directory above it lets others through, else a copy in $T/others (a build tree under
# a 0700 checkout is out of their reach). Fails, saying why, where it can make neither.
for_others() {
	local copy
	if as_nobody test -x "$1" 2>/dev/null; then
		printf '%s\n' "$1"
		return 0
	fi
	copy=${T:?}/others/$(basename "$1")
	chmod o+x "$T" && mkdir -p -m 755 "$T/others" && cp "$1" "$copy" && chmod 755 "$copy" || {
		echo "FAIL: cannot copy $1 where uid 65534 can run it" >&2
		return 1
	}
	as_nobody test -x "$copy" || {
		echo "FAIL: uid 65534 cannot run $copy either (is ${T%/*} out of its reach?)" >&2
		return 1
	}
	printf '%s\n' "$copy"
}
