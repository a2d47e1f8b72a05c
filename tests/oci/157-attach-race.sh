# Hot-plug racing the workload: runc containers open the attach path in a tight loop
# (tests/oci/hammer.c --watch, linked static: every open's result and, for an fd, the
# device it is, fstat's st_rdev) while devwlctl attaches and detaches a loop device there
# over and over. Right after each detach answers, a node is made at the same path from
# the host, in the bundle's root file system (a node the container made): a second loop
# device, one /lab allows but nobody attached (odd cycles), or the device just detached
# (even cycles). Every open must give the attached device or fail ENOENT/EPERM/EACCES
# (EACCES: the moment a node devwld makes is still mode 0000), the second device never
# opens, no open begun after a detach answered gives an fd, and after the last detach
# nothing is left at the path and nothing is attached. Three containers at once: two
# under devwld's default --kernel-mode auto (device cgroups programmed), one with the
# every-open profile (devwld answers opens CONTINUE), one with the mknod-only profile
# (only the cgroup decides opens), and one under a second devwld, --kernel-mode never
# (granted devices opened on the container's behalf).
# RACE_N: attach/detach cycles per container (default 40: 120 races of three containers at once, in about half a minute).
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
[ -e /dev/loop-control ] || skip "no /dev/loop-control (loop driver not loaded)"
WATCH=$OCI_BIN/hammer-static
[ -x "$WATCH" ] || fail "$WATCH not built (the build should have made it)"
N=${RACE_N:-40}
MKNOD_ONLY=$HERE/../../examples/oci-hook/seccomp-mknod-only.json

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/lab",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow b 7:* rw"],
      "mknod_needs_cap": false } ],
  "containers": { "default_template": "/lab/{id}", "container_rules": ["deny b 7:* rwm"] } }
JSON
truncate -s 1M "$T/disk" "$T/disk2" || fail "truncate"
LOOP=$(losetup -f --show "$T/disk") || skip "losetup -f: no free loop device here"
LOOP2=$(losetup -f --show "$T/disk2") || {
	losetup -d "$LOOP"
	skip "losetup -f: a second free loop device is needed"
}
trap 'st=$?; losetup -d "$LOOP" "$LOOP2" 2>/dev/null; (exit $st); cleanup' EXIT
dev_of() { echo "$(($(stat -c '0x%t' "$1"))):$(($(stat -c '0x%T' "$1")))"; }
GOOD=$(dev_of "$LOOP") BAD=$(dev_of "$LOOP2")
make_rootfs
cp "$WATCH" "$T/rootfs/bin/watch-open"

# A sleep without a fork: a read that times out on a FIFO nobody writes.
mkfifo "$T/nap"
exec {NAP}<>"$T/nap"
nap() { read -r -t "$1" -u "$NAP" _ || :; }
# await_state ID REGEX [AFTER-NS]: the workload's lines ("NS STATE", one per change)
# read on from where the last call stopped, until a state matches REGEX; false after
# 60 s. With AFTER-NS, an open that began after that time and gave an fd fails the test.
# A line is one write(2), but a read may still meet its first half at the end of the file.
declare -A FD=() PART=()
await_state() {
	local line ns end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ]; do
		if read -r -u "${FD[$1]}" line; then
			line=${PART[$1]:-}$line
			PART[$1]=
			ns=${line%% *} STATE=${line#* }
			[ -n "${3:-}" ] && [[ $STATE == ok* ]] && [ "$ns" -gt "$3" ] &&
				fail "$1: an open begun $(((ns - $3) / 1000)) us after the detach answered gave an fd: $STATE"
			[[ $STATE =~ ^($2)$ ]] && return 0
		else
			PART[$1]=${PART[$1]:-}$line
			nap 0.002
		fi
	done
	return 1
}

# The devwld a container is with: SOCK[ID] its control socket. The first one is lib.sh's
# (--kernel-mode auto); the second, --kernel-mode never, runs beside it on sockets of its
# own, so that the three races run at once.
declare -A SOCK=()
ctl_of() {
	local id=$1
	shift
	"$DEVWLCTL" --socket "${SOCK[$id]}" "$@"
}
start_devwld
"$DEVWLD" --listen "$T/never-listen.sock" --control "$T/never-control.sock" \
	--policy "$T/policy.json" --audit "$T/never-audit.jsonl" --state "$T/never-state.json" \
	--kernel-mode never 2>>"$T/devwld.log" &
CHILD_PIDS+=("$!")
wait_until 60 test -S "$T/never-control.sock" || fail "the second devwld did not start"

# start ID CONTROL META: a container (META: a jq filter on the bundle, its seccomp
# section) watching /tmp/hp-ID, known to the devwld of CONTROL.
start() {
	SOCK[$1]=$2
	make_bundle "$1" "exec watch-open --watch /tmp/stop-$1 /tmp/hp-$1" "$3"
	run_detached "$1" "$T/$1"
	wait_until 60 sh -c '"$0" --socket "$1" containers | grep -q "^$2 "' "$DEVWLCTL" \
		"$2" "$1" || fail "$1 never reached devwld: $(cat "$T/$1.out")"
	# Niced: the loop stays tight wherever a CPU is idle, but yields to devwld and to
	# the test's commands, which keeps the cycles quick on a small machine.
	renice -n 19 -p "$($RT state "$1" | jq .pid)" >/dev/null || fail "renice $1"
	exec {fd}<"$T/$1.out"
	FD[$1]=$fd
	await_state "$1" ENOENT || fail "$1: the workload did not start: $(cat "$T/$1.out")"
}

# race ID: N cycles of attach, the workload opens it, detach, a node made at once from
# outside, the workload refused it, the node removed; then the workload stopped and
# judged. The node is the second device (odd cycles) or the one just detached (even).
race() {
	local i id=$1 host=$T/rootfs/tmp/hp-$1 t dev
	for ((i = 1; i <= N; i++)); do
		ctl_of "$id" attach "$id" "$LOOP" "/tmp/hp-$id" >"$T/$id.ctl" 2>&1 ||
			fail "cycle $i: attach to $id: $(cat "$T/$id.ctl")"
		await_state "$id" "ok b $GOOD" ||
			fail "cycle $i: $id never opened $LOOP after the attach: $(tail -5 "$T/$id.out")"
		ctl_of "$id" detach "$id" "/tmp/hp-$id" >"$T/$id.ctl" 2>&1 ||
			fail "cycle $i: detach from $id: $(cat "$T/$id.ctl")"
		t=${EPOCHREALTIME/./}000
		dev=$GOOD
		[ $((i % 2)) = 0 ] || dev=$BAD
		# At once: the detach has answered, so the grant must be gone already.
		mknod "$host" b "${dev%:*}" "${dev#*:}" || fail "mknod $host"
		await_state "$id" "EPERM|EACCES" "$t" ||
			fail "cycle $i: $id never tried the node of b $dev: $(tail -5 "$T/$id.out")"
		rm -f "$host"
	done
	touch "$T/rootfs/tmp/stop-$id"
	await_state "$id" "done" || fail "$id: the workload did not stop"
	awk -v good="ok b $GOOD" '
		/^count / { st = $2; for (f = 3; f < NF; f++) st = st " " $f
			if (st != good && st != "ENOENT" && st != "EPERM" && st != "EACCES")
				bad = bad " [" st ": " $NF "]"
			if (st == good) ok = $NF }
		END { if (bad != "") { print "unexpected results:" bad; exit 1 }
			if (ok < 1) { print "never opened"; exit 1 } }' "$T/$id.out" >"$T/$id.verdict" ||
		fail "$id: $(cat "$T/$id.verdict"); all: $(grep -v '^[0-9]' "$T/$id.out")"
	[ ! -e "$host" ] && [ ! -L "$host" ] || fail "$id: a node is left at /tmp/hp-$id: $(ls -l "$host")"
	ctl_of "$id" containers --devices >"$T/$id.devices" || fail "containers --devices"
	! grep -q "^$id " "$T/$id.devices" || fail "$id: attached after the last detach: $(cat "$T/$id.devices")"
}
counts() { grep '^count ' "$T/$1.out" | cut -d' ' -f2- | paste -sd, | sed 's/,/, /g'; }
mode_of() { ctl_of "$1" containers | awk -v id="$1" '$1 == id {print $5}'; }

# Kernel mode, a container of each profile; authoritative, one of the every-open profile.
full=full-$$ km=km-$$ auth=auth-$$
start "$full" "$T/control.sock" .
start "$km" "$T/control.sock" "$(jq -c --arg lp "$T/listen.sock" \
	'.listenerPath = $lp | .listenerMetadata = "mode=kernel"' "$MKNOD_ONLY" | sed 's/^/.linux.seccomp = /')"
start "$auth" "$T/never-control.sock" ".linux.seccomp.listenerPath = \"$T/never-listen.sock\""
declare -A MODE=()
for id in "$full" "$km" "$auth"; do
	MODE[$id]=$(mode_of "$id")
	case $id:${MODE[$id]} in
	auth-*:authoritative | full-*:kernel-v[12] | km-*:kernel-v[12]) ;;
	auth-*:*) fail "$id (--kernel-mode never) is ${MODE[$id]}" ;;
	*)
		if host_can_v1_devices || host_can_v2_devices; then
			fail "$id is ${MODE[$id]}, not in kernel mode, on a host that programs device cgroups"
		fi
		echo "# $id: ${MODE[$id]} (the host programs no device cgroup: $host_why)"
		;;
	esac
done

# Each race in a subshell of its own (without lib.sh's cleanup: that is ours, at exit).
pids=()
for id in "$full" "$km" "$auth"; do
	(
		trap - EXIT
		race "$id"
	) &
	pids+=("$!")
done
bad=0
for pid in "${pids[@]}"; do wait "$pid" || bad=1; done
[ $bad = 0 ] || fail "a race failed (above)"
pass "kernel mode, every-open profile (${MODE[$full]}): $N attach/detach cycles; opens: $(counts "$full"); b $BAD never opened"
pass "kernel mode, mknod-only profile (${MODE[$km]}): $N cycles; opens: $(counts "$km"); b $BAD never opened"
pass "--kernel-mode never (${MODE[$auth]}): $N cycles; opens: $(counts "$auth"); b $BAD never opened"
for sock in "$T/control.sock" "$T/never-control.sock"; do
	[ -z "$("$DEVWLCTL" --socket "$sock" containers --devices)" ] ||
		fail "attached at the end: $("$DEVWLCTL" --socket "$sock" containers --devices)"
done
pass "after the last detach: no node at the paths, devwlctl containers --devices empty; b $GOOD made from outside after a detach never opened"
exit 0
