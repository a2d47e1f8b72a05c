# A source destroyed while its poll is armed and the ring has no free entry (injected
# with DEVWLD_TEST_NO_SQE in -DDEVWL_TEST_HOOKS=ON builds) is cancelled anyway, never
# leaked: through the synchronous cancel (destroy), or retried the next round when that
# fails too (all). Seen from outside: a runtime connection that sends nothing is closed
# at its deadline (a leaked poll would keep the socket open, the client waiting), and
# under ASan no leak is reported at exit.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
CLIENT=$OCI_BIN/oci-client
[ -x "$CLIENT" ] || fail "oci-client not built at $CLIENT (the build should have made it)"
[ "${DEVWL_TEST_HOOKS:-0}" = 1 ] || skip "devwld built without -DDEVWL_TEST_HOOKS=ON (fault injection)"

echo '{ "version": 1, "nodes": [] }' >"$T/policy.json"
for mode in destroy all; do
	DEVWLD_TEST_NO_SQE=$mode start_devwld --no-audit --timeout-ms 200
	pids=()
	for i in 1 2 3 4; do
		"$CLIENT" "$T/listen.sock" silent >"$T/c$i.out" 2>&1 &
		pids+=("$!")
		CHILD_PIDS+=("$!")
	done
	for i in 1 2 3 4; do
		wait "${pids[$((i - 1))]}" || fail "$mode: client $i not dropped: $(cat "$T/c$i.out")"
	done
	[ "$(stat_of pending_connections)" = 0 ] || fail "$mode: connections left"
	if [ $mode = all ]; then
		grep -q "retrying next round" "$T/devwld.log" || fail "$mode: the retry did not run"
	fi
	kill "$DEVWLD_PID"
	wait "$DEVWLD_PID" || fail "$mode: devwld exited $?"
	DEVWLD_PID=
	pass "$mode: 4 silent connections closed at their deadline with no SQE for the cancel"
done
exit 0
