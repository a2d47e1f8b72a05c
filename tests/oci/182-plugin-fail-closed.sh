# devwl's plugin under crun fails closed (devwl-plugin(7)): a policy file with errors, a
# policy named outside the policy directory or missing, a plugin file missing or not
# loadable, an audit file that cannot be opened, an org.devwl.mode of another word: crun
# refuses the container with the reason, and the container's first trapped call never
# succeeds (crun loads plugins once the container's process runs, so what comes before
# that call runs). Where the plugin itself refuses, it kills the container's process
# first: it goes no further than that call; where crun cannot load the plugin, crun closes
# the notify fd before it kills the container, and the call may return ENOSYS first.
RT=crun
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PLUGIN=${DEVWL_PLUGIN:-$BUILD/plugin/devwl-plugin.so}
[ -f "$PLUGIN" ] || fail "the plugin was not built at $PLUGIN"
host_user_notif || skip "no seccomp user notification in this kernel"
. "$HERE/plugin-lib.sh"

mkdir -p "$T/policies"
cat >"$T/policies/broken.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "rules": ["deny a", "allow c 1:3 rwx"] } ] }
JSON
echo '{ "version": 1 }' >"$T/outside.json"
export DEVWL_PLUGIN_POLICY_DIR=$T/policies
tag=devwl-plfail-$$
make_rootfs
SCRIPT='echo STARTED; echo -n > /dev/null && echo FIRST_CALL_OK; echo PAST_FIRST_CALL'

# refused NAME REASON-PATTERN [crun]: crun failed, said why, the trapped call failed, and
# (unless crun itself failed) the container went no further.
refused() {
	local id=$tag-$1 what=$2
	run_fg "$id" "$T/$1" && fail "$1: crun ran the container: $(cat "$T/$id.out")"
	grep -q FIRST_CALL_OK "$T/$id.out" && fail "$1: the trapped call succeeded: $(cat "$T/$id.out")"
	[ "${3:-}" = crun ] || ! grep -q PAST_FIRST_CALL "$T/$id.out" ||
		fail "$1: the container ran on: $(cat "$T/$id.out")"
	grep -q -- "$what" "$T/$id.out" || fail "$1: no reason \"$what\": $(cat "$T/$id.out")"
	crun state "$id" >/dev/null 2>&1 && fail "$1: crun kept the container"
	return 0
}

plugin_bundle broken "$SCRIPT" broken.json
refused broken 'broken.json.*c 1:3 rwx'
pass "crun+plugin: a policy file with errors → refused, the file, the rule and the reason said"

plugin_bundle missing "$SCRIPT" nosuch.json
refused missing 'nosuch.json: No such file'
pass "crun+plugin: a policy that does not exist → refused"

plugin_bundle escape "$SCRIPT" ../outside.json
refused escape 'not a file name in'
pass "crun+plugin: org.devwl.policy naming a file outside the policy directory → refused"

PLUGIN=$T/no-such-plugin.so plugin_bundle noplugin "$SCRIPT" ''
refused noplugin "cannot load" crun
pass "crun: the plugin file missing → refused, the trapped call fails"

echo 'not a shared object' >"$T/bad-plugin.so"
PLUGIN=$T/bad-plugin.so plugin_bundle badplugin "$SCRIPT" ''
refused badplugin "cannot load" crun
pass "crun: a plugin that does not load → refused, the trapped call fails"

plugin_bundle noaudit "$SCRIPT" ''
DEVWL_PLUGIN_AUDIT=$T/no/such/dir/audit.jsonl refused noaudit 'DEVWL_PLUGIN_AUDIT'
pass "crun+plugin: an audit file that cannot be opened → refused"

plugin_bundle badmode "$SCRIPT" '' '.annotations["org.devwl.mode"] = "fast"'
refused badmode 'org.devwl.mode "fast": neither "kernel" nor "baseline"'
pass "crun+plugin: an org.devwl.mode that is neither kernel nor baseline → refused"
plugin_sanitizer_check
