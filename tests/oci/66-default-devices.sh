# devwld's defaults never widen access (devwld(8) DEFAULT DEVICES): without --policy, and
# with a policy that does not define the container's subtree, a container's node denies
# every device but the OCI default set, so a container that may mknod (CAP_MKNOD, which
# runc's own device cgroup lets create any node) cannot make or open /dev/mem or a loop
# device through devwld, while /dev/null and friends keep working. Allow-all is there
# only where a policy writes it.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

make_rootfs
ROOT=$T/rootfs
# Nodes the runtime's device cgroup denies (c 10:229, /dev/fuse; c 1:11, /dev/kmsg), made
# beforehand: devwld must not open them on the container's behalf either. Granted, the
# fuse device opens; /dev/kmsg wants CAP_SYSLOG as well under kernel.dmesg_restrict, which
# the container lacks, and a grant lifts the device policy only.
mknod "$ROOT/tmp/fuse" c 10 229
mknod "$ROOT/tmp/kmsg" c 1 11
caps='.process.capabilities |= with_entries(.value += ["CAP_MKNOD"])'
probe='
mknod /tmp/mem c 1 1 && echo MEM_MADE; echo MEM_RC=$?
mknod /tmp/loop0 b 7 0 && echo LOOP_MADE; echo LOOP_RC=$?
true </tmp/fuse && echo FUSE_OPENED; echo FUSE_RC=$?
true </tmp/kmsg && echo KMSG_OPENED; echo KMSG_RC=$?
mknod /tmp/null c 1 3 && echo x >/tmp/null && echo NULL_MADE
rm -f /tmp/null
echo x >/dev/null && head -c 4 /dev/urandom >/dev/zero && true </dev/full && echo STD_OK
'
make_bundle probe "$probe" "$caps"

# run_probe ID: run the probe container; its output in $T/ID.out.
run_probe() {
	rm -f "$ROOT/tmp/mem" "$ROOT/tmp/loop0"
	run_fg "$1" "$T/probe" || fail "runc run $1: $(cat "$T/$1.out")"
}
# denied ID WHAT: the probe's dangerous calls all failed EPERM, the standard ones worked.
denied() {
	local out=$T/$1.out
	grep -q "mknod: /tmp/mem: Operation not permitted" "$out" && grep -q MEM_RC=1 "$out" &&
		grep -q "mknod: /tmp/loop0: Operation not permitted" "$out" &&
		grep -q "can't open /tmp/fuse: Operation not permitted" "$out" &&
		grep -q "can't open /tmp/kmsg: Operation not permitted" "$out" ||
		fail "$2: $(cat "$out")"
	[ ! -e "$ROOT/tmp/mem" ] && [ ! -e "$ROOT/tmp/loop0" ] || fail "$2: a denied mknod left a node"
	grep -q NULL_MADE "$out" && grep -q STD_OK "$out" || fail "$2: standard devices: $(cat "$out")"
}

# --- 1. no --policy ---------------------------------------------------------------------
DEVWLD_POLICY= start_devwld
run_probe "mem-$$"
denied "mem-$$" "devwld without --policy"
grep '"decision":"deny"' "$T/audit.jsonl" | grep -q '"device":"c 1:1"' &&
	grep '"decision":"deny"' "$T/audit.jsonl" | grep -q '"device":"b 7:0"' ||
	fail "audit: $(cat "$T/audit.jsonl")"
pass "without --policy: mknod c 1:1 and b 7:0 and an open of c 1:11 → EPERM; null, zero, full, urandom work"

# The what-if tool keeps the kernel's root cgroup semantics.
[ "$(printf 'check / c 1 1 rwm\nmkdir /containers\ncheck /containers b 7 0 rwm\n' |
	"$DEVWLCTL" batch | tr '\n' ' ')" = "allow ok allow " ] || fail "devwlctl batch is not the kernel's root"
pass "devwlctl batch without --policy: still the kernel's root cgroup (allow all)"
kill "$DEVWLD_PID"
wait "$DEVWLD_PID" 2>/dev/null
DEVWLD_PID=
rm -f "$T/state.json"

# --- 2. a policy that does not define the container's subtree -------------------------
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/", "rules": ["deny b 259:* w"] },
             { "path": "/other", "rules": ["deny c 1:3 rwm"] } ] }
JSON
start_devwld
run_probe "uncovered-$$"
denied "uncovered-$$" "a policy without /containers"
pass "a policy that does not define /containers: the container's node is the default set"

# Written explicitly, allow-all is what the container gets.
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/", "rules": ["deny b 259:* w"] },
             { "path": "/containers", "rules": ["allow a"] } ] }
JSON
ctl reload >/dev/null || fail "devwlctl reload"
run_probe "allowall-$$"
grep -q MEM_MADE "$T/allowall-$$.out" && grep -q FUSE_OPENED "$T/allowall-$$.out" ||
	fail "explicit allow a: $(cat "$T/allowall-$$.out")"
if [ "$(cat /proc/sys/kernel/dmesg_restrict)" = 1 ]; then
	grep -q "can't open /tmp/kmsg: Operation not permitted" "$T/allowall-$$.out" ||
		fail "allow a gave /dev/kmsg without CAP_SYSLOG: $(cat "$T/allowall-$$.out")"
else
	grep -q KMSG_OPENED "$T/allowall-$$.out" || fail "allow a: kmsg: $(cat "$T/allowall-$$.out")"
fi
pass "a policy that writes \"allow a\" on /containers: the container may make and open c 1:1"

# --- 4. restarted without --policy on that policy's state file --------------------------
kill "$DEVWLD_PID"
wait "$DEVWLD_PID" 2>/dev/null
DEVWLD_PID=
[ -s "$T/state.json" ] || fail "no state written"
DEVWLD_POLICY= start_devwld
run_probe "stale-$$"
denied "stale-$$" "without --policy, on the allow-all policy's state"
grep -q "state $T/state.json was written under a policy file.*set aside" "$T/devwld.log" ||
	fail "no log line for the state set aside"
ls "$T"/state.json.other-policy-* >/dev/null 2>&1 || fail "the state was not set aside"
pass "restarted without --policy, a policy's state is set aside: the default device set again"
exit 0
