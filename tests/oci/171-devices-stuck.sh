# Nothing a workload controls runs on devwld's loop (doc/DESIGN.md, "devwld's threads"):
# `devwlctl containers --devices` stat()s every open file of an attached container's
# processes to find who holds the device, and one of those files is on a FUSE filesystem
# whose server (fuse2fs) is stopped, so the listing waits for as long as it stays
# stopped. Meanwhile the control socket answers (`list /`) and a new runc container is
# served; four listings may wait at once, a fifth is refused at once (EBUSY); once the
# server goes on, every waiting listing ends with the holder's pid.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/stuck-lib.sh"
# fd 3: the FUSE file, first, so that the walk of the holder's fds meets it before the
# device; fd 4: the attached device.
stuck_setup "exec 3</mnt/file; while [ ! -e @LOOP@ ]; do sleep 0.1; done; exec 4<@LOOP@;
echo HELD; while [ ! -e /tmp/stop ]; do sleep 0.1; done"
ctl attach "$id" "$LOOP" >"$T/ctl.out" 2>&1 || fail "attach: $(cat "$T/ctl.out")"
wait_until 60 sh -c '"$0" --socket "$1" containers --devices | grep -q "^$2 b 7:$3 rw $4 [0-9]"' \
	"$DEVWLCTL" "$T/control.sock" "$id" "$lmin" "$LOOP" ||
	fail "containers --devices: $(ctl containers --devices); $(cat "$T/$id.out")"
pass "the container holds $LOOP and a file on FUSE open; containers --devices names its pid"

kill -STOP "$FUSE_PID" || fail "cannot stop fuse2fs"
for i in 1 2 3 4; do
	"$DEVWLCTL" --socket "$T/control.sock" containers --devices >"$T/devices-$i.out" 2>&1 &
	LISTERS+=("$!")
	CHILD_PIDS+=("$!")
done
# Stuck: the FUSE server does not answer the holders' stat().
# listings() N: devwld's stats say N listings are under way (a loop that no longer
# answers fails it, at once: timeout 5).
listings() {
	wait_until 60 sh -c '[ "$(timeout 5 "$0" --socket "$1" stats | awk "\$1 == \"device_listings\" {print \$2}")" = "$2" ]' \
		"$DEVWLCTL" "$T/control.sock" "$1"
}
listings 4 || fail "device_listings: $(timeout 5 "$DEVWLCTL" --socket "$T/control.sock" stats | grep listings), want 4"
sleep 1
for pid in "${LISTERS[@]}"; do
	kill -0 "$pid" 2>/dev/null || fail "a listing ended with the FUSE server stopped: $(cat "$T"/devices-*.out)"
done
out=$(timeout 5 "$DEVWLCTL" --socket "$T/control.sock" list /lab 2>&1) ||
	fail "list /lab while listings wait on FUSE: not answered ($out)"
grep -qx 'allow b 7:\* rw\|b 7:\* rw' <<<"$out" || fail "list /lab: $out"
pass "four listings wait on the stopped FUSE server; the control socket answers meanwhile"

# A fifth is refused at once, saying why.
out=$(timeout 10 "$DEVWLCTL" --socket "$T/control.sock" containers --devices 2>&1)
rc=$?
[ $rc = 1 ] || fail "a fifth listing: rc $rc: $out"
grep -q "EBUSY.*4 listings under way" <<<"$out" || fail "a fifth listing: $out"
pass "a fifth listing is refused at once: $out"

# A new container is served: it registers and opens what its policy allows.
make_bundle new "true </dev/null && echo NEW-OK"
timeout 120 runc run --bundle "$T/new" "new-$$" >"$T/new.out" 2>&1 </dev/null
CONTAINERS+=("new-$$")
grep -qx NEW-OK "$T/new.out" || fail "a new container while listings wait: $(cat "$T/new.out")"
grep -q "new-$$" "$T/audit.jsonl" || fail "the new container never reached devwld"
pass "a new runc container is served while the listings wait"

kill -CONT "$FUSE_PID"
for i in 1 2 3 4; do
	wait "${LISTERS[$((i - 1))]}" || fail "listing $i: $(cat "$T/devices-$i.out")"
	grep -q "^$id b 7:$lmin rw $LOOP [0-9]" "$T/devices-$i.out" ||
		fail "listing $i: $(cat "$T/devices-$i.out")"
done
listings 0 || fail "device_listings after: $(stat_of device_listings)"
pass "once fuse2fs goes on, the four listings end, each naming the holder; device_listings 0"
touch "$T/rootfs/tmp/stop"
