#!/bin/bash
# --policy FILE --node PATH: the command runs in that node of the file's hierarchy; a
# missing node is created with its missing ancestors, inheriting; --allow/--deny apply on
# top and are refused (exit 1) where the parent does not allow them; a bad file fails
# before anything runs.
set -u
. "$(dirname "$0")/lib.sh"
live_init "mknod, device cgroup baseline"
mknod "$T/null" c 1 3 && mknod "$T/zero" c 1 5 && mknod "$T/full" c 1 7 ||
	skip "cannot mknod in $T"
cat >"$T/policy.json" <<'JSON'
{
  "version": 1,
  "nodes": [
    { "path": "/ci", "rules": [ "deny a", "allow c 1:3 rwm", "allow c 1:5 r" ] },
    { "path": "/ci/strict", "rules": [ "deny c 1:5 rwm" ] }
  ]
}
JSON

probe3() { "$RUN" --policy "$T/policy.json" "$@" -- "$PROBE" open "$T/null" rdwr ';' \
	open "$T/zero" rdonly ';' open "$T/full" rdonly 2>>"$T/run.err"; }
out=$(probe3 --node /ci) || fail "/ci: $out"
[[ "$out" == "ok fd="*"rdev=1:3"*$'\n'"ok fd="*"rdev=1:5"*$'\n'"EPERM" ]] || fail "/ci: $out"
out=$(probe3 --node /ci/strict) || fail "/ci/strict: $out"
[[ "$out" == "ok fd="*"rdev=1:3"*$'\n'"EPERM"$'\n'"EPERM" ]] || fail "/ci/strict: $out"
# Created on the fly below /ci/strict, inheriting its list.
out=$(probe3 --node /ci/strict/job/42) || fail "/ci/strict/job/42: $out"
[[ "$out" == "ok fd="*"rdev=1:3"*$'\n'"EPERM"$'\n'"EPERM" ]] || fail "new node: $out"
# The root of the file allows everything (the kernel's root cgroup).
out=$(probe3 --node /) || fail "/: $out"
[[ "$out" == "ok fd="*$'\n'"ok fd="*$'\n'"ok fd="* ]] || fail "/: $out"
# --deny narrows; --allow of what /ci lacks is refused before anything runs.
out=$(probe3 --node /ci --deny 'c 1:3 w') || fail "/ci --deny: $out"
[[ "$(head -n 1 <<<"$out")" == EPERM ]] || fail "/ci --deny c 1:3 w: $out"
err=$("$RUN" --policy "$T/policy.json" --node /ci/x --allow 'c 1:7 r' -- touch "$T/ran" 2>&1)
[ $? = 1 ] || fail "refused --allow: wrong exit status: $err"
grep -qF -- "--allow 'c 1:7 r' on /ci/x" <<<"$err" || fail "refused --allow: '$err'"
[ ! -e "$T/ran" ] || fail "the command ran after a refused rule"
# A broken file.
echo '{ "version": 1, "nodes": [ { "path": "/x", "rules": [ "allow q" ] } ] }' >"$T/bad.json"
err=$("$RUN" --policy "$T/bad.json" -- touch "$T/ran" 2>&1)
[ $? = 1 ] || fail "bad policy: wrong exit status: $err"
grep -q "bad.json" <<<"$err" || fail "bad policy: message does not name the file: '$err'"
[ ! -e "$T/ran" ] || fail "the command ran with a bad policy"
echo "PASS"
