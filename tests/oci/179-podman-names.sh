# A podman container by the name podman gave it (devwlctl(1) CONTAINER NAMES, rtname.c):
# podman passes no name in the OCI state, so devwld reads it from containers/storage
# beside the bundle. `podman run --name eager_tesla`: devwlctl containers shows the name;
# attach, detach and events --container take it (the full hot-plug proof of 154, by
# name); attach says it; another owner's --owner does not reach it; a name of no
# container is refused; a container run without --name gets podman's generated name.
# Then the CDI spec examples/k8s/cdi ships: Debian's podman 4.3 reads it (it refuses
# cdiVersion 0.6.0: examples/k8s/cdi/README.md), and devwl resolves the same file.
# podman 4.3 reads /etc/cdi and /var/run/cdi only: the spec goes there under a kind of
# this test's own, removed at the end.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/clients.sh"
. "$HERE/podman.sh"

client_attach_policy
client_profile
make_loop
start_devwld
podman_start

id=$(pm "${PODMAN_RUN[@]}" -d --name eager_tesla --security-opt "seccomp=$T/profile.json" \
	localhost/devwl-busybox:test sh -c "$ATTACH_WORKLOAD") || fail "podman run -d --name eager_tesla: $id"
wait_until 60 client_listed "$id" || fail "$id never reached devwld: $(pm logs "$id" 2>&1)"
ctl containers | grep -q "^$id /containers/$id 1 .* 0 eager_tesla$" ||
	fail "devwlctl containers does not name it: $(ctl containers)"
pass "podman $PODMAN_VERSION: devwlctl containers lists $id as eager_tesla"

ctl attach eager_tesla "$LOOP" --dry-run >"$T/out" 2>&1 || fail "attach --dry-run eager_tesla: $(cat "$T/out")"
grep -q "^would attach b 7:$LMIN ($LOOP) rw to container $id (eager_tesla) at $LOOP" "$T/out" ||
	fail "attach --dry-run said: $(cat "$T/out")"
ctl attach eager_tesla "$LOOP" --owner 65534 >"$T/out" 2>&1 && fail "--owner 65534 reached it: $(cat "$T/out")"
grep -q 'no container "eager_tesla" of uid 65534 .*uid 0 has one' "$T/out" || fail "--owner 65534: $(cat "$T/out")"
ctl attach gentle_turing "$LOOP" >"$T/out" 2>&1 && fail "attach by an unknown name: $(cat "$T/out")"
grep -q 'no container "gentle_turing" of uid 0' "$T/out" || fail "an unknown name: $(cat "$T/out")"
timeout 3 "$DEVWLCTL" --socket "$T/control.sock" events --container eager_tesla >"$T/ev.out" 2>&1
[ $? = 124 ] || fail "events --container eager_tesla: $(cat "$T/ev.out")"
pass "attach --dry-run and events --container take eager_tesla; --owner 65534 and an unknown name do not"

pid=$(pm inspect --format '{{.State.Pid}}' "$id") || fail "podman inspect $id"
attach_proof "podman, by its name" "$id" eager_tesla "$pid" full pm exec "$id"
touch "/proc/$pid/root/tmp/stop"
[ "$(pm wait "$id")" = 0 ] || fail "container exit: $(pm logs "$id" 2>&1)"
wait_gone "$id"
pm rm "$id" >/dev/null || fail "podman rm $id"

# Without --name podman makes one up; that is its name too.
id=$(pm "${PODMAN_RUN[@]}" -d --security-opt "seccomp=$T/profile.json" \
	localhost/devwl-busybox:test sh -c 'while [ ! -e /tmp/stop ]; do sleep 0.1; done') || fail "podman run -d: $id"
name=$(pm inspect --format '{{.Name}}' "$id") || fail "podman inspect $id"
wait_until 60 client_listed "$id" || fail "$id never reached devwld"
ctl containers | grep -q "^$id .* 0 $name$" || fail "podman's own name $name not shown: $(ctl containers)"
pass "a container run without --name is named as podman ps shows it: $name"
pid=$(pm inspect --format '{{.State.Pid}}' "$id") && touch "/proc/$pid/root/tmp/stop"
pm wait "$id" >/dev/null

# --- the shipped CDI spec, as Debian's podman reads it ------------------------------------
kind=test.devwl.org/disk$$
client_note_paths /etc/cdi
mkdir -p /etc/cdi || fail "mkdir /etc/cdi"
client_own "/etc/cdi/devwl-test-$$.yaml"
sed "s|^kind: .*|kind: $kind|; s|/dev/loop0|$LOOP|" "$EXAMPLES/k8s/cdi/cdi-spec.yaml" >"/etc/cdi/devwl-test-$$.yaml" ||
	fail "writing the spec"
grep -q '^cdiVersion: "0.5.0"$' "/etc/cdi/devwl-test-$$.yaml" || fail "the shipped spec: $(head -8 "$EXAMPLES/k8s/cdi/cdi-spec.yaml")"
pm "${PODMAN_RUN[@]}" --rm --device "$kind=d0" localhost/devwl-busybox:test \
	sh -c "[ -b $LOOP ] && echo BLOCK" >"$T/cdi.out" 2>&1 || fail "podman --device $kind=d0: $(cat "$T/cdi.out")"
grep -qx BLOCK "$T/cdi.out" || fail "podman made no $LOOP: $(cat "$T/cdi.out")"
resolved() { printf 'mkdir /x\ndeny /x a\nallow /x cdi:%s=d0 rw\nlist /x\n' "$kind" | "$DEVWLCTL" batch --cdi-dir /etc/cdi; }
[ "$(resolved 2>/dev/null | sed -n 4p)" = "b 7:$LMIN rw" ] || fail "devwl does not resolve $kind=d0: $(resolved 2>&1)"
pass "podman $PODMAN_VERSION and devwl read the shipped CDI spec (cdiVersion 0.5.0): $kind=d0 is $LOOP"
exit 0
