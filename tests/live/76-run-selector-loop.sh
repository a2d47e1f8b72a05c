#!/bin/bash
# devwl-run --allow 'loop:FILE ACCESS': the selector resolves, when devwl-run starts, to
# the loop device the kernel says FILE backs (/sys/block/loopN/loop/backing_file), and the
# command reads the device through it; by a symlink to FILE too. Without it, with write
# access only, or naming another file (a warning: no device matches), the read is refused.
# The same selector in a policy file node's "rules" (--policy) grants the read as well,
# after the node's plain rules; a plain rule after it is refused, naming the rule.
set -u
. "$(dirname "$0")/lib.sh"
live_init "losetup, the baseline cgroup"
command -v losetup >/dev/null || skip "no losetup (util-linux)"
[ -e /dev/loop-control ] || skip "no loop driver here (/dev/loop-control)"
printf 'devwl-loop-marker' >"$T/disk.img"
truncate -s 1M "$T/disk.img"
LOOP=$(losetup -f --show "$T/disk.img" 2>"$T/losetup.err") ||
	skip "cannot attach a loop device here: $(cat "$T/losetup.err")"
trap 'losetup -d "$LOOP"; rm -rf "$T"' EXIT
ln -s "$T/disk.img" "$T/link.img"
mm=$(stat -c '%t:%T' "$LOOP")
mm=$((16#${mm%:*})):$((16#${mm#*:}))

read_loop() { "$RUN" "$@" -- head -c 17 "$LOOP" 2>>"$T/run.err"; }
out=$(read_loop --allow "loop:$T/disk.img r") || fail "loop:FILE r: $(cat "$T/run.err")"
[ "$out" = devwl-loop-marker ] || fail "loop:FILE r read '$out'"
out=$(read_loop --mode=authoritative --allow "loop:$T/disk.img r") ||
	fail "authoritative: $(cat "$T/run.err")"
[ "$out" = devwl-loop-marker ] || fail "authoritative: read '$out'"
out=$(read_loop --allow "loop:$T/link.img rw") || fail "loop:LINK rw: $(cat "$T/run.err")"
[ "$out" = devwl-loop-marker ] || fail "loop:LINK rw read '$out'"
# -v says what it resolved to.
err=$("$RUN" -v --allow "loop:$T/disk.img r" -- true 2>&1) || fail "-v: $err"
grep -qF -- "--allow 'loop:$T/disk.img r': b $mm r" <<<"$err" || fail "-v said '$err'"

: >"$T/run.err"
read_loop && fail "read without a rule"
read_loop --allow "loop:$T/disk.img w" && fail "read with loop:FILE w"
read_loop --mode=authoritative --allow "loop:$T/disk.img w" &&
	fail "authoritative: read with loop:FILE w"
read_loop --allow "loop:$T/other.img r" && fail "read with another file's selector"
grep -qF "loop:$T/other.img: matches no device now" "$T/run.err" ||
	fail "no warning for a selector matching nothing: $(cat "$T/run.err")"
# A malformed selector is a usage error; nothing runs.
err=$("$RUN" --allow "loop:disk.img r" -- touch "$T/ran" 2>&1)
[ $? = 2 ] || fail "malformed selector: wrong exit status: $err"
grep -qF "expected loop:/PATH" <<<"$err" || fail "malformed selector: '$err'"
[ ! -e "$T/ran" ] || fail "the command ran after a refused selector"

# In a policy file node's "rules", after the node's plain rules.
policy() {
	printf '{"version": 1, "nodes": [{"path": "/"}, {"path": "/lab", "rules": [%s]}]}\n' \
		"$1" >"$T/p.json"
}
policy "\"deny a\", \"allow c 1:3 rw\", \"allow loop:$T/disk.img r\""
: >"$T/run.err"
out=$(read_loop --policy "$T/p.json" --node /lab) || fail "policy rule: $(cat "$T/run.err")"
[ "$out" = devwl-loop-marker ] || fail "policy rule: read '$out'"
err=$("$RUN" -v --policy "$T/p.json" --node /lab -- true 2>&1) || fail "policy -v: $err"
grep -qF -- "$T/p.json: node /lab: rule 3 'loop:$T/disk.img r': b $mm r" <<<"$err" ||
	fail "policy -v said '$err'"
policy "\"deny a\", \"allow loop:$T/disk.img w\""
read_loop --policy "$T/p.json" --node /lab && fail "policy rule w: read"
policy "\"deny a\", \"allow loop:$T/disk.img r\", \"deny c 1:3 rw\""
err=$("$RUN" --policy "$T/p.json" --node /lab -- touch "$T/ran" 2>&1) &&
	fail "a plain rule after a selector rule was accepted"
grep -qF "$T/p.json: node /lab: rule 3 \"deny c 1:3 rw\": a plain rule after the selector rule 2" \
	<<<"$err" || fail "plain after selector: '$err'"
policy "\"deny a\", \"allow loop:disk.img r\""
err=$("$RUN" --policy "$T/p.json" --node /lab -- touch "$T/ran" 2>&1) &&
	fail "a malformed selector rule was accepted"
grep -qF "$T/p.json: node /lab: rule 2 'loop:disk.img r'" <<<"$err" &&
	grep -qF "expected loop:/PATH" <<<"$err" || fail "malformed selector rule: '$err'"
[ ! -e "$T/ran" ] || fail "the command ran after a refused policy file"
# The file's "selectors" (devwld's bindings) are resolved too, after the node rules: a
# deny there is no key to skip, or the file would grant what it takes away.
# (A deny removes exact grants, as the kernel's: the node grants the device exactly.)
printf '{"version": 1, "nodes": [{"path": "/lab", "rules": ["deny a", "allow b %s r"]}],
  "selectors": [{"node": "/lab", "deny": "loop:%s r"}]}\n' "$mm" "$T/disk.img" >"$T/p.json"
read_loop --policy "$T/p.json" --node /lab && fail "a \"selectors\" deny was ignored"
sed -i 's/"deny": "loop/"allow": "loop/; s/"allow b [0-9:]* r"/"allow c 1:3 r"/' "$T/p.json"
out=$(read_loop --policy "$T/p.json" --node /lab) || fail "\"selectors\" allow: $(cat "$T/run.err")"
[ "$out" = devwl-loop-marker ] || fail "\"selectors\" allow: read '$out'"
sed -i 's|"node": "/lab"|"node": "/nowhere"|' "$T/p.json"
err=$("$RUN" --policy "$T/p.json" --node /lab -- touch "$T/ran" 2>&1) &&
	fail "a binding to a node the file lacks was accepted"
grep -qF "$T/p.json: selectors 1: no node /nowhere" <<<"$err" || fail "no node: '$err'"
echo "PASS"
