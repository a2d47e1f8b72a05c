# devwld's learn mode (devwld(8) LEARN MODE) with runc: /ci/job learns (the policy file's
# "learn"), so its containers run under /ci, its parent, whatever /ci/job's own rules say;
# a real workload (busybox losetup and mke2fs on a loop device attached beforehand; tunctl
# making and removing a tun interface in the container's network namespace; a pty opened
# as a terminal program opens one, /dev/ptmx then its /dev/pts/N; a FUSE file system
# mounted on /dev/fuse) passes there and a device /ci denies (/dev/loop-control, c 10:237)
# is still refused EPERM while learning: the ceiling is never exceeded. devwlctl advise draws the minimal policy, as a policy file,
# from a running container (its owner's name only: another uid's advise finds nothing) and
# from the node (what every container it served touched), naming the loop device by the
# file behind it (loop:FILE), the pty's other side by its major's name (char-pts: devpts
# numbers it anew each time), the others by their nodes, with the program that touched
# each. learn off gives the node its
# own rules back: the workload is refused, and stays so across a restart of devwld (the
# change is kept; the records are not). devwlctl learn on serves it under /ci again. The
# advice, loaded as it is (devwlctl reload), lets the same workload pass and refuses,
# EPERM, the other loop device it never touched. A top-level node learns under the default
# set, not the allow all of a root nobody wrote.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
[ -e /dev/loop-control ] || skip "no /dev/loop-control (loop driver not loaded)"
[ -c /dev/net/tun ] || skip "no /dev/net/tun (tun driver not loaded)"
truncate -s 4M "$T/disk.img" "$T/other.img" || fail "truncate"
LOOP=$(loop_of "$T/disk.img") || skip "losetup -f: no free loop device here"
OTHER=$(loop_of "$T/other.img") || skip "losetup -f: no second free loop device here"
LMIN=$(($(stat -c '0x%T' "$LOOP")))
OMIN=$(($(stat -c '0x%T' "$OTHER")))

cat >"$T/policy.json" <<EOF
{ "version": 1,
  "nodes": [ { "path": "/ci", "rules": ["deny a", "allow c 1:* rwm", "allow c 5:* rwm",
                                         "allow c 136:* rwm", "allow b 7:* rwm",
                                         "allow c 10:200 rwm", "allow c 10:229 rwm"] },
             { "path": "/ci/job", "rules": ["deny a", "allow c 1:3 rwm"], "learn": true } ],
  "containers": { "default_template": "/ci/job/{id}" } }
EOF
start_devwld

# The nodes, made by runc (its device cgroup allows them): the loop devices, loop-control,
# fuse and tun.
devs=$(jq -n --argjson l "$LMIN" --argjson o "$OMIN" '[
	{path: "/dev/disk0", type: "b", major: 7, minor: $l},
	{path: "/dev/disk1", type: "b", major: 7, minor: $o},
	{path: "/dev/loop-control", type: "c", major: 10, minor: 237},
	{path: "/dev/fuse", type: "c", major: 10, minor: 229},
	{path: "/dev/net/tun", type: "c", major: 10, minor: 200}]')
# work: losetup reads the device's status, mke2fs writes a file system on it; tunctl makes
# a tun interface (TUNSETIFF, TUNSETPERSIST) and removes it; the probe opens a pty's two
# sides and mounts a FUSE file system (tests/live/probe.c: pty, fusemount).
work='losetup /dev/disk0 >/dev/null && mke2fs -F /dev/disk0 >/dev/null 2>&1 &&
tunctl -t dwl0 >/dev/null && tunctl -d dwl0 >/dev/null &&
[ "$(probe pty)" = ok ] && [ "$(probe fusemount /dev/fuse /tmp)" = ok ] && echo WORK_OK'
caps='.process.capabilities |= with_entries(.value += ["CAP_NET_ADMIN", "CAP_SYS_ADMIN"])'
make_bundle work "$work"' && true </dev/loop-control; echo "CTL_RC=$?"
while [ ! -e /tmp/stop ]; do sleep 0.1; done' ".linux.devices += $devs | $caps"
make_bundle enforce "$work"'; true </dev/disk1; echo "OTHER_RC=$?"' ".linux.devices += $devs | $caps"
rm -f "$T/rootfs/tmp/stop"
cp "$OCI_BIN/probe-static" "$T/rootfs/bin/probe" || fail "cp probe-static"

# --- learning: the ceiling's grants, never more ----------------------------------------
learner=learn-$$
run_detached "$learner" "$T/work"
wait_for "$T/$learner.out" CTL_RC= 30 || fail "learning run: $(cat "$T/$learner.out")"
grep -q WORK_OK "$T/$learner.out" || fail "workload under /ci: $(cat "$T/$learner.out")"
grep -q "can't open /dev/loop-control: Operation not permitted" "$T/$learner.out" ||
	fail "c 10:237, which /ci denies, while learning: $(cat "$T/$learner.out")"
pass "while /ci/job learns its container runs under /ci: losetup+mke2fs, tunctl, a pty and a FUSE mount pass, c 10:237 EPERM"
ctl show /ci/job | grep -qx "learn on" || fail "show /ci/job: $(ctl show /ci/job)"
ctl show "/ci/job/$learner" | grep -qxF "learn on (as /ci/job)" ||
	fail "show /ci/job/$learner: $(ctl show "/ci/job/$learner")"
ctl show /ci | grep -q learn && fail "show /ci, which does not learn: $(ctl show /ci)"

ctl advise "$learner" >"$T/c.json" || fail "advise $learner: $(cat "$T/c.json")"
rules() { jq -r '.nodes[] | select(.path == "/ci/job") | .rules[]' "$1"; }
rules "$T/c.json" | grep -qxF "allow loop:$T/disk.img rw" ||
	fail "advise $learner: no loop:FILE rule: $(cat "$T/c.json")"
jq -r '.nodes[] | select(.path == "/ci/job") | .why[]' "$T/c.json" | grep -q "by mke2fs" ||
	fail "advise $learner: why: $(cat "$T/c.json")"
rules "$T/c.json" | grep -qxF "allow /dev/net/tun rw" ||
	fail "advise $learner: no rule for the tun device by its node: $(cat "$T/c.json")"
# tunctl ends right after its open: named before the answer, it is still there.
jq -r '.nodes[] | select(.path == "/ci/job") | .why["allow /dev/net/tun rw"]' "$T/c.json" |
	grep -q "^openat rw by tunctl" || fail "advise $learner: the tun rule's why: $(cat "$T/c.json")"
for r in "allow /dev/fuse rw" "allow /dev/ptmx rw" "allow char-pts rw"; do
	rules "$T/c.json" | grep -qxF "$r" || fail "advise $learner: no rule '$r': $(cat "$T/c.json")"
done
grep -q "10:237\|loop-control" <(rules "$T/c.json") && fail "refused c 10:237 learnt: $(cat "$T/c.json")"
# Containers are named among root's unless another owner is said: not found there.
ctl advise --owner 65534 "$learner" 2>"$T/owner.err" && fail "advise --owner 65534 found $learner"
grep -q ENOENT "$T/owner.err" || fail "advise as another owner: $(cat "$T/owner.err")"
touch "$T/rootfs/tmp/stop"
pass "advise CONTAINER: /ci/job's policy names the loop device loop:$T/disk.img (by mke2fs) /dev/net/tun, /dev/fuse, /dev/ptmx and char-pts; another owner's name finds nothing"

# --- the node's record outlives its container ------------------------------------------
for _ in $(seq 100); do ctl containers | grep -q "^$learner " || break; sleep 0.1; done
ctl advise /ci/job >"$T/advice.json" || fail "advise /ci/job: $(cat "$T/advice.json")"
rules "$T/advice.json" | grep -qxF "allow loop:$T/disk.img rw" ||
	fail "advise /ci/job: $(cat "$T/advice.json")"
rules "$T/advice.json" | grep -q "7:$OMIN\|other.img" && fail "untouched $OTHER learnt"
pass "advise /ci/job after its container is gone: the same rules"

# --- learn off: the node's own rules again ----------------------------------------------
ctl learn /ci/job off || fail "devwlctl learn /ci/job off"
rm -f "$T/rootfs/tmp/stop"
run_fg "off-$$" "$T/enforce"
grep -q WORK_OK "$T/off-$$.out" && fail "learn off: /ci/job's own rules let the loop device through"
grep -q "Operation not permitted" "$T/off-$$.out" || fail "learn off: $(cat "$T/off-$$.out")"
ctl show /ci/job | grep -q learn && fail "show /ci/job after learn off: $(ctl show /ci/job)"
pass "learn off: /ci/job's own rules (c 1:3 only) refuse the workload EPERM"

# --- a restart keeps the flag (a change the state keeps), not the record ----------------
kill "$DEVWLD_PID"
wait "$DEVWLD_PID" 2>/dev/null
DEVWLD_PID=
start_devwld
run_fg "rst-$$" "$T/enforce"
grep -q WORK_OK "$T/rst-$$.out" && fail "restart: learn off was lost (the file's learn is back)"
ctl advise /ci/job 2>"$T/rst.err" >/dev/null && fail "restart: a record survived"
grep -q "ENOENT.*learnt nothing" "$T/rst.err" || fail "restart: advise: $(cat "$T/rst.err")"
pass "a restart keeps devwlctl learn off (the state's changes), not the records"

# --- devwlctl learn on: the ceiling again, a new record ---------------------------------
ctl learn /nope on 2>"$T/nope.err" && fail "learn on a node that does not exist"
grep -q ENOENT "$T/nope.err" || fail "learn /nope: $(cat "$T/nope.err")"
ctl learn /ci/job on || fail "devwlctl learn /ci/job on"
run_fg "on-$$" "$T/enforce"
grep -q WORK_OK "$T/on-$$.out" && grep -q OTHER_RC=0 "$T/on-$$.out" ||
	fail "learn on: not under /ci: $(cat "$T/on-$$.out")"
ctl advise /ci/job | jq -r '.nodes[] | select(.path == "/ci/job") | .rules[]' |
	grep -qxF "allow loop:$T/other.img r" || fail "learn on: $OTHER not in the new record"
ctl learn /ci/job off || fail "devwlctl learn /ci/job off"
pass "devwlctl learn on: the workload runs under /ci again and its record starts anew"

# --- the advice as the policy: enforced ---------------------------------------------------
jq '.containers = {default_template: "/ci/job/{id}"}' "$T/advice.json" >"$T/policy.json"
ctl reload >/dev/null || fail "reload with the advice: $(tail -3 "$T/devwld.log")"
run_fg "enf-$$" "$T/enforce"
grep -q WORK_OK "$T/enf-$$.out" || fail "enforced: the workload failed: $(cat "$T/enf-$$.out")"
grep -q "can't open /dev/disk1: Operation not permitted" "$T/enf-$$.out" ||
	fail "enforced: $OTHER, never touched: $(cat "$T/enf-$$.out")"
pass "the advice loaded as the policy: the workload (loop device, tun, pty, FUSE) passes, $OTHER (never touched) EPERM"

# --- a top-level node's ceiling, below the root nobody wrote: the default set ------------
# The advice's /ci is a copy of the root, allow all; its parent is that root, which allows
# all only because nobody wrote it (devwld(8), DEFAULT DEVICES): learning /ci never gets
# more than the default set.
ctl reset >/dev/null || fail "devwlctl reset"
ctl learn /ci on || fail "devwlctl learn /ci on"
run_fg "top-$$" "$T/enforce"
grep -q WORK_OK "$T/top-$$.out" && fail "learning /ci: the loop device through the root's allow all"
grep -q "Operation not permitted" "$T/top-$$.out" || fail "learning /ci: $(cat "$T/top-$$.out")"
pass "learning a top-level node runs its containers under the default set, not the root's allow all"
exit 0
