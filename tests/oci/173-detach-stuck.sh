# Nothing a workload controls runs on devwld's loop (doc/DESIGN.md, "devwld's threads"):
# detach removes its node by walking the container's root from /proc/PID/root, and here
# the node is in a directory of a FUSE filesystem (fuse2fs) whose server is stopped after
# the attach, so the walk waits for as long as it stays stopped. Meanwhile the control
# socket answers within 100 ms and a second attach or detach of that container is
# refused (EBUSY); the detach itself ends at its deadline with ETIMEDOUT naming the path,
# and the grant is revoked all the same: no grant, no attachment left.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/stuck-lib.sh"

stuck_setup
at=/mnt/dir/loop-173
mkdir "$T/fuse/dir" || fail "mkdir on the FUSE filesystem"
ctl attach "$id" "$LOOP" "$at" >"$T/ctl.out" 2>&1 || fail "attach on FUSE: $(cat "$T/ctl.out")"
[ -b "$T/fuse/dir/loop-173" ] || fail "no node on the FUSE filesystem: $(ls -l "$T/fuse/dir")"
ctl list "/lab/$id" | grep -qx "b 7:$lmin rw" || fail "attach: $(ctl list "/lab/$id")"
pass "$LOOP attached at $at, on the FUSE filesystem"

kill -STOP "$FUSE_PID" || fail "cannot stop fuse2fs"
start=$SECONDS
"$DEVWLCTL" --socket "$T/control.sock" detach "$id" "$at" >"$T/detach.out" 2>&1 &
DETACHER=$!
CHILD_PIDS+=("$DETACHER")
work_threads 1 || fail "work_threads: $(timeout 5 "$DEVWLCTL" --socket "$T/control.sock" stats | grep work), want 1"
kill -0 "$DETACHER" 2>/dev/null || fail "detach ended with the FUSE server stopped: $(cat "$T/detach.out")"
responsive "a detach waits on FUSE"
out=$(timeout 5 "$DEVWLCTL" --socket "$T/control.sock" attach "$id" "$LOOP" /dev/loop-173 2>&1) &&
	fail "a second attach while the detach waits: $out"
grep -q "EBUSY.*under way" <<<"$out" || fail "a second attach while the detach waits: $out"
pass "a detach waits on the stopped FUSE server; devwld answers within 100 ms, a second attach is refused: $out"

ends "$DETACHER" 30 || fail "the detach did not end at its deadline"
wait "$DETACHER" && fail "detach succeeded with the FUSE server stopped: $(cat "$T/detach.out")"
took=$((SECONDS - start))
grep -q "ETIMEDOUT.*$at" "$T/detach.out" || fail "detach: $(cat "$T/detach.out"), want ETIMEDOUT naming $at"
[ $took -ge 4 ] && [ $took -le 20 ] || fail "detach ended after ${took}s, want about 5"
ctl list "/lab/$id" | grep -q "b 7:$lmin" && fail "the grant stayed after the deadline: $(ctl list "/lab/$id")"
[ -z "$(ctl containers --devices)" ] || fail "an attachment left: $(ctl containers --devices)"
grep -q '"event":"detach".*"revoked, node left"' "$T/audit.jsonl" || fail "no detach record: $(grep detach "$T/audit.jsonl")"
pass "the detach ends after ${took}s: $(cat "$T/detach.out"); the grant is revoked all the same"

kill -CONT "$FUSE_PID"
work_threads 0 || fail "work_threads after: $(stat_of work_threads)"
ctl attach "$id" "$LOOP" /dev/loop-173 >"$T/ctl.out" 2>&1 || fail "attach after: $(cat "$T/ctl.out")"
ctl detach "$id" /dev/loop-173 >"$T/ctl.out" 2>&1 || fail "detach after: $(cat "$T/ctl.out")"
pass "once fuse2fs goes on, the container takes an attach and a detach again"
touch "$T/rootfs/tmp/stop"
