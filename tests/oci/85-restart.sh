# Planned restart under load (devwld(8) RESTART): workloads (devwl-run --connect) open a
# device and a regular file in a loop and a runc container does the same, while devwld
# is restarted twice with `devwlctl restart` and twice with SIGUSR2. No call may fail, the
# containers stay listed, the live hierarchy (with a devwlctl change) stays as it was.
# Prints the longest wait a workload saw (the restart gap).
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] && [ -x "$HAMMER" ] || fail "devwl-run or hammer not built (the build should have made it)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:5 r", "allow c 1:3 rw"] },
             { "path": "/containers", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm",
               "allow c 1:8 rwm", "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm",
               "allow c 136:* rwm"] } ] }
JSON
echo data >"$T/file.txt"
start_devwld --no-audit
generation() { ctl stats | awk '/^generation / {print $2}'; }

# A devwlctl change that the policy file does not know: it must survive the restarts.
ctl mkdir /live && ctl deny /live 'c 1:9 rwm' && ctl mknod-cap /live false ||
	fail "devwlctl changes"
show_before=$(ctl show /live; ctl show /w)

# served_more N: until devwld has answered more than N calls (the hammers are at work).
served_more() {
	wait_until 60 sh -c '[ "$("$0" --socket "$1" stats | awk "\$1 == \"notifications\" {print \$2}")" -gt "$2" ]' \
		"$DEVWLCTL" "$T/control.sock" "$1" ||
		fail "no calls answered past $1 in 60 s: $(ctl stats | grep -E '^(notifications|generation|processes) ')"
}
tag=devwl-restart-$$
start_loop_container "$tag"

start_hammers 3 "$T/file.txt"
wait_containers 4
before=$(ctl containers | awk '{print $1, $2}' | sort)
served_more "$(stat_of notifications)"

g=$(generation)
for how in ctl ctl usr2 usr2; do
	if [ "$how" = ctl ]; then
		ctl restart || fail "devwlctl restart failed"
	else
		kill -USR2 "$DEVWLD_PID"
		for _ in $(seq 200); do
			[ "$(generation)" != "$g" ] && break
			sleep 0.02
		done
	fi
	g2=$(generation)
	[ "$g2" -gt "$g" ] || fail "$how: no new worker (generation $g → $g2)"
	g=$g2
	# The new worker serves before the next restart.
	served_more "$(stat_of notifications)"
done
pass "four planned restarts (2× devwlctl restart, 2× SIGUSR2), now at worker generation $g"

after=$(ctl containers | awk '{print $1, $2}' | sort)
[ "$before" = "$after" ] || fail "containers before: $before; after: $after"
pass "every container is still listed on its node"
[ "$(ctl show /live; ctl show /w)" = "$show_before" ] ||
	fail "hierarchy changed: $(ctl show /live; ctl show /w)"
pass "the live hierarchy (a devwlctl mkdir/deny/mknod-cap included) is intact"

touch "$T/stop" "$T/rootfs/tmp/stop"
worst=0
for i in 1 2 3; do
	wait "${HAMMER_PIDS[$((i - 1))]}" || fail "workload h$i saw errors: $(cat "$T/h$i.out")"
	read -r _ opens _ errors _ gap <"$T/h$i.out"
	[ "$errors" = 0 ] && [ "$opens" -gt 0 ] || fail "h$i: $(cat "$T/h$i.out")"
	[ "$gap" -gt "$worst" ] && worst=$gap
done
wait_for "$T/$tag.out" DONE 10 || fail "container did not finish: $(cat "$T/$tag.out")"
grep -q ERR "$T/$tag.out" && fail "container saw errors: $(cat "$T/$tag.out")"
pass "no call failed in 3 workloads ($(cat "$T"/h*.out | awk '{s += $2} END {print s}') opens) and the runc container ($(awk '/DONE/ {print $2}' "$T/$tag.out") loops)"
pass "restart gap: the longest a workload waited for an answer was $((worst / 1000)) ms ($worst µs)"
exit 0
