# Reload on change of the policy file, the way a Kubernetes ConfigMap volume changes it:
# kubelet writes a new "..TIMESTAMP" directory, points "..data_tmp" at it and renames
# that over "..data"; policy.json is a symlink through "..data". A running workload
# (devwl-run --connect) must get the new rule; a bad version changes nothing; writes
# of other files in the directory and an identical version cause no reload.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] || fail "devwl-run not built at $RUN (the build should have made it)"

CM=$T/configmap
mkdir -p "$CM"
version=0
# publish JSON: a new ConfigMap version, swapped in atomically as kubelet does.
publish() {
	version=$((version + 1))
	local dir="..2024_01_01_00_00_0${version}.${RANDOM}"
	mkdir "$CM/$dir"
	printf '%s\n' "$1" >"$CM/$dir/policy.json"
	ln -s "$dir" "$CM/..data_tmp"
	mv -T "$CM/..data_tmp" "$CM/..data"
	[ -n "${old_dir:-}" ] && rm -rf "${CM:?}/$old_dir"
	old_dir=$dir
	[ -L "$CM/policy.json" ] || ln -s ..data/policy.json "$CM/policy.json"
}
reloads() { grep -c "^devwld: reloaded $CM/policy.json" "$T/devwld.log"; }
# wait_reloads N: until N reloads are logged (60 s at most).
wait_reloads() {
	for _ in $(seq 1200); do
		[ "$(reloads)" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
# no_reload_after N WHAT: no reload beyond N while devwld's watch could still act on what
# was just written: a check runs at most 2 s (MAX_DELAY_MS, supervisor/front/watch.c) after the
# first event, so 3 s of none is an answer, not a guess; a reload seen fails at once.
no_reload_after() {
	local end=$((SECONDS + 3))
	while [ $SECONDS -le $end ]; do
		[ "$(reloads)" -le "$1" ] ||
			fail "$2 caused a reload: $(grep "policy.json" "$T/devwld.log" | tail -3)"
		sleep 0.05
	done
	echo "# $2: no reload within 3 s (the watch acts within 2 s)"
}

publish '{ "version": 1,
  "nodes": [ { "path": "/apps", "rules": ["deny a", "allow c 1:3 rw"] } ] }'
: >"$T/policy.json" # start_devwld's default, overridden below
start_devwld --policy "$CM/policy.json"

"$RUN" --connect "$T/listen.sock" --node /apps/web --id web -- sh -c '
	(: </dev/zero) 2>/dev/null && exit 3
	echo STARTED
	while [ ! -e "$1/go" ]; do sleep 0.05; done
	: </dev/zero || exit 4
	exit 0' sh "$T" >"$T/web.out" 2>&1 &
web=$!
CHILD_PIDS+=("$web")
wait_for "$T/web.out" STARTED || fail "workload did not start: $(cat "$T/web.out")"

# Noise first: other files come and go in the directory; nothing may be reloaded.
for i in 1 2 3; do echo "$i" >"$CM/unrelated-$i"; rm "$CM/unrelated-$i"; done
no_reload_after 0 "writes of unrelated files"

# A bad version: a rule the hierarchy refuses. Nothing may change.
publish '{ "version": 1,
  "nodes": [ { "path": "/apps", "rules": ["deny a", "allow c 1:3 rw", "allow c 1:5 rx"] } ] }'
wait_for "$T/devwld.log" "reload of $CM/policy.json failed, keeping the current policy" 5 ||
	fail "the bad ConfigMap version was not noticed"
ctl list /apps/web | grep -q '^c 1:5' && fail "a bad version changed the node"
pass "a bad ConfigMap version is noticed and refused: $(grep -m1 'reload of' "$T/devwld.log" | sed "s|^devwld: ||; s|$T|\$T|g")"

# The good version: /apps now allows c 1:5 r; the running workload must see it.
start=$(date +%s%N)
publish '{ "version": 1,
  "nodes": [ { "path": "/apps", "rules": ["deny a", "allow c 1:3 rw", "allow c 1:5 r"] } ] }'
wait_for "$T/devwld.log" "reloaded $CM/policy.json" 5 || fail "the good version was not loaded"
latency_ms=$((($(date +%s%N) - start) / 1000000))
ctl list /apps/web | grep -q '^c 1:5 r$' || fail "after the swap: $(ctl list /apps/web)"
touch "$T/go"
wait "$web" || fail "the running workload did not get the new rule (exit $?): $(cat "$T/web.out")"
pass "ConfigMap symlink swap reloaded in ${latency_ms} ms; the running workload got the new rule"

# The same content published again (kubelet resyncs): no reload.
n=$(reloads)
publish "$(cat "$CM/..data/policy.json")"
no_reload_after "$n" "an identical version"
# A plain in-place write is noticed too (a file edited on the host).
rm "$CM/policy.json"
printf '{ "version": 1, "nodes": [ { "path": "/apps", "rules": ["deny a"] } ] }\n' >"$CM/policy.json"
wait_reloads $((n + 1)) || fail "an in-place write was not noticed"
no_reload_after $((n + 1)) "a second reload for one in-place write"
ctl list /apps | grep -q . && fail "after the write /apps still allows: $(ctl list /apps)"
pass "an identical version causes no reload; an in-place write reloads once"

# --no-watch: SIGHUP only.
kill "$DEVWLD_PID"
wait "$DEVWLD_PID" 2>/dev/null
DEVWLD_PID=
rm -f "$T/listen.sock" "$T/control.sock"
: >"$T/devwld.log"
start_devwld --policy "$CM/policy.json" --no-watch
printf '{ "version": 1, "nodes": [ { "path": "/apps", "rules": ["deny a", "allow c 1:3 r"] } ] }\n' >"$CM/policy.json"
no_reload_after 0 "--no-watch: a write"
# The write was there to be read: SIGHUP loads it.
kill -HUP "$DEVWLD_PID"
wait_reloads 1 || fail "--no-watch: SIGHUP did not reload: $(tail -3 "$T/devwld.log")"
pass "--no-watch: no reload without SIGHUP, one with it"
exit 0
