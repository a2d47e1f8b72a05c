#!/bin/bash
# The devwl package under a real systemd: the .debs tests/package/10-deb.sh built (its
# fixture devwl-deb leaves them in DEVWL_DEB_DIR) installed with dpkg -i in a container
# booted with this host's systemd as its PID 1, and devwld.service run exactly as it
# ships. The container is this host's root file system under a writable overlay (nothing
# is written to the host), its own pid, mount, cgroup, uts and ipc namespaces, /sys and
# /proc/sys read-only, cgroup2 alone at /sys/fs/cgroup (a cgroup of its own, delegated),
# the host's /dev, booted to sysinit.target alone (not the services the host's /etc
# enables). In it (inside(), below): the unit's capability bounding set as devwld holds
# it; runc containers against the packaged devwld in kernel mode, granted and refused,
# nodes made with the caller's ids and capabilities; a container under runc's systemd
# cgroup driver (runc --systemd-cgroup: a transient scope, systemd's own device program)
# given back its grant beyond runc's config after systemctl daemon-reload re-applied
# runc's rules (devwld(8), KERNEL MODE: drift); a hot-plug attach; a loop device
# followed across a replug (uevents); the metrics on TCP and on a unix socket
# (/etc/default/devwld); systemctl reload with a good and a bad policy; a planned restart
# and systemctl restart (the fd store: a running container's own process served, granted
# and refused, across it), then systemctl stop (the store flushed: fail closed), as
# devwld(8) EXAMPLES and RESTART describe them; devwld's lines in the journal and its
# audit file. About 70 s after package-deb (the restarts and the stop: about 7 s).
set -euo pipefail

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	exit 1
}
pass() {
	echo "ok - $*"
}

# ---------------------------------------------------------------------------------------
# Inside the container, as root, with systemd as PID 1 and the packages installed.
inside() {
	local port=$1 busybox=$2
	cd /root
	# shellcheck disable=SC2317 # the trap calls it
	in_cleanup() {
		local id
		for id in $(runc list -q 2>/dev/null); do runc delete -f "$id" >/dev/null 2>&1; done
		[ ! -f /root/loop ] || while read -r l; do losetup -d "$l" 2>/dev/null || true; done </root/loop
		true
	}
	trap 'set +e; in_cleanup' EXIT
	journal() { journalctl -q -o cat -u devwld.service --no-pager; }
	# journal_has REGEX: not `journal | grep -q`, which under pipefail fails when grep,
	# done at an early line, leaves journalctl to die of SIGPIPE on its next write.
	journal_has() { grep -q -- "$1" <<<"$(journal)"; }
	dump() {
		systemctl status devwld.service --no-pager -l 2>&1 | sed 's/^/  status: /' | tail -20
		journal | sed 's/^/  journal: /' | tail -30
	}
	die() {
		echo "FAIL: $*"
		dump
		exit 1
	}
	active() { [ "$(systemctl is-active devwld.service)" = active ]; }
	mainpid() { systemctl show -P MainPID devwld.service; }
	# until SECONDS CMD...: until CMD succeeds, at most SECONDS.
	until_ok() {
		local end=$((SECONDS + $1))
		shift
		until "$@"; do
			[ $SECONDS -lt $end ] || return 1
			sleep 0.1
		done
	}

	# The package installed, its postinst enabling and starting devwld.
	dpkg -i /root/debs/*.deb >dpkg.out 2>&1 || {
		cat dpkg.out
		die "dpkg -i"
	}
	[ "$(systemctl is-enabled devwld.service)" = enabled ] ||
		die "devwld.service is $(systemctl is-enabled devwld.service) after dpkg -i"
	until_ok 30 active || die "dpkg -i did not start devwld.service: $(systemctl is-active devwld.service)"
	pass "dpkg -i: devwld.service enabled and started (systemd $(systemctl --version | awk 'NR == 1 {print $2}'))"

	# The administrator's configuration: a policy and, in /etc/default/devwld, the
	# metrics on loopback TCP. Then a stop and start, as after any such change.
	systemctl stop devwld.service
	cat >/etc/devwl/policy.json <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/lab",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow b 7:* rw", "allow c 10:237 rwm"],
      "mknod_needs_cap": false } ],
  "containers": { "default_template": "/lab/{id}", "container_rules": ["deny b 7:* rwm"] } }
JSON
	echo "DEVWLD_OPTIONS=\"--metrics 127.0.0.1:$port\"" >/etc/default/devwld
	if [ -f /root/dropin.conf ]; then
		mkdir -p /etc/systemd/system/devwld.service.d
		cp /root/dropin.conf /etc/systemd/system/devwld.service.d/
		systemctl daemon-reload
		echo "# with the drop-in: $(tr '\n' ' ' </root/dropin.conf)"
	fi
	systemctl start devwld.service || die "systemctl start devwld"
	active || die "devwld.service is $(systemctl is-active devwld.service) after systemctl start"
	[ -S /run/devwl/listen.sock ] && [ -S /run/devwl/control.sock ] ||
		die "no sockets in /run/devwl: $(ls -l /run/devwl)"
	# Its capability bounding set is what the unit's CapabilityBoundingSet= lines add up
	# to (one a line: systemd merges them).
	want=0 n=0
	for c in $(sed -n 's/^CapabilityBoundingSet=//p' /lib/systemd/system/devwld.service); do
		bit=$(awk -v c="$c" '$1 == "#define" && $2 == c {print $3}' /usr/include/linux/capability.h)
		[ -n "$bit" ] || die "$c: no such capability in linux/capability.h"
		want=$((want | 1 << bit)) n=$((n + 1))
	done
	have=$((16#$(awk '$1 == "CapBnd:" {print $2}' "/proc/$(mainpid)/status")))
	[ "$have" = "$want" ] && [ "$n" -gt 0 ] ||
		die "devwld's CapBnd $(printf %x "$have"), the unit's $n capabilities $(printf %x "$want")"
	pass "systemctl start devwld: active, main pid $(mainpid), /run/devwl/{listen,control}.sock, bounding set the unit's $n capabilities"

	# A busybox root and a bundle per container. The container's own process opens
	# /dev/zero in a loop until /tmp/stop-ID exists in it, "N count" every 10th time and
	# "ERR count" and the shell's reason on a failed open, in ID.out: a runc exec is a new
	# process, its own connection to devwld, and would not show whether the process
	# devwld served before a restart is served after it.
	mkdir -p rootfs/{bin,proc,sys,dev,tmp,etc}
	cp "$busybox" rootfs/bin/busybox
	for a in $(rootfs/bin/busybox --list); do
		[ "$a" = busybox ] || ln -sf busybox "rootfs/bin/$a"
	done
	# start_ct ID [SLICE:PREFIX:NAME]: with the second, under runc's systemd cgroup driver
	# (runc --systemd-cgroup), in the scope PREFIX-NAME.scope of SLICE.
	start_ct() {
		local rt=(runc)
		[ -z "${2:-}" ] || rt=(runc --systemd-cgroup)
		mkdir -p "b-$1"
		(cd "b-$1" && runc spec)
		jq --arg root /root/rootfs --arg id "$1" --arg cgpath "${2:-}" '
			.root = {path: $root, readonly: false}
			| .process.capabilities |= with_entries(.value += ["CAP_DAC_OVERRIDE"])
			| .process.terminal = false
			| .process.args = ["sh", "-c",
				"n=0; while [ ! -e /tmp/stop-" + $id + " ]; do true </dev/zero || echo ERR $n;"
				+ " n=$((n + 1)); [ $((n % 10)) = 0 ] && echo N $n;"
				+ " if [ -e /tmp/cmd-" + $id + " ]; then sh /tmp/cmd-" + $id + " >/tmp/out-" + $id
				+ " 2>&1; rm /tmp/cmd-" + $id + "; fi; sleep 0.02; done"]
			| .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
				listenerPath: "/run/devwl/listen.sock",
				architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
				syscalls: [{names: ["mknod", "mknodat", "open", "openat", "openat2",
						"creat", "open_by_handle_at"], action: "SCMP_ACT_NOTIFY"},
					{names: ["io_uring_setup"], action: "SCMP_ACT_ERRNO", errnoRet: 1}]}
			| if $cgpath != "" then .linux.cgroupsPath = $cgpath else . end' \
			"b-$1/config.json" >"b-$1/c.json" && mv "b-$1/c.json" "b-$1/config.json"
		timeout 60 "${rt[@]}" run -d --bundle "b-$1" "$1" >"$1.out" 2>&1 </dev/null ||
			die "runc run $1: $(cat "$1.out")"
		until_ok 30 sh -c 'devwlctl containers | grep -q "^$0 "' "$1" ||
			die "$1 never reached devwld: $(devwlctl containers)"
	}
	probe() { timeout 30 runc exec "$1" sh -c "$2" </dev/null 2>&1 || true; }
	# in_proc ID CMD: CMD run by ID's own process, as a child of it (its seccomp filter,
	# the notify fd devwld got at its start, not a runc exec's new one), and its output.
	in_proc() {
		rm -f "rootfs/tmp/out-$1"
		printf '%s\n' "$2" >"rootfs/tmp/new-$1" && mv "rootfs/tmp/new-$1" "rootfs/tmp/cmd-$1"
		until_ok 30 sh -c '[ ! -e "$0" ]' "rootfs/tmp/cmd-$1" || return 1
		cat "rootfs/tmp/out-$1"
	}
	# The command of served(): c 1:3 granted (mknod, write), c 1:1 refused.
	SERVED='rm -f /tmp/p1 /tmp/p2; mknod /tmp/p1 c 1 3 && echo x >/tmp/p1 && echo MADE; mknod /tmp/p2 c 1 1 || echo REFUSED'
	served() { [ "$(in_proc "$1" "$SERVED" | grep -v 'Operation not permitted')" = "MADE
REFUSED" ] && grep -q 'p2: Operation not permitted' <<<"$(in_proc "$1" "$SERVED")"; }
	# ticks ID: how many times its loop has reported.
	ticks() { grep -c '^N ' "$1.out" || true; }
	# going ID: it reports 3 more times, with no failed open.
	going() {
		local t=$(($(ticks "$1") + 3))
		until_ok 30 sh -c '[ "$(grep -c "^N " "$0.out")" -ge $1 ]' "$1" $t || return 1
		! grep -q ERR "$1.out"
	}

	start_ct c1
	# Kernel mode (devwld(8) KERNEL MODE): devwld programmed c1's device cgroup, and the
	# kernel opens its granted devices in c1's own context.
	mode=$(devwlctl containers | awk '$1 == "c1" {print $5}')
	[[ $mode = kernel* ]] || die "c1 is not in kernel mode: $(devwlctl containers)"
	out=$(probe c1 'mknod /tmp/null c 1 3 && echo x >/tmp/null && head -c 4 /dev/zero | wc -c')
	[ "$out" = 4 ] || die "c1: c 1:3 made and written, /dev/zero read: '$out'"
	going c1 || die "c1's own process: $(tail -3 c1.out)"
	served c1 || die "c1's own process, c 1:3 and c 1:1: '$(in_proc c1 "$SERVED")'"
	out=$(probe c1 'mknod /tmp/mem c 1 1 && echo MADE')
	[[ $out = *"Operation not permitted"* ]] || die "c1: mknod c 1:1 (not in /lab): '$out'"
	pass "runc container c1 on /lab/c1 ($mode mode): c 1:3 granted (mknod, write), c 1:1 refused (EPERM)"
	# devwld makes nodes with the caller's file system ids and capabilities: uid 1000's
	# is uid 1000's (setfsuid, setfsgid, setgroups), root's in a directory of another
	# user's is made with root's CAP_DAC_OVERRIDE (which the containers get here), as
	# the kernel would make them for the caller.
	mkdir -m 1777 rootfs/tmp/all && mkdir -m 0755 rootfs/tmp/u1000 && chown 1000:1000 rootfs/tmp/u1000
	out=$(timeout 30 runc exec --user 1000:1000 c1 sh -c \
		'mknod /tmp/all/n c 1 3 && stat -c %u:%g /tmp/all/n' </dev/null 2>&1) || true
	[ "$out" = 1000:1000 ] || die "c1 as uid 1000: mknod in /tmp/all: '$out'"
	out=$(probe c1 'mknod /tmp/u1000/n c 1 3 && stat -c %u /tmp/u1000/n')
	[ "$out" = 0 ] || die "c1 as root: mknod in uid 1000's /tmp/u1000 (mode 0755): '$out'"
	pass "c1: nodes made as the caller: uid 1000's owned 1000:1000, root's in uid 1000's directory (CAP_DAC_OVERRIDE)"

	# runc's systemd cgroup driver (devwld(8), KERNEL MODE: drift): the container's scope
	# enforces runc's device rules as systemd's own BPF program (DeviceAllow=), which
	# systemd attaches again on systemctl daemon-reload. devwld takes that program for
	# what it is, runc's rules re-applied, and takes the cgroup over again: c 10:237
	# (/dev/loop-control), which /lab grants and runc's config does not, comes back
	# within the 5 s drift period (bound: 12 s), with a drift event saying so. No D-Bus
	# daemon needed: runc, as root, speaks to systemd on its private socket.
	t_sd=$(date +%s%N)
	start_ct sd1 system.slice:devwl:sd1
	sdrt() { timeout 30 runc --systemd-cgroup "$@" </dev/null 2>&1 || true; }
	cg=$(awk -F: '$1 == 0 {print $3}' "/proc/$(sdrt state sd1 | jq .pid)/cgroup")
	[ "$cg" = /system.slice/devwl-sd1.scope ] || die "sd1's cgroup: '$cg' (runc --systemd-cgroup)"
	mode=$(devwlctl containers | awk '$1 == "sd1" {print $5}')
	[ "$mode" = kernel-v2 ] || die "sd1 is not in kernel-v2 mode: $(devwlctl containers)"
	lc() { sdrt exec sd1 sh -c '{ true </tmp/lc; } 2>/dev/null && echo OPEN || echo REFUSED'; }
	out=$(sdrt exec sd1 sh -c 'mknod /tmp/lc c 10 237 && echo MADE')
	[ "$out" = MADE ] && [ "$(lc)" = OPEN ] || die "sd1: c 10:237 before the reload: '$out' $(lc)"
	t0=$(date +%s%N)
	systemctl daemon-reload || die "systemctl daemon-reload"
	refused=$(lc)
	until_ok 12 sh -c '[ "$(timeout 30 runc --systemd-cgroup exec sd1 sh -c "{ true </tmp/lc; } 2>/dev/null && echo OPEN" </dev/null)" = OPEN ]' ||
		die "sd1: c 10:237 still refused 12 s after systemctl daemon-reload: $(journal | grep sd1 | tail -3)"
	ms=$((($(date +%s%N) - t0) / 1000000))
	until_ok 5 grep -q '"event":"drift".*"container":"sd1"' /var/log/devwl/audit.jsonl ||
		die "no drift event of sd1 in /var/log/devwl/audit.jsonl"
	ev=$(grep '"event":"drift"' /var/log/devwl/audit.jsonl | grep '"container":"sd1"' | tail -1)
	jq -e '.changed == ["reapplied"] and .result == "taken over again" and
		(.what | test("the cgroup manager \\(systemd\\) re-applied the runtime.s device rules \\(program [0-9]+ \"sd_devices\"\\)"))' \
		<<<"$ev" >/dev/null || die "sd1's drift event: $ev"
	journal_has "container sd1: kernel mode: in its device cgroup .*: taken over again" ||
		die "no log line of sd1's take-over"
	sdrt delete -f sd1 >/dev/null || die "runc --systemd-cgroup delete -f sd1"
	pass "runc --systemd-cgroup container sd1 (devwl-sd1.scope, $mode): c 10:237 granted beyond runc's config; systemctl daemon-reload (right after: $refused): open again in $ms ms, event $(jq -c '{changed, what, result}' <<<"$ev") ($((($(date +%s%N) - t_sd) / 1000000)) ms in all)"

	# Hot-plug: a loop device the container's own node refuses, attached.
	truncate -s 1M disk
	printf DEVWLDISK | dd of=disk conv=notrunc status=none
	# loop FILE [DEV]: a loop device for FILE, noted in /root/loop for the cleanups
	# (the host's too: the devices are the host's).
	loop() {
		local dev
		dev=$(losetup ${2:+"$2"} -f --show "$1") || return 1
		echo "$dev" >>/root/loop
		echo "$dev"
	}
	LOOP=$(loop disk) || die "losetup -f"
	out=$(probe c1 "head -c 9 $LOOP")
	[[ $out != DEVWLDISK ]] || die "c1 reads $LOOP before any attach"
	devwlctl attach c1 "$LOOP" >attach.out 2>&1 || die "devwlctl attach c1 $LOOP: $(cat attach.out)"
	# (Once seen, under load, a read right after losetup came back empty: retried.)
	until_ok 10 sh -c '[ "$(runc exec c1 head -c 9 "$0" </dev/null 2>&1)" = DEVWLDISK ]' "$LOOP" ||
		die "c1 after the attach of $LOOP: '$(probe c1 "head -c 9 $LOOP")'"
	pass "devwlctl attach c1 $LOOP: the container reads it (refused before)"

	# A loop device followed by its backing file across a replug: uevents, from the
	# kernel's netlink socket, under the unit's RestrictAddressFamilies=.
	printf a-data >a.img && truncate -s 1M a.img && truncate -s 1M hold.img
	A0=$(loop a.img) || die "losetup a.img"
	# Owned by uid 1000, mode 0640: devwld chowns and then chmods a node not its own.
	devwlctl attach --uid 1000 --gid 1000 --mode 0640 c1 loop:/root/a.img /dev/xdisk >attach.out 2>&1 ||
		die "devwlctl attach c1 loop:/root/a.img: $(cat attach.out)"
	[ "$(probe c1 'head -c 6 /dev/xdisk')" = a-data ] || die "c1 reading /dev/xdisk: $(probe c1 'ls -l /dev/xdisk')"
	[ "$(probe c1 'stat -c "%u:%g %a" /dev/xdisk')" = "1000:1000 640" ] ||
		die "/dev/xdisk in c1: $(probe c1 'ls -ln /dev/xdisk')"
	losetup -d "$A0"
	until_ok 10 sh -c '[ "$(runc exec c1 sh -c "test -e /dev/xdisk || echo ABSENT" </dev/null)" = ABSENT ]' ||
		die "/dev/xdisk stays in c1 after losetup -d $A0"
	# Its old minor taken by another file, so that a.img comes back on a new one.
	losetup "$A0" hold.img && echo "$A0" >>/root/loop
	A1=$(loop a.img) || die "losetup a.img again"
	until_ok 10 sh -c '[ "$(runc exec c1 stat -c %t:%T /dev/xdisk </dev/null 2>/dev/null)" = "$0" ]' 		"$(stat -c %t:%T "$A1")" || die "/dev/xdisk in c1 never became $A1's: $(probe c1 'ls -l /dev/xdisk')"
	[ "$(probe c1 'head -c 6 /dev/xdisk')" = a-data ] || die "c1 reading /dev/xdisk after the replug"
	[ "$(probe c1 'stat -c "%u:%g %a" /dev/xdisk')" = "1000:1000 640" ] ||
		die "/dev/xdisk in c1 after the replug: $(probe c1 'ls -ln /dev/xdisk')"
	! journal_has 'cannot receive uevents' || die "devwld could not receive uevents"
	pass "loop:/root/a.img at /dev/xdisk (1000:1000, 0640) in c1 followed across a replug ($A0, then $A1): gone, back with a-data, owner and mode"

	# The metrics on TCP, as /etc/default/devwld asked.
	journal_has "metrics: serving GET /metrics at 127.0.0.1:$port" ||
		die "the journal does not say where the metrics are served"
	curl -sf "http://127.0.0.1:$port/metrics" >metrics.tcp || die "curl http://127.0.0.1:$port/metrics"
	grep -q '^devwl_' metrics.tcp || die "no devwl_ series at 127.0.0.1:$port: $(head -5 metrics.tcp)"
	pass "metrics on TCP: $(grep -c '^devwl_' metrics.tcp) samples at 127.0.0.1:$port"

	# systemctl reload: a good policy (c 1:7 granted), then a bad one (kept running, the
	# old policy kept, the reason in the journal).
	out=$(probe c1 'mknod /tmp/full c 1 7 && echo MADE')
	[[ $out = *"Operation not permitted"* ]] || die "c1: c 1:7 before the reload: '$out'"
	sed -i 's/"allow c 1:9 rwm"/"allow c 1:9 rwm", "allow c 1:7 rwm"/' /etc/devwl/policy.json
	systemctl reload devwld.service || die "systemctl reload with a good policy"
	out=$(probe c1 'mknod /tmp/full c 1 7 && echo MADE')
	[ "$out" = MADE ] || die "c1: c 1:7 after the reload: '$out'"
	pass "systemctl reload, a good policy: c 1:7 granted to the running c1"
	pid=$(mainpid)
	cp /etc/devwl/policy.json policy.good
	echo '{ "version": 1, "nodes": [ { "path": "/lab", "rules": ["allow x 1:1 r"] } ] }' \
		>/etc/devwl/policy.json
	if systemctl reload devwld.service 2>reload.err; then
		die "systemctl reload with a bad policy succeeded"
	fi
	active && [ "$(mainpid)" = "$pid" ] ||
		die "after the bad reload: $(systemctl is-active devwld.service), main pid $(mainpid) (was $pid)"
	until_ok 10 sh -c 'journalctl -q -o cat -u devwld.service | grep -q "reload of /etc/devwl/policy.json failed, keeping the current policy"' ||
		die "no reason for the failed reload in the journal"
	out=$(probe c1 'rm -f /tmp/full; mknod /tmp/full c 1 7 && echo MADE')
	[ "$out" = MADE ] || die "c1: c 1:7 after the bad reload: '$out'"
	pass "systemctl reload, a bad policy: fails, devwld runs on with the old one; journal: $(journal |
		grep -m1 'reload of /etc/devwl/policy.json failed' | cut -c1-100)..."

	# A planned restart through systemd (the unit's comment; devwld(8) RESTART): the
	# keeper, systemd's main process, executes itself again; c1 served all along.
	gen=$(devwlctl stats | awk '$1 == "generation" {print $2}')
	systemctl kill --kill-whom=main -s USR2 devwld.service
	until_ok 30 sh -c '[ "$(devwlctl stats 2>/dev/null | awk '"'"'$1 == "generation" {print $2}'"'"')" = $0 ]' \
		$((gen + 1)) || die "no new worker after SIGUSR2: $(devwlctl stats)"
	active && [ "$(mainpid)" = "$pid" ] || die "after the planned restart: $(mainpid), was $pid"
	out=$(probe c1 "head -c 9 $LOOP; echo; mknod /tmp/n2 c 1 3 && echo MADE")
	[ "$out" = "DEVWLDISK
MADE" ] || die "c1 after the planned restart: '$out'"
	going c1 || die "c1's own process after the planned restart: $(grep -m3 ERR c1.out)"
	pass "planned restart (systemctl kill -s USR2): main pid $pid kept, worker generation $((gen + 1)), c1's process served throughout ($(ticks c1)0 opens, none failed), its attach kept"

	# systemctl restart: a stop and a start, the keeper killed. devwld(8) EXAMPLES and
	# RESTART: the notify fds wait in systemd's file descriptor store, and the new devwld
	# takes them back; c1's own process is served throughout (its calls wait), granted
	# and refused as before. A container started afterwards is served. The metrics move
	# to a unix socket.
	cp policy.good /etc/devwl/policy.json
	echo "DEVWLD_OPTIONS=\"--metrics unix:/run/devwl/metrics.sock\"" >/etc/default/devwld
	t0=$(date +%s%N)
	systemctl restart devwld.service || die "systemctl restart devwld"
	active || die "devwld.service $(systemctl is-active devwld.service) after systemctl restart"
	[ "$(mainpid)" != "$pid" ] || die "systemctl restart kept main pid $pid"
	until_ok 10 sh -c "journalctl -q -o cat -u devwld.service | grep -q 'keeper: [1-9][0-9]* container processes taken back from systemd.s file descriptor store'" ||
		die "the new devwld took nothing from the fd store: $(journal | grep -m1 'taken back')"
	going c1 || die "c1's own process after systemctl restart: $(grep -m2 ERR -A1 c1.out) (the fd store)"
	served c1 || die "c1's own process after systemctl restart: '$(in_proc c1 "$SERVED")'"
	pass "systemctl restart: new main pid $(mainpid); c1's own process served throughout ($(ticks c1)0 opens, none failed), c 1:3 granted, c 1:1 refused (EPERM): its notify fd kept in systemd's fd store ($(journal | grep 'taken back' | tail -1 | sed 's/.*keeper: //'); $((($(date +%s%N) - t0) / 1000000)) ms)"
	start_ct c2
	out=$(probe c2 'rm -f /tmp/null /tmp/mem; mknod /tmp/null c 1 3 && echo x >/tmp/null && echo OK; mknod /tmp/mem c 1 1')
	[[ $out = *OK* && $out = *"mem: Operation not permitted"* ]] || die "c2 after systemctl restart: '$out'"
	pass "a container started after systemctl restart: c2 granted and refused"

	[ "$(stat -c %a /run/devwl/metrics.sock)" = 600 ] ||
		die "/run/devwl/metrics.sock: mode $(stat -c %a /run/devwl/metrics.sock)"
	curl -sf --unix-socket /run/devwl/metrics.sock http://localhost/metrics >metrics.unix ||
		die "curl --unix-socket /run/devwl/metrics.sock"
	grep -q '^devwl_' metrics.unix || die "no devwl_ series on the unix socket"
	! curl -sf "http://127.0.0.1:$port/metrics" >/dev/null 2>&1 || die "TCP still served"
	pass "metrics on unix:/run/devwl/metrics.sock (mode 0600): $(grep -c '^devwl_' metrics.unix) samples"

	# The journal holds devwld's own lines (its standard error, the journal's stream);
	# the audit file is in its LogsDirectory.
	journalctl -q -o cat -u devwld.service -t devwld >journal.out
	for want in "ready: listening on /run/devwl/listen.sock" "container c2: node /lab/c2" \
		"metrics: serving GET /metrics at unix:/run/devwl/metrics.sock"; do
		grep -qF "$want" journal.out || die "journalctl -u devwld -t devwld has no '$want'"
	done
	grep -q c2 /var/log/devwl/audit.jsonl || die "no record of c2 in /var/log/devwl/audit.jsonl"
	pass "journalctl -u devwld: $(wc -l <journal.out) lines of devwld's; c2's records in /var/log/devwl/audit.jsonl"

	# systemctl stop flushes the store: c1's process then fails closed (ENOSYS), and
	# the devwld started afterwards has nothing of it to take back.
	t0=$(date +%s%N) taken=$(journal | grep -c 'taken back') || true
	systemctl stop devwld.service || die "systemctl stop devwld"
	until_ok 30 grep -q 'Function not implemented' c1.out ||
		die "c1's process after systemctl stop: $(tail -2 c1.out) (devwld(8): ENOSYS, fail closed)"
	systemctl start devwld.service || die "systemctl start devwld"
	[ "$(journal | grep -c 'taken back')" = "$taken" ] ||
		die "the store survived systemctl stop: $(journal | grep 'taken back' | tail -1)"
	pass "systemctl stop: the fd store flushed, c1's process fails closed (ENOSYS); started again afresh ($((($(date +%s%N) - t0) / 1000000)) ms)"
	echo INSIDE-PASS
}

if [ "${1:-}" = inside ]; then
	shift
	inside "$@"
	exit
fi

# ---------------------------------------------------------------------------------------
# On the host: the container, booted.
[ "$(id -u)" -eq 0 ] || skip "not root: a container with systemd as its PID 1 needs root"
debs=${DEVWL_DEB_DIR:?DEVWL_DEB_DIR names where 10-deb.sh left the packages}
for cmd in unshare nsenter pivot_root runc jq curl losetup; do
	command -v $cmd >/dev/null || skip "$cmd not installed"
done
[ -x /lib/systemd/systemd ] || skip "systemd not installed (/lib/systemd/systemd)"
ls "$debs"/devwl_*.deb >/dev/null 2>&1 ||
	skip "no packages in $debs: package-deb (tests/package/10-deb.sh) did not build them"
BUSYBOX=$(command -v busybox) || skip "busybox not installed"
grep -q 'statically linked' <<<"$(file -L "$BUSYBOX")" || BUSYBOX=/bin/busybox
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	skip "the kernel has no overlayfs (the container's root is one)"
grep -qw cgroup2 /proc/filesystems || skip "the kernel has no cgroup2"
unshare --cgroup true 2>/dev/null || skip "the kernel has no cgroup namespaces"

# A cgroup2 hierarchy of this host's, where the container's cgroup goes: at its root, so
# that no process of the host is in the cgroup the container's tree hangs from.
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
T=$(mktemp -d /tmp/devwl-systemd.XXXXXX)
chmod 755 "$T"
CG=
CT=
LAUNCHER=
cleanup() {
	local status=$? l
	trap - EXIT
	set +e
	if [ -n "$CT" ] && kill -0 "$CT" 2>/dev/null; then
		cat "/proc/$CT/root/root/loop" 2>/dev/null >"$T/loop" || true
		kill -RTMIN+4 "$CT" 2>/dev/null # systemd: power off (in a container, exit)
		for _ in $(seq 100); do kill -0 "$CT" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$CT" 2>/dev/null || true
	fi
	[ -z "$LAUNCHER" ] || wait "$LAUNCHER" 2>/dev/null || true
	[ ! -f "$T/loop" ] || while read -r l; do losetup -d "$l" 2>/dev/null || true; done <"$T/loop"
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		# Deepest first; each empty once the namespace's processes are gone.
		for _ in $(seq 50); do
			find "$CG" -depth -type d -exec rmdir {} + 2>/dev/null
			[ -d "$CG" ] || break
			sleep 0.1
		done
		[ ! -d "$CG" ] || echo "cleanup: $CG left"
	fi
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

[ -n "$cg2" ] || skip "no cgroup2 hierarchy mounted on this host (systemd in the container wants one)"
CG=$cg2/devwl-systemd-$$
mkdir "$CG" || skip "cannot make a cgroup in $cg2"

port=$((20000 + $$ % 20000))
cp "$0" "$T/test.sh"
# DEVWL_UNIT_DROPIN: lines for a drop-in of devwld.service, for an experiment with the
# unit (CapabilityBoundingSet=~CAP_MKNOD: what breaks without it); not set in the suite.
export T CG DEBS=$debs DROPIN=${DEVWL_UNIT_DROPIN:-}
# The container's PID 1: this shell, in its namespaces, mounts its root and becomes
# systemd. Its output (systemd's) goes to $T/boot.log.
# shellcheck disable=SC2016 # the inner bash expands them
setsid bash -c '
	echo $$ >"$CG/cgroup.procs" || exit 1
	exec unshare --mount --pid --fork --cgroup --uts --ipc --propagation private bash -euc "$1"
' launcher '
	R=$T/root
	mkdir -p "$R" "$T/ovl"
	mount -t tmpfs -o mode=755 tmpfs "$T/ovl"
	mkdir "$T/ovl/upper" "$T/ovl/work"
	mount -t overlay overlay -o "lowerdir=/,upperdir=$T/ovl/upper,workdir=$T/ovl/work" "$R"
	mount -t proc proc "$R/proc"
	mount --bind "$R/proc/sys" "$R/proc/sys"
	mount -o remount,bind,ro "$R/proc/sys"
	if [ -e "$R/proc/sysrq-trigger" ]; then
		mount --bind "$R/proc/sysrq-trigger" "$R/proc/sysrq-trigger"
		mount -o remount,bind,ro "$R/proc/sysrq-trigger"
	fi
	mount -t sysfs -o ro sysfs "$R/sys"
	mount -t cgroup2 -o nsdelegate cgroup2 "$R/sys/fs/cgroup" 2>/dev/null ||
		mount -t cgroup2 cgroup2 "$R/sys/fs/cgroup"
	mount --rbind /dev "$R/dev"
	# PID 1 writes to /dev/console: here a file of the test, not the console of the
	# host.
	touch "$T/console"
	mount --bind "$T/console" "$R/dev/console"
	for d in run tmp; do mount -t tmpfs -o mode=755 tmpfs "$R/$d"; done
	chmod 1777 "$R/tmp"
	mkdir -p "$R/root/debs" "$R/etc/systemd/system"
	cp "$DEBS"/devwl_*.deb "$DEBS"/libdevwl0_*.deb "$R/root/debs/"
	cp "$T/test.sh" "$R/root/test.sh"
	[ -z "$DROPIN" ] || printf "[Service]\n%s\n" "$DROPIN" >"$R/root/dropin.conf"
	rm -f "$R/etc/default/devwld"
	# A booted Debian as installed: no policy-rc.d (a Docker image has one refusing every
	# start, which would keep the postinst from starting devwld). And no man-db index
	# update at dpkg -i (half a minute of man pages, nothing of the test).
	rm -f "$R/usr/sbin/policy-rc.d" "$R/var/lib/man-db/auto-update"
	# No package of ours in the copy of the dpkg database (10-deb.sh purged them).
	# Booted to a target of sysinit.target alone: not the host services its /etc enables.
	printf "%s\n" "[Unit]" "Description=devwl test: sysinit.target and no more" \
		"Requires=sysinit.target" "After=sysinit.target" "AllowIsolate=yes" \
		>"$R/etc/systemd/system/devwl-test.target"
	# What would reach past the container: udev (uevents for the host), sysctl, modules.
	for u in systemd-udevd.service systemd-udev-trigger.service systemd-udev-settle.service \
		systemd-udevd-control.socket systemd-udevd-kernel.socket systemd-sysctl.service \
		systemd-modules-load.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount \
		systemd-firstboot.service systemd-machine-id-commit.service; do
		ln -sf /dev/null "$R/etc/systemd/system/$u"
	done
	cd "$R"
	mkdir -p .oldroot
	pivot_root . .oldroot
	umount -l /.oldroot
	rmdir /.oldroot
	exec env -i container=devwl-test PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		/lib/systemd/systemd --unit=devwl-test.target
' >"$T/boot.log" 2>&1 </dev/null &
LAUNCHER=$!
# The namespace's PID 1: the child of unshare (which replaced the launcher shell).
for _ in $(seq 100); do
	CT=$(awk '{print $1}' "/proc/$LAUNCHER/task/$LAUNCHER/children" 2>/dev/null) || CT=
	[ -n "$CT" ] && [ "$(readlink "/proc/$CT/exe" 2>/dev/null)" = /usr/lib/systemd/systemd ] && break
	kill -0 "$LAUNCHER" 2>/dev/null || break
	sleep 0.1
done
[ -n "$CT" ] && kill -0 "$CT" 2>/dev/null || {
	cat "$T/boot.log"
	fail "the container did not start systemd"
}
in_ct() {
	nsenter -t "$CT" -m -u -i -p -C -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 SYSTEMD_PAGER= "$@"
}
for _ in $(seq 300); do
	[ -S "/proc/$CT/root/run/systemd/private" ] && break
	kill -0 "$CT" 2>/dev/null || break
	sleep 0.1
done
state=$(in_ct timeout 60 systemctl is-system-running --wait 2>&1) || true
case $state in
running | degraded) ;;
*)
	tail -40 "$T/boot.log" "$T/console"
	fail "systemd in the container: '$state'"
	;;
esac
pass "systemd $(in_ct systemctl --version | awk 'NR == 1 {print $2}') booted as PID 1 in a container ($state$(
	[ "$state" = running ] || echo ": $(in_ct systemctl --failed --plain --no-legend | awk '{print $1}' | tr '\n' ' ')"))"

rc=0
in_ct bash /root/test.sh inside "$port" "$BUSYBOX" || rc=$?
[ $rc = 0 ] || fail "inside the container (status $rc)"
echo PASS
