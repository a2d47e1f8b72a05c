# What devwld makes for a container on its nodev mounts opens every time, whichever
# handler thread takes the open and across a planned restart (doc/DESIGN.md, "nodev
# mounts"): the nodes only devwld opens are a fact about the container (its nodeset,
# shared by every handler and kept in the state file), not about the thread that made
# them. A runtime of another uid (--allow-uid) makes 100 granted nodes in its own tmpfs
# and opens each at once, with devwld's default handler threads; after devwlctl restart
# it opens all 100 again.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_user_runs
N=100

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/users", "rules": ["deny a", "allow c 1:5 rwm"] } ] }
JSON
start_devwld --allow-uid 65534 --state "$T/state.json" --handler-threads 2

# The workload: N mknod+open pairs, then (after $W/go) N opens again.
W=$T/w
mkdir -m 777 "$W"
{
	printf 'exec >%s/out\n' "$W"
	printf '%s' "$PROBE"
	for i in $(seq $N); do printf " mknod /dev/n$i c 1 5 0666 ';' open /dev/n$i rdwr ';'"; done
	printf ' true\ntouch %s/made\nwhile [ ! -e %s/go ]; do sleep 0.1; done\n' "$W" "$W"
	printf 'exec >%s/again\n%s' "$W" "$PROBE"
	for i in $(seq $N); do printf " open /dev/n$i rdonly ';'"; done
	printf ' true\n'
} >"$T/work.sh"
chmod 644 "$T/work.sh"
as_nobody unshare -Urm sh -c "mount -t tmpfs none /dev && exec $RUN --connect $T/listen.sock \
	--id u-many -- /bin/sh $T/work.sh" 2>"$T/err" &
CHILD_PIDS+=($!)
for _ in $(seq 600); do [ -e "$W/made" ] && break; sleep 0.1; done
[ -e "$W/made" ] || fail "the nodes were never made: $(cat "$W/out" "$T/err")"
made=$(grep -c '^ok$' "$W/out")
opened=$(grep -c '^ok fd=.* rdev=1:5 ' "$W/out")
[ "$made" = $N ] && [ "$opened" = $N ] ||
	fail "$made of $N made, $opened of $N opened: $(grep -v '^ok' "$W/out" | sort | uniq -c)"
pass "uid 65534: $N granted nodes made on its nodev tmpfs, each opened at once (2 handler threads)"

ctl restart >"$T/restart.out" 2>&1 || fail "restart: $(cat "$T/restart.out")"
wait_for "$T/devwld.log" "worker 2 ready" || fail "no worker 2"
touch "$W/go"
wait_for "$T/devwld.log" "container u-many: gone" || fail "u-many never ended: $(cat "$T/err")"
opened=$(grep -c '^ok fd=.* rdev=1:5 ' "$W/again")
[ "$opened" = $N ] || fail "after the restart $opened of $N opened: $(grep -v '^ok' "$W/again" | sort | uniq -c)"
pass "after devwlctl restart: all $N open again"
exit 0
