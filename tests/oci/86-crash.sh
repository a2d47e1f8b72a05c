# The worker killed (SIGKILL) under load (devwld(8) RESTART): the keeper starts a new one
# and every container is served again; the only failures are ENOSYS answers to calls the
# dead worker had taken, at most one per process. Then the in-flight case exactly: a
# worker stopped right after it received a workload's call (DEVWLD_TEST_STOP_FILE) is
# killed; that call fails ENOSYS, the workload's next call succeeds. Prints how long the
# containers waited; asserts only that they were served again.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] && [ -x "$HAMMER" ] || fail "devwl-run or hammer not built (the build should have made it)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:5 r", "allow c 1:3 rw"] } ] }
JSON
echo data >"$T/file.txt"
DEVWLD_TEST_STOP_FILE=$T/stop-on start_devwld --no-audit

# served_more N: until devwld has answered more than N calls (the hammers are at work).
served_more() {
	wait_until 60 sh -c '[ "$("$0" --socket "$1" stats | awk "\$1 == \"notifications\" {print \$2}")" -gt "$2" ]' \
		"$DEVWLCTL" "$T/control.sock" "$1" ||
		fail "no calls answered past $1 in 60 s: $(ctl stats | grep -E '^(notifications|generation|processes) ')"
}
tag=devwl-crash-$$
start_loop_container "$tag"
start_hammers 3 "$T/file.txt"
wait_containers 4
before=$(ctl containers | awk '{print $1, $2}' | sort)
served_more "$(stat_of notifications)"

# --- 1. SIGKILL under load -------------------------------------------------------------
for round in 1 2; do
	worker=$(stat_of pid)
	g=$(stat_of generation)
	t0=$(date +%s%N)
	kill -9 "$worker"
	# Served again: a new worker answers, with every container attached.
	for _ in $(seq 6000); do
		[ "$(stat_of generation)" != "$g" ] && break
		sleep 0.005
	done
	t1=$(date +%s%N)
	[ "$(stat_of generation)" -gt "$g" ] || fail "no new worker after SIGKILL"
	after=$(ctl containers | awk '{print $1, $2}' | sort)
	[ "$before" = "$after" ] || fail "containers before: $before; after: $after"
	n0=$(stat_of notifications)
	more_notifications() { [ "$(stat_of notifications)" -gt "$n0" ]; }
	wait_until 60 more_notifications || fail "the new worker answers nothing"
	# Attached a moment ago or long before: no process is let go (devwld(8) STATE).
	grep "let go" "$T/devwld.log" >&2 && fail "SIGKILL $round: a process was let go"
	pass "SIGKILL $round of the worker: a new one served every container after $(((t1 - t0) / 1000000)) ms"
done

touch "$T/stop" "$T/rootfs/tmp/stop"
for i in 1 2 3; do
	wait "${HAMMER_PIDS[$((i - 1))]}"
	read -r _ opens _ errors _ gap <"$T/h$i.out"
	[ "$opens" -gt 0 ] || fail "h$i: $(cat "$T/h$i.out")"
	# Only ENOSYS, for a call a killed worker held: at most one per kill.
	other=$(grep '^errno' "$T/h$i.out" | grep -vc '^errno ENOSYS ')
	[ "$other" = 0 ] && [ "$errors" -le 2 ] || fail "h$i: wrong answers: $(cat "$T/h$i.out")"
	echo "  h$i: $opens opens, $errors ENOSYS, longest wait $((gap / 1000)) ms"
done
wait_for "$T/$tag.out" DONE 10 || fail "container did not finish: $(cat "$T/$tag.out")"
# busybox sh says why an open failed: only "Function not implemented", once per kill.
[ "$(grep -c '^ERR' "$T/$tag.out")" -le 2 ] &&
	! grep "can't open" "$T/$tag.out" | grep -vq "Function not implemented" ||
	fail "container: $(cat "$T/$tag.out")"
pass "no wrong answers: the workloads and the runc container saw only successes and at most one ENOSYS per kill"

# --- 2. the call a killed worker held fails ENOSYS; the next one succeeds ----------------
need_test_hooks "stopping the worker with a call in hand (part 2)"
# Once with the call recorded in the keeper's table, once killed between RECV and the
# record: the keeper finds that one by the filter's next ids (ID_VALID).
for how in recorded unrecorded; do
	id=inflight-$how
	rm -f "$T/go"
	"$RUN" --connect "$T/listen.sock" --node /w --id "$id" -- \
		"$HAMMER" --once "$T/go" /dev/zero >"$T/$id.out" 2>&1 &
	CHILD_PIDS+=("$!")
	once=$!
	# Attached; whether a state write names it yet or not (devwld(8) STATE).
	for _ in $(seq 100); do
		ctl containers | grep -q "^$id " && break
		sleep 0.05
	done
	worker=$(stat_of pid)
	if [ $how = recorded ]; then echo "$id"; else echo "$id unrecorded"; fi >"$T/stop-on"
	touch "$T/go"
	for _ in $(seq 200); do
		[ "$(awk '{print $3}' /proc/"$worker"/stat 2>/dev/null)" = T ] && break
		sleep 0.01
	done
	[ "$(awk '{print $3}' /proc/"$worker"/stat)" = T ] ||
		fail "$how: the worker did not stop after receiving the call"
	grep -q "^first" "$T/$id.out" && fail "$how: answered while the worker was stopped"
		logged=$(grep -c "answered ENOSYS to notification" "$T/devwld.log")
	kill -9 "$worker"
	for _ in $(seq 200); do
		kill -0 "$once" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$once" 2>/dev/null && fail "$how: the held call was never answered"
	wait "$once" || fail "$how: hammer --once: $(cat "$T/$id.out")"
	grep -q '^first ENOSYS$' "$T/$id.out" && grep -q '^second OK$' "$T/$id.out" ||
		fail "$how: expected ENOSYS then OK: $(cat "$T/$id.out")"
	[ "$(grep -c "answered ENOSYS to notification" "$T/devwld.log")" -gt "$logged" ] ||
		fail "$how: keeper did not log the ENOSYS"
	pass "$how: a call the killed worker held → ENOSYS (as the kernel fails a dead listener's calls); the next call succeeds"
done
exit 0
