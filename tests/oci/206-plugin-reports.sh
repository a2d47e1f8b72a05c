# The plugin's kernel mode reports what the device program decides (devwl-plugin(7),
# KERNEL MODE): with DEVWL_PLUGIN_AUDIT set, a denial and the allowed accesses
# (deduplicated, with their counts: N opens and one more a second later come out as a
# few records whose counts add up to N + 1) reach the audit marked "source":"kernel", with the
# container and its node; nothing else records them, since only mknod is trapped. Run by
# tests/oci/plugin-host (a runtime's side of the plugin ABI, nothing more), with a
# workload in cgroups of its own. On a hybrid host (v1 devices beside cgroup2) the v1
# rules enforce and a reporter on the workload's own cgroup2 cgroup reports; a workload
# whose cgroup2 cgroup is not its own is enforced all the same, and the plugin says once
# (stderr, and the audit's {"event":"reports","result":"unavailable"}) that nothing can
# report it. oci-v2only-206: the same on cgroup v2, where the program itself reports.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PLUGIN=${DEVWL_PLUGIN:-$BUILD/plugin/devwl-plugin.so}
HOST=$OCI_BIN/plugin-host
[ -f "$PLUGIN" ] || fail "the plugin was not built at $PLUGIN"
[ -x "$HOST" ] || fail "plugin-host was not built at $HOST"
host_user_notif || skip "no seccomp user notification in this kernel"

v1=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)devices(,|$)/ {print $5; exit}' /proc/self/mountinfo)
v2=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
[ -n "$v2" ] || skip "no cgroup2 hierarchy: nothing can report a v1 cgroup's decisions"
if [ -n "$v1" ]; then
	want=kernel-v1
else
	host_can_v2_devices || skip "cgroup v2 device programs: $host_why"
	want=kernel-v2
fi

mkdir -p "$T/policies" "$T/state"
cat >"$T/policies/km.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers",
               "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                         "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm",
                         "allow c 136:* rwm"] } ] }
JSON
echo '{ "ociVersion": "1.0.2", "annotations": { "org.devwl.policy": "km.json" } }' >"$T/config.json"
export DEVWL_PLUGIN_POLICY_DIR=$T/policies DEVWL_PLUGIN_AUDIT=$T/audit.jsonl
export ASAN_OPTIONS=log_path=$T/sanitizer UBSAN_OPTIONS=print_stacktrace=1:log_path=$T/sanitizer
CGS=()
# shellcheck disable=SC2317 # the trap calls it
rm_cgroups() {
	local d
	for d in "${CGS[@]}"; do
		for _ in $(seq 50); do rmdir "$d" 2>/dev/null && break; [ -d "$d" ] || break; sleep 0.1; done
	done
}
# (cleanup exits with the status it finds in $?: the test's.)
trap 'status=$?; rm_cgroups; (exit $status); cleanup' EXIT
# cgroup HIERARCHY NAME: a cgroup of the test's, in $CG, removed at the end (not
# echoed: in a command substitution's subshell CGS would not keep it).
cgroup() {
	mkdir "$1/$2" || fail "mkdir $1/$2"
	CGS+=("$1/$2")
	CG=$1/$2
}

N=2000
WORK='echo -n >/dev/null && echo NULL_OK
echo x >/dev/full; echo FULL_RC=$?
i=0; while [ $i -lt '$N' ]; do true </dev/zero || exit 3; i=$((i + 1)); done; echo ZERO=$i
sleep 1.2; true </dev/zero && echo LAST_OK'
# run ID CGROUPDIR...: the workload under the plugin; its output in $T/ID.out.
run() {
	local id=$1
	shift
	"$HOST" "$PLUGIN" "$T/config.json" "$id" "$T/state" "$@" -- sh -c "$WORK" >"$T/$id.out" 2>&1 ||
		fail "$id: plugin-host exited $?: $(cat "$T/$id.out")"
	grep -q NULL_OK "$T/$id.out" && grep -q "FULL_RC=[1-9]" "$T/$id.out" &&
		grep -q "/dev/full: Operation not permitted" "$T/$id.out" && grep -q "ZERO=$N" "$T/$id.out" &&
		grep -q LAST_OK "$T/$id.out" ||
		fail "$id: the workload: $(cat "$T/$id.out")"
	grep '"event":"mode"' "$T/audit.jsonl" | grep "\"container\":\"$id\"" | jq -e --arg m "$want" '.mode == $m' \
		>/dev/null || fail "$id: not in $want mode: $(grep "\"container\":\"$id\"" "$T/audit.jsonl")"
}
reports_of() { grep '"source":"kernel"' "$T/audit.jsonl" | grep "\"container\":\"$1\"" || true; }

# --- 1. its own cgroups: every decision of the program in the audit --------------------
id=devwl-t206-$$
cgroup "$v2" "$id" && dirs=("$CG")
[ -z "$v1" ] || { cgroup "$v1" "$id" && dirs+=("$CG"); }
run "$id" "${dirs[@]}"
reports=$(reports_of "$id")
jq -s -e --arg node "/containers/$id" --argjson n $N '
	(map(select(.device == "c 1:7")) | length == 1 and .[0].access == "w" and
		.[0].decision == "deny" and .[0].errno == "EPERM" and .[0].count == 1) and
	any(.[]; .device == "c 1:3" and .access == "w" and .decision == "allow") and
	(map(select(.device == "c 1:5" and .access == "r")) |
		length >= 2 and length <= 5 and all(.[]; .decision == "allow") and
		(map(.count) | add) == $n + 1) and
	all(.[]; .node == $node and .reason != null)' <<<"$reports" >/dev/null ||
	fail "$id: the kernel's reports: ${reports:-none}"
! grep -q '"event":"reports"' "$T/audit.jsonl" || fail "$id said unreportable: $(grep '"event":"reports"' "$T/audit.jsonl")"
pass "$want: the device program's decisions in the plugin's audit: c 1:7 w denied once, c 1:3 w allowed, $N + 1 opens of c 1:5 in $(jq -s 'map(select(.device == "c 1:5")) | length' <<<"$reports") record(s) counting $(jq -s 'map(select(.device == "c 1:5") | .count) | add' <<<"$reports")"

# --- 2. hybrid: a cgroup2 cgroup shared with others cannot be reported through ----------
if [ -n "$v1" ]; then
	id2=devwl-t206b-$$
	# Only a v1 cgroup of its own: in cgroup2 it stays where this test is.
	cgroup "$v1" "$id2"
	run "$id2" "$CG"
	[ -z "$(reports_of "$id2")" ] || fail "$id2: reported through a shared cgroup2 cgroup: $(reports_of "$id2")"
	said=$(grep '"event":"reports"' "$T/audit.jsonl" | grep "\"container\":\"$id2\"")
	jq -s -e 'length == 1 and .[0].result == "unavailable" and (.[0].reason | test("is not its own"))' \
		<<<"$said" >/dev/null || fail "$id2: the audit: ${said:-nothing said}"
	[ "$(grep -c "container $id2: kernel mode: its accesses and denials cannot be reported" "$T/$id2.out")" = 1 ] ||
		fail "$id2: stderr: $(cat "$T/$id2.out")"
	pass "kernel-v1 in a shared cgroup2 cgroup: enforced (c 1:7 EPERM), said once that nothing reports it: $(jq -r .reason <<<"$said")"
fi
if ls "$T"/sanitizer.* >/dev/null 2>&1; then
	fail "sanitizer report: $(head -60 "$T"/sanitizer.*)"
fi
