# The runtime suite, run once with runc (10-runc.sh) and once with crun (20-crun.sh):
# real containers whose seccomp listenerPath points at a devwld of our own.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/lib.sh"

# The runtimes' default device cgroup allows c 1:3 1:5 1:7 1:8 1:9 5:0 5:2 10:200 136:*
# and denies c 1:11 (/dev/kmsg); devwl allows kmsg for writing and refuses /dev/full.
cat >"$T/policy.json" <<'JSON'
{
  "version": 1,
  "nodes": [
    { "path": "/containers",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow c 1:11 wm"],
      "mknod_needs_cap": false }
  ]
}
JSON
start_devwld
make_rootfs
tag=devwl-$RT-$$
ROOT=$T/rootfs

# --- 1. a one-shot container: mknod and open, allowed and denied --------------------
make_bundle one '
mknod /tmp/kmsg-'$tag' c 1 11 && echo MKNOD_ALLOWED_OK
mknod /tmp/mem-'$tag' c 1 1; echo MKNOD_DENIED_RC=$?
echo devwl-oci-'$tag' > /tmp/kmsg-'$tag' && echo OPEN_ALLOWED_OK
echo x > /dev/full; echo OPEN_DENIED_RC=$?
'
run_fg "$tag-one" "$T/one" || fail "$RT run: $(cat "$T/$tag-one.out")"
out=$T/$tag-one.out
grep -q MKNOD_ALLOWED_OK "$out" || fail "allowed mknod without CAP_MKNOD: $(cat "$out")"
[ "$(stat -c '%F %t:%T' "$ROOT/tmp/kmsg-$tag")" = "character special file 1:b" ] ||
	fail "mknod made $(stat -c '%F %t:%T' "$ROOT/tmp/kmsg-$tag" 2>&1)"
pass "$RT: allowed mknod c 1:11 created the node although the container lacks CAP_MKNOD"
grep -q "mem-$tag: Operation not permitted" "$out" && grep -q MKNOD_DENIED_RC=1 "$out" ||
	fail "denied mknod: $(cat "$out")"
[ ! -e "$ROOT/tmp/mem-$tag" ] || fail "denied mknod left a node"
pass "$RT: denied mknod c 1:1 → EPERM"
grep -q OPEN_ALLOWED_OK "$out" || fail "allowed open of /dev/kmsg: $(cat "$out")"
dmesg | grep -q "devwl-oci-$tag" || fail "the write to /dev/kmsg did not reach the kernel log"
pass "$RT: allowed open of c 1:11 works although the runtime's device cgroup denies it"
grep -q "can't create /dev/full: Operation not permitted" "$out" ||
	fail "denied open: $(cat "$out")"
pass "$RT: denied open of /dev/full (allowed by the runtime) → EPERM"
grep '"decision":"allow"' "$T/audit.jsonl" | grep -q '"device":"c 1:11"' &&
	grep '"decision":"deny"' "$T/audit.jsonl" | grep -q '"device":"c 1:7"' ||
	fail "audit records missing: $(tail -5 "$T/audit.jsonl")"
pass "$RT: audit records for the allowed and denied calls"

# The baseline: the same open without devwl fails in the runtime's device cgroup.
make_bundle base 'echo x > /tmp/kmsg-'$tag'; echo BASE_RC=$?' 'del(.linux.seccomp)'
run_fg "$tag-base" "$T/base" || true
grep -q "can't create /tmp/kmsg-$tag: Operation not permitted" "$T/$tag-base.out" ||
	fail "baseline without devwl: $(cat "$T/$tag-base.out")"
pass "$RT: without devwl the runtime's device cgroup refuses that open"

# --- 2. the OCI hook creates and removes the node -------------------------------------
hooks=$(jq -n --arg h "$OCI_HOOK" --arg s "$T/control.sock" '{
	createRuntime: [{path: $h, args: ["devwl-oci-hook", "--socket", $s, "createRuntime"]}],
	poststop: [{path: $h, args: ["devwl-oci-hook", "--socket", $s, "poststop"]}]}')
make_bundle hook 'echo > /dev/null && echo HOOKED_OK' ".hooks = $hooks"
run_fg "$tag-hook" "$T/hook" || fail "$RT run with the hook: $(cat "$T/$tag-hook.out")"
grep -q HOOKED_OK "$T/$tag-hook.out" || fail "hooked container: $(cat "$T/$tag-hook.out")"
[ "$RT" = crun ] || $RT delete "$tag-hook" >/dev/null 2>&1
wait_for "$T/devwld.log" "hook: container $tag-hook: node /containers/$tag-hook removed" ||
	fail "the poststop hook did not remove the node"
grep -q "hook: container $tag-hook: node /containers/$tag-hook created" "$T/devwld.log" &&
	grep -q "container $tag-hook: node /containers/$tag-hook\$" "$T/devwld.log" ||
	fail "the createRuntime hook did not create the node before the container attached"
! ctl show "/containers/$tag-hook" >/dev/null 2>&1 || fail "node still there after poststop"
pass "$RT: devwl-oci-hook created the node at createRuntime and removed it at poststop"

# --- 3. a running container: exec, live revocation, devwld killed → ENOSYS ----------
make_bundle live '
echo READY
while [ ! -e /tmp/go-'$tag' ]; do sleep 0.1; done
echo x > /dev/null; echo ENOSYS_RC=$?
'
run_detached "$tag-live" "$T/live"
wait_for "$T/$tag-live.out" READY || fail "live container did not start: $(cat "$T/$tag-live.out")"
ctl containers | grep -q "^$tag-live /containers/$tag-live 1 " ||
	fail "devwlctl containers: $(ctl containers)"
pass "$RT: devwlctl containers lists the running container"

$RT exec "$tag-live" sh -c 'echo x > /dev/full; echo y > /tmp/kmsg-'$tag' && echo EXEC_ALLOWED_OK' \
	>"$T/exec1.out" 2>&1 </dev/null
grep -q "can't create /dev/full: Operation not permitted" "$T/exec1.out" &&
	grep -q EXEC_ALLOWED_OK "$T/exec1.out" || fail "$RT exec: $(cat "$T/exec1.out")"
pass "$RT: exec into the running container is supervised by the container's node"

ctl deny /containers 'c 1:11 w' || fail "devwlctl deny"
ctl list "/containers/$tag-live" | grep -q '^c 1:11 .*w' && fail "revocation did not reach the child"
$RT exec "$tag-live" sh -c 'echo z > /tmp/kmsg-'$tag'; echo REVOKED_RC=$?' \
	>"$T/exec2.out" 2>&1 </dev/null
grep -q "can't create /tmp/kmsg-$tag: Operation not permitted" "$T/exec2.out" ||
	fail "after devwlctl deny: $(cat "$T/exec2.out")"
pass "$RT: devwlctl deny on /containers revoked the grant inside the running container"

kill -9 "$DEVWLD_PID"
wait "$DEVWLD_PID" 2>/dev/null
DEVWLD_PID=
touch "$ROOT/tmp/go-$tag"
wait_for "$T/$tag-live.out" ENOSYS_RC || fail "container after devwld died: $(cat "$T/$tag-live.out")"
grep -q "can't create /dev/null: Function not implemented" "$T/$tag-live.out" ||
	fail "expected ENOSYS: $(cat "$T/$tag-live.out")"
pass "$RT: devwld killed → trapped calls fail ENOSYS (fail closed)"
exit 0
