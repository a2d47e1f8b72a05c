# The node gate (doc/DESIGN.md, "The node gate") on every path that places a node, here
# hot-plug: a node is made only where the kernel will confine its use. A runtime of
# another uid (--allow-uid) has no device cgroup devwld trusts, so an attach into its
# container makes a node only on a mount proven nodev — never on a host directory it
# bound over its /dev, where the user would open the device from the host with more than
# the grant and keep it after detach. A node on its nodev mount would open for nobody
# (devwld opens only nodes its handlers made), so that is refused too, saying why, with
# nothing left behind. A root runtime's container (a deny baseline) gets its node.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] || fail "devwl-run not built"
command -v setpriv >/dev/null || skip "no setpriv"
RUN=$(for_others "$RUN") || exit 1
as_nobody unshare -Urm true 2>/dev/null || skip "uid 65534 cannot make user namespaces here"
chmod 755 "$T"
mkdir -m 755 "$T/hostdev" "$T/rootdev"
chown 65534:65534 "$T/hostdev"
SLEEP=$(command -v sleep)

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/users", "rules": ["deny a", "allow c 1:3 rw", "allow c 1:5 rw"] } ] }
JSON
start_devwld --allow-uid 65534

# run_as WHO ID SETUP: a devwl-run --connect process that stays, its /dev set up by SETUP.
connected() {
	local who=$1 id=$2 setup=$3
	if [ "$who" = nobody ]; then
		as_nobody unshare -Urm sh -c "$setup && exec $RUN --connect $T/listen.sock --id $id \
			-- $SLEEP 120" 2>"$T/$id.err" &
	else
		unshare -m sh -c "$setup && exec $RUN --connect $T/listen.sock --id $id \
			-- $SLEEP 120" 2>"$T/$id.err" &
	fi
	CHILD_PIDS+=($!)
	wait_for "$T/devwld.log" "container $id: process" || fail "$id never reached devwld: $(cat "$T/$id.err")"
}

# 1. A host directory of the user's, bound over its /dev: refused, nothing made there.
connected nobody u-bind "mount --bind $T/hostdev /dev"
ctl attach u-bind "c 1:5" /dev/zero5 --access r >"$T/bind.out" 2>&1 &&
	fail "attached into a host directory: $(cat "$T/bind.out"; ls -l "$T/hostdev")"
grep -q 'only on a nodev mount' "$T/bind.out" || fail "no reason: $(cat "$T/bind.out")"
[ -z "$(ls -A "$T/hostdev")" ] || fail "left on the host directory: $(ls -lA "$T/hostdev")"
ctl containers --devices | grep u-bind | grep -q zero5 && fail "listed as attached"
pass "uid 65534's /dev on a host directory: attach refused ($(sed 's/.*: //' "$T/bind.out")), nothing made"

# 2. Its own tmpfs (nodev): a node there opens for nobody: refused, saying so, none left.
connected nobody u-tmp "mount -t tmpfs none /dev"
ctl attach u-tmp "c 1:5" /dev/zero5 --access r >"$T/tmp.out" 2>&1 &&
	fail "attached where nothing opens it: $(cat "$T/tmp.out")"
grep -q 'would open for nobody' "$T/tmp.out" || fail "no reason: $(cat "$T/tmp.out")"
pid=$(pgrep -n -u 65534 -x sleep) && [ -n "$pid" ] || fail "u-tmp's process not found"
ls -A "/proc/$pid/root/dev" | grep -q . && fail "left in its /dev: $(ls -lA "/proc/$pid/root/dev")"
pass "uid 65534's nodev /dev: attach refused ($(sed 's/.*: //' "$T/tmp.out")), nothing left"

# 3. Root's process, behind a deny baseline: the node is made on its (bound) /dev.
connected root r-bind "mount --bind $T/rootdev /dev"
ctl attach r-bind "c 1:5" /dev/zero5 --access r >"$T/root.out" 2>&1 ||
	fail "root's attach: $(cat "$T/root.out")"
[ -c "$T/rootdev/zero5" ] || fail "root's node not made: $(ls -lA "$T/rootdev")"
ctl detach r-bind /dev/zero5 >"$T/rootd.out" 2>&1 || fail "root's detach: $(cat "$T/rootd.out")"
[ -z "$(ls -A "$T/rootdev")" ] || fail "left after detach: $(ls -lA "$T/rootdev")"
pass "root's container (a deny baseline): attached and detached on a host directory"
exit 0
