# Nothing a workload controls runs on devwld's loop (doc/DESIGN.md, "devwld's threads"),
# and a CDI spec is a file others write: the specs a container's "cdi.k8s.io/" annotation
# needs are read on a work thread, and the container's calls wait for the grant
# (devwld(8) SECURITY). Here the spec directory (--cdi-dir) lies on a FUSE filesystem
# (fuse2fs) whose server is stopped, so reading it waits for as long as it stays stopped.
# A runc container started with the annotation meanwhile: devwld still answers `list /`
# and `containers`, and the container's calls wait (runc's own open of its exec FIFO
# among them, so `runc run` waits too); past the read's deadline (10 s) it is served
# without the device (EPERM), the refusal said in the log. A second one started 3 s
# later is granted /dev/full once the server goes on (after the first's deadline, before
# its own), and its first open, which waited, reads it. Then, with no spec followed,
# devwlctl allow of a cdi: selector and devwlctl reload wait for the read the same way.
#
# "Answered" here means within 2 s, not the 100 ms of 172-174: on a loop held by the read
# no answer comes at all until the server goes on, so 2 s tells the two apart as well and
# does not flake on a machine loaded by other tests.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/stuck-lib.sh"

# The spec in an ext2 image, owned by root and written by no one else (common/cdi.c reads
# nothing else), served by fuse2fs in the foreground (its pid ours to stop), uncached.
mkdir -p "$T/img.d/cdi" "$T/fuse" && chmod 0755 "$T/img.d" "$T/img.d/cdi" || fail "mkdir"
cat >"$T/img.d/cdi/dev.json" <<'SPEC'
{ "cdiVersion": "0.6.0", "kind": "test.devwl.org/dev",
  "devices": [ { "name": "full",
                 "containerEdits": { "deviceNodes": [ { "path": "/dev/full", "type": "c",
                                                         "major": 1, "minor": 7, "permissions": "rw" } ] } } ] }
SPEC
chmod 0644 "$T/img.d/cdi/dev.json"
mke2fs -q -F -t ext2 -d "$T/img.d" "$T/img" 4M >/dev/null 2>&1 || skip "mke2fs -d does not work here"
fuse2fs -f -o fakeroot,ro,attr_timeout=0,entry_timeout=0,negative_timeout=0 \
	"$T/img" "$T/fuse" >"$T/fuse2fs.out" 2>&1 &
FUSE_PID=$!
CHILD_PIDS+=("$FUSE_PID")
wait_until 30 test -f "$T/fuse/cdi/dev.json" || skip "fuse2fs does not mount here: $(cat "$T/fuse2fs.out")"
# Before lib.sh's cleanup: the server goes on and its mount goes, so that nothing waits.
trap 'st=$?; kill -CONT "$FUSE_PID" 2>/dev/null; umount -l "$T/fuse" 2>/dev/null; (exit $st); cleanup' EXIT

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/lab", "cdi_annotations": true,
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:7 rw",
                "allow c 1:8 rwm", "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm",
                "allow c 136:* rwm"],
      "mknod_needs_cap": false } ],
  "containers": { "default_template": "/lab/{id}", "container_rules": ["deny c 1:7 rwm"] } }
JSON
start_devwld --kernel-mode never --cdi-dir "$T/fuse/cdi"
make_rootfs

# start ID: a container whose annotation names test.devwl.org/dev=full; its first open
# is of /dev/full (runc's own node), whose answer it writes to /tmp/first-ID.
start() {
	make_bundle "$1" "head -c 1 /dev/full >/dev/null 2>&1; echo RC=\$? >/tmp/first-$1
		while [ ! -e /tmp/stop-$1 ]; do sleep 0.1; done" \
		'.annotations = {"cdi.k8s.io/devwl-test": "test.devwl.org/dev=full"}'
	# In the background: runc's own open of its exec FIFO, after the filter, is a call
	# of the container's and waits with the rest, so `runc run` returns only once served.
	CONTAINERS+=("$1")
	rt_create run -d --bundle "$T/$1" "$1" >"$T/$1.out" 2>&1 </dev/null &
	CHILD_PIDS+=("$!")
	wait_until 30 sh -c 'timeout 5 "$0" --socket "$1" containers | grep -q "^$2 "' \
		"$DEVWLCTL" "$T/control.sock" "$1" || fail "$1 never listed by devwld (its loop held?): $(cat "$T/$1.out")"
}
# answered WHILE: `list /` and `containers` each answered within 2 s (above).
answered() { responsive "$1" 2000 1; }
first() { cat "$T/rootfs/tmp/first-$1" 2>/dev/null; }
# waiting ID: where ID's processes wait, for a failure's message.
waiting() {
	local pid p
	pid=$(runc state "$1" 2>/dev/null | jq -r .pid)
	for p in $pid $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
		printf '%s (%s): %s; ' "$p" "$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | cut -c1-20)" \
			"$(cat /proc/"$p"/wchan 2>/dev/null)"
	done
}

kill -STOP "$FUSE_PID" || fail "cannot stop fuse2fs"
a=cdislow-a-$$ b=cdislow-b-$$
start "$a"
since_a=$SECONDS
work_threads 1 || fail "no read of the specs under way: $(timeout 5 "$DEVWLCTL" --socket "$T/control.sock" stats | grep work)"
answered "$a's CDI spec cannot be read"
grep -q "container $a: its calls wait while the CDI specs" "$T/devwld.log" ||
	fail "no log line for $a's wait"
[ -z "$(first "$a")" ] || fail "$a's first open was answered before its grant: $(first "$a")"
pass "$a's CDI spec on a stopped FUSE server: devwld answers list / and containers; $a's first open waits"

# $b while $a waits for its deadline (to keep the test short), at least 3 s later, so
# that the server goes on again after $a's deadline and well before $b's.
while [ $((SECONDS - since_a)) -lt 3 ]; do sleep 0.2; done
start "$b"
answered "$b's CDI spec cannot be read as well"
[ -z "$(first "$b")" ] || fail "$b's first open was answered before its grant: $(first "$b")"

wait_for "$T/devwld.log" "container $a: its CDI annotations name 1 devices, none granted: the CDI specs were not read within 10 s" 30 ||
	fail "no refusal at the read's deadline"
kill -CONT "$FUSE_PID"
# Bounds for a machine loaded by other tests: each ends as soon as its condition holds.
wait_until 30 test -n "$(first "$a")" ||
	fail "$a was not served after the deadline: $(waiting "$a")"
[ "$(first "$a")" = RC=1 ] || fail "$a's first open after the deadline: $(first "$a"), want a refusal"
ctl selectors | grep -q "/lab/$a " && fail "a binding for $a: $(ctl selectors)"
pass "past the 10 s deadline $a is served without the device: its open of /dev/full fails, said in the log"

wait_until 30 test -n "$(first "$b")" ||
	fail "$b was never served once the spec was readable: $(waiting "$b")"
grep -q "container $b: its CDI annotations name 1 devices, none granted" "$T/devwld.log" &&
	fail "$b's read reached its deadline too (a machine too slow for this test?)"
[ "$(first "$b")" = RC=0 ] || fail "$b's first open: $(first "$b"), want /dev/full read"
ctl selectors | grep -qxF "/lab/$b allow cdi:test.devwl.org/dev=full [annotation]: c 1:7 rw" ||
	fail "selectors: $(ctl selectors)"
work_threads 0 || fail "a read of the specs never ended"
pass "once the FUSE server goes on, $b is granted /dev/full (c 1:7 rw) and its first open, which waited, reads it"
touch "$T/rootfs/tmp/stop-$a" "$T/rootfs/tmp/stop-$b"
for c in "$a" "$b"; do
	wait_until 30 sh -c '! timeout 5 "$0" --socket "$1" containers | grep -q "^$2 "' \
		"$DEVWLCTL" "$T/control.sock" "$c" || fail "$c still listed"
done

# devwlctl's lines that resolve a cdi: selector, or the policy file's (reload), while no
# spec is followed: they too wait for a work thread's read, never the loop's.
ctl selectors | grep -q cdi: && fail "a cdi: binding left to follow: $(ctl selectors)"
ctl mkdir /lab/x || fail "mkdir /lab/x"
kill -STOP "$FUSE_PID" || fail "cannot stop fuse2fs"
ctl allow /lab/x cdi:test.devwl.org/dev=full rw >"$T/allow.out" 2>&1 &
ALLOW=$!
ctl reload >"$T/reload.out" 2>&1 &
RELOAD=$!
work_threads 2 || fail "no reads of the specs under way: $(timeout 5 "$DEVWLCTL" --socket "$T/control.sock" stats | grep work)"
answered "devwlctl allow cdi: and devwlctl reload wait for the specs"
kill -CONT "$FUSE_PID"
wait "$ALLOW" || fail "devwlctl allow cdi: once the spec was readable: $(cat "$T/allow.out")"
wait "$RELOAD" || fail "devwlctl reload once the spec was readable: $(cat "$T/reload.out")"
ctl list /lab/x | grep -qx "c 1:7 rw" || fail "/lab/x after the allow and the reload: $(ctl list /lab/x)"
pass "devwlctl allow /lab/x cdi:... and devwlctl reload waited for the stopped FUSE server off the loop, then granted c 1:7 rw"
exit 0
