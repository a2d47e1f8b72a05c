# SIGHUP reload is atomic: a bad file changes nothing and says why; a good one re-points
# every running container to the node of the same path in the new policy.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] || fail "devwl-run not built at $RUN (the build should have made it)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/apps", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
start_devwld
"$RUN" --connect "$T/listen.sock" --node /apps/web --id web -- sh -c '
	(: </dev/zero) 2>/dev/null && exit 3
	echo STARTED
	while [ ! -e "$1/go" ]; do sleep 0.1; done
	: </dev/zero || exit 4
	exit 0' sh "$T" >"$T/web.out" 2>&1 &
web=$!
CHILD_PIDS+=("$web")
wait_for "$T/web.out" STARTED || fail "workload did not start: $(cat "$T/web.out")"
ctl containers | grep -q '^web /apps/web 1 ' || fail "containers: $(ctl containers)"
before=$(ctl show /apps/web)

# A bad file: a rule the hierarchy refuses. Nothing may change.
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/apps", "rules": ["deny a", "allow c 1:3 rw", "allow c 1:5 rx"] } ] }
JSON
kill -HUP "$DEVWLD_PID"
wait_for "$T/devwld.log" "reload of $T/policy.json failed, keeping the current policy" ||
	fail "no log line for the bad reload"
[ "$(ctl show /apps/web)" = "$before" ] || fail "a failed reload changed the node"
pass "bad policy on SIGHUP: $(grep -m1 'reload of' "$T/devwld.log" | sed 's/^devwld: //')"

# A good file: /apps now allows c 1:5; /apps/web is not in it and is made again.
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/apps", "rules": ["deny a", "allow c 1:3 rw", "allow c 1:5 r"] } ] }
JSON
kill -HUP "$DEVWLD_PID"
wait_for "$T/devwld.log" "reloaded $T/policy.json" || fail "no log line for the good reload"
ctl list /apps/web | grep -q '^c 1:5 r$' || fail "after reload: $(ctl list /apps/web)"
touch "$T/go"
wait "$web" || fail "the running workload did not get the new policy (exit $?): $(cat "$T/web.out")"
pass "good policy on SIGHUP: the running container now uses the new /apps/web"

ctl reload >/dev/null || fail "devwlctl reload"
pass "devwlctl reload"
exit 0
