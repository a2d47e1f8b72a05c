# A runtime that hands over a process without its pid (crun exec sends 0): devwld serves
# it and logs that the pid is unknown, not "process 0 attached", which named nobody.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
CLIENT=$OCI_BIN/oci-client
[ -x "$CLIENT" ] || fail "oci-client not built at $CLIENT (the build should have made it)"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/clients", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON
start_devwld --no-audit
OCI_CLIENT_PID=0 "$CLIENT" "$T/listen.sock" good nopid /dev/null ok ||
	fail "a process handed over without a pid was not served"
"$CLIENT" "$T/listen.sock" good withpid /dev/null ok || fail "a process with its pid was not served"
wait_for "$T/devwld.log" "container withpid: process [1-9][0-9]* attached (1 in all)" ||
	fail "no attach line for withpid"
grep -q "container nopid: process 0 attached" "$T/devwld.log" && fail "devwld logged process 0"
grep -q "container nopid: a process attached, pid unknown (its runtime sent none, as crun exec does) (1 in all)" \
	"$T/devwld.log" || fail "the attach of nopid: $(grep nopid "$T/devwld.log")"
pass "$(grep -m1 'container nopid: a process' "$T/devwld.log" | sed 's/^devwld: //')"
