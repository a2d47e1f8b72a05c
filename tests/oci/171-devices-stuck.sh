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
command -v fuse2fs >/dev/null || skip "no fuse2fs (Debian package fuse2fs)"
command -v mke2fs >/dev/null || skip "no mke2fs (e2fsprogs)"
[ -c /dev/fuse ] || skip "no /dev/fuse on this host"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/lab",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow b 7:* rw"],
      "mknod_needs_cap": false } ],
  "containers": { "default_template": "/lab/{id}", "container_rules": ["deny b 7:* rwm"] } }
JSON
make_loop
lmin=$LMIN

# The FUSE server, in the foreground so that its pid is ours to stop; attributes never
# cached, so every stat() of its files asks it.
mke2fs -q -F -t ext2 "$T/img" 4M >/dev/null || fail "mke2fs"
mkdir "$T/fuse"
fuse2fs -f -o fakeroot,attr_timeout=0,entry_timeout=0 "$T/img" "$T/fuse" >"$T/fuse2fs.out" 2>&1 &
FUSE_PID=$!
CHILD_PIDS+=("$FUSE_PID")
wait_until 30 sh -c 'awk -v m="$0" '"'"'$2 == m && $3 ~ /^fuse/ {f = 1} END {exit !f}'"'"' /proc/self/mounts' \
	"$T/fuse" || skip "fuse2fs does not mount here: $(cat "$T/fuse2fs.out")"
echo held >"$T/fuse/file" || fail "writing on the FUSE filesystem"
# Before lib.sh's cleanup: the server goes on and its mount goes, so that nothing
# (runc killing the container, the rm of $T) waits on it.
trap 'st=$?; kill -CONT "$FUSE_PID" 2>/dev/null; umount -l "$T/fuse" 2>/dev/null; (exit $st); cleanup' EXIT

start_devwld
make_rootfs
id=stuck-$$
# fd 3: the FUSE file, first, so that the walk of the holder's fds meets it before the
# device; fd 4: the attached device.
make_bundle "$id" "exec 3</mnt/file; while [ ! -e $LOOP ]; do sleep 0.1; done; exec 4<$LOOP;
echo HELD; while [ ! -e /tmp/stop ]; do sleep 0.1; done" \
	'.mounts += [{destination: "/mnt", type: "bind", source: "'"$T/fuse"'", options: ["rbind"]}]'
run_detached "$id" "$T/$id"
wait_until 60 sh -c '"$0" --socket "$1" containers | grep -q "^$2 "' "$DEVWLCTL" \
	"$T/control.sock" "$id" || fail "$id never reached devwld: $(cat "$T/$id.out")"
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
