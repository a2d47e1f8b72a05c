#!/bin/bash
# 200 processes attach within one second: each hands its notify fd to devwld
# (devwl-run --connect, as a runtime's listener message does) and makes trapped calls at
# once. Every one of them is attached, gets the right answers (its granted device opened,
# a denied one refused) and finishes; devwld counts no error and forgets them all.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] || fail "devwl-run not built at $RUN (the build should have made it)"
N=200

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/b", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
start_devwld --no-audit
ulimit -n 65536 2>/dev/null

mkdir "$T/go"
pids=()
for i in $(seq "$N"); do
	"$RUN" --connect "$T/listen.sock" --node /b --id "b$i" -- sh -c '
		true </dev/null || exit 1
		(: </dev/zero) 2>/dev/null && exit 2
		while [ ! -e "$1/stop" ]; do sleep 0.05; done
		true </dev/null || exit 3' sh "$T/go" >"$T/b$i.out" 2>&1 &
	pids+=("$!")
	CHILD_PIDS+=("$!")
	# 200 in one second: 5 ms apart.
	sleep 0.005
done
for _ in $(seq 1200); do
	[ "$(stat_of processes)" = "$N" ] && break
	sleep 0.05
done
[ "$(stat_of processes)" = "$N" ] ||
	fail "only $(stat_of processes) of $N processes attached in 60 s: $(tail -3 "$T/devwld.log")"
pass "$N processes attached"
touch "$T/go/stop"
bad=0
for i in $(seq "$N"); do
	wait "${pids[$((i - 1))]}" || {
		bad=$((bad + 1))
		[ "$bad" -le 5 ] && echo "b$i: exit $? $(cat "$T/b$i.out")" >&2
	}
done
[ "$bad" = 0 ] || fail "$bad of $N processes got a wrong answer"
[ "$(stat_of errors)" = 0 ] || fail "devwld counted errors: $(ctl stats)"
for _ in $(seq 1200); do
	[ "$(stat_of containers)" = 0 ] && break
	sleep 0.05
done
[ "$(stat_of containers)" = 0 ] || fail "$(stat_of containers) containers left 60 s after the workloads exited: $(ctl containers | head)"
pass "all $N got their grants and denials, and devwld forgot them all"
exit 0
