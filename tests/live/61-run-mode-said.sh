#!/bin/bash
# What --mode=auto chose is said on stderr, one line, as devwl-run(1) promises, and it
# agrees with the first audit line: "devwl-run: mode kernel (cgroup vN)", or "mode
# authoritative (no kernel mode: WHY)" (--no-baseline here). A mode asked for by name is
# not repeated.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device cgroup baseline"
command -v jq >/dev/null || skip "no jq"

"$RUN" --audit "$T/audit" -- true 2>"$T/err" || fail "devwl-run -- true: $(cat "$T/err")"
said=$(grep '^devwl-run: mode ' "$T/err")
[ "$(grep -c '^devwl-run: mode ' "$T/err")" = 1 ] || fail "auto: not one mode line: $(cat "$T/err")"
mode=$(head -1 "$T/audit" | jq -r 'select(.event == "mode") | .mode')
case $mode in
kernel)
	cg=$(head -1 "$T/audit" | jq -r .cgroup)
	[ "$said" = "devwl-run: mode kernel (cgroup $cg)" ] || fail "auto chose kernel ($cg), said: $said" ;;
authoritative)
	[[ "$said" == "devwl-run: mode authoritative (no kernel mode: "*")" ]] ||
		fail "auto chose authoritative, said: $said" ;;
*) fail "no mode in the audit: $(head -1 "$T/audit")" ;;
esac
echo "ok - auto: $said"

"$RUN" --no-baseline -- true 2>"$T/err" || fail "--no-baseline: $(cat "$T/err")"
grep -qx 'devwl-run: mode authoritative (no kernel mode: --no-baseline)' "$T/err" ||
	fail "--no-baseline: $(cat "$T/err")"
echo "ok - $(grep '^devwl-run: mode ' "$T/err")"

"$RUN" --mode=authoritative -- true 2>"$T/err" || fail "--mode=authoritative: $(cat "$T/err")"
grep -q '^devwl-run: mode ' "$T/err" && fail "a mode asked for was said: $(cat "$T/err")"
echo PASS
