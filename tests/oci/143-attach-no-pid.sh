# A runtime that hands over a process without its pid (crun exec sends 0): devwld serves
# it, logs the pid as unknown, not "process 0 attached", which named nobody, and takes the
# pid from the first of its calls answered with its credentials: the log names it, and
# kernel mode rules on it as on a process that came with its pid.
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
OCI_CLIENT_PID=0 "$CLIENT" "$T/listen.sock" good nopid /dev/null ok &
nopid=$!
wait "$nopid" || fail "a process handed over without a pid was not served"
"$CLIENT" "$T/listen.sock" good withpid /dev/null ok || fail "a process with its pid was not served"
wait_for "$T/devwld.log" "container withpid: process [1-9][0-9]* attached (1 in all)" ||
	fail "no attach line for withpid"
grep -q "container nopid: process 0 attached" "$T/devwld.log" && fail "devwld logged process 0"
grep -q "container nopid: a process attached, pid unknown until a call of it shows it (its runtime sent none, as crun exec does) (1 in all)" \
	"$T/devwld.log" || fail "the attach of nopid: $(grep nopid "$T/devwld.log")"
# The client opened /dev/null itself, a call answered with its credentials: its pid.
wait_for "$T/devwld.log" "container nopid: process $nopid attached (the pid its calls show)" ||
	fail "nopid's pid ($nopid) not taken from its call: $(grep nopid "$T/devwld.log")"
# A root runtime's container is put in kernel mode (or refused it, saying why) once its pid
# is known, whatever this host's cgroups let devwld do with it.
km='\(device cgroup not programmed\|kernel mode\)'
wait_for "$T/devwld.log" "container withpid: $km" || fail "no kernel-mode line for withpid"
wait_for "$T/devwld.log" "container nopid: $km" ||
	fail "kernel mode never ruled on nopid: $(grep nopid "$T/devwld.log")"
pass "$(grep -m1 "container nopid: process" "$T/devwld.log" | sed 's/^devwld: //')"
