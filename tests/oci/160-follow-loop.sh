# devwld follows the devices a selector names, with real uevents: a loop device of FILE
# granted on a node by "loop:FILE" (the policy file's "selectors") is revoked the moment
# it is detached, and the device FILE is attached to next, on another minor, is granted
# in the same stroke. A running workload on that node (devwl-run --connect) opens the new
# minor, and the old minor, now backing another file, is refused. A binding devwlctl made
# is kept across a reload; a CDI spec rewritten by a temp file and a rename (--cdi-dir)
# re-resolves its cdi: binding. Every change is in the audit and `devwlctl events`.
# A selector rule ending a node's "rules" is such a binding too, and `devwlctl show`
# lists a node's bindings under its listing with what each names now.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] || fail "devwl-run not built at $RUN (the build should have made it)"
command -v losetup >/dev/null || skip "no losetup (util-linux)"
[ -e /dev/loop-control ] || skip "no loop driver here (/dev/loop-control)"

numbers() { local mm; mm=$(stat -c '%t:%T' "$1"); echo "$((16#${mm%:*})):$((16#${mm#*:}))"; }

for f in a hold other b c; do
	printf '%s' "$f-data" >"$T/$f.img"
	truncate -s 1M "$T/$f.img"
done
A0=$(loop_of "$T/a.img" 2>"$T/losetup.err") ||
	skip "cannot attach a loop device here: $(cat "$T/losetup.err")"
N0=$(numbers "$A0")
C0=$(loop_of "$T/c.img") || fail "cannot attach c.img"
NC=$(numbers "$C0")
mkdir "$T/cdi"
cat >"$T/policy.json" <<EOF_POLICY
{ "version": 1,
  "nodes": [ { "path": "/lab", "rules": ["deny a", "allow loop:$T/c.img r"] } ],
  "selectors": [ { "node": "/lab", "allow": "loop:$T/a.img r" },
                 { "node": "/lab", "allow": "cdi:test.devwl.org/dev=one r" } ] }
EOF_POLICY
# FOLLOW_DEVWLD_ARGS: more options (--kernel-mode never: the handler threads decide).
start_devwld --cdi-dir "$T/cdi" ${FOLLOW_DEVWLD_ARGS:-}
ctl selectors >"$T/sel.out" || fail "devwlctl selectors: $(cat "$T/sel.out")"
grep -qxF "/lab allow loop:$T/a.img r [file]: b $N0 r" "$T/sel.out" ||
	fail "selectors: $(cat "$T/sel.out")"
grep -qxF "/lab allow cdi:test.devwl.org/dev=one r [file]: -" "$T/sel.out" ||
	fail "selectors, the CDI device no spec defines yet: $(cat "$T/sel.out")"
# The node rule's binding first: the nodes' rules come before "selectors".
[ "$(head -1 "$T/sel.out")" = "/lab allow loop:$T/c.img r [file]: b $NC r" ] ||
	fail "selectors, the node rule's binding: $(cat "$T/sel.out")"
ctl show /lab >"$T/show.out" || fail "devwlctl show /lab: $(cat "$T/show.out")"
want="behavior deny
allow b $NC r
allow b $N0 r
  allow loop:$T/c.img r -> b $NC r
  allow loop:$T/a.img r -> b $N0 r
  allow cdi:test.devwl.org/dev=one r -> -"
[ "$(grep -v '^mknod_needs_cap' "$T/show.out" | sort)" = "$(sort <<<"$want")" ] ||
	fail "devwlctl show /lab: $(cat "$T/show.out")"
pass "a node rule's loop:c.img and the file's selectors: bound, and listed by show"
# devwlctl itself, not the ctl function: $! is then the process cleanup kills.
"$DEVWLCTL" --socket "$T/control.sock" events --json >"$T/events.out" 2>&1 &
CHILD_PIDS+=("$!")
for _ in $(seq 1200); do
	[ "$(stat_of events_subscribers)" = 1 ] && break
	sleep 0.05
done

# The workload: for each request file $T/req.N (a device path), it reads 6 bytes of that
# device (6: "a-data") and answers in $T/res.N, "ok DATA" or "refused" (why: $T/err.N).
"$RUN" --connect "$T/listen.sock" --node /lab --id follower -- sh -c '
	i=0
	echo STARTED
	while :; do
		while [ ! -e "$1/req.$i" ]; do sleep 0.05; done
		if out=$(head -c 6 "$(cat "$1/req.$i")" 2>"$1/err.$i"); then
			echo "ok $out" >"$1/res.$i.tmp"
		else
			echo refused >"$1/res.$i.tmp"
		fi
		mv "$1/res.$i.tmp" "$1/res.$i"
		i=$((i + 1))
	done' sh "$T" >"$T/work.out" 2>&1 &
CHILD_PIDS+=("$!")
wait_for "$T/work.out" STARTED || fail "the workload did not start: $(cat "$T/work.out")"
echo 0 >"$T/nreq"
# open DEV: what the workload got reading DEV. Called in $(...): the count is in a file.
open() {
	local n
	n=$(cat "$T/nreq")
	echo $((n + 1)) >"$T/nreq"
	echo "$1" >"$T/req.$n.tmp"
	mv "$T/req.$n.tmp" "$T/req.$n"
	for _ in $(seq 1200); do
		[ -e "$T/res.$n" ] && break
		sleep 0.05
	done
	[ -e "$T/res.$n" ] || fail "the workload did not answer about $1"
	cat "$T/res.$n"
}
# selector_events N: the number of selector records in the audit.
selector_events() { grep -c '"event":"selector"' "$T/audit.jsonl"; }
wait_events() {
	for _ in $(seq 1200); do
		[ "$(selector_events)" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

[ "$(open "$A0")" = "ok a-data" ] || fail "the workload cannot read $A0 ($N0), bound by loop: $(cat "$T/err.0")"
[ "$(open "$C0")" = "ok c-data" ] || fail "the workload cannot read $C0 ($NC), bound by a node rule"
mode=$(ctl containers | awk '$1 == "follower" {print $5}')
pass "a workload ($mode) reads $A0 ($N0), the loop device of a.img, by the policy's loop:a.img"

# Detach a.img; hold its minor with another file, so a.img lands on another one.
before=$(selector_events)
losetup -d "$A0" || fail "losetup -d $A0"
wait_events $((before + 1)) || fail "no selector record after losetup -d $A0"
grep '"event":"selector"' "$T/audit.jsonl" | tail -1 | grep -qF "\"revoked\":[\"b $N0 r\"]" ||
	fail "the detach did not revoke b $N0 r: $(tail -1 "$T/audit.jsonl")"
ctl show /lab | grep -qF "allow b $N0 " && fail "b $N0 is still allowed: $(ctl show /lab)"
pass "losetup -d $A0: b $N0 revoked at once ($(grep '"event":"selector"' "$T/audit.jsonl" | tail -1 | jq -r .cause))"
# Another test on this host may take the freed device first: then its file holds the
# minor, which serves as well, but it is not ours to detach below.
held=1
loop_of "$T/hold.img" "$A0" >/dev/null 2>"$T/hold.err" || held=0
[ "$held" = 1 ] || echo "# $A0 was taken by someone else before hold.img: $(cat "$T/hold.err")"
A1=$(loop_of "$T/a.img") || fail "cannot attach a.img again"
N1=$(numbers "$A1")
[ "$N1" != "$N0" ] || fail "a.img landed on its old minor $N0 again, though hold.img holds it"
for _ in $(seq 1200); do
	ctl show /lab | grep -qF "allow b $N1 r" && break
	sleep 0.05
done
ctl show /lab | grep -qF "allow b $N1 r" || fail "b $N1 never granted: $(ctl show /lab)"
grep '"event":"selector"' "$T/audit.jsonl" | grep -qF "\"granted\":[\"b $N1 r\"]" ||
	fail "no record of the grant of b $N1: $(grep selector "$T/audit.jsonl")"
[ "$(open "$A1")" = "ok a-data" ] || fail "the workload cannot read $A1 ($N1), a.img's new device"
r=$(open "$A0")
[ "$r" = refused ] || fail "the workload read $A0 ($N0, now hold.img's): $r"
pass "a.img again, on $A1 ($N1): the workload reads it; $A0 ($N0), now another file's, is refused"
# Another file on the old minor again, after hold.img: refused too.
if [ "$held" = 1 ] && losetup -d "$A0" && loop_of "$T/other.img" "$A0" >/dev/null 2>&1; then
	[ "$(open "$A0")" = refused ] || fail "the workload read $A0 with other.img on it"
fi

# devwlctl: a binding of its own, for a file attached only later; kept across a reload.
ctl allow /lab "loop:$T/b.img" r || fail "devwlctl allow /lab loop:b.img r"
ctl selectors | grep -qxF "/lab allow loop:$T/b.img r [devwlctl]: -" ||
	fail "devwlctl's binding: $(ctl selectors)"
ctl reload || fail "devwlctl reload"
ctl selectors | grep -qxF "/lab allow loop:$T/b.img r [devwlctl]: -" ||
	fail "devwlctl's binding after a reload: $(ctl selectors)"
ctl selectors | grep -qxF "/lab allow loop:$T/c.img r [file]: b $NC r" ||
	fail "the node rule's binding after a reload: $(ctl selectors)"
ctl show /lab | grep -qxF "  allow loop:$T/b.img r -> -" ||
	fail "show /lab, devwlctl's binding: $(ctl show /lab)"
B0=$(loop_of "$T/b.img") || fail "cannot attach b.img"
for _ in $(seq 1200); do
	[ "$(open "$B0")" = "ok b-data" ] && break
	sleep 0.05
done
[ "$(open "$B0")" = "ok b-data" ] || fail "the workload cannot read $B0, b.img's, bound by devwlctl"
pass "devwlctl allow /lab loop:b.img r: kept across a reload, b.img's device granted once attached"

# CDI: a spec written as a temp file renamed into place; then rewritten to another node.
spec() {
	cat >"$T/cdi/.spec.tmp" <<EOF_SPEC
{ "cdiVersion": "0.6.0", "kind": "test.devwl.org/dev",
  "devices": [ { "name": "one", "containerEdits": { "deviceNodes": [ { "path": "$1" } ] } } ] }
EOF_SPEC
	mv "$T/cdi/.spec.tmp" "$T/cdi/dev.json"
}
[ "$(open /dev/zero)" = refused ] || fail "/dev/zero readable before the spec names it"
spec /dev/zero
for _ in $(seq 1200); do
	ctl show /lab | grep -qF "allow c 1:5 r" && break
	sleep 0.05
done
[ "$(open /dev/zero)" != refused ] || fail "/dev/zero refused though the CDI spec names it"
spec /dev/full
for _ in $(seq 1200); do
	ctl show /lab | grep -qF "allow c 1:7 r" && break
	sleep 0.05
done
ctl show /lab | grep -qF "allow c 1:5 " && fail "c 1:5 still allowed after the spec changed"
[ "$(open /dev/zero)" = refused ] || fail "/dev/zero still readable after the spec changed"
[ "$(open /dev/full)" != refused ] || fail "/dev/full refused though the spec names it now"
pass "a CDI spec renamed into place, then rewritten: c 1:5 granted, then revoked for c 1:7"

# devwlctl events showed the changes.
grep -q "\"revoked\":\[\"b $N0 r\"\]" "$T/events.out" ||
	fail "devwlctl events missed the revocation: $(cat "$T/events.out")"
grep -q '"cause":"CDI spec changed' "$T/events.out" ||
	fail "devwlctl events missed the CDI change: $(cat "$T/events.out")"
pass "devwlctl events shows each change with its cause"

# A restart (a new worker, from the state file) keeps following: b.img detached after it
# is revoked from what the state said was granted.
ctl restart || fail "devwlctl restart"
ctl selectors | grep -qxF "/lab allow loop:$T/b.img r [devwlctl]: b $(numbers "$B0") r" ||
	fail "the bindings after a restart: $(ctl selectors)"
before=$(selector_events)
losetup -d "$B0" || fail "losetup -d $B0"
wait_events $((before + 1)) || fail "no selector record after a restart and losetup -d $B0"
ctl show /lab | grep -qF "allow b $(numbers "$B0") " && fail "b.img's device still allowed"
[ "$(open "$B0")" = refused ] || fail "the workload read $B0 after b.img was detached"
pass "after devwlctl restart: the bindings stay, and b.img detached is revoked"
