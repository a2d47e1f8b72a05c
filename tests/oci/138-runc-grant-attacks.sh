# The grant attacks of tests/oci/137 from inside real runc containers served by devwld: a
# grant lifts the device policy and nothing else (devwld(8), GRANTS). Each attack runs as
# a runc exec with runc's default capabilities (one more where said) beside a container
# init holding every capability, and every answer must be the kernel's own: that of the
# same container without devwl (native), whose runc device rules grant what the policy
# grants. The setups:
#   full    the full profile (every open traps); devwld programs the container's device
#           cgroup with its node and answers granted opens CONTINUE
#   kernel  the mknod-only profile (kernel mode): no open traps
#   behalf  the full profile under --kernel-mode=never: devwld opens granted devices on
#           the container's behalf, with its credential (as for a non-root runtime). A
#           container in the host's pid namespace starts only if devwld can tell that its
#           procfs is its own (runc's init opens its exec fifo through /proc/self/fd),
#           also where a security module keeps the host's pid 1 from devwld.
# 1. /proc/PID/mem, directly and through /proc/self/root, of the container's init, and of
#    a host root process and devwld from containers that see the host's processes (its
#    /proc bound in; the host's pid namespace): EACCES without CAP_SYS_PTRACE. An fd that
#    opens would be written to (the probe writes a byte back), but none may open.
# 2. /dev/kmsg granted for reading, kernel.dmesg_restrict=1: EPERM without CAP_SYSLOG,
#    opened with it.
# 3. Landlock: a confined process gets EACCES for granted devices and walked paths
#    outside its domain. Not behalf: a Landlock domain cannot be seen from outside, and an
#    open on behalf does not keep it (devwld(8), GRANTS).
# 4. FUSE in a user namespace in the container: mounted with a granted /dev/fuse opened
#    there (the probe's own mount with fd=; fuse2fs is oci-137's). Not behalf: FUSE takes
#    no fd opened by devwld.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PROBE=$OCI_BIN/probe-static
KM_PROFILE=$HERE/../../examples/oci-hook/seccomp-mknod-only.json
[ -x "$PROBE" ] || fail "$PROBE not built (the build should have made it)"
[ -f "$KM_PROFILE" ] || fail "no $KM_PROFILE"

restrict=$(cat /proc/sys/kernel/dmesg_restrict) || skip "no kernel.dmesg_restrict"
# The sysctl back as it was, then lib.sh's cleanup with the test's status.
restore_restrict() {
	local st=$?
	echo "$restrict" >/proc/sys/kernel/dmesg_restrict
	(exit "$st")
	cleanup
}
trap restore_restrict EXIT
echo 1 >/proc/sys/kernel/dmesg_restrict || skip "cannot set kernel.dmesg_restrict"

# runc's default devices, /dev/kmsg for reading and /dev/fuse; the native containers get
# the last two as runc device rules.
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers",
               "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:7 rwm",
                         "allow c 1:8 rwm", "allow c 1:9 rwm", "allow c 5:0 rwm",
                         "allow c 5:2 rwm", "allow c 136:* rwm", "allow c 1:11 r",
                         "allow c 10:229 rw"] } ] }
JSON
native_devices='[{allow: true, type: "c", major: 1, minor: 11, access: "r"},
	{allow: true, type: "c", major: 10, minor: 229, access: "rw"}]'
make_rootfs
ROOT=$T/rootfs
cp "$PROBE" "$ROOT/bin/probe" || fail "cp $PROBE"
mknod -m 644 "$ROOT/tmp/kmsg" c 1 11 && mknod -m 666 "$ROOT/tmp/fuse" c 10 229 &&
	mknod -m 666 "$ROOT/tmp/zero" c 1 5 || fail "mknod in the root file system"
echo data >"$ROOT/tmp/file"
mkdir "$ROOT/tmp/mnt" "$ROOT/hostproc"
sleep 1000000 &
victim=$!
CHILD_PIDS+=("$victim")

# Every capability this test holds (a host may withhold some), in bit order.
CAP_NAMES=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP
	LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER
	SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE
	SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP
	MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF
	CHECKPOINT_RESTORE)
bnd=$((16#$(awk '$1 == "CapBnd:" {print $2}' /proc/self/status)))
ALL_CAPS=$(for i in "${!CAP_NAMES[@]}"; do
	((bnd >> i & 1)) && echo "\"CAP_${CAP_NAMES[i]}\""
done | jq -sc .)
DEFAULT_CAPS='["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"]'
SYSLOG_CAPS='["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE","CAP_SYSLOG"]'
# Mapping root into a user namespace takes CAP_SETFCAP (Docker's default set has it).
SETFCAP_CAPS='["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE","CAP_SETFCAP"]'

# container HOW KIND: start the container ID=HOW-KIND-$$ for setup HOW, its init (every
# capability) sleeping. KIND: own (its own pid namespace), hostpid (the host's), hostproc
# (its own, with the host's /proc bound at /hostproc, as monitoring agents have).
container() {
	local id=$1-$2-$$ sc='' kind=.
	case $1 in
	native) sc='del(.linux.seccomp) | .linux.resources.devices += '"$native_devices" ;;
	full | behalf) sc=. ;;
	kernel)
		sc=$(jq -c '.listenerPath = $lp | .listenerMetadata = "mode=kernel"' \
			--arg lp "$T/listen.sock" "$KM_PROFILE") || fail "jq on $KM_PROFILE"
		sc=".linux.seccomp = $sc"
		;;
	esac
	case $2 in
	hostpid) kind='.linux.namespaces |= map(select(.type != "pid"))' ;;
	hostproc) kind='.mounts += [{destination: "/hostproc", type: "bind", source: "/proc",
		options: ["rbind"]}]' ;;
	esac
	make_bundle "$id" 'exec sleep 1000000' "$sc | $kind | .process.capabilities =
		{bounding: $ALL_CAPS, effective: $ALL_CAPS, permitted: $ALL_CAPS}"
	run_detached "$id" "$T/$id"
}

# attack ID CAPS OPS...: the probe's answers to OPS in container ID, run with the
# capabilities CAPS (a JSON list), fd numbers and bytes read left out.
attack() {
	local id=$1 caps=$2
	shift 2
	jq --argjson caps "$caps" '.process | .args = ["/bin/probe"] + $ARGS.positional
		| .capabilities = {bounding: $caps, effective: $caps, permitted: $caps}' \
		"$T/$id/config.json" --args "$@" >"$T/process.json" || fail "jq on the process"
	timeout 120 runc exec -p "$T/process.json" "$id" <&- 2>"$T/exec.err" >"$T/exec.out" ||
		fail "runc exec in $id: $(cat "$T/exec.err" "$T/exec.out")"
	sed 's/ fd=[0-9]*//; s/ read=.*//' "$T/exec.out"
}

# attached ID MODE: devwlctl containers lists ID in MODE (its prefix).
attached() { ctl containers | awk -v id="$1" -v m="$2" '$1 == id && index($5, m) == 1 {f = 1} END {exit !f}'; }

# mapped PID: the start of PID's first mapping (the host reads it; a poke writes its own
# byte back there).
mapped() { awk 'NR == 1 {split($1, r, "-"); print r[1]}' "/proc/$1/maps"; }

# Landlock here at all? The host's answer, without devwl.
landlock=$("$PROBE" landlock /)
case $landlock in
ok) ;;
ENOSYS | EOPNOTSUPP) echo "# skipped the Landlock part: no Landlock in this kernel ($landlock)" ;;
*) fail "landlock on the host: $landlock" ;;
esac
ll_ops=(landlock /bin /etc /proc ';' open /tmp/zero rdonly ';'
	open /proc/self/root/tmp/zero rdonly ';' open /dev/null rdwr ';' open /tmp/fuse rdwr ';'
	open /etc/passwd rdonly ';' open /tmp/file rdonly ';' open /proc/self/root/tmp/file rdonly)
ll_want=$(printf '%s\n' ok EACCES EACCES EACCES EACCES "ok rdev=0:0 type=f cloexec=0" EACCES EACCES)

# host_mem HOW ID PROC: from container ID of setup HOW, where PROC is the host's procfs,
# the memory of a host root process and of devwld (the test's shell without devwld),
# also through /proc/self/root: EACCES.
host_mem() {
	local super=${DEVWLD_PID:-$$} out
	out=$(attack "$2" "$DEFAULT_CAPS" poke "/proc/self/root$3/$victim/mem" "$(mapped "$victim")" \
		';' poke "/proc/self/root$3/$super/mem" "$(mapped "$super")" \
		';' poke "$3/$victim/mem" "$(mapped "$victim")")
	[ "$out" = "$(printf 'EACCES\nEACCES\nEACCES')" ] ||
		fail "$1: from $2, the memory of host root processes: $(tr '\n' '|' <<<"$out")"
}

# run_setup HOW: every check in the containers of setup HOW.
run_setup() {
	local how=$1 own=$1-own-$$ kinds="own hostproc hostpid" kind pid addr out mode
	for kind in $kinds; do
		container "$how" "$kind"
	done
	case $how in
	native) ;;
	behalf) mode=authoritative ;;
	*) mode=kernel ;;
	esac
	for kind in $kinds; do
		[ "$how" = native ] || wait_until 60 attached "$how-$kind-$$" "$mode" ||
			fail "$how-$kind-$$ not attached in $mode: $(ctl containers)"
	done

	pid=$(runc state "$own" | jq .pid) && addr=$(mapped "$pid") || fail "$own: its init"
	out=$(attack "$own" "$DEFAULT_CAPS" poke /proc/1/mem "$addr" ';' \
		poke /proc/self/root/proc/1/mem "$addr" ';' open /proc/self/root/proc/1/mem rdonly)
	[ "$out" = "$(printf 'EACCES\nEACCES\nEACCES')" ] ||
		fail "$how: the memory of the container's init: $(tr '\n' '|' <<<"$out")"
	host_mem "$how" "$how-hostproc-$$" /hostproc
	host_mem "$how" "$how-hostpid-$$" /proc
	pass "$how: /proc/PID/mem of the container's init, a host root process and devwld, also through /proc/self/root: EACCES"

	out=$(attack "$own" "$DEFAULT_CAPS" open /tmp/kmsg rdonly)
	[ "$out" = EPERM ] || fail "$how: /dev/kmsg without CAP_SYSLOG: $out"
	out=$(attack "$own" "$SYSLOG_CAPS" open /tmp/kmsg rdonly)
	[ "$out" = "ok rdev=1:11 type=c cloexec=0" ] || fail "$how: /dev/kmsg with CAP_SYSLOG: $out"
	pass "$how: /dev/kmsg under dmesg_restrict: EPERM without CAP_SYSLOG, opened with it"

	[ "$how" = behalf ] && return 0
	if [ "$landlock" = ok ]; then
		out=$(attack "$own" "$DEFAULT_CAPS" "${ll_ops[@]}")
		[ "$out" = "$ll_want" ] || fail "$how: Landlock: $(tr '\n' '|' <<<"$out")," \
			"want $(tr '\n' '|' <<<"$ll_want")"
		pass "$how: a Landlock-confined process: EACCES for granted devices and walked paths outside its domain"
	fi

	out=$(attack "$own" "$SETFCAP_CAPS" userns ';' fusemount /tmp/fuse /tmp/mnt)
	[ "$out" = "$(printf 'ok\nok')" ] || fail "$how: FUSE in a user namespace: $(tr '\n' '|' <<<"$out")"
	pass "$how: FUSE mounted in a user namespace with a granted /dev/fuse opened there"
}

# allowed ID DEVICE: the audit has devwld allowing DEVICE to container ID, a trapped call
# (not the kernel's report of an open it allowed, "source":"kernel": a hybrid host's v1
# cgroup reports too, devwld(8) KERNEL MODE).
allowed() {
	jq -se --arg id "$1" --arg dev "$2" \
		'any(.[]; .container == $id and .decision == "allow" and .device == $dev and
			.source != "kernel")' \
		"$T/audit.jsonl" >/dev/null
}

# The kernel's answers first: the checks hold without devwl, or the test proves nothing.
run_setup native
start_devwld
run_setup full
run_setup kernel
# The full profile trapped the granted open, the mknod-only one did not.
allowed "full-own-$$" "c 1:11" && ! allowed "kernel-own-$$" "c 1:11" ||
	fail "audit: $(grep -- "-own-$$" "$T/audit.jsonl" | tail -5)"
kill "$DEVWLD_PID" && wait "$DEVWLD_PID"
DEVWLD_PID=
rm -f "$T/listen.sock" "$T/control.sock"
start_devwld --kernel-mode=never
run_setup behalf
allowed "behalf-own-$$" "c 1:11" || fail "audit: $(grep "behalf-own-$$" "$T/audit.jsonl" | tail -5)"
exit 0
