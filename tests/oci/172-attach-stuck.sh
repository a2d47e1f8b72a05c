# Nothing a workload controls runs on devwld's loop (doc/DESIGN.md, "devwld's threads"):
# attach makes its node by walking the container's root from /proc/PID/root, and here the
# path goes through a directory of a FUSE filesystem (fuse2fs) whose server is stopped,
# so the walk waits for as long as it stays stopped. Meanwhile the control socket answers
# within 100 ms; the attach itself ends at its deadline with ETIMEDOUT naming the path,
# its grant taken back; once the server goes on, the node the thread made too late is
# removed, and the container takes attaches again.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/stuck-lib.sh"

stuck_setup
at=/mnt/dir/loop-172
mkdir "$T/fuse/dir" || fail "mkdir on the FUSE filesystem"

responsive "nothing waits"
kill -STOP "$FUSE_PID" || fail "cannot stop fuse2fs"
start=$SECONDS
"$DEVWLCTL" --socket "$T/control.sock" attach "$id" "$LOOP" "$at" >"$T/attach.out" 2>&1 &
ATTACHER=$!
CHILD_PIDS+=("$ATTACHER")
work_threads 1 || fail "work_threads: $(timeout 5 "$DEVWLCTL" --socket "$T/control.sock" stats | grep work), want 1"
kill -0 "$ATTACHER" 2>/dev/null || fail "attach ended with the FUSE server stopped: $(cat "$T/attach.out")"
timeout 5 "$DEVWLCTL" --socket "$T/control.sock" list "/lab/$id" | grep -qx "b 7:$lmin rw" ||
	fail "the grant is not in force while the node is made: $(ctl list "/lab/$id")"
responsive "an attach waits on FUSE"
pass "an attach waits on the stopped FUSE server; devwld answers within 100 ms meanwhile"

ends "$ATTACHER" 30 || fail "the attach did not end at its deadline"
wait "$ATTACHER" && fail "attach succeeded with the FUSE server stopped: $(cat "$T/attach.out")"
took=$((SECONDS - start))
grep -q "ETIMEDOUT.*$at" "$T/attach.out" || fail "attach: $(cat "$T/attach.out"), want ETIMEDOUT naming $at"
[ $took -ge 4 ] && [ $took -le 20 ] || fail "attach ended after ${took}s, want about 5"
ctl list "/lab/$id" | grep -q "b 7:$lmin" && fail "a grant left after the deadline: $(ctl list "/lab/$id")"
[ -z "$(ctl containers --devices)" ] || fail "an attachment left: $(ctl containers --devices)"
pass "the attach ends after ${took}s: $(cat "$T/attach.out"); no grant, no attachment left"

kill -CONT "$FUSE_PID"
work_threads 0 || fail "work_threads after: $(stat_of work_threads)"
[ -e "$T/fuse/dir/loop-172" ] && fail "the node made after the deadline stayed: $(ls -l "$T/fuse/dir")"
ctl attach "$id" "$LOOP" /dev/loop-172 >"$T/ctl.out" 2>&1 || fail "attach after: $(cat "$T/ctl.out")"
ctl list "/lab/$id" | grep -qx "b 7:$lmin rw" || fail "attach after: $(ctl list "/lab/$id")"
pass "once fuse2fs goes on, the late node is removed and the container takes an attach"
touch "$T/rootfs/tmp/stop"
