#!/bin/bash
# An audit line says which check refused a call (devwl-run(1), AUDIT: "reason"): a mknod
# the policy allows but the caller may not make for want of CAP_MKNOD is "no CAP_MKNOD",
# one the policy denies is "policy" with the rule that refused it. Both are EPERM, and
# without the reason they were the same line.
set -u
. "$(dirname "$0")/lib.sh"
live_init "mknod, capabilities to drop"
command -v jq >/dev/null || skip "no jq"
[ $((0x$(awk '/^CapEff/ {print $2}' /proc/self/status) >> 27 & 1)) = 1 ] ||
	skip "we do not hold CAP_MKNOD ourselves"

# c 1:3 allowed, c 1:1 not (the OCI default set without --policy).
"$RUN" --audit "$T/nocap" --drop-cap CAP_MKNOD -- "$PROBE" mknod "$T/null" c 1 3 0666 >"$T/out"
[ "$(cat "$T/out")" = EPERM ] || fail "mknod c 1:3 without CAP_MKNOD: $(cat "$T/out")"
"$RUN" --audit "$T/policy" -- "$PROBE" mknod "$T/mem" c 1 1 0600 >"$T/out"
[ "$(cat "$T/out")" = EPERM ] || fail "mknod c 1:1: $(cat "$T/out")"

mknod_line() { jq -c 'select(.device != null and (.syscall | startswith("mknod")))' "$1"; }
nocap=$(mknod_line "$T/nocap")
policy=$(mknod_line "$T/policy")
jq -e '.decision == "deny" and .errno == "EPERM" and .reason == "no CAP_MKNOD"
	and (has("rule") | not)' <<<"$nocap" >/dev/null ||
	fail "the CAP_MKNOD refusal: $nocap"
jq -e '.decision == "deny" and .errno == "EPERM" and .reason == "policy"
	and (.rule | test("^no rule allows it \\(rules: c 1:3 rwm, "))' <<<"$policy" >/dev/null ||
	fail "the policy denial: $policy"
echo "ok - without CAP_MKNOD: $nocap"
echo "ok - denied by the policy: $policy"
echo "PASS"
