# crun loads devwl's seccomp-notify plugin (devwl-plugin(7)) by the annotation
# run.oci.seccomp.plugins and hands it every notification of the container: no devwld runs.
# With org.devwl.policy naming a policy in the plugin's policy directory, the container
# opens a device the policy grants and crun's rules deny (the plugin programs the device
# cgroup with the node: tests/oci/194), is refused one the policy denies and crun allows, and every decision is
# in the audit file; without the annotation it gets the OCI default set, never more; a
# node the container names by org.devwl.node is admitted as devwld admits it; the plugin
# exports the four functions of the ABI and nothing else.
RT=crun
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PLUGIN=${DEVWL_PLUGIN:-$BUILD/plugin/devwl-plugin.so}
[ -f "$PLUGIN" ] || fail "the plugin was not built at $PLUGIN"
host_user_notif || skip "no seccomp user notification in this kernel"
. "$HERE/plugin-lib.sh"

# The plugin exports the ABI's four functions and nothing else: the helpers it shares
# with devwld (devwl_*, mapping_*, audit_*) must not meet crun's or another plugin's names.
exports=$(nm -D --defined-only "$PLUGIN" | awk '{print $3}' | sort | tr '\n' ' ')
[ "$exports" = "run_oci_seccomp_notify_handle_request run_oci_seccomp_notify_start \
run_oci_seccomp_notify_stop run_oci_seccomp_notify_version " ] ||
	fail "the plugin exports: $exports"
pass "the plugin exports the four functions of the ABI only"

mkdir -p "$T/policies"
cat >"$T/policies/grant.json" <<'JSON'
{
  "version": 1,
  "nodes": [
    { "path": "/containers",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow c 1:11 wm"],
      "mknod_needs_cap": false },
    { "path": "/trusted", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:7 rwm"] }
  ],
  "containers": { "node_annotation": ["/trusted"] }
}
JSON
export DEVWL_PLUGIN_POLICY_DIR=$T/policies DEVWL_PLUGIN_AUDIT=$T/audit.jsonl
tag=devwl-plugin-$$
make_rootfs

# --- 1. grant and deny by the policy --------------------------------------------------
plugin_bundle grant '
mknod /tmp/kmsg c 1 11 && echo MKNOD_ALLOWED_OK
mknod /tmp/mem c 1 1; echo MKNOD_DENIED_RC=$?
echo devwl-plugin-'$tag' > /tmp/kmsg && echo OPEN_ALLOWED_OK
echo x > /dev/full; echo OPEN_DENIED_RC=$?
cat /tmp/kmsg; echo READ_DENIED_RC=$?
' grant.json
run_fg "$tag-grant" "$T/grant" || fail "crun run: $(cat "$T/$tag-grant.out")"
out=$T/$tag-grant.out
grep -q MKNOD_ALLOWED_OK "$out" && [ "$(stat -c '%F %t:%T' "$T/rootfs/tmp/kmsg")" = \
	"character special file 1:b" ] || fail "granted mknod: $(cat "$out")"
grep -q "mem: Operation not permitted" "$out" && [ ! -e "$T/rootfs/tmp/mem" ] ||
	fail "denied mknod: $(cat "$out")"
pass "crun+plugin: mknod c 1:11 granted without CAP_MKNOD (the policy waives it), c 1:1 → EPERM"
grep -q OPEN_ALLOWED_OK "$out" || fail "granted open of /dev/kmsg: $(cat "$out")"
dmesg | grep -q "devwl-plugin-$tag" || fail "the write to /dev/kmsg did not reach the kernel log"
pass "crun+plugin: the policy's grant (c 1:11 wm) opens although crun's device cgroup denies it"
grep -q "can't create /dev/full: Operation not permitted" "$out" ||
	fail "denied open: $(cat "$out")"
grep -q "can't open '/tmp/kmsg': Operation not permitted" "$out" ||
	fail "read of a write-only grant: $(cat "$out")"
pass "crun+plugin: /dev/full (crun allows it) and a read of the write-only grant → EPERM"
grep "\"container\":\"$tag-grant\"" "$T/audit.jsonl" | grep '"decision":"allow"' |
	grep '"node":"/containers/'"$tag-grant"'"' | grep -q '"device":"c 1:11"' &&
	grep "\"container\":\"$tag-grant\"" "$T/audit.jsonl" | grep '"decision":"deny"' |
	grep -q '"device":"c 1:7"' || fail "audit records: $(tail -5 "$T/audit.jsonl")"
pass "crun+plugin: the audit names container, node and device of each decision"

# --- 2. no policy: the OCI default set, never more ------------------------------------
cp -a "$T/rootfs/tmp/kmsg" "$T/rootfs/kmsg-nopol"
plugin_bundle nopol '
echo x > /dev/null && echo NULL_OK
echo x > /kmsg-nopol; echo KMSG_RC=$?
' ''
run_fg "$tag-nopol" "$T/nopol" || fail "crun run: $(cat "$T/$tag-nopol.out")"
grep -q NULL_OK "$T/$tag-nopol.out" && grep -q KMSG_RC=1 "$T/$tag-nopol.out" ||
	fail "without a policy: $(cat "$T/$tag-nopol.out")"
pass "crun+plugin: no org.devwl.policy → the OCI defaults (/dev/null), not /dev/kmsg"

# --- 3. org.devwl.node, admitted by the policy's node_annotation -----------------------
plugin_bundle named 'echo -n > /dev/full && echo FULL_OK; echo -n > /dev/zero; true' \
	grant.json '.annotations["org.devwl.node"] = "/trusted"'
run_fg "$tag-named" "$T/named" || fail "crun run: $(cat "$T/$tag-named.out")"
grep -q FULL_OK "$T/$tag-named.out" && grep -q "/dev/zero: Operation not permitted" \
	"$T/$tag-named.out" || fail "org.devwl.node /trusted: $(cat "$T/$tag-named.out")"
pass "crun+plugin: org.devwl.node /trusted (admitted) decides: /dev/full yes, /dev/zero no"
# crun loads plugins only once the container's process runs (crun's wait loop): what
# comes before its first trapped call runs; that call never returns and crun removes the
# container (devwl-plugin(7), what the ABI cannot do).
plugin_bundle outside 'echo STARTED; echo -n > /dev/null; echo PAST_FIRST_CALL' grant.json \
	'.annotations["org.devwl.node"] = "/"'
run_fg "$tag-outside" "$T/outside" && fail "a container naming / ran: $(cat "$T/$tag-outside.out")"
grep -q PAST_FIRST_CALL "$T/$tag-outside.out" && fail "it ran on: $(cat "$T/$tag-outside.out")"
grep -q 'org.devwl.node "/" is outside the policy' "$T/$tag-outside.out" ||
	fail "no reason given: $(cat "$T/$tag-outside.out")"
crun state "$tag-outside" >/dev/null 2>&1 && fail "crun kept the container: $(crun state "$tag-outside")"
pass "crun+plugin: org.devwl.node outside node_annotation → crun fails with the reason, the container stops at its first trapped call and is removed"

# --- 4. many containers at once, each its own plugin instance ---------------------------
for i in 1 2 3 4 5 6; do
	plugin_bundle "many$i" 'for n in 1 2 3 4 5 6 7 8 9 10; do echo x > /tmp/kmsg || exit 1; done
echo x > /dev/full && exit 1; echo MANY_OK' grant.json
	(run_fg "$tag-many$i" "$T/many$i") &
done
wait
for i in 1 2 3 4 5 6; do
	grep -q MANY_OK "$T/$tag-many$i.out" || fail "container $i of 6: $(cat "$T/$tag-many$i.out")"
done
pass "crun+plugin: 6 containers at once, each granted and refused by its own plugin"
# --- 5. a slow call never stalls crun's loop ------------------------------------------
# The container's open names a path on a userfaultfd page it never fills: whoever reads
# the path waits. The plugin's thread waits; crun's loop must not: SIGTERM to crun is
# forwarded to the container at once, which ends (no pid namespace: an init would ignore
# it), and so does crun, long before the stall's 120 s.
STALL=$OCI_BIN/uffd-stall-static
[ -x "$STALL" ] || fail "$STALL not built (the build should have made it)"
cp "$STALL" "$T/rootfs/bin/uffd-stall"
rm -rf "$T/rootfs/tmp/stall" && mkdir "$T/rootfs/tmp/stall"
plugin_bundle stall 'exec /bin/uffd-stall /tmp/stall' '' \
	'del(.linux.namespaces[] | select(.type == "pid"))
	| .process.capabilities.bounding += ["CAP_SYS_PTRACE"]
	| .process.capabilities.effective += ["CAP_SYS_PTRACE"]
	| .process.capabilities.permitted += ["CAP_SYS_PTRACE"]'
(run_fg "$tag-stall" "$T/stall"; echo "rc=$?" >"$T/stall.rc") &
for _ in $(seq 200); do
	[ -e "$T/rootfs/tmp/stall/stalled" ] && break
	[ -e "$T/stall.rc" ] && break
	sleep 0.05
done
if [ ! -e "$T/rootfs/tmp/stall/stalled" ]; then
	wait
	grep -q "uffd-stall: userfaultfd" "$T/$tag-stall.out" &&
		skip "no userfaultfd for the container here: $(cat "$T/$tag-stall.out")"
	fail "the container never stalled: $(cat "$T/$tag-stall.out")"
fi
crun_pid=$(pgrep -f "run --bundle $T/stall $tag-stall" | while read -r p; do
	[ "$(cat "/proc/$p/comm" 2>/dev/null)" = crun ] && echo "$p"; done | head -1)
[ -n "$crun_pid" ] || fail "no crun process for $tag-stall"
start=$SECONDS
kill -TERM "$crun_pid"
for _ in $(seq 400); do
	[ -e "$T/stall.rc" ] && break
	sleep 0.05
done
[ -e "$T/stall.rc" ] || fail "crun did not end within 20 s of SIGTERM while the plugin's call stalled"
wait
[ ! -e "$T/rootfs/tmp/stall/released" ] || fail "the stall was released: not what was measured"
pass "crun+plugin: while a call stalls the plugin's thread, crun's loop forwards SIGTERM and ends in $((SECONDS - start)) s"
plugin_sanitizer_check
