# Bindings made for a container's CDI annotations belong to that container: the
# container of one owner, with its own node (ids are per owner, devwld(8) USERS). A user
# of --allow-uid whose container takes the id of root's, with the same CDI annotation,
# and then goes, takes its own binding with it and never root's: root's container keeps
# its CDI grant. Before, the bindings went by id alone.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_user_client
mkdir -m 777 "$T/sig-root" "$T/sig-nobody" && mkdir "$T/cdi" || fail "mkdir"
cat >"$T/cdi/full.json" <<'JSON'
{ "cdiVersion": "0.6.0", "kind": "test.devwl.org/dev",
  "devices": [ { "name": "full",
                 "containerEdits": { "deviceNodes": [ { "path": "/dev/full", "permissions": "rw" } ] } } ] }
JSON
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "cdi_annotations": true, "rules": ["deny a", "allow c 1:7 rw"] },
             { "path": "/users", "cdi_annotations": true, "rules": ["deny a", "allow c 1:7 rw"] } ],
  "containers": { "container_rules": ["deny c 1:7 rw"] } }
JSON
start_devwld --allow-uid 65534 --kernel-mode never --cdi-dir "$T/cdi"
ID=cdiowner$(printf '7%.0s' $(seq 56))
ANN='{"cdi.k8s.io/devwl-test":"test.devwl.org/dev=full"}'

# run WHO: a stand-in runtime's container $ID with the CDI annotation, as WHO.
run() {
	local who=$1 as=
	[ "$who" = nobody ] && as=as_nobody
	OCI_CLIENT_METADATA= OCI_CLIENT_ANNOTATIONS=$ANN $as "$CLIENT" "$T/listen.sock" run "$ID" \
		"$T/sig-$who" >"$T/$who.out" 2>&1 &
	CHILD_PIDS+=("$!")
	wait_for "$T/$who.out" UP 30 || fail "$who's $ID did not start: $(cat "$T/$who.out")"
}
run root
wait_for "$T/devwld.log" "container $ID: 1 of the 1 CDI devices its annotations name bound on /containers/$ID" ||
	fail "root's binding: $(grep "$ID" "$T/devwld.log")"
run nobody
wait_for "$T/devwld.log" "container $ID: 1 of the 1 CDI devices its annotations name bound on /users/65534/$ID" ||
	fail "the user's binding: $(grep "$ID" "$T/devwld.log")"
[ "$(ctl selectors | grep -c "cdi:test.devwl.org/dev=full")" = 2 ] || fail "selectors: $(ctl selectors)"
touch "$T/sig-nobody/stop-$ID"
wait_for "$T/devwld.log" "container $ID: gone" || fail "the user's container never went"
sleep 0.5
ctl selectors >"$T/sel.out"
grep -q "/containers/$ID" "$T/sel.out" || fail "root's binding went with the user's container: $(cat "$T/sel.out")"
grep -q "/users/65534/$ID" "$T/sel.out" && fail "the user's binding stayed: $(cat "$T/sel.out")"
ctl list "/containers/$ID" | grep -q 'c 1:7 rw' || fail "root's grant went: $(ctl list "/containers/$ID")"
pass "uid 65534's container of root's id took only its own CDI binding; root's $ID keeps c 1:7"
touch "$T/sig-root/stop-$ID"
exit 0
