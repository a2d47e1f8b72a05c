# devwlctl changes and the policy file (devwld(8) RELOAD): one rule for every way the
# file is applied again — an automatic reload when it changes, SIGHUP, devwlctl reload, a
# planned restart, a start that finds the file changed — the file, then the devwlctl
# changes since it was loaded, in order. A revocation made with devwlctl is never undone
# by an unrelated change of the file; a change the new file refuses is dropped and
# logged; devwlctl reset drops them all.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] || fail "devwl-run not built at $RUN (the build should have made it)"

policy() { # EXTRA-NODES-JSON: /apps denies all but c 1:3 rw
	cat >"$T/policy.json" <<JSON
{ "version": 1,
  "nodes": [ { "path": "/apps", "rules": ["deny a", "allow c 1:3 rw", "allow c 1:9 r"] } $1 ] }
JSON
}
policy ""
start_devwld
"$RUN" --connect "$T/listen.sock" --node /apps/web --id web -- sh -c '
	echo UP; while [ ! -e "$1/go" ]; do sleep 0.1; done' sh "$T" >"$T/web.out" 2>&1 &
CHILD_PIDS+=("$!")
wait_for "$T/web.out" UP || fail "workload did not start: $(cat "$T/web.out")"

ctl allow /apps 'c 1:5 r' && ctl deny /apps 'c 1:3 w' && ctl deny /apps/web 'c 1:9 r' &&
	ctl mkdir /extra && ctl mknod-cap /extra false || fail "devwlctl changes"
want_apps=$'c 1:3 r\nc 1:9 r\nc 1:5 r'
expect() { # WHEN
	[ "$(ctl list /apps)" = "$want_apps" ] || fail "$1: /apps is $(ctl list /apps | tr '\n' ' ')"
	ctl list /apps/web | grep -q 'c 1:9' && fail "$1: the revocation on /apps/web is gone"
	ctl show /extra | grep -q '^mknod_needs_cap false$' || fail "$1: /extra: $(ctl show /extra 2>&1)"
	true
}
expect "after the changes"

# --- 1. the file changes: an automatic reload -------------------------------------------
n=$(grep -c "reloaded $T/policy.json" "$T/devwld.log")
policy ', { "path": "/other" }'
for _ in $(seq 100); do
	[ "$(grep -c "reloaded $T/policy.json" "$T/devwld.log")" -gt "$n" ] && break
	sleep 0.05
done
[ "$(grep -c "reloaded $T/policy.json" "$T/devwld.log")" -gt "$n" ] || fail "no automatic reload"
ctl show /other >/dev/null || fail "the new file was not applied"
expect "after the automatic reload"
grep -q "5 devwlctl changes applied again" "$T/devwld.log" || fail "reload log: $(grep reloaded "$T/devwld.log")"
pass "the file rewritten → automatic reload: the file's new node and all 5 devwlctl changes"

# --- 2. SIGHUP, devwlctl reload, a planned restart, a start with a changed file -----------
kill -HUP "$DEVWLD_PID" && ctl reload >/dev/null || fail "reload"
expect "after SIGHUP and devwlctl reload"
ctl restart || fail "devwlctl restart"
expect "after devwlctl restart"
kill "$DEVWLD_PID"
wait "$DEVWLD_PID" 2>/dev/null
DEVWLD_PID=
policy ', { "path": "/other2" }'
start_devwld
ctl show /other2 >/dev/null || fail "the file changed while devwld was down was not applied"
[ "$(ctl list /apps)" = "$want_apps" ] && ctl show /extra | grep -q '^mknod_needs_cap false$' ||
	fail "after a start with a changed file: $(ctl list /apps | tr '\n' ' ')"
pass "SIGHUP, devwlctl reload, devwlctl restart and a start with a changed file: the same changes on top of the file"

# --- 3. a change the new file refuses is dropped; reset drops all ---------------------
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:9 rwm"] },
             { "path": "/apps", "rules": ["deny a", "allow c 1:3 rw", "allow c 1:9 r"] } ] }
JSON
ctl reload >/dev/null || fail "reload with a root that denies"
grep -q 'devwlctl change "allow /apps c 1:5 r" no longer applies' "$T/devwld.log" ||
	fail "no log line for the dropped change"
[ "$(ctl list /apps)" = $'c 1:3 r\nc 1:9 r' ] || fail "after the refusing file: $(ctl list /apps | tr '\n' ' ')"
pass "a change the new file refuses (allow c 1:5 under a root that denies it) is dropped and logged"
ctl reset >/dev/null || fail "devwlctl reset"
[ "$(ctl list /apps)" = $'c 1:3 rw\nc 1:9 r' ] && ! ctl show /extra >/dev/null 2>&1 ||
	fail "after reset: $(ctl list /apps | tr '\n' ' ')"
ctl reload >/dev/null && [ "$(ctl list /apps)" = $'c 1:3 rw\nc 1:9 r' ] || fail "reset did not forget"
pass "devwlctl reset: the file alone, and a later reload brings nothing back"
touch "$T/go"
exit 0
