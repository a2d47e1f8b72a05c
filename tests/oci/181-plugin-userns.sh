# A mknod grant in a user-namespace container through devwl's plugin under crun
# (devwl-plugin(7)): the container's root is uid 100000 on the host and has no CAP_MKNOD
# that the kernel honours for devices; the policy grants c 1:11 and waives the capability.
# The node is made for the caller (on crun's /dev tmpfs, mounted in the container's user
# namespace and so nodev, and on the bundle's /tmp), opens for writing (kernel mode: the
# kernel opens it, through a node the plugin binds over the caller's), and is refused for reading and for a device the policy does not grant.
RT=crun
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PLUGIN=${DEVWL_PLUGIN:-$BUILD/plugin/devwl-plugin.so}
[ -f "$PLUGIN" ] || fail "the plugin was not built at $PLUGIN"
host_user_notif || skip "no seccomp user notification in this kernel"
[ -e /proc/self/ns/user ] || skip "no user namespaces in this kernel"
. "$HERE/plugin-lib.sh"

mkdir -p "$T/policies"
cat >"$T/policies/userns.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers",
               "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                         "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm",
                         "allow c 136:* rwm", "allow c 1:11 wm"],
               "mknod_needs_cap": false } ] }
JSON
export DEVWL_PLUGIN_POLICY_DIR=$T/policies DEVWL_PLUGIN_AUDIT=$T/audit.jsonl
tag=devwl-pluserns-$$
make_rootfs
chmod 1777 "$T/rootfs/tmp"

plugin_bundle userns '
id -u; cat /proc/self/uid_map
mknod /dev/kmsg-u c 1 11 && echo DEV_MKNOD_OK
echo devwl-plugin-dev-'$tag' > /dev/kmsg-u && echo DEV_OPEN_OK
mknod /tmp/kmsg-u c 1 11 && echo TMP_MKNOD_OK
echo devwl-plugin-tmp-'$tag' > /tmp/kmsg-u && echo TMP_OPEN_OK
cat /dev/kmsg-u; echo READ_RC=$?
mknod /tmp/mem-u c 1 1; echo MEM_RC=$?
true' userns.json '.linux.namespaces += [{type: "user"}]
	| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
	| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
run_fg "$tag" "$T/userns" || fail "crun run: $(cat "$T/$tag.out")"
out=$T/$tag.out
grep -q "0 *100000 *65536" "$out" || fail "not in a user namespace: $(cat "$out")"
grep -q DEV_MKNOD_OK "$out" && grep -q TMP_MKNOD_OK "$out" ||
	fail "granted mknod in the user namespace: $(cat "$out")"
[ "$(stat -c '%F %t:%T %u' "$T/rootfs/tmp/kmsg-u")" = "character special file 1:b 100000" ] ||
	fail "the node made: $(stat -c '%F %t:%T %u' "$T/rootfs/tmp/kmsg-u" 2>&1)"
pass "crun+plugin, user namespace: mknod c 1:11 made (/dev, /tmp), owned by the container's root"
grep -q DEV_OPEN_OK "$out" && grep -q TMP_OPEN_OK "$out" || fail "open of the nodes: $(cat "$out")"
dmesg | grep -q "devwl-plugin-dev-$tag" && dmesg | grep -q "devwl-plugin-tmp-$tag" ||
	fail "the writes did not reach the kernel log"
pass "crun+plugin, user namespace: both nodes open for writing and reach the kernel log"
grep -q "Operation not permitted" "$out" && grep -q READ_RC=1 "$out" && grep -q MEM_RC=1 "$out" &&
	[ ! -e "$T/rootfs/tmp/mem-u" ] || fail "refusals: $(cat "$out")"
pass "crun+plugin, user namespace: a read of the write-only grant and mknod c 1:1 → EPERM"
grep '"syscall":"mknodat"' "$T/audit.jsonl" | grep '"decision":"allow"' | grep -q '"userns":' ||
	fail "audit: $(cat "$T/audit.jsonl")"
pass "crun+plugin, user namespace: the audit records the caller's user namespace"
plugin_sanitizer_check
