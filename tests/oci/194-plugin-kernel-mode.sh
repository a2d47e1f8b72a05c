# Kernel mode of devwl's plugin under crun (devwl-plugin(7), KERNEL MODE): crun runs as
# root, so the plugin takes the container's device cgroup over and programs it with the
# node. The cgroup then holds the node's grants (c 1:11, beyond crun's OCI defaults) and
# not what the node denies (c 1:7, which crun allowed); the granted device opens, and it
# is the kernel that opens it, in the caller's own context: a node of it on a nodev mount
# is refused EACCES, as the kernel refuses any, where baseline mode (org.devwl.mode=
# baseline, same script) opens it on the caller's behalf through a node of the plugin's. A
# device the node denies is EPERM in both. Where the plugin cannot program the cgroup (crun
# without cgroups: the container stays in crun's own), it stays in baseline mode and the
# audit and crun's stderr say why; so does a rootless crun's. There no cgroup confines the
# container: a granted node is made only on a nodev mount.
RT=crun
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PLUGIN=${DEVWL_PLUGIN:-$BUILD/plugin/devwl-plugin.so}
[ -f "$PLUGIN" ] || fail "the plugin was not built at $PLUGIN"
host_user_notif || skip "no seccomp user notification in this kernel"
. "$HERE/plugin-lib.sh"

mkdir -p "$T/policies"
cat >"$T/policies/km.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers",
               "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                         "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm",
                         "allow c 136:* rwm", "allow c 1:11 wm"],
               "mknod_needs_cap": false } ] }
JSON
export DEVWL_PLUGIN_POLICY_DIR=$T/policies DEVWL_PLUGIN_AUDIT=$T/audit.jsonl
tag=devwl-plkm-$$
make_rootfs
# The container's calls, then a pause (until the test has looked at its cgroup).
SCRIPT='echo -n > /dev/null && echo NULL_OK
mknod /tmp/kmsg c 1 11 && echo devwl-plkm-$MODE-$TAG > /tmp/kmsg && echo KMSG_OK
echo x > /dev/full; echo FULL_RC=$?
mknod /nd/kmsg c 1 11 && echo ND_MKNOD_OK
echo x > /nd/kmsg && echo ND_OPEN_OK
touch /tmp/paused-$MODE; i=0
while [ ! -e /tmp/go-$MODE ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done'
NODEV='.mounts += [{destination: "/nd", type: "tmpfs", source: "tmpfs", options: ["nodev", "mode=755"]}]'

# run_paused MODE [JQ]: run the script in a container; $T/MODE.list is its cgroup's
# devices.list while it pauses (empty where the audit names no v1 cgroup).
run_paused() {
	local mode=$1 id=$tag-$1 dir=""
	plugin_bundle "$mode" "$SCRIPT" km.json "$NODEV | .process.env += [\"MODE=$mode\", \"TAG=$tag\"] | ${2:-.}"
	rm -f "$T/rootfs/tmp/kmsg" "$T/rootfs/tmp/paused-$mode" "$T/rootfs/tmp/go-$mode"
	(run_fg "$id" "$T/$mode"; echo "rc=$?" >"$T/$mode.rc") &
	for _ in $(seq 400); do
		[ -e "$T/rootfs/tmp/paused-$mode" ] || [ -e "$T/$mode.rc" ] && break
		sleep 0.05
	done
	dir=$(grep '"event":"mode"' "$T/audit.jsonl" | grep "\"container\":\"$id\"" |
		jq -r '.cgroup // empty' | head -1)
	: >"$T/$mode.list"
	[ -n "$dir" ] && [ -f "$dir/devices.list" ] && cp "$dir/devices.list" "$T/$mode.list"
	touch "$T/rootfs/tmp/go-$mode"
	wait
	grep -q rc=0 "$T/$mode.rc" || fail "$mode: crun run: $(cat "$T/$id.out")"
}
mode_of() { grep '"event":"mode"' "$T/audit.jsonl" | grep "\"container\":\"$tag-$1\""; }

# --- 1. kernel mode (the default for a root runtime) ----------------------------------
run_paused kernel
out=$T/$tag-kernel.out
rec=$(mode_of kernel)
[ "$(echo "$rec" | wc -l)" = 1 ] || fail "one mode record wanted: $rec"
case $(echo "$rec" | jq -r .mode) in
kernel-v1)
	grep -qx 'c 1:11 wm' "$T/kernel.list" && grep -qx 'c 1:3 rwm' "$T/kernel.list" &&
		! grep -q '^c 1:7 ' "$T/kernel.list" ||
		fail "the container's devices.list is not the node's: $(cat "$T/kernel.list")"
	pass "crun+plugin kernel mode: the container's v1 devices.list holds the node's c 1:11 wm, and not c 1:7 that crun allowed" ;;
kernel-v2)
	[ "$(echo "$rec" | jq .instructions)" -gt 0 ] || fail "v2 program: $rec"
	pass "crun+plugin kernel mode: the container's cgroup2 runs the node's program ($(echo "$rec" | jq .instructions) instructions)" ;;
*) fail "not in kernel mode: $rec; crun said: $(cat "$out")" ;;
esac
grep -q "kernel mode: cgroup v[12] .* enforces node /containers/$tag-kernel" "$out" ||
	fail "no mode line on crun's stderr: $(cat "$out")"
grep -q NULL_OK "$out" && grep -q KMSG_OK "$out" ||
	fail "granted devices in kernel mode: $(cat "$out")"
dmesg | grep -q "devwl-plkm-kernel-$tag" || fail "the write to c 1:11 did not reach the kernel log"
pass "crun+plugin kernel mode: /dev/null and the grant beyond crun's defaults (c 1:11) open"
grep -q FULL_RC=1 "$out" && grep -q "can't create /dev/full: Operation not permitted" "$out" ||
	fail "denied device in kernel mode: $(cat "$out")"
pass "crun+plugin kernel mode: c 1:7, which the node denies, is EPERM"
grep -q ND_MKNOD_OK "$out" && grep -q "can't create /nd/kmsg: Permission denied" "$out" &&
	! grep -q ND_OPEN_OK "$out" || fail "a granted node on a nodev mount: $(cat "$out")"
pass "crun+plugin kernel mode: the kernel opens the grant in the caller's context: on a nodev mount → EACCES"
# With DEVWL_PLUGIN_AUDIT, what the device program decides reaches the audit, marked as
# the kernel's: no open is trapped, so these are the only record of them (tests/oci/206
# checks them without crun, on v2 and through a hybrid host's reporter). Under crun here:
# on v2, the same; a v1 cgroup with no cgroup2 hierarchy in crun's view (rt_create) has
# nothing to report through, and nothing is reported.
reports=$(grep '"source":"kernel"' "$T/audit.jsonl" | grep "\"container\":\"$tag-kernel\"" || true)
if [ "$(echo "$rec" | jq -r .mode)" = kernel-v2 ]; then
	jq -s -e --arg node "/containers/$tag-kernel" '
		any(.[]; .device == "c 1:7" and .access == "w" and .decision == "deny" and
			.errno == "EPERM" and .count == 1) and
		any(.[]; .device == "c 1:11" and .access == "w" and .decision == "allow" and .count >= 1) and
		any(.[]; .device == "c 1:3" and .decision == "allow") and all(.[]; .node == $node)' \
		<<<"$reports" >/dev/null || fail "the kernel's reports in the audit: ${reports:-none}"
	pass "crun+plugin kernel mode: the device program's reports in the audit: c 1:7 w denied, c 1:11 w and c 1:3 allowed ($(jq -s length <<<"$reports") records)"
else
	[ -z "$reports" ] || fail "kernel reports from a v1 cgroup with no cgroup2 hierarchy in view: $reports"
	echo "# kernel-v1, no cgroup2 hierarchy in crun's view: nothing reports (tests/oci/206 checks the reports)"
fi

# --- 1b. the cgroup taken on the first call: its caller's --------------------------------
# crun's state names the container's process when it loads plugins; conmon passes none,
# and the plugin then takes the cgroup the first call's caller is in (test hook: as if no
# state).
if [ "${DEVWL_TEST_HOOKS:-0}" = 1 ]; then
	DEVWL_PLUGIN_TEST_NO_STATE=1 run_paused first
	out=$T/$tag-first.out
	mode_of first | jq -e '.mode | startswith("kernel-")' >/dev/null ||
		fail "taken on the first call: $(mode_of first); crun said: $(cat "$out")"
	if mode_of first | jq -e '.mode == "kernel-v1"' >/dev/null; then
		grep -qx 'c 1:11 wm' "$T/first.list" || fail "first call's devices.list: $(cat "$T/first.list")"
	fi
	grep -q NULL_OK "$out" && grep -q KMSG_OK "$out" && grep -q FULL_RC=1 "$out" &&
		grep -q "can't create /nd/kmsg: Permission denied" "$out" ||
		fail "kernel mode from the first call: $(cat "$out")"
	pass "crun+plugin kernel mode without crun's state: taken on the first call, from its caller's cgroup"
else
	echo "# skipped the first-call part: it needs the plugin's test hooks (-DDEVWL_TEST_HOOKS=ON)"
fi

# --- 2. baseline mode asked for: the plugin opens on the caller's behalf ---------------
run_paused baseline '.annotations["org.devwl.mode"] = "baseline"'
out=$T/$tag-baseline.out
mode_of baseline | jq -e '.mode == "baseline" and .reason == "annotation org.devwl.mode says baseline"' \
	>/dev/null || fail "baseline's mode record: $(mode_of baseline)"
grep -q "baseline mode (annotation org.devwl.mode says baseline)" "$out" ||
	fail "no reason on crun's stderr: $(cat "$out")"
grep -q KMSG_OK "$out" && grep -q FULL_RC=1 "$out" && grep -q ND_OPEN_OK "$out" ||
	fail "baseline mode: $(cat "$out")"
pass "crun+plugin baseline mode: the same node on a nodev mount opens (the plugin opens it for the caller), /dev/full EPERM"

# --- 3. no cgroup of its own: baseline mode, with the reason ---------------------------
# Nothing but the plugin confines such a container (it is in crun's own cgroup, which no
# runtime programmed): a granted node is made only on a nodev mount, where it opens for the
# caller; on the rootfs, where the kernel would open it beyond the grant (c 1:11 is wm, the
# read is not), the mknod is refused.
plugin_bundle nocg 'echo -n > /dev/null && echo NULL_OK; echo x > /dev/full; echo FULL_RC=$?
mknod /tmp/kmsg c 1 11 && echo ROOTFS_MKNOD_MADE; head -c 1 /tmp/kmsg >/dev/null && echo READ_BEYOND
mknod /nd/kmsg c 1 11 && echo ND_MKNOD_OK; echo x > /nd/kmsg && echo ND_OPEN_OK' km.json "$NODEV"
rm -f "$T/rootfs/tmp/kmsg"
CONTAINERS+=("$tag-nocg")
rt_create --cgroup-manager=disabled run --bundle "$T/nocg" "$tag-nocg" >"$T/nocg.out" 2>&1 \
	</dev/null || fail "crun run without cgroups: $(cat "$T/nocg.out")"
mode_of nocg | jq -e '.mode == "baseline" and (.reason | test("cgroup .* is not its own"))' \
	>/dev/null || fail "without a cgroup of its own: $(mode_of nocg)"
grep -q NULL_OK "$T/nocg.out" && grep -q FULL_RC=1 "$T/nocg.out" ||
	fail "without a cgroup of its own: $(cat "$T/nocg.out")"
! grep -q -e ROOTFS_MKNOD_MADE -e READ_BEYOND "$T/nocg.out" && [ ! -e "$T/rootfs/tmp/kmsg" ] ||
	fail "without a cgroup of its own, a node made where the kernel opens it: $(cat "$T/nocg.out")"
grep -q ND_MKNOD_OK "$T/nocg.out" && grep -q ND_OPEN_OK "$T/nocg.out" ||
	fail "without a cgroup of its own, the nodev node: $(cat "$T/nocg.out")"
pass "crun+plugin: a container in crun's own cgroup stays in baseline mode: \"$(mode_of nocg | jq -r .reason)\"; a granted node only on the nodev mount (opened for it), refused on the rootfs"

# --- 4. a rootless crun (root of a user namespace of uid 65534's): baseline mode --------
# As the rootless tests run crun (tests/oci/rootless.sh): in a user and mount namespace of
# the user's own, a tmpfs over the cgroup2 mount on a hybrid host. Last: the root is the
# user's from here on.
# A sanitizer build's plugin needs crun wrapped (plugin-lib.sh), whose reports uid 65534
# could not write: that part is the release run's (the reason is decided before any cgroup
# is looked at, in code parts 1-3 run).
if ldd "$PLUGIN" 2>/dev/null | grep -q libasan; then
	echo "# skipped the rootless part: a sanitizer build of the plugin"
elif command -v setpriv >/dev/null && as_nobody unshare -Urm true 2>/dev/null; then
	chmod 755 "$T" && chmod -R a+rX "$T/policies" && chown -R 65534:65534 "$T/rootfs" &&
		mkdir -p "$T/rl" "$T/rlstate" && touch "$T/rl.jsonl" &&
		chown 65534:65534 "$T/rl" "$T/rlstate" "$T/rl.jsonl" || fail "the rootless set-up"
	(cd "$T/rl" && as_nobody unshare -Urm crun spec --rootless) || fail "crun spec --rootless"
	jq --arg root "$T/rootfs" --argjson sc "$(seccomp_json)" --arg p "$PLUGIN" '
		.root = {path: $root, readonly: false} | .process.terminal = false
		| .process.args = ["sh", "-c", "echo -n > /dev/null && echo NULL_OK; echo x > /dev/full; echo FULL_RC=$?"]
		| .linux.seccomp = ($sc | del(.listenerPath))
		| .annotations["run.oci.seccomp.plugins"] = $p
		| .annotations["org.devwl.policy"] = "km.json"' "$T/rl/config.json" >"$T/rl/c.json" &&
		mv "$T/rl/c.json" "$T/rl/config.json" && chown 65534:65534 "$T/rl/config.json" ||
		fail "jq on the rootless spec"
	hide=$(awk '$0 ~ / - cgroup2 / {printf "%s ", $5}' /proc/self/mountinfo)
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] && hide=
	as_nobody env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEVWL_PLUGIN_POLICY_DIR="$T/policies" \
		DEVWL_PLUGIN_AUDIT="$T/rl.jsonl" timeout 60 unshare -Urm sh -c 'for m in '"$hide"'; do
			mount -t tmpfs none "$m" || exit 125; done
		exec crun --root '"$T/rlstate"' run --bundle '"$T/rl"' '"$tag-rl" >"$T/rl.out" 2>&1 \
		</dev/null || fail "rootless crun run: $(cat "$T/rl.out")"
	grep '"event":"mode"' "$T/rl.jsonl" | jq -e '.mode == "baseline" and
		(.reason == "the runtime runs in a user namespace" or (.reason | test("^the runtime runs as uid 65534")))' \
		>/dev/null || fail "rootless crun: $(cat "$T/rl.jsonl")"
	grep -q NULL_OK "$T/rl.out" && grep -q FULL_RC=1 "$T/rl.out" &&
		grep -q "baseline mode (the runtime runs" "$T/rl.out" || fail "rootless crun: $(cat "$T/rl.out")"
	pass "crun+plugin rootless: baseline mode, \"$(grep '"event":"mode"' "$T/rl.jsonl" | jq -r .reason)\"; /dev/null opens, /dev/full EPERM"
else
	echo "# skipped the rootless part: uid 65534 cannot make user namespaces here (or no setpriv)"
fi
plugin_sanitizer_check
