# The node gate on every path that places a device node (doc/DESIGN.md, "The node
# gate"), as a table: a trapped mknod and an operator's attach, for a caller whose device
# cgroup devwld programs (kernel mode), one behind a deny baseline devwld does not program
# (a root runtime under --kernel-mode never), and one no cgroup confines (a runtime of
# another uid), each on a nodev mount and on one where the kernel opens devices. For a
# given caller and mount the two paths must agree: made on both mounts when a cgroup
# confines the caller, only on the nodev one when none does; and the caller's trapped open
# of what was made opens it on the device mount (never on the nodev one). All of it twice: with c 1:5 granted by the node's rules, and
# by a selector binding (subsystem:mem, which names it): the gate does not ask where a
# grant came from. (The re-push after a replug places through the same attach_place():
# tests/oci/161 drives it.)
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_user_runs
W=$T/w
mkdir -m 777 "$W"

# policy SOURCE: c 1:5 rwm on /containers and /users by SOURCE, rule or selector.
policy() {
	if [ "$1" = rule ]; then
		cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "rules": ["deny a", "allow c 1:5 rwm"] },
             { "path": "/users", "rules": ["deny a", "allow c 1:5 rwm"] } ] }
JSON
	else
		cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "rules": ["deny a"] },
             { "path": "/users", "rules": ["deny a"] } ],
  "selectors": [ { "node": "/containers", "allow": "subsystem:mem rwm" },
                 { "node": "/users", "allow": "subsystem:mem rwm" } ] }
JSON
	fi
}

# workload WHO ID: a caller with /nd (nodev) and /dv (devices open) of its own, that makes
# c 1:5 at /nd/m and /dv/m by a trapped mknod and opens each, then waits until $W/ID.stop.
workload() {
	local who=$1 id=$2 mounts
	mkdir -m 777 "$W/$id-dv"
	if [ "$who" = nobody ]; then
		# Its user namespace's tmpfs is nodev; a host directory bound in is not.
		mounts="mount -t tmpfs none $W/nd-$id && mount --bind $W/$id-dv $W/dv-$id"
		mkdir -m 777 "$W/nd-$id" "$W/dv-$id"
		as_nobody unshare -Urm sh -c "$mounts && exec $RUN --connect $T/listen.sock --id $id \
			-- /bin/sh -c '$PROBE mknod $W/nd-$id/m c 1 5 0666 \\; mknod $W/dv-$id/m c 1 5 0666 \\; \
			open $W/nd-$id/m rdwr \\; open $W/dv-$id/m rdwr \
			>$W/$id.out; while [ ! -e $W/$id.stop ]; do sleep 0.1; done'" 2>"$T/$id.err" &
	else
		mkdir -m 755 "$W/nd-$id" "$W/dv-$id"
		mounts="mount -t tmpfs -o nodev none $W/nd-$id && mount -t tmpfs none $W/dv-$id"
		unshare -m sh -c "$mounts && exec $RUN --connect $T/listen.sock --id $id \
			-- /bin/sh -c '$PROBE mknod $W/nd-$id/m c 1 5 0666 \\; mknod $W/dv-$id/m c 1 5 0666 \\; \
			open $W/nd-$id/m rdwr \\; open $W/dv-$id/m rdwr \
			>$W/$id.out; while [ ! -e $W/$id.stop ]; do sleep 0.1; done'" 2>"$T/$id.err" &
	fi
	CHILD_PIDS+=($!)
	for _ in $(seq 300); do [ "$(wc -l <"$W/$id.out" 2>/dev/null)" = 4 ] && break; sleep 0.1; done
	[ "$(wc -l <"$W/$id.out")" = 4 ] || fail "$id: no mknod and open answers: $(cat "$T/$id.err")"
}

# row WHO ID OWNER WANT_ND WANT_DV OPEN_ND: the mknods' answers and the attaches' must both
# be WANT (made|refused) per mount; what the mknod made opens on the device mount, and on
# the nodev one answers OPEN_ND: the kernel's EACCES where devwld lets the kernel open in
# the caller's own context (its cgroup programmed), ok where devwld opens the device for
# it by its numbers (no cgroup of devwld's confines it).
row() {
	local who=$1 id=$2 owner=$3 want_nd=$4 want_dv=$5 open_nd=$6 m a mount want pid got opened
	workload "$who" "$id"
	mapfile -t m <"$W/$id.out"
	pid=$(pgrep -n -f "$W/$id.stop") || fail "$id: its process is gone"
	for mount in nd dv; do
		[ $mount = nd ] && want=$want_nd && got=${m[0]:-} || { want=$want_dv; got=${m[1]:-}; }
		[ $mount = nd ] && opened=${m[2]:-} || opened=${m[3]:-}
		case $mount:$want:$got:${opened%% *} in
		nd:made:ok:"$open_nd" | dv:made:ok:ok | *:refused:EPERM:ENOENT) ;;
		*) fail "$id: trapped mknod then open on /$mount: $got, $opened; want $want" ;;
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
	pass "$id: mknod and attach agree: nodev mount $want_nd, device mount $want_dv; its open on nodev $open_nd"
}

for source in rule selector; do
	policy "$source"
	start_devwld --allow-uid 65534
	row root "enf-$source" "" made made EACCES
	grep -q "container enf-$source: kernel mode: cgroup" "$T/devwld.log" ||
		echo "# enf-$source not in kernel mode here: $(grep "container enf-$source" "$T/devwld.log" | tail -1)"
	row nobody "none-$source" 65534 made refused ok
	kill "$DEVWLD_PID" && wait "$DEVWLD_PID" 2>/dev/null
	rm -f "$T/listen.sock" "$T/control.sock"
	start_devwld --allow-uid 65534 --kernel-mode never
	row root "base-$source" "" made made ok
	grep -q "container base-$source: kernel mode: cgroup" "$T/devwld.log" &&
		fail "base-$source was put in kernel mode"
	kill "$DEVWLD_PID" && wait "$DEVWLD_PID" 2>/dev/null
	rm -f "$T/listen.sock" "$T/control.sock"
	DEVWLD_PID=
done
exit 0
