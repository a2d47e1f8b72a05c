# The node gate (doc/DESIGN.md, "The node gate") on every path that places a node, here
# hot-plug: a node is made only where the kernel will confine its use. A runtime of
# another uid (--allow-uid) has no device cgroup devwld trusts, so an attach into its
# container makes a node only on a mount proven nodev — never on a host directory it
# bound over its /dev, where the user would open the device from the host with more than
# the grant and keep it after detach. On its own nodev mount the node is made, and devwld
# opens it for the container as the grant says (the container's nodeset, shared by every
# handler thread). A root runtime's container (a deny baseline) gets its node anywhere.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_user_runs
mkdir -m 755 "$T/hostdev" "$T/rootdev"
chown 65534:65534 "$T/hostdev"
SLEEP=$(command -v sleep)

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/users", "rules": ["deny a", "allow c 1:3 rw", "allow c 1:5 rw"] } ],
  "containers": { "container_rules": ["deny c 1:5 rw"] } }
JSON
start_devwld --allow-uid 65534

# connected WHO ID SETUP [CMD]: a devwl-run --connect process (CMD, else a sleep), its
# /dev set up by SETUP; its output in $T/ID.out.
connected() {
	local who=$1 id=$2 setup=$3 cmd=${4:-$SLEEP 120}
	if [ "$who" = nobody ]; then
		as_nobody unshare -Urm sh -c "$setup && exec $RUN --connect $T/listen.sock --id $id \
			-- $cmd" >"$T/$id.out" 2>"$T/$id.err" &
	else
		unshare -m sh -c "$setup && exec $RUN --connect $T/listen.sock --id $id \
			-- $cmd" >"$T/$id.out" 2>"$T/$id.err" &
	fi
	CHILD_PIDS+=($!)
	wait_for "$T/devwld.log" "container $id: process" || fail "$id never reached devwld: $(cat "$T/$id.err")"
}

# 1. A host directory of the user's, bound over its /dev: refused, nothing made there.
connected nobody u-bind "mount --bind $T/hostdev /dev"
ctl attach u-bind "c 1:5" /dev/zero5 --access r --owner 65534 >"$T/bind.out" 2>&1 &&
	fail "attached into a host directory: $(cat "$T/bind.out"; ls -l "$T/hostdev")"
grep -q 'only on a nodev mount' "$T/bind.out" || fail "no reason: $(cat "$T/bind.out")"
[ -z "$(ls -A "$T/hostdev")" ] || fail "left on the host directory: $(ls -lA "$T/hostdev")"
ctl containers --devices | grep u-bind | grep -q zero5 && fail "listed as attached"
pass "uid 65534's /dev on a host directory: attach refused ($(sed 's/.*: //' "$T/bind.out")), nothing made"

# 2. Its own tmpfs (nodev): made there; devwld opens it for the container, r as granted.
connected nobody u-tmp "mount -t tmpfs none /dev" "/bin/sh -c 'while [ ! -e $T/go ]; do \
	$SLEEP 0.1; done; exec $PROBE open /dev/zero5 rdonly \; open /dev/zero5 wronly'"
ctl attach u-tmp "c 1:5" /dev/zero5 --access r --owner 65534 >"$T/tmp.out" 2>&1 ||
	fail "attach into its nodev /dev: $(cat "$T/tmp.out")"
touch "$T/go"
wait_for "$T/devwld.log" "container u-tmp: gone" || fail "u-tmp never ended: $(cat "$T/u-tmp.err")"
mapfile -t l <"$T/u-tmp.out"
[[ "${l[0]:-}" == "ok fd="*" rdev=1:5 "* ]] && [ "${l[1]:-}" = EPERM ] ||
	fail "the attached node on its nodev /dev: $(cat "$T/u-tmp.out" "$T/u-tmp.err")"
pass "uid 65534's nodev /dev: attached; read through devwld, write refused (granted r)"
# 3. Root's process, behind a deny baseline: the node is made on its (bound) /dev.
connected root r-bind "mount --bind $T/rootdev /dev"
ctl attach r-bind "c 1:5" /dev/zero5 --access r >"$T/root.out" 2>&1 ||
	fail "root's attach: $(cat "$T/root.out")"
[ -c "$T/rootdev/zero5" ] || fail "root's node not made: $(ls -lA "$T/rootdev")"
ctl detach r-bind /dev/zero5 >"$T/rootd.out" 2>&1 || fail "root's detach: $(cat "$T/rootd.out")"
[ -z "$(ls -A "$T/rootdev")" ] || fail "left after detach: $(ls -lA "$T/rootdev")"
pass "root's container (a deny baseline): attached and detached on a host directory"
exit 0
