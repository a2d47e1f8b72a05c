# devwld's kernel mode with a real runtime (RT, runc by default; 121 runs crun): a
# container with the mknod-only profile (examples/oci-hook/seccomp-mknod-only.json,
# listenerMetadata "node=/km mode=kernel") gets its device cgroup programmed with its node.
# Its opens are never trapped: a granted device opens natively, one the runtime allows but
# the node denies fails EPERM from the kernel, a device beyond the runtime's defaults that
# the node grants opens too (the cgroup holds the node, not the runtime's rules); mknod is
# still granted on behalf. A devwlctl revocation and a grant reach the running container
# before devwlctl returns, and still do after a planned restart and after a SIGKILL of the
# worker before any state write named the container (restored from the keeper's record).
RT=${RT:-runc}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PROFILE=$HERE/../../examples/oci-hook/seccomp-mknod-only.json
[ -f "$PROFILE" ] || fail "no $PROFILE"

# The runtimes' defaults allow c 1:3 1:5 1:7 1:8 1:9 5:0 5:2 10:200 136:*; /km takes
# /dev/full (1:7) away and adds /dev/kmsg (1:11) for writing (reading it needs CAP_SYSLOG).
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/km",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow c 1:11 wm"],
      "mknod_needs_cap": false } ] }
JSON
# The last part holds the state writes ($T/stall, a test hook) to crash the worker before
# one names a container.
DEVWLD_TEST_STATE_STALL=$T/stall start_devwld
make_rootfs
tag=devwl-km-$RT-$$
id=$tag
# start_km ID: a container with the mknod-only profile on /km in kernel mode, running
# until /tmp/stop exists.
start_km() {
	make_bundle "$1" 'echo READY; while [ ! -e /tmp/stop ]; do sleep 0.1; done; echo DONE'
	jq --slurpfile p "$PROFILE" --arg lp "$T/listen.sock" '
		.linux.seccomp = ($p[0] | .listenerPath = $lp | .listenerMetadata = "node=/km mode=kernel")' \
		"$T/$1/config.json" >"$T/$1/config.new" && mv "$T/$1/config.new" "$T/$1/config.json" ||
		fail "jq on the config"
	run_detached "$1" "$T/$1"
	wait_for "$T/devwld.log" "container $1: .*kernel mode" ||
		fail "devwld said nothing about kernel mode: $(cat "$T/$1.out")"
}
mode_of() { ctl containers | awk -v id="$1" '$1 == id {print $5}'; }
start_km "$id"
if grep -q "container $id: WARNING: kernel mode asked for" "$T/devwld.log"; then
	why=$(grep -m1 "container $id: WARNING" "$T/devwld.log")
	# Skipped only where the host says the container has no cgroup of its own.
	host=$(own_device_cgroup "$($RT state "$id" | jq .pid)") ||
		skip "the container has no device cgroup of its own here: $host ($why)"
	fail "kernel mode not in force although the container has a device cgroup of its own: $why"
fi
mode=$(mode_of "$id")
case $mode in
kernel-v1 | kernel-v2) ;;
*) fail "devwlctl containers: $(ctl containers)" ;;
esac
[ "$(stat_of kernel_containers)" = 1 ] || fail "stats: $(ctl stats | grep kernel)"
jq -se --arg id "$id" 'map(select(.event == "mode" and .container == $id)) | .[0].mode | startswith("kernel")' \
	"$T/audit.jsonl" >/dev/null || fail "no mode record in the audit: $(cat "$T/audit.jsonl")"
pass "$RT: container $id in $mode (devwlctl containers, stats, audit)"

# probe SCRIPT [ID]: run SCRIPT in the container (default $id); its output.
probe() {
	$RT exec "${2:-$id}" sh -c "$1" >"$T/probe.out" 2>&1 </dev/null
	cat "$T/probe.out"
}
eperm() { grep -q "Operation not permitted" "$T/probe.out"; }

[ "$(probe 'true </dev/zero && echo OPENED')" = OPENED ] || fail "granted /dev/zero: $(cat "$T/probe.out")"
probe 'true </dev/full && echo OPENED' >/dev/null
eperm || fail "/dev/full, allowed by $RT but denied by the node: $(cat "$T/probe.out")"
[ "$(probe 'mknod /tmp/kmsg c 1 11 && true >/tmp/kmsg && echo OPENED')" = OPENED ] ||
	fail "mknod + open of c 1:11 (beyond $RT's defaults): $(cat "$T/probe.out")"
probe 'mknod /tmp/mem c 1 1' >/dev/null
eperm && [ ! -e "$T/rootfs/tmp/mem" ] || fail "denied mknod c 1:1: $(cat "$T/probe.out")"
# Only the two mknods reached devwld: the opens (the runtime's own included) never trap.
[ "$(stat_of notifications)" = 2 ] || fail "notifications: $(stat_of notifications), want the 2 mknods"
pass "$RT: granted open native, denied open EPERM from the kernel, c 1:11 beyond $RT's defaults opens, mknod on behalf; 2 notifications in all"
[ "$(stat_of kernel_seen_only_opens)" = 0 ] && ! grep -q "profile traps opens" "$T/devwld.log" ||
	fail "the mknod-only profile said to trap opens: $(grep "profile traps opens" "$T/devwld.log")"

if [ "$mode" = kernel-v1 ]; then
	pid=$($RT state "$id" | jq .pid)
	dir=$(host_v1 devices)$(awk -F: '$2 == "devices" {print $3}' "/proc/$pid/cgroup")
	[ "$(sort "$dir/devices.list")" = "$(ctl list /km | sort)" ] ||
		fail "$dir/devices.list is not /km: $(cat "$dir/devices.list")"
	pass "$RT: the container's v1 devices.list is exactly devwlctl list /km"
fi

ctl deny /km "c 1:5 rwm" >/dev/null || fail "devwlctl deny"
probe 'true </dev/zero && echo OPENED' >/dev/null
eperm || fail "after devwlctl deny c 1:5: $(cat "$T/probe.out")"
ctl allow /km "c 1:7 rw" >/dev/null || fail "devwlctl allow"
[ "$(probe 'true </dev/full && echo OPENED')" = OPENED ] || fail "after devwlctl allow c 1:7: $(cat "$T/probe.out")"
pass "$RT: a revocation (c 1:5) and a grant (c 1:7) reached the running container with the devwlctl answer"

# A reload that takes the grant back reaches it too.
ctl reset >/dev/null || fail "devwlctl reset"
probe 'true </dev/full && echo OPENED' >/dev/null
eperm || fail "after devwlctl reset: $(cat "$T/probe.out")"
[ "$(probe 'true </dev/zero && echo OPENED')" = OPENED ] || fail "after reset, /dev/zero: $(cat "$T/probe.out")"
pass "$RT: devwlctl reset (a reload) re-applied the file's /km to the running container"

# A planned restart (devwld(8) RESTART): the next worker programs the cgroup again from
# the state file, so a change after it still reaches the container.
gen() { ctl stats | awk '/^generation / {print $2}'; }
g=$(gen)
ctl restart >/dev/null || fail "devwlctl restart"
wait_until 60 sh -c '[ "$("$0" --socket "$1" stats | awk "/^generation / {print \$2}")" -gt "$2" ]' \
	"$DEVWLCTL" "$T/control.sock" "$g" || fail "no new worker after devwlctl restart"
mode2=$(mode_of "$id")
[ "$mode2" = "$mode" ] || fail "after the restart: $(ctl containers)"
ctl deny /km "c 1:3 rwm" >/dev/null || fail "devwlctl deny after the restart"
probe 'true </dev/null && echo OPENED' >/dev/null
eperm || fail "a revocation after the restart: $(cat "$T/probe.out")"
pass "$RT: after devwlctl restart the container is still in $mode and a revocation reaches it"

# A SIGKILL before any state write names a new container: the next worker restores it
# from the keeper's record (devwld(8) STATE), in kernel mode, so its cgroup follows the
# policy still: a revocation after the crash reaches it.
if [ "${DEVWL_TEST_HOOKS:-0}" = 1 ]; then
	touch "$T/stall"
	id2=$tag-late
	start_km "$id2"
	[ "$(probe 'true </dev/urandom && echo OPENED' "$id2")" = OPENED ] ||
		fail "$id2: /dev/urandom before the crash: $(cat "$T/probe.out")"
	worker=$(stat_of pid)
	g=$(gen)
	kill -9 "$worker"
	wait_until 60 sh -c '! kill -0 "$0" 2>/dev/null' "$worker" || fail "worker $worker did not die"
	rm -f "$T/stall"
	wait_until 60 sh -c '[ "$("$0" --socket "$1" stats | awk "/^generation / {print \$2}")" -gt "$2" ]' \
		"$DEVWLCTL" "$T/control.sock" "$g" || fail "no new worker after SIGKILL"
	grep -q "container $id2: process [0-9]* restored from the keeper's record" "$T/devwld.log" ||
		fail "$id2 was not restored from the keeper's record: $(grep "$id2" "$T/devwld.log")"
	[ "$(mode_of "$id2")" = "$mode" ] || fail "$id2 after the SIGKILL: $(ctl containers)"
	ctl deny /km "c 1:9 rwm" >/dev/null || fail "devwlctl deny after the SIGKILL"
	probe 'true </dev/urandom && echo OPENED' "$id2" >/dev/null
	eperm || fail "$id2: a revocation after the SIGKILL: $(cat "$T/probe.out")"
	pass "$RT: a container attached after the last state write is restored from the keeper's record in $mode; a revocation reaches it"
else
	echo "# skipped the SIGKILL part: it needs devwld's test hooks (-DDEVWL_TEST_HOOKS=ON)"
fi

# The full profile in kernel mode: its opens trap, only to be seen (the cgroup decides
# them). devwld says so once for the container, with what would serve it natively, and
# counts them; the answers are the kernel's.
full=$tag-full
make_bundle "$full" 'echo READY; while [ ! -e /tmp/stop ]; do sleep 0.1; done; echo DONE'
jq --slurpfile p "$HERE/../../examples/oci-hook/seccomp-runc.json" --arg lp "$T/listen.sock" '
	.linux.seccomp = ($p[0] | .listenerPath = $lp | .listenerMetadata = "node=/km")' \
	"$T/$full/config.json" >"$T/$full/config.new" && mv "$T/$full/config.new" "$T/$full/config.json" ||
	fail "jq on the full profile's config"
run_detached "$full" "$T/$full"
wait_for "$T/devwld.log" "container $full: .*kernel mode" || fail "$full: nothing about kernel mode"
[ "$(mode_of "$full")" = "$mode" ] || fail "$full with the full profile: $(ctl containers)"
for i in 1 2 3; do
	[ "$(probe 'true </dev/zero && echo OPENED' "$full")" = OPENED ] ||
		fail "$full: granted /dev/zero: $(cat "$T/probe.out")"
done
probe 'true </dev/null' "$full" >/dev/null
eperm || fail "$full: /dev/null, revoked above: $(cat "$T/probe.out")"
said=$(grep -c "container $full: $mode, and its profile traps opens too" "$T/devwld.log")
[ "$said" = 1 ] || fail "$full: said $said times that its opens trap: $(grep "$full" "$T/devwld.log")"
seen=$(stat_of kernel_seen_only_opens)
[ "$seen" -ge 4 ] || fail "kernel_seen_only_opens $seen, want the 4 opens of /dev at least"
pass "$RT: the full profile in kernel mode: said once that its opens trap only to be seen ($seen counted)"

touch "$T/rootfs/tmp/stop"
exit 0
