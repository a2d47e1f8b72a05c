# podman (Debian 12's podman) as a real client, with the shipped examples as they are
# installed: examples/oci-hook/podman-profile.json as --security-opt seccomp=, the
# hooks.d entries devwl-hook.podman.json and devwl-hook-poststop.podman.json (their
# path and socket pointed at this build and this test's devwld), its policy.json, and the settings of
# examples/oci-hook/README.md (runc, cgroupfs, the ulimits). Storage, run state and
# hooks live in $T; --network none. Checks grant, deny, the node the annotation names
# made at createRuntime and removed at poststop, and a container's exit.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/clients.sh"
. "$HERE/podman.sh"
D=$CLIENT_DIR

# The shipped policy: /apps admits org.devwl.node, grants 1:3 and 1:5, mknod without CAP_MKNOD.
cp "$EXAMPLES/oci-hook/policy.json" "$T/policy.json"
client_profile
start_devwld

for h in devwl-hook.podman.json devwl-hook-poststop.podman.json; do
	jq --arg p "$OCI_HOOK" --arg s "$T/control.sock" \
		'.hook.path = $p | .hook.args = [.hook.args[0], "--socket", $s] + .hook.args[1:]' \
		"$EXAMPLES/oci-hook/$h" >"$D/hooks.d/$h" || fail "jq on $h"
done
podman_start
RUN=("${PODMAN_RUN[@]}" --security-opt "seccomp=$T/profile.json")

# --- 1. the README's command: org.devwl.node=/apps/web, grant and deny ---------------------
pm "${RUN[@]}" --rm --cidfile "$T/web.cid" --annotation org.devwl.node=/apps/web \
	localhost/devwl-busybox:test sh -c "$CLIENT_SCRIPT" >"$T/web.out" 2>&1 ||
	fail "podman run: $(cat "$T/web.out")"
id=$(cat "$T/web.cid")
# /apps says mknod_needs_cap false: podman's containers have no CAP_MKNOD.
client_check "$T/web.out" "$id" /apps/web "podman --annotation org.devwl.node=/apps/web"
wait_gone "$id"
grep -q "hook: container $id: node /apps/web created" "$T/devwld.log" &&
	wait_for "$T/devwld.log" "hook: container $id: node /apps/web removed" 30 ||
	fail "the hooks did not make and remove /apps/web: $(grep "$id" "$T/devwld.log")"
ctl show /apps/web >/dev/null 2>&1 && fail "/apps/web left behind"
pass "the hooks.d entries make /apps/web at createRuntime and remove it at poststop"

# --- 2. no annotation: /containers/ID; podman exec joins; the exit is seen ---------------------
id=$(pm "${RUN[@]}" -d localhost/devwl-busybox:test sh -c \
	'echo x > /dev/null && echo READY; while [ ! -e /tmp/stop ]; do sleep 0.1; done') ||
	fail "podman run -d: $id"
wait_for "$T/devwld.log" "container $id: process" 30 || fail "the container did not attach"
ctl containers | grep -q "^$id /containers/$id " || fail "devwlctl containers: $(ctl containers)"
pm exec "$id" sh -c 'mknod /tmp/kmsg c 1 11; echo KMSG_RC=$?' >"$T/exec.out" 2>&1
grep -q KMSG_RC=1 "$T/exec.out" && audit_has "$id" "/containers/$id" mknodat "c 1:11" deny ||
	fail "podman exec: $(cat "$T/exec.out")"
pm exec "$id" touch /tmp/stop || fail "podman exec touch"
[ "$(pm wait "$id")" = 0 ] || fail "container exit: $(pm logs "$id" 2>&1)"
wait_gone "$id"
pass "no annotation → /containers/ID; podman exec is served as the container; its exit is seen"
exit 0
