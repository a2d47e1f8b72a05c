#!/bin/bash
# --keep-caps leaves the command uncontained, as documented ("this workload can leave its
# baseline"): it keeps every capability, shares devwl-run's mount namespace and can move
# itself out of the baseline; devwl-run says so loudly on stderr whenever a baseline is
# in effect, and not otherwise (nor for io_uring, except without a baseline). --drop-cap
# still applies.
set -u
. "$(dirname "$0")/lib.sh"
live_init "capabilities, device cgroup"
V1=$(awk '$9 == "cgroup" && $NF ~ /(^|,)devices(,|$)/ {print $5; exit}' /proc/self/mountinfo)
[ -n "$V1" ] || skip "no cgroup-v1 devices controller mounted"
eff() { awk '/^CapEff/ {print $2}' "${1:-/proc/self/status}"; }

"$RUN" --help | grep -q -- "--keep-caps" || fail "--help does not list --keep-caps"
out=$(DEVWL_BASELINE=v1 "$RUN" --keep-caps -- sh -c "grep ^CapEff /proc/self/status; \
	readlink /proc/self/ns/mnt; echo \$\$ >$V1/cgroup.procs && echo left; \
	awk -F: '\$2 ~ /(^|,)devices(,|\$)/ {print \$3}' /proc/self/cgroup" 2>"$T/err")
rc=$?
[ "$rc" = 0 ] || fail "--keep-caps exited $rc: $(cat "$T/err")"
grep -q "WARNING: --keep-caps: .* it can leave its kernel baseline" "$T/err" ||
	fail "no warning with --keep-caps and a baseline: $(cat "$T/err")"
[ "$(awk '/^CapEff/ {print $2}' <<<"$out")" = "$(eff)" ] ||
	fail "--keep-caps: CapEff differs from ours ($(eff)): $out"
[ "$(sed -n 2p <<<"$out")" = "$(readlink /proc/self/ns/mnt)" ] ||
	fail "--keep-caps: the command got a mount namespace of its own: $out"
[ "$(sed -n 3p <<<"$out")" = left ] && [ "$(sed -n 4p <<<"$out")" = / ] ||
	fail "--keep-caps: the command could not leave its baseline (the documented hole): $out"

# No baseline: nothing to leave, so no --keep-caps warning (the no-baseline one stays).
"$RUN" --keep-caps --no-baseline -- true 2>"$T/err2" || fail "--keep-caps --no-baseline failed"
grep -q "WARNING: --keep-caps" "$T/err2" && fail "--keep-caps warned without a baseline"
grep -q "no kernel baseline" "$T/err2" || fail "--no-baseline no longer warns: $(cat "$T/err2")"

# io_uring never traps: without a baseline nothing at all stands in its way, and that is
# said loudly too; with one, the baseline holds it.
"$RUN" --no-baseline --allow-io-uring -- true 2>"$T/err3" || fail "--allow-io-uring failed"
grep -q "WARNING: --allow-io-uring without a kernel baseline" "$T/err3" ||
	fail "no warning for io_uring without a baseline: $(cat "$T/err3")"
"$RUN" --allow-io-uring -- true 2>"$T/err4" || fail "--allow-io-uring failed: $(cat "$T/err4")"
grep -q "WARNING" "$T/err4" && fail "--allow-io-uring with a baseline warned: $(cat "$T/err4")"

# --drop-cap still drops, the rest stays.
v=$("$RUN" --keep-caps --drop-cap CAP_MKNOD -- sh -c 'grep ^CapBnd /proc/self/status' 2>/dev/null |
	awk '{print $2}')
[ $(((0x$v >> 27) & 1)) = 0 ] || fail "--keep-caps --drop-cap CAP_MKNOD kept CAP_MKNOD: $v"
[ $(((0x$v >> 21) & 1)) = 1 ] || fail "--keep-caps --drop-cap CAP_MKNOD lost CAP_SYS_ADMIN: $v"
echo "PASS"
