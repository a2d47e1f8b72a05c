# A feature that breaks after the start is logged as an ERROR and counted (devwld(8),
# DIAGNOSTICS; tests/oci/166 does the uevent socket refused and the audit file failing):
# here the uevents lost when the kernel's receive buffer overflows. devwld, following a
# selector binding, is stopped (SIGSTOP) while a loop device emits a burst of "change"
# uevents into a buffer made small (test hook DEVWLD_TEST_UEVENT_RCVBUF); when it runs
# again, the lost messages (ENOBUFS) give one ERROR line, uevents_failures in
# devwlctl stats and devwl_feature_failures_total{feature="uevents"} in the metrics, every
# binding resolved again, and a workload is served as before.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_test_hooks "a small uevent receive buffer"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
PROBE=$BUILD/tests/live/probe
for x in "$RUN" "$PROBE"; do
	[ -x "$x" ] || fail "$x not built (the build should have made it)"
done
make_loop
[ -w "/sys/block/${LOOP#/dev/}/uevent" ] || skip "/sys/block/${LOOP#/dev/}/uevent not writable (read-only /sys)"

cat >"$T/policy.json" <<JSON
{ "version": 1, "nodes": [ { "path": "/lab", "rules": ["deny a", "allow c 1:3 rw"] } ],
  "selectors": [ { "node": "/lab", "allow": "loop:$T/disk r" } ] }
JSON
DEVWLD_TEST_UEVENT_RCVBUF=1 start_devwld --no-audit
wait_for "$T/devwld.log" "selectors: following uevents" 10 || fail "devwld does not follow uevents"
[ "$(stat_of uevents_failures)" = 0 ] || fail "uevents_failures $(stat_of uevents_failures) at the start"

# The burst, while the worker cannot read: the kernel's smallest buffer holds a few.
worker=$(stat_of pid)
kill -STOP "$worker"
for _ in $(seq 64); do echo change >"/sys/block/${LOOP#/dev/}/uevent"; done
kill -CONT "$worker"
wait_for "$T/devwld.log" "ERROR: selectors: uevents were lost (the receive buffer overflowed)" 10 ||
	fail "no ERROR for the lost uevents"
wait_until 10 sh -c "[ \"\$($DEVWLCTL --socket $T/control.sock stats | awk '\$1 == \"uevents_failures\" {print \$2}')\" -ge 1 ]" ||
	fail "uevents_failures: $(stat_of uevents_failures)"
n=$(stat_of uevents_failures)
ctl metrics | grep -qx "devwl_feature_failures_total{feature=\"uevents\"} $n" ||
	fail "metrics: $(ctl metrics | grep feature_failures)"
out=$("$RUN" --connect "$T/listen.sock" --node /lab --id u1 -- "$PROBE" open /dev/null rdwr 2>&1)
[ "${out%% *}" = ok ] || fail "a workload after the overflow: $out"
out=$("$RUN" --connect "$T/listen.sock" --node /lab --id u2 -- "$PROBE" open "$LOOP" rdonly 2>&1)
[ "${out%% *}" = ok ] || fail "the bound loop device after the overflow: $out"
pass "uevents lost to a full receive buffer: an ERROR line, uevents_failures $n (stats and metrics), bindings resolved again, $LOOP and c 1:3 served"
exit 0
