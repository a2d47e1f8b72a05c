# A notify fd devwld cannot watch (a failed io_uring arm, injected with
# DEVWLD_TEST_FAIL_ARM in -DDEVWL_TEST_HOOKS=ON builds) is dropped loudly: the process's
# calls fail ENOSYS, as a dead listener's do, instead of waiting forever, so the keeper
# must let go of its copy too; every other container is served throughout. Once for the
# first arm (never served), once for the re-arm after its first call (served once).
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] && [ -x "$HAMMER" ] || fail "devwl-run or hammer not built (the build should have made it)"
[ "${DEVWL_TEST_HOOKS:-0}" = 1 ] || skip "devwld built without -DDEVWL_TEST_HOOKS=ON (fault injection)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:5 r"] } ] }
JSON
# --spin-us 0: a handler thread gives the fd back after each call, so every call
# after the first needs an arm (a busy fd otherwise stays with its thread).
DEVWLD_TEST_FAIL_ARM=early:1,late:2 start_devwld --no-audit --spin-us 0
start_hammers 1
wait_containers 1

notify_fds() { ls -l /proc/"$1"/fd 2>/dev/null | grep -c 'seccomp notify'; }
worker=$(stat_of pid)
[ "$(notify_fds "$DEVWLD_PID")" = 1 ] && [ "$(notify_fds "$worker")" = 1 ] ||
	fail "expected one notify fd in keeper and worker, not $(notify_fds "$DEVWLD_PID")/$(notify_fds "$worker")"

# A static busybox: a dynamic loader's own opens would be trapped too. "late" is served
# until its fd goes back to the ring (a handler thread may take a few calls in a row
# first, devwld(8) SERVING); from the failed arm on, every call fails ENOSYS.
for case in early:1 late:2; do
	id=${case%:*}
	rc=0
	timeout 30 "$RUN" --connect "$T/listen.sock" --node /w --id "$id" -- "$BUSYBOX" sh -c '
		i=0
		while [ $i -lt 40 ]; do
			i=$((i + 1))
			if true </dev/zero; then echo OK; else echo ERR; fi
		done' >"$T/$id.out" 2>&1 || rc=$?
	[ "$rc" != 124 ] || fail "$id: the calls hang once devwld cannot watch the fd: $(cat "$T/$id.out")"
	got=$(grep -E '^(OK|ERR)$' "$T/$id.out" | uniq -c | awk '{printf "%s ", $2}')
	if [ "$id" = early ]; then want="ERR "; else want="OK ERR "; fi
	[ "$got" = "$want" ] || fail "$id: expected '$want' runs of answers, got: $(uniq -c "$T/$id.out")"
	errs=$(grep -c '^ERR$' "$T/$id.out")
	[ "$(grep "can't open" "$T/$id.out" | grep -c "Function not implemented")" = "$errs" ] ||
		fail "$id: a failure other than ENOSYS: $(sort "$T/$id.out" | uniq -c)"
	grep -q "container $id .*cannot watch its notify fd" "$T/devwld.log" ||
		fail "$id: not logged"
	pass "$id: arm $case fails → the process is dropped loudly, its $errs later calls fail ENOSYS (no hang)"
done
ctl containers | grep -qE '^(early|late) ' && fail "a dropped process is still listed: $(ctl containers)"
[ "$(notify_fds "$DEVWLD_PID")" = 1 ] && [ "$(notify_fds "$worker")" = 1 ] ||
	fail "a dropped process's fd is still held: keeper $(notify_fds "$DEVWLD_PID"), worker $(notify_fds "$worker")"
pass "keeper and worker let go of the dropped fds"

touch "$T/stop"
wait "${HAMMER_PIDS[0]}" || fail "h1 (served throughout): $(cat "$T/h1.out")"
read -r _ opens _ errors _ <"$T/h1.out"
[ "$opens" -gt 0 ] && [ "$errors" = 0 ] || fail "h1: $(cat "$T/h1.out")"
pass "another container was served throughout ($opens opens, no errors)"
exit 0
