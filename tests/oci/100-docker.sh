# Docker (Debian 12's docker.io) as a real client: a dockerd of this test's own (unix
# sockets in $T only, no bridge, no iptables), a busybox image from `docker import`,
# and the shipped seccomp profile with --security-opt seccomp=. Docker 20.10 drops the
# profile's listenerPath (moby profiles/seccomp: its Seccomp struct has no such field
# before 23.0), so the container fails to start; the runtime wrapper
# examples/docker/devwl-runc puts it back, and through it a granted open and mknod
# work, denied ones fail EPERM, and devwld sees the container go; a second runtime with
# --devwl-metadata puts every container of its own on one node.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/clients.sh"
. "$HERE/docker.sh"
D=$CLIENT_DIR

client_policy
client_profile
start_devwld

# devwl: the listener only; devwl-apps: every container on the node /apps/docker.
jq -n --arg p "$WRAPPER" --arg l "$T/listen.sock" '{runtimes: {
	devwl: {path: $p, runtimeArgs: ["--devwl-listener=" + $l]},
	"devwl-apps": {path: $p, runtimeArgs: ["--devwl-listener=" + $l,
		"--devwl-metadata=node=/apps/docker"]},
	"devwl-typo": {path: $p, runtimeArgs: ["--devwl-listner=" + $l]}}}' >"$D/daemon.json"
docker_start
VERSION=$DOCKER_VERSION

# --pull never: a missing image must fail here, not reach for a registry.
RUN=(run --pull never --network none --security-opt "seccomp=$T/profile.json")

# --- 1. Docker's own runtime: is listenerPath carried to the OCI config? ------------------
if dk "${RUN[@]}" --rm --runtime runc devwl-busybox:test sh -c "$CLIENT_SCRIPT" >"$T/plain.out" 2>&1; then
	pass "dockerd $VERSION carries listenerPath: the shipped profile works without a wrapper"
	# Checked with the wrapper's container below; here only that it reached devwld.
	grep -q "NULL_OK" "$T/plain.out" || fail "plain run: $(cat "$T/plain.out")"
else
	grep -q "listenerPath is not set" "$T/plain.out" ||
		fail "plain run failed for another reason: $(cat "$T/plain.out")"
	pass "dockerd $VERSION drops listenerPath (runc: \"listenerPath is not set\"): moby's profiles/seccomp Seccomp has no ListenerPath before 23.0"
fi

# --- 2. through examples/docker/devwl-runc: grant, deny, exit ---------------------------------
id=$(dk "${RUN[@]}" -d --runtime devwl devwl-busybox:test sh -c "$CLIENT_SCRIPT
echo READY; while [ ! -e /tmp/stop ]; do sleep 0.1; done; echo STOPPED") ||
	fail "docker run --runtime devwl: $id"
for _ in $(seq 300); do
	dk logs "$id" 2>&1 | grep -q READY && break
	sleep 0.1
done
dk logs "$id" >"$T/wrapped.out" 2>&1
grep -q READY "$T/wrapped.out" || fail "container not ready: $(cat "$T/wrapped.out")"
client_check "$T/wrapped.out" "$id" "/containers/$id" "docker --runtime devwl"
ctl containers | grep -q "^$id /containers/$id " || fail "devwlctl containers: $(ctl containers)"
dk exec "$id" touch /tmp/stop || fail "docker exec"
[ "$(dk wait "$id")" = 0 ] || fail "container exit: $(dk logs "$id" 2>&1)"
wait_gone "$id"
pass "docker exec joins the container; its exit is seen: devwlctl containers no longer lists it"

# --- 3. a runtime per node: --devwl-metadata=node=/apps/docker -------------------------------
dk "${RUN[@]}" --rm --runtime devwl-apps devwl-busybox:test sh -c "$CLIENT_SCRIPT" >"$T/apps.out" 2>&1 ||
	fail "docker run --runtime devwl-apps: $(cat "$T/apps.out")"
id=$(sed -n 's|^devwld: container \([0-9a-f]*\): node /apps/docker.*|\1|p' "$T/devwld.log" | head -1)
[ -n "$id" ] || fail "no container on /apps/docker: $(tail -5 "$T/devwld.log")"
client_check "$T/apps.out" "$id" /apps/docker "docker --runtime devwl-apps"
wait_gone "$id"

# --- 3b. a typo in runtimeArgs: Docker shows the wrapper's own words ---------------------------
dk "${RUN[@]}" --rm --runtime devwl-typo devwl-busybox:test true >"$T/typo.out" 2>&1 &&
	fail "docker run --runtime devwl-typo started a container"
grep -q "devwl-runc: unknown option --devwl-listner=" "$T/typo.out" ||
	fail "docker's error for a typo in runtimeArgs: $(cat "$T/typo.out")"
pass "a typo in the wrapper's runtimeArgs: docker run says which option, not \"unable to retrieve OCI runtime error\""

# --- 4. the wrapper leaves containers without a NOTIFY profile alone ---------------------
n=$(grep -c ': node ' "$T/devwld.log")
dk run --pull never --rm --network none --runtime devwl --security-opt seccomp=unconfined devwl-busybox:test \
	sh -c 'echo x > /dev/full; echo RC=$?' >"$T/unconfined.out" 2>&1 || fail "unconfined: $(cat "$T/unconfined.out")"
grep -q "No space left on device" "$T/unconfined.out" || fail "unconfined: $(cat "$T/unconfined.out")"
[ "$(grep -c ': node ' "$T/devwld.log")" = "$n" ] || fail "an unconfined container reached devwld"
dk run --pull never --rm --network none --runtime devwl devwl-busybox:test true >"$T/default.out" 2>&1 ||
	fail "Docker's default profile through the wrapper: $(cat "$T/default.out")"
pass "seccomp=unconfined and Docker's default profile run unchanged through devwl-runc"
exit 0
