# devwl's plugin under conmon, driven as CRI-O drives it (devwl-plugin(7)): conmon listens
# on --seccomp-notify-socket, runs `crun create` with the annotation
# run.oci.seccomp.receiver naming that socket, receives the notify fd from crun and hands
# each notification to the plugins of --seccomp-notify-plugins; `crun start` then runs
# the container. A grant opens, a denial is EPERM. conmon builds that link libseccomp
# exit at once on --seccomp-notify-socket ("seccomp support not present": the condition
# is inverted in conmon up to 2.1.x, and upstream has since removed the feature); that is
# asked of the host's conmon before devwl is involved (a plain container through it, then
# the option alone), and the test then skips with what conmon said.
RT=crun
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PLUGIN=${DEVWL_PLUGIN:-$BUILD/plugin/devwl-plugin.so}
[ -f "$PLUGIN" ] || fail "the plugin was not built at $PLUGIN"
command -v conmon >/dev/null || skip "conmon not installed (apt-get install conmon)"
host_user_notif || skip "no seccomp user notification in this kernel"
. "$HERE/plugin-lib.sh"

# rt_ns COMMAND...: in the mount namespace rt_create runs crun in (lib.sh): conmon runs
# `crun create` itself.
rt_ns() {
	if host_v1 devices >/dev/null; then
		unshare -m --propagation private sh -c \
			'for m in $(awk '"'"'$0 ~ / - cgroup2 / {print $5}'"'"' /proc/self/mountinfo); do
				umount "$m" 2>/dev/null
			done; exec "$@"' sh "$@"
	else
		"$@"
	fi
}

# conmon_run ID BUNDLE DIR [OPTION...]: conmon as CRI-O starts it (--sync: it forks once
# and returns when the container has exited, or at once when it fails). Its own errors go
# to a stderr it has pointed at /dev/null by then: only its exit status tells.
conmon_run() {
	local id=$1 bundle=$2 dir=$3
	shift 3
	mkdir -p "$dir/exits"
	rt_ns timeout 120 conmon --sync --cid "$id" --cuuid "$id" --name "$id" \
		--runtime "$(command -v crun)" --bundle "$bundle" --container-pidfile "$dir/pid" \
		--conmon-pidfile "$dir/conmon.pid" --log-path "k8s-file:$dir/log" \
		--exit-dir "$dir/exits" --socket-dir-path "$dir" "$@" >"$dir/conmon.out" 2>&1 </dev/null
}

# 1. Can this conmon serve a notify socket at all? A plain container through it, then the
# same with --seccomp-notify-socket alone (no plugin of ours is loaded before it fails).
make_rootfs
make_bundle probe 'true' 'del(.linux.seccomp)'
mkdir -p "$T/probe2"
cp "$T/probe/config.json" "$T/probe2/config.json"
conmon_run probe-$$ "$T/probe" "$T/probe" & cpid=$!
CHILD_PIDS+=("$cpid")
for _ in $(seq 600); do [ -s "$T/probe/pid" ] && break; sleep 0.1; done
[ -s "$T/probe/pid" ] || skip "conmon cannot create a crun container here: $(cat "$T/probe/conmon.out")"
CONTAINERS+=("probe-$$")
rt_create start "probe-$$" >/dev/null 2>&1
wait "$cpid"
rc=0
conmon_run probe2-$$ "$T/probe2" "$T/probe2" --seccomp-notify-socket "$T/probe2/s.sock" \
	--seccomp-notify-plugins /nonexistent.so || rc=$?
if [ "$rc" != 0 ] && [ ! -e "$T/probe2/pid" ] && [ ! -e "$T/probe2/s.sock" ]; then
	why="exit status $rc, no socket made, no container created"
	if command -v strace >/dev/null; then
		strace -f -e trace=write -o "$T/probe2/strace" conmon --sync --cid p3-$$ \
			--cuuid p3-$$ --name p3-$$ --runtime "$(command -v crun)" \
			--bundle "$T/probe2" --exit-dir "$T/probe2/exits" \
			--seccomp-notify-socket "$T/probe2/s.sock" \
			--seccomp-notify-plugins /nonexistent.so >/dev/null 2>&1 </dev/null
		msg=$(grep -o 'seccomp support not present' "$T/probe2/strace" | head -1)
		[ -n "$msg" ] && why="\"$msg\" (its build links libseccomp; the check is inverted in conmon 2.1.x, and upstream has since removed the feature)"
	fi
	skip "conmon $(conmon --version | awk 'NR == 1 {print $3}') refuses --seccomp-notify-socket: $why"
fi

# 2. A container through conmon and crun, the plugin deciding.
mkdir -p "$T/policies"
cat >"$T/policies/conmon.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers",
               "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                         "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm",
                         "allow c 136:* rwm"] } ] }
JSON
export DEVWL_PLUGIN_POLICY_DIR=$T/policies DEVWL_PLUGIN_AUDIT=$T/audit.jsonl
id=devwl-conmon-$$
make_bundle c 'echo x > /dev/null && echo NULL_OK; echo x > /dev/full; echo FULL_RC=$?' \
	"del(.linux.seccomp.listenerPath)
	| .annotations[\"run.oci.seccomp.receiver\"] = \"$T/c/seccomp.sock\"
	| .annotations[\"org.devwl.policy\"] = \"conmon.json\""
CONTAINERS+=("$id")
conmon_run "$id" "$T/c" "$T/c" --seccomp-notify-socket "$T/c/seccomp.sock" \
	--seccomp-notify-plugins "$PLUGIN" & cpid=$!
CHILD_PIDS+=("$cpid")
for _ in $(seq 600); do
	[ -s "$T/c/pid" ] && break
	sleep 0.1
done
[ -s "$T/c/pid" ] || fail "crun create under conmon: $(cat "$T/c/conmon.out" "$T/c/log" 2>&1)"
rt_create start "$id" || fail "crun start: $(cat "$T/c/conmon.out")"
wait "$cpid"
[ -e "$T/c/exits/$id" ] || fail "the container did not exit: $(cat "$T/c/log" "$T/c/conmon.out")"
grep -q NULL_OK "$T/c/log" || fail "granted open under conmon: $(cat "$T/c/log")"
grep -q "/dev/full: Operation not permitted" "$T/c/log" || fail "denied open: $(cat "$T/c/log")"
grep -q "\"container\":\"$id\"" "$T/audit.jsonl" || fail "no audit: $(cat "$T/audit.jsonl")"
pass "conmon+crun+plugin: /dev/null granted, /dev/full refused EPERM, audited"
plugin_sanitizer_check
