# The node gate on every path that places a device node (doc/DESIGN.md, "The node
# gate"), as a table: a trapped mknod and an operator's attach, for a caller whose device
# cgroup devwld programs (kernel mode), one behind a deny baseline devwld does not program
# (a root runtime under --kernel-mode never), and one no cgroup confines (a runtime of
# another uid), each on a nodev mount and on one where the kernel opens devices. For a
# given caller and mount the two paths must agree: made on both mounts when a cgroup
# confines the caller, only on the nodev one when none does; and the caller's trapped open
# of what was made opens it on the device mount, and on the nodev one answers as the
# row says (the kernel's EACCES where the kernel opens in the caller's context, devwld's
# open where it opens for it).
#
# All of it three times, by where the grant of c 1:5 comes from: the node's rules; a
# selector binding (subsystem:mem, which names it); and a CDI annotation
# ("cdi.k8s.io/...": "test.devwl.org/dev=zero", a spec naming /dev/zero, on nodes that
# say "cdi_annotations", whose containers' own nodes start without c 1:5). The gate does
# not ask where a grant came from, so each row must come out the same in the three. The
# annotation rides on the runtime's hand-off, forged on its way by `oci-client relay` as
# the runtime's own uid (root for the enforced and baseline rows; 65534 for the other
# uid's, whose annotation devwld honours too, on its own node below /users/65534: devwld(8),
# CDI DEVICES FROM ANNOTATIONS), so that the caller sits in the very cgroup state its row
# needs; each cdi row checks that its annotation bound the grant. The CDI path places no
# node itself (core/cdigrant.c binds; the trapped mknod and attach place): what it must
# keep is that its grant reaches every path alike, the kernel's cgroup included.
# (The re-push after a replug places through the same attach_place(): tests/oci/161
# drives it. The embedding API's rows: tests/oci/202.)
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_user_runs
need_user_client
W=$T/w
mkdir -m 777 "$W"

# The CDI spec naming /dev/zero (c 1:5), for the annotation of the cdi rows.
mkdir "$T/cdi"
cat >"$T/cdi/zero.json" <<'JSON'
{ "cdiVersion": "0.6.0", "kind": "test.devwl.org/dev",
  "devices": [ { "name": "zero",
                 "containerEdits": { "deviceNodes": [ { "path": "/dev/zero", "permissions": "rwm" } ] } } ] }
JSON

# policy SOURCE: c 1:5 rwm on /containers and /users by SOURCE: rule, selector, or cdi
# (the nodes allow it, each container's own node starts without it, and its annotation
# names it).
policy() {
	if [ "$1" = cdi ]; then
		cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "cdi_annotations": true, "rules": ["deny a", "allow c 1:5 rwm"] },
             { "path": "/users", "cdi_annotations": true, "rules": ["deny a", "allow c 1:5 rwm"] } ],
  "containers": { "container_rules": ["deny c 1:5 rwm"] } }
JSON
	elif [ "$1" = rule ]; then
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

# relay WHO ID: the hand-off of ID's runtime (uid WHO) forged on its way to devwld with
# the annotation naming the spec's device (oci-client relay), as a CRI runtime passes a
# device plugin's choice on. SOCK: the socket it waits on.
relay() {
	local who=$1 id=$2 as=
	[ "$who" = nobody ] && as=as_nobody
	OCI_CLIENT_ANNOTATIONS='{"cdi.k8s.io/devwl-test":"test.devwl.org/dev=zero"}' \
		$as "$CLIENT" "$T/listen.sock" relay "$W/$id.relay" >"$W/$id.relayed" 2>&1 &
	CHILD_PIDS+=($!)
	wait_for "$W/$id.relayed" LISTENING 10 >/dev/null ||
		fail "$id: the relay did not start: $(cat "$W/$id.relayed")"
	SOCK=$W/$id.relay
}

# workload WHO ID SOURCE: a caller with /nd (nodev) and /dv (devices open) of its own,
# that makes c 1:5 at /nd/m and /dv/m by a trapped mknod and opens each, then waits until
# $W/ID.stop. Its runtime (devwl-run) hands it to devwld, through the relay for cdi.
workload() {
	local who=$1 id=$2 mounts
	SOCK=$T/listen.sock
	[ "$3" = cdi ] && relay "$who" "$id"
	mkdir -m 777 "$W/$id-dv"
	if [ "$who" = nobody ]; then
		# Its user namespace's tmpfs is nodev; a host directory bound in is not.
		mounts="mount -t tmpfs none $W/nd-$id && mount --bind $W/$id-dv $W/dv-$id"
		mkdir -m 777 "$W/nd-$id" "$W/dv-$id"
		as_nobody unshare -Urm sh -c "$mounts && exec $RUN --connect $SOCK --id $id \
			-- /bin/sh -c '$PROBE mknod $W/nd-$id/m c 1 5 0666 \\; mknod $W/dv-$id/m c 1 5 0666 \\; \
			open $W/nd-$id/m rdwr \\; open $W/dv-$id/m rdwr \
			>$W/$id.out; while [ ! -e $W/$id.stop ]; do sleep 0.1; done'" 2>"$T/$id.err" &
	else
		mkdir -m 755 "$W/nd-$id" "$W/dv-$id"
		mounts="mount -t tmpfs -o nodev none $W/nd-$id && mount -t tmpfs none $W/dv-$id"
		unshare -m sh -c "$mounts && exec $RUN --connect $SOCK --id $id \
			-- /bin/sh -c '$PROBE mknod $W/nd-$id/m c 1 5 0666 \\; mknod $W/dv-$id/m c 1 5 0666 \\; \
			open $W/nd-$id/m rdwr \\; open $W/dv-$id/m rdwr \
			>$W/$id.out; while [ ! -e $W/$id.stop ]; do sleep 0.1; done'" 2>"$T/$id.err" &
	fi
	CHILD_PIDS+=($!)
	for _ in $(seq 300); do [ "$(wc -l 2>/dev/null <"$W/$id.out")" = 4 ] && break; sleep 0.1; done
	[ "$(wc -l <"$W/$id.out")" = 4 ] || fail "$id: no mknod and open answers: $(cat "$T/$id.err")"
}

# row WHO ID OWNER WANT_ND WANT_DV OPEN_ND: the mknods' answers and the attaches' must both
# be WANT (made|refused) per mount; what the mknod made opens on the device mount, and on
# the nodev one answers OPEN_ND: the kernel's EACCES where devwld lets the kernel open in
# the caller's own context (its cgroup programmed), ok where devwld opens the device for
# it by its numbers (no cgroup of devwld's confines it).
row() {
	local who=$1 id=$2 owner=$3 want_nd=$4 want_dv=$5 open_nd=$6 m a mount want pid got opened
	local node=/containers/$id
	[ "$who" = nobody ] && node=/users/65534/$id
	workload "$who" "$id" "$source"
	# c 1:5 is the annotation's (its container's node starts without it), bound on the
	# node of its own, an --allow-uid runtime's within /users/UID.
	[ "$source" != cdi ] || grep -qF "container $id: 1 of the 1 CDI devices its annotations name bound on $node" \
		"$T/devwld.log" || fail "$id: its annotation bound nothing on $node: $(grep "$id" "$T/devwld.log")"
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

for source in rule selector cdi; do
	policy "$source"
	start_devwld --allow-uid 65534 --cdi-dir "$T/cdi"
	row root "enf-$source" "" made made EACCES
	grep -q "container enf-$source: kernel mode: cgroup" "$T/devwld.log" ||
		echo "# enf-$source not in kernel mode here: $(grep "container enf-$source" "$T/devwld.log" | tail -1)"
	row nobody "none-$source" 65534 made refused ok
	kill "$DEVWLD_PID" && wait "$DEVWLD_PID" 2>/dev/null
	rm -f "$T/listen.sock" "$T/control.sock"
	start_devwld --allow-uid 65534 --kernel-mode never --cdi-dir "$T/cdi"
	row root "base-$source" "" made made ok
	grep -q "container base-$source: kernel mode: cgroup" "$T/devwld.log" &&
		fail "base-$source was put in kernel mode"
	kill "$DEVWLD_PID" && wait "$DEVWLD_PID" 2>/dev/null
	rm -f "$T/listen.sock" "$T/control.sock"
	DEVWLD_PID=
done
exit 0
