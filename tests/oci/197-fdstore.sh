# systemd's file descriptor store without systemd (devwld(8) RESTART, "systemctl
# restart"): tests/oci/fdstore.c plays the service manager, keeping what devwld stores
# (FDSTORE=1) and starting it again with those fds (LISTEN_FDS) when it exits. A runc
# container's own process stays served, granted and refused, across a SIGTERM of the
# keeper (systemctl restart) and a SIGKILL (a crash that Restart= restarts); a slot its
# container left is removed from the store (FDSTOREREMOVE=1); and once the store is gone
# (systemctl stop) the process's calls fail ENOSYS. tests/package/20-systemd.sh does the
# same under systemd itself.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
STORE=$OCI_BIN/fdstore
[ -x "$STORE" ] || fail "fdstore not built at $STORE (the build should have made it)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/lab", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm",
                                           "allow c 1:8 rwm", "allow c 1:9 rwm"],
               "mknod_needs_cap": false } ],
  "containers": { "default_template": "/lab/{id}" } }
JSON
"$STORE" "$T/notify.sock" "$T/stopped" "$DEVWLD" --listen "$T/listen.sock" \
	--control "$T/control.sock" --policy "$T/policy.json" --audit "$T/audit.jsonl" \
	>"$T/store.out" 2>>"$T/devwld.log" &
CHILD_PIDS+=("$!")
keeper() { awk '$1 == "start" {p = $2} END {print p}' "$T/store.out"; }
wait_until 60 sh -c '[ -S "$0/listen.sock" ] && [ -S "$0/control.sock" ]' "$T" ||
	fail "devwld did not start: $(cat "$T/store.out")"

# The container's own process: opens /dev/zero in a loop ("ERR" on a failure) and runs
# /tmp/cmd when it appears, as a child of its own (its seccomp filter, its notify fd).
make_bundle c1 '
n=0
while [ ! -e /tmp/stop ]; do
	true </dev/zero || echo "ERR $n"
	n=$((n + 1))
	if [ -e /tmp/cmd ]; then sh /tmp/cmd >/tmp/out 2>&1; rm /tmp/cmd; fi
	sleep 0.01
done'
run_detached c1 "$T/c1"
wait_until 60 sh -c '[ "$($0 --socket $1/control.sock stats | awk '"'"'$1 == "processes" {print $2}'"'"')" = 1 ]' \
	"$DEVWLCTL" "$T" || fail "c1 not served: $(ctl containers)"
in_proc() {
	rm -f "$T/rootfs/tmp/out"
	printf '%s\n' "$1" >"$T/rootfs/tmp/new" && mv "$T/rootfs/tmp/new" "$T/rootfs/tmp/cmd"
	wait_until 30 sh -c '[ ! -e "$0" ]' "$T/rootfs/tmp/cmd" || fail "c1 did not run $1"
	cat "$T/rootfs/tmp/out"
}
served() {
	local out
	out=$(in_proc 'rm -f /tmp/p1 /tmp/p2; mknod /tmp/p1 c 1 3 && echo x >/tmp/p1 && echo MADE; mknod /tmp/p2 c 1 1 || echo REFUSED')
	[ "$(echo "$out" | grep -v 'Operation not permitted')" = "MADE
REFUSED" ] && [[ $out = *"p2: Operation not permitted"* ]] || fail "$1: c1's process: '$out'"
}
served "before any restart"
grep -q '^store devwld-table$' "$T/store.out" && grep -q '^store s[0-9]*-[0-9a-f]\{16\}$' "$T/store.out" ||
	fail "devwld stored no table or no notify fd: $(cat "$T/store.out")"
pass "devwld under a NOTIFY_SOCKET stores its table and c1's notify fd: $(grep -c '^store' "$T/store.out") FDSTORE=1 messages"

n=0
for sig in TERM KILL; do
	n=$((n + 1))
	old=$(keeper)
	t0=$(date +%s%N)
	kill -"$sig" "$old"
	wait_until 60 sh -c '[ "$(awk '"'"'$1 == "start" {p = $2} END {print p}'"'"' "$0")" != "$1" ]' \
		"$T/store.out" "$old" || fail "SIG$sig: no new devwld: $(cat "$T/store.out")"
	wait_until 60 sh -c '[ "$($0 --socket $1/control.sock stats 2>/dev/null | awk '"'"'$1 == "processes" {print $2}'"'"')" = 1 ]' \
		"$DEVWLCTL" "$T" || fail "SIG$sig: c1 not served again: $(tail -5 "$T/devwld.log")"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$(grep -c "keeper: 1 container processes taken back from systemd's file descriptor store" "$T/devwld.log")" = $n ] ||
		fail "SIG$sig: no fd taken back"
	served "after SIG$sig"
	! grep -q ERR "$T/c1.out" || fail "SIG$sig: c1's process had a call failed: $(grep -m3 ERR "$T/c1.out")"
	pass "SIG$sig of the keeper: started again with $(awk '$1 == "start" {n = $3} END {print n}' "$T/store.out") stored fds, c1's process served again in $ms ms (c 1:3 granted, c 1:1 refused), no call failed"
done
# One more keeper start with nothing new to store: the table stays stored once.
[ "$(grep -c '^store devwld-table$' "$T/store.out")" = 1 ] ||
	fail "the table stored $(grep -c '^store devwld-table$' "$T/store.out") times"

# A container gone: its slot leaves the store.
make_bundle c2 'true </dev/zero && echo DONE'
run_fg c2 "$T/c2" || fail "c2: $(cat "$T/c2.out")"
wait_until 30 grep -q '^remove s[0-9]*-' "$T/store.out" ||
	fail "c2's slot not removed from the store: $(cat "$T/store.out")"
pass "a container gone: FDSTOREREMOVE=1 for its slot ($(grep -m1 '^remove' "$T/store.out"))"

# systemctl stop: the store goes with the manager; c1's calls then fail closed.
touch "$T/stopped"
kill -TERM "$(keeper)"
wait_until 30 grep -q '^stopped' "$T/store.out" || fail "the stand-in did not stop"
wait_until 30 grep -q "ERR" "$T/c1.out" || fail "c1's process after the store is gone: no failure"
grep -q 'Function not implemented' "$T/c1.out" || fail "c1's failed open: $(grep -m2 ERR -B1 "$T/c1.out")"
pass "the store gone (systemctl stop): c1's process fails closed (ENOSYS)"
touch "$T/rootfs/tmp/stop"
exit 0
