#!/bin/bash
# The default containment of a root command (devwl-run(1), CONTAINMENT): the escape
# capabilities are gone from every set and nothing else is; the command has a mount
# namespace of its own in which every cgroup mount is read-only, and ours is untouched;
# it cannot look into devwl-run through /proc; an inherited directory fd is refused; and
# ordinary work (files, pipes, exit status, granted devices) goes on as before.
set -u
. "$(dirname "$0")/lib.sh"
live_init "capabilities, namespaces, device cgroup"
mknod -m 666 "$T/zero" c 1 5 || skip "cannot mknod in $T"
# CAP_SYS_ADMIN CAP_BPF CAP_SYS_MODULE CAP_SYS_BOOT CAP_SYS_RAWIO CAP_SYS_PTRACE
# CAP_DAC_READ_SEARCH, and a few that stay: CAP_CHOWN CAP_DAC_OVERRIDE CAP_SETUID
# CAP_NET_RAW CAP_MKNOD
gone="21 39 16 22 17 19 2"
kept="0 1 7 13 27"
bit() { echo $(((0x$1 >> $2) & 1)); }
ours=$(awk '/^CapEff/ {print $2}' /proc/self/status)
for b in $gone $kept; do
	[ "$(bit "$ours" "$b")" = 1 ] || skip "we do not hold capability $b ourselves"
done

out=$("$RUN" -- sh -c "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status; \
	echo ns \$(readlink /proc/self/ns/mnt); \
	awk '\$9 ~ /^cgroup2?\$/ {print \"mnt\", \$5, \$6}' /proc/self/mountinfo; \
	ls /proc/\$PPID/root/ >/dev/null 2>&1 && echo 'saw devwl-run root'; true" 2>"$T/err")
rc=$?
[ "$rc" = 0 ] || fail "exited $rc: $(cat "$T/err")"
grep -q "WARNING" "$T/err" && fail "a warning by default: $(cat "$T/err")"
for set in CapEff CapPrm CapBnd; do
	v=$(awk -v s="$set:" '$1 == s {print $2}' <<<"$out")
	for b in $gone; do
		[ "$(bit "$v" "$b")" = 0 ] || fail "$set still has capability $b: $v"
	done
	for b in $kept; do
		[ "$(bit "$v" "$b")" = 1 ] || fail "$set lost capability $b: $v"
	done
done
for set in CapInh CapAmb; do
	v=$(awk -v s="$set:" '$1 == s {print $2}' <<<"$out")
	for b in $gone; do
		[ "$(bit "$v" "$b")" = 0 ] || fail "$set still has capability $b: $v"
	done
done
[ "$(awk '$1 == "ns" {print $2}' <<<"$out")" != "$(readlink /proc/self/ns/mnt)" ] ||
	fail "the command shares our mount namespace"
grep -q '^mnt ' <<<"$out" || fail "the command sees no cgroup mount: $out"
awk '$1 == "mnt" && $3 !~ /^ro(,|$)/ {print; bad = 1} END {exit !bad}' <<<"$out" &&
	fail "a cgroup mount is writable to the command"
awk '$9 ~ /^cgroup2?$/ && $6 ~ /^ro(,|$)/ {print; bad = 1} END {exit !bad}' /proc/self/mountinfo &&
	fail "our own cgroup mounts became read-only"
grep -q "saw devwl-run root" <<<"$out" && fail "the command looked into devwl-run's root"

# An inherited directory would reach the host's writable cgroup mounts: refused.
exec 7<"$T"
"$RUN" -- true 2>"$T/err" && fail "a command inheriting a directory fd ran"
grep -q "fd 7: .*directory" "$T/err" || fail "no reason for refusing fd 7: $(cat "$T/err")"
exec 7<&-
"$RUN" -- true 2>"$T/err" || fail "without fd 7: $(cat "$T/err")"

# Ordinary work goes on: files, a pipeline, the exit status, a granted device.
out=$("$RUN" -- sh -c "echo hello >$T/f && tr a-z A-Z <$T/f | cat; \
	$PROBE open $T/zero rdonly; exit 7" 2>"$T/err")
rc=$?
[ "$rc" = 7 ] || fail "exit status $rc, expected 7: $(cat "$T/err")"
[ "$(sed -n 1p <<<"$out")" = HELLO ] || fail "file and pipe: $out"
[[ "$(sed -n 2p <<<"$out")" == "ok fd="*" rdev=1:5 "*"read=00000000" ]] || fail "granted zero: $out"

# --connect execs in place after the same containment: devwld serves it, and the command
# cannot move itself out of the shared baseline.
D=$DEVWL_BUILD/supervisor/devwld
V1=$(awk '$9 == "cgroup" && $NF ~ /(^|,)devices(,|$)/ {print $5; exit}' /proc/self/mountinfo)
if [ -x "$D" ] && [ -n "$V1" ]; then
	"$D" --listen "$T/l.sock" --control "$T/c.sock" --state "$T/state" 2>"$T/devwld.log" &
	dpid=$!
	trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null; rm -rf "$T"' EXIT
	while [ ! -S "$T/l.sock" ] || [ ! -S "$T/c.sock" ]; do
		kill -0 $dpid 2>/dev/null || fail "devwld did not start: $(cat "$T/devwld.log")"
		sleep 0.05
	done
	out=$(DEVWL_BASELINE=v1 "$RUN" --connect "$T/l.sock" -- sh -c "grep ^CapEff /proc/self/status; \
		echo \$\$ >$V1/cgroup.procs && echo left; \
		awk -F: '\$2 ~ /(^|,)devices(,|\$)/ {print \$3}' /proc/self/cgroup; \
		$PROBE open $T/zero rdonly" 2>"$T/err")
	rc=$?
	[ "$rc" = 0 ] || fail "--connect exited $rc: $(cat "$T/err")"
	v=$(awk '/^CapEff/ {print $2}' <<<"$out")
	[ "$(bit "$v" 21)" = 0 ] || fail "--connect: the command kept CAP_SYS_ADMIN: $v"
	grep -q '^left$' <<<"$out" && fail "--connect: the command left its baseline: $out"
	[[ "$(sed -n 2p <<<"$out")" == */devwl-run.connected/run-* ]] || fail "--connect: cgroup: $out"
	[[ "$(sed -n 3p <<<"$out")" == "ok fd="*" rdev=1:5 "* ]] || fail "--connect: zero: $out"
else
	echo "no devwld or v1 controller: --connect not checked" >&2
fi
echo "PASS"
