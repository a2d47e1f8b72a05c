# The set-up of the stuck-FUSE tests 171-173 (sourced after lib.sh): a runc container
# $id with a FUSE filesystem (fuse2fs, server pid FUSE_PID, host path $T/fuse) bound at
# /mnt, a loop device $LOOP (minor $lmin) for it to be given, and the helpers below.
command -v fuse2fs >/dev/null || skip "no fuse2fs (Debian package fuse2fs)"
command -v mke2fs >/dev/null || skip "no mke2fs (e2fsprogs)"
[ -c /dev/fuse ] || skip "no /dev/fuse on this host"

# stuck_setup [CMD]: the container runs CMD (default: waits for /tmp/stop), with @LOOP@
# in it replaced by $LOOP; /mnt/file (holding "held") is there before it starts.
stuck_setup() {
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
	# In the foreground, so that its pid is ours to stop; nothing cached, so that every
	# lookup asks it; "dev", so that a node made there is a node.
	mke2fs -q -F -t ext2 "$T/img" 4M >/dev/null || fail "mke2fs"
	mkdir "$T/fuse"
	fuse2fs -f -o fakeroot,dev,attr_timeout=0,entry_timeout=0,negative_timeout=0 \
		"$T/img" "$T/fuse" >"$T/fuse2fs.out" 2>&1 &
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
	local cmd=${1:-while [ ! -e /tmp/stop ]; do sleep 0.1; done}
	make_bundle "$id" "${cmd//@LOOP@/$LOOP}" \
		'.mounts += [{destination: "/mnt", type: "bind", source: "'"$T/fuse"'", options: ["rbind"]}]'
	run_detached "$id" "$T/$id"
	wait_until 60 sh -c '"$0" --socket "$1" containers | grep -q "^$2 "' "$DEVWLCTL" \
		"$T/control.sock" "$id" || fail "$id never reached devwld: $(cat "$T/$id.out")"
}

# work_threads N: devwld's stats say N work threads are under way (a loop that no longer
# answers fails it, at once: timeout 5).
work_threads() {
	wait_until 30 sh -c '[ "$(timeout 5 "$0" --socket "$1" stats | awk "\$1 == \"work_threads\" {print \$2}")" = "$2" ]' \
		"$DEVWLCTL" "$T/control.sock" "$1"
}

# responsive WHILE [MS [TRIES]]: `containers` and `list /` answered within MS (100) ms on
# the control socket, the best of TRIES (5) each, timed inside one process (on a busy
# machine starting a process alone can take 100 ms; a loop that waits answers none of
# them: 5 s, then a failure).
responsive() {
	python3 - "$T/control.sock" "$1" "${2:-100}" "${3:-5}" <<'PY' || fail "the control socket while $1"
import socket, sys, time
limit, tries = float(sys.argv[3]), int(sys.argv[4])
for cmd in ("containers", "list /"):
    best = None
    for _ in range(tries):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        t0 = time.monotonic()
        s.connect(sys.argv[1])
        s.sendall(cmd.encode() + b"\n")
        s.shutdown(socket.SHUT_WR)
        out = b""
        try:
            while not out.endswith(b".\n") and not out.startswith(b"error"):
                b = s.recv(65536)
                if not b:
                    break
                out += b
        except socket.timeout:
            sys.exit("FAIL: %s while %s: not answered in 5 s" % (cmd, sys.argv[2]))
        ms = (time.monotonic() - t0) * 1000
        s.close()
        if not out.endswith(b".\n"):
            sys.exit("FAIL: %s while %s: %r" % (cmd, sys.argv[2], out))
        best = ms if best is None else min(best, ms)
    if best >= limit:
        sys.exit("FAIL: %s while %s: answered in %d ms at best, want < %d" % (cmd, sys.argv[2], best, limit))
    print("# %s while %s: %.1f ms" % (cmd, sys.argv[2], best))
PY
}

# watch_latency SECONDS OUT: in the background, `stats` on the control socket every 50 ms
# for SECONDS; OUT gets the slowest answer in ms (a loop held by a parse or a walk shows
# as one answer that took that long). Wait for it with wait "$WATCHER".
watch_latency() {
	python3 - "$T/control.sock" "$1" >"$2" 2>&1 <<'PY' &
import socket, sys, time
end = time.monotonic() + float(sys.argv[2])
worst = 0.0
while time.monotonic() < end:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    t0 = time.monotonic()
    s.connect(sys.argv[1])
    s.sendall(b"stats\n")
    s.shutdown(socket.SHUT_WR)
    out = b""
    while not out.endswith(b".\n"):
        b = s.recv(65536)
        if not b:
            break
        out += b
    s.close()
    worst = max(worst, (time.monotonic() - t0) * 1000)
    time.sleep(0.05)
print(int(worst))
PY
	WATCHER=$!
	CHILD_PIDS+=("$WATCHER")
}

# ends PID SECONDS: the process PID ends within SECONDS (a request past its deadline
# must end, whatever it waits on).
ends() {
	wait_until "$2" sh -c '! kill -0 "$0" 2>/dev/null' "$1"
}
