#!/bin/bash
# --audit FILE writes one JSON object per decision, with the fields of devwl-run(1):
# decision continue/allow/deny, device "c MAJ:MIN" or null, errno name when not 0, the
# caller's user namespace where devwl read the caller, and the path escaped whatever bytes
# it holds (path_hex when they are not UTF-8).
set -u
# Decisions on opens: the authoritative mode (devwl-run --mode).
export DEVWL_MODE=authoritative
. "$(dirname "$0")/lib.sh"
live_init "mknod, device cgroup baseline"
command -v jq >/dev/null || skip "no jq"
mknod "$T/mem" c 1 1 || skip "cannot mknod in $T"
weird=$(printf '%s/a"b\\c\001\377\303\251' "$T")

"$RUN" --audit "$T/audit" -- "$PROBE" open /dev/null rdwr ';' open "$T/mem" rdonly ';' \
	open /etc/hostname rdonly ';' open "$weird" rdonly ';' mknod "$T/zero" c 1 5 666 \
	>"$T/out" 2>&1 ||
	fail "devwl-run failed: $(cat "$T/out")"
[ -s "$T/audit" ] || fail "no audit written"
# Every line parses on its own and has every field with the right type.
n=0
while IFS= read -r line; do
	# The first line says who enforces (devwl-run --mode), not a decision.
	if [ $n = 0 ] && [[ "$line" == '{"event":"mode",'* ]]; then
		grep -q '"mode":"authoritative"' <<<"$line" || fail "mode line: $line"
		continue
	fi
	n=$((n + 1))
	jq -e '.decision as $d | (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{9}Z$"))
		and (.pid | type == "number" or (. == null and $d == "continue"))
		and (.tid | type == "number")
		and ((has("userns") | not) or (.pid != null and (.userns | type == "number" and . > 0)))
		and (.syscall | type == "string") and (has("path"))
		and (.device == null or (.device | test("^[cb] [0-9]+:[0-9]+$")))
		and (.access | test("^r?w?m?$"))
		and (.decision | IN("continue", "allow", "deny", "error"))
		and (.handling_ns | type == "number")
		and ((has("errno") | not) or (.errno | test("^E[A-Z0-9]+$")))' \
		<<<"$line" >/dev/null || fail "bad audit line $n: $line"
done <"$T/audit"
[ $n -ge 4 ] || fail "only $n audit lines"

sel() { jq -c "select($1)" "$T/audit"; }
[ -n "$(sel '.path == "/dev/null" and .device == "c 1:3" and .decision == "allow" and .access == "rw" and (has("errno") | not)')" ] ||
	fail "no allow line for /dev/null: $(cat "$T/audit")"
[ -n "$(sel ".path == \"$T/mem\" and .device == \"c 1:1\" and .decision == \"deny\" and .errno == \"EPERM\" and .access == \"r\"")" ] ||
	fail "no deny line for mem: $(cat "$T/audit")"
[ -n "$(sel '.path == "/etc/hostname" and .device == null and .decision == "continue"')" ] ||
	fail "no continue line for /etc/hostname: $(cat "$T/audit")"
# A mknod's CAP_MKNOD check reads the caller: its line names the caller's user namespace,
# which devwl-run leaves the command in (this shell's).
userns=$(stat -L -c %i /proc/self/ns/user)
[ -n "$(sel ".path == \"$T/zero\" and .syscall == \"mknod\" and .decision == \"allow\" and .userns == $userns")" ] ||
	fail "no mknod line with userns $userns: $(grep -a mknod "$T/audit")"
# The odd path: quote, backslash and control char escaped, é kept, \377 replaced and the
# exact bytes in path_hex.
hex=$(printf '%s' "$weird" | od -An -v -tx1 | tr -d ' \n')
[ -n "$(sel ".path_hex == \"$hex\" and (.path | endswith(\"a\\\"b\\\\c\\u0001\\ufffdé\"))")" ] ||
	fail "odd path not escaped as expected: $(grep -a 'path_hex' "$T/audit")"

# "-" is stderr; the command's own output is untouched.
"$RUN" --audit - -- "$PROBE" open /dev/zero rdonly >"$T/out2" 2>"$T/err2" || fail "--audit -"
grep -q '"device":"c 1:5"' "$T/err2" || fail "--audit - wrote nothing to stderr"
grep -q '^ok ' "$T/out2" || fail "stdout lost: $(cat "$T/out2")"
echo "PASS ($n lines)"
