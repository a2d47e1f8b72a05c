# The node gate's table (doc/DESIGN.md, "The node gate"; tests/oci/168 for devwld)
# through the embedding API: tests/oci/gate-embed, built from include/devwl.h and the
# shared library only, serves a child of its own as an embedder does (libdevwl(3)), for
# each caller row devwld's table has: a device cgroup the embedder programs with the
# node (devwl_cgroup_apply, devwl_notify_set_enforced), a deny baseline it does not
# program with it (the cgroup opened and left denying, devwl_notify_set_baseline), and
# no cgroup; each on a nodev mount and a device-capable one. Its paths: a trapped mknod,
# the embedder's hot-plug (devwl_node_place, DEVWL_PLACE_CONFINED where a cgroup
# confines the child), and the trapped open of what each made. Each row must come out as
# oci-168's row of the same confinement does: made on both mounts where a cgroup
# confines the caller, only on the nodev one where none does, opened on the device
# mount, and on the nodev one by the kernel's EACCES where the kernel opens in the
# caller's context (enforced) or by devwl (ok) where it does not.
#
# Not reachable here, and why: devwld's selector and CDI grant sources (common/ and
# supervisor/, above libdevwl: an embedder grants by writing the node, which is what a
# resolved selector is, so the rule source is the embedder's only one); devwld's
# "another uid" caller row, which is a property of devwld's listener (the runtime's uid
# decides what devwld assumes confines it): an embedder knows its own children's
# confinement and says it, so its "none" row is a child of its own in no cgroup, on a
# nodev tmpfs it mounts (a user namespace's tmpfs, which is nodev without saying so, is
# oci-168's and tests/live/74's).
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
EMBED=$OCI_BIN/gate-embed
[ -x "$EMBED" ] || fail "gate-embed not built at $EMBED (the build should have made it)"
host_user_notif || skip "no seccomp user notification in this kernel"

# A device cgroup of our own for the confined rows: v1 devices, else cgroup2.
CGROOT=
if host_can_v1_devices; then
	CGROOT=$(host_v1 devices)
elif host_can_v2_devices; then
	CGROOT=$(host_cgroup2)
fi
[ -n "$CGROOT" ] || echo "# no device cgroup here ($host_why): the enf and base rows are not run"
CGS=()
cleanup_cgroups() {
	local cg
	for cg in "${CGS[@]}"; do
		for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
	done
}
trap 's=$?; cleanup_cgroups; (exit "$s"); cleanup' EXIT

# row ROW WANT_ND WANT_DV OPEN_ND: as oci-168's row: the trapped mknod and the placement
# WANT (made|refused) per mount; what was made opens on the device mount and answers
# OPEN_ND on the nodev one; what was refused is not there (ENOENT).
row() {
	local row=$1 want_nd=$2 want_dv=$3 open_nd=$4 cg= mk_nd mk_dv op_nd op_dv want got
	mkdir -p "$T/$row/nd" "$T/$row/dv"
	if [ "$row" != none ]; then
		cg=$CGROOT/devwl-gate-embed-$$-$row
		mkdir "$cg" || fail "$row: cannot make the cgroup $cg"
		CGS+=("$cg")
	fi
	[ "$want_nd" = made ] && mk_nd=ok op_nd=$open_nd || { mk_nd=EPERM op_nd=ENOENT; }
	[ "$want_dv" = made ] && mk_dv=ok op_dv=ok || { mk_dv=EPERM op_dv=ENOENT; }
	want="mknod nd=$mk_nd dv=$mk_dv open nd=$op_nd dv=$op_dv place nd=$want_nd dv=$want_dv opened nd=$op_nd dv=$op_dv"
	got=$("$EMBED" "$row" "$T/$row" ${cg:+"$cg"} 2>"$T/$row.err") ||
		fail "$row: gate-embed failed: $(cat "$T/$row.err")"
	[ "$got" = "$want" ] || fail "$row: $got; want $want ($(cat "$T/$row.err"))"
	pass "embed $row: mknod and devwl_node_place agree: nodev mount $want_nd, device mount $want_dv; its open on nodev $open_nd"
}

if [ -n "$CGROOT" ]; then
	row enf made made EACCES
	row base made made ok
fi
row none made refused ok
exit 0
