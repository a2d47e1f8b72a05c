#!/bin/bash
# --drop-cap removes a capability from every set of the command (effective, permitted,
# inheritable, bounding, ambient), and devwl then refuses its device mknod (CAP_MKNOD is
# required of the caller).
set -u
. "$(dirname "$0")/lib.sh"
live_init "capabilities to drop"
# mask WHAT VALUE: VALUE must be a capability mask as /proc prints it, since $((0x)) is 0
# and an empty or garbled line would pass every "bit is clear" check.
mask() {
	[[ $2 =~ ^[0-9a-f]{16}$ ]] || fail "$1: not a capability mask: '$2'"
}
bit27() { # 1 if CAP_MKNOD (bit 27) is set in the hex mask $1
	echo $(((0x$1 >> 27) & 1))
}
ours=$(awk '/^CapEff/ {print $2}' /proc/self/status)
mask "our CapEff" "$ours"
[ "$(bit27 "$ours")" = 1 ] || skip "we do not hold CAP_MKNOD ourselves"
caps() {
	"$RUN" "$@" -- cat /proc/self/status | awk '/^Cap(Inh|Prm|Eff|Bnd|Amb)/ {print $1, $2}'
}

with=$(caps)
v=$(awk '$1 == "CapEff:" {print $2}' <<<"$with")
mask "CapEff without --drop-cap" "$v"
[ "$(bit27 "$v")" = 1 ] ||
	fail "CAP_MKNOD missing without --drop-cap: $with"
for spelling in CAP_MKNOD cap_mknod mknod; do
	without=$(caps --drop-cap "$spelling")
	for set in CapEff CapPrm CapInh CapBnd CapAmb; do
		v=$(awk -v s="$set:" '$1 == s {print $2}' <<<"$without")
		mask "--drop-cap $spelling: $set" "$v"
		[ "$(bit27 "$v")" = 0 ] || fail "--drop-cap $spelling: $set still has CAP_MKNOD ($v)"
	done
	# Everything else outside the containment set (58-run-contain-caps) is still there.
	v=$(awk '$1 == "CapEff:" {print $2}' <<<"$without")
	mask "--drop-cap $spelling: CapEff" "$v"
	[ $(((0x$v >> 13) & 1)) = 1 ] || fail "--drop-cap $spelling also dropped CAP_NET_RAW"
done
# Two at once.
v=$(caps --drop-cap CAP_MKNOD --drop-cap CAP_NET_RAW | awk '$1 == "CapBnd:" {print $2}')
mask "two --drop-cap: CapBnd" "$v"
[ $(((0x$v >> 13) & 1)) = 0 ] && [ "$(bit27 "$v")" = 0 ] || fail "two --drop-cap: CapBnd $v"

# devwl checks the caller's CAP_MKNOD before creating an allowed node.
out=$("$RUN" -- "$PROBE" mknod "$T/a" c 1 3 0666)
[ "$out" = ok ] || fail "mknod with CAP_MKNOD: $out"
out=$("$RUN" --drop-cap CAP_MKNOD -- "$PROBE" mknod "$T/b" c 1 3 0666)
[ "$out" = EPERM ] || fail "mknod without CAP_MKNOD: $out"
[ ! -e "$T/b" ] || fail "node created without CAP_MKNOD"
echo "PASS"
