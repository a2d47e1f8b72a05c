# The node gate on every path that places a device node (doc/DESIGN.md, "The node
# gate"), as a table: a trapped mknod and an operator's attach, for a caller whose device
# cgroup devwld programs (kernel mode), one behind a deny baseline devwld does not program
# (a root runtime under --kernel-mode never), and one no cgroup confines (a runtime of
# another uid), each on a nodev mount and on one where the kernel opens devices. For a
# given caller and mount the two paths must agree: made on both mounts when a cgroup
# confines the caller, only on the nodev one when none does. (The re-push after a replug
# places through the same attach_place(): tests/oci/161 drives it.)
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_user_runs
W=$T/w
mkdir -m 777 "$W"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "rules": ["deny a", "allow c 1:5 rwm"] },
             { "path": "/users", "rules": ["deny a", "allow c 1:5 rwm"] } ] }
JSON

# workload WHO ID: a caller with /nd (nodev) and /dv (devices open) of its own, that makes
# c 1:5 at /nd/m and /dv/m by a trapped mknod, then waits until $W/ID.stop.
workload() {
	local who=$1 id=$2 mounts
	mkdir -m 777 "$W/$id-dv"
	if [ "$who" = nobody ]; then
		# Its user namespace's tmpfs is nodev; a host directory bound in is not.
		mounts="mount -t tmpfs none $W/nd-$id && mount --bind $W/$id-dv $W/dv-$id"
		mkdir -m 777 "$W/nd-$id" "$W/dv-$id"
		as_nobody unshare -Urm sh -c "$mounts && exec $RUN --connect $T/listen.sock --id $id \
			-- /bin/sh -c '$PROBE mknod $W/nd-$id/m c 1 5 0666 \\; mknod $W/dv-$id/m c 1 5 0666 \
			>$W/$id.out; while [ ! -e $W/$id.stop ]; do sleep 0.1; done'" 2>"$T/$id.err" &
	else
		mkdir -m 755 "$W/nd-$id" "$W/dv-$id"
		mounts="mount -t tmpfs -o nodev none $W/nd-$id && mount -t tmpfs none $W/dv-$id"
		unshare -m sh -c "$mounts && exec $RUN --connect $T/listen.sock --id $id \
			-- /bin/sh -c '$PROBE mknod $W/nd-$id/m c 1 5 0666 \\; mknod $W/dv-$id/m c 1 5 0666 \
			>$W/$id.out; while [ ! -e $W/$id.stop ]; do sleep 0.1; done'" 2>"$T/$id.err" &
	fi
	CHILD_PIDS+=($!)
	for _ in $(seq 300); do [ -s "$W/$id.out" ] && break; sleep 0.1; done
	[ -s "$W/$id.out" ] || fail "$id: no mknod answers: $(cat "$T/$id.err")"
}

# row WHO ID OWNER WANT_ND WANT_DV: the mknods' answers and the attaches' must both be
# WANT (made|refused) per mount.
row() {
	local who=$1 id=$2 owner=$3 want_nd=$4 want_dv=$5 m a mount want pid
	workload "$who" "$id"
	mapfile -t m <"$W/$id.out"
	pid=$(pgrep -n -f "$W/$id.stop") || fail "$id: its process is gone"
	for mount in nd dv; do
		[ $mount = nd ] && want=$want_nd && got=${m[0]:-} || { want=$want_dv; got=${m[1]:-}; }
		case $want:$got in
		made:ok | refused:EPERM) ;;
		*) fail "$id: trapped mknod on /$mount: $got, want $want" ;;
		esac
		a=made
		ctl attach "$id" "c 1:5" "$W/$mount-$id/a" ${owner:+--owner $owner} >"$T/att.out" 2>&1 ||
			a=refused
		[ "$a" = "$want" ] || fail "$id: attach on /$mount: $a ($(cat "$T/att.out")), want $want"
		if [ "$a" = made ]; then
			[ -c "/proc/$pid/root$W/$mount-$id/a" ] || fail "$id: attach said made, no node"
			ctl detach "$id" "$W/$mount-$id/a" ${owner:+--owner $owner} >/dev/null ||
				fail "$id: detach from /$mount"
		else
			[ ! -e "/proc/$pid/root$W/$mount-$id/a" ] || fail "$id: a refused attach left a node"
		fi
	done
	touch "$W/$id.stop"
	pass "$id: mknod and attach agree: nodev mount $want_nd, device mount $want_dv"
}

start_devwld --allow-uid 65534
row root enf "" made made
km=$(grep -c "container enf: kernel mode: cgroup" "$T/devwld.log")
[ "$km" -ge 1 ] || echo "# enf not in kernel mode here: $(grep 'container enf' "$T/devwld.log" | tail -1)"
row nobody none 65534 made refused
kill "$DEVWLD_PID" && wait "$DEVWLD_PID" 2>/dev/null
rm -f "$T/listen.sock" "$T/control.sock"
start_devwld --allow-uid 65534 --kernel-mode never
row root base "" made made
grep -q "container base: kernel mode: cgroup" "$T/devwld.log" && fail "base was put in kernel mode"
exit 0
