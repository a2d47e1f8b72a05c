# Nothing a workload controls runs on devwld's loop (doc/DESIGN.md, "devwld's threads"):
# CDI specs are read and parsed on a work thread, with a deadline, and a spec that did not
# change is not parsed again. A cdi: binding on /lab follows test.devwl.org/dev=one; beside
# its spec lies one at the parser's limits (1 MiB less a little, nested 60 deep), and the
# test hook DEVWLD_TEST_CDI_SLOW_MS makes each read of the specs take 2 s longer, as
# such a spec does on a slow machine. While a read is under way the control socket answers
# within 100 ms, and the binding follows the spec once the read ends; a write that changes
# no spec parses none again. Read slower than the deadline, the refresh goes on without
# them: the cdi: selector names nothing (when in doubt, deny), said in the log. The
# deadline is 4 s here, not devwld's 10 (DEVWLD_TEST_CDI_DEADLINE_MS), to reach it sooner.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/stuck-lib.sh"
need_test_hooks "a slow CDI read"

mkdir -m 0755 "$T/cdi"
# spec MINOR: the spec names c 1:MINOR (written beside and renamed into place).
spec() {
	cat >"$T/cdi/.dev.tmp" <<EOF_SPEC
{ "cdiVersion": "0.6.0", "kind": "test.devwl.org/dev",
  "devices": [ { "name": "one",
                 "containerEdits": { "deviceNodes": [ { "path": "/dev/null", "type": "c",
                                                         "major": 1, "minor": $1 } ] } } ] }
EOF_SPEC
	mv "$T/cdi/.dev.tmp" "$T/cdi/dev.json"
}
# The spec at the limits: a device whose annotations nest 60 deep, padded to 1 MiB less
# 4 KiB with devices of its own kind.
python3 - "$T/cdi/.big.tmp" <<'PY' || fail "writing the big spec"
import json, sys
deep = "x"
for _ in range(58):
    deep = {"a": deep}
devs = [{"name": "deep", "annotations": {"k": json.dumps(deep)},
         "containerEdits": {"deviceNodes": [{"path": "/dev/zero", "type": "c", "major": 1, "minor": 5}]}}]
text = lambda: json.dumps({"cdiVersion": "0.6.0", "kind": "test.devwl.org/big", "devices": devs})
pad = {"name": "pad00000", "containerEdits": {"deviceNodes": [{"path": "/dev/zero", "type": "c", "major": 1, "minor": 5}]}}
n = ((1 << 20) - 8192 - len(text())) // (len(json.dumps(pad)) + 2)
devs += [dict(pad, name="pad%05d" % i) for i in range(n)]
open(sys.argv[1], "w").write(text())
PY
cat >"$T/policy.json" <<'EOF_POLICY'
{ "version": 1,
  "nodes": [ { "path": "/lab", "rules": ["deny a"] } ],
  "selectors": [ { "node": "/lab", "allow": "cdi:test.devwl.org/dev=one r" } ] }
EOF_POLICY
shows() {
	wait_until 60 sh -c '"$0" --socket "$1" selectors | grep -qxF -- "$2"' "$DEVWLCTL" \
		"$T/control.sock" "$1"
}
binding() { echo "/lab allow cdi:test.devwl.org/dev=one r [file]: $1"; }

spec 3
mv "$T/cdi/.big.tmp" "$T/cdi/big.json"
export DEVWLD_TEST_CDI_SLOW_MS=2000 DEVWLD_TEST_CDI_DEADLINE_MS=4000
start_devwld --cdi-dir "$T/cdi"
shows "$(binding "c 1:3 r")" || fail "the spec grants nothing: $(ctl selectors)"
work_threads 0 || fail "the first read never ended: $(stat_of work_threads)"
parsed=$(stat_of cdi_specs_parsed)
[ "$parsed" -ge 2 ] || fail "cdi_specs_parsed $parsed, want both specs"

watch_latency 4 "$T/latency.out"
spec 5
work_threads 1 || fail "no read of the specs under way after a spec changed: $(stat_of work_threads)"
responsive "the CDI specs are read"
ctl selectors | grep -qxF "$(binding "c 1:3 r")" ||
	fail "the binding changed before the read ended: $(ctl selectors)"
shows "$(binding "c 1:5 r")" || fail "the binding does not follow the spec: $(ctl selectors)"
wait "$WATCHER" || fail "the latency probe: $(cat "$T/latency.out")"
[ "$(cat "$T/latency.out")" -lt 1000 ] ||
	fail "a control command waited $(cat "$T/latency.out") ms while the specs were read"
work_threads 0 || fail "the read never ended"
now=$(stat_of cdi_specs_parsed)
[ "$now" = $((parsed + 1)) ] || fail "cdi_specs_parsed $now after one spec changed, want $((parsed + 1))"
pass "a slow read of the specs: devwld answers within 100 ms; the binding follows the spec once it ends"

# A file that is no spec, written into the directory: the specs are read again, none
# parsed again.
echo x >"$T/cdi/notes.txt"
work_threads 1 || fail "no read of the specs after a write into their directory"
work_threads 0 || fail "the read never ended"
[ "$(stat_of cdi_specs_parsed)" = "$now" ] || fail "unchanged specs parsed again: cdi_specs_parsed $(stat_of cdi_specs_parsed), was $now"
pass "unchanged specs are not parsed again (cdi_specs_parsed stays $now)"

# Slower than the deadline: the refresh goes on without the specs.
kill "$DEVWLD_PID"
wait "$DEVWLD_PID" 2>/dev/null
rm -f "$T/listen.sock" "$T/control.sock"
export DEVWLD_TEST_CDI_SLOW_MS=6000
start_devwld --cdi-dir "$T/cdi"
work_threads 1 || fail "no read of the specs under way at the start: $(stat_of work_threads)"
responsive "the CDI specs are read past their deadline"
wait_for "$T/devwld.log" "CDI: the specs were not read within 4 s" ||
	fail "no log line for the read past its deadline"
shows "$(binding "-")" || fail "the binding kept its grant without the specs: $(ctl selectors)"
pass "a read past its deadline: the cdi: selector names nothing, said in the log"
