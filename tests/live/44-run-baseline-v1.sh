#!/bin/bash
# The kernel baseline, v1: the command runs in a fresh devices cgroup, named
# devwl-run.<pid> under devwl-run's own, that allows exactly the node's allow list — in
# authoritative mode too, where devwl also traps every open: a grant is the kernel's to
# open in the command's own context (libdevwl(3), GRANTS); with --deny a, devices.list is
# empty. Once devwl-run has exited the cgroup is gone.
set -u
export DEVWL_MODE=authoritative
. "$(dirname "$0")/lib.sh"
live_init "device cgroup"
V1=$(awk '$9 == "cgroup" && $NF ~ /(^|,)devices(,|$)/ {print $5; exit}' /proc/self/mountinfo)
[ -n "$V1" ] || skip "no cgroup-v1 devices controller mounted"
own=$(awk -F: '$2 ~ /(^|,)devices(,|$)/ {print $3}' /proc/self/cgroup)
[ "$own" = / ] && own=

DEVWL_BASELINE=v1 "$RUN" --deny a -- sh -c "cat /proc/self/cgroup >$T/cgroup; \
	p=\$(awk -F: '\$2 ~ /(^|,)devices(,|\$)/ {print \$3}' /proc/self/cgroup); \
	cat $V1\$p/devices.list >$T/list && echo listed >$T/listed" &
pid=$!
wait $pid
rc=$?
[ "$rc" = 0 ] || fail "devwl-run exited $rc"
grep -Eq "^[0-9]+:([^:]*,)?devices(,[^:]*)?:$own/devwl-run\.$pid\$" "$T/cgroup" ||
	fail "the command was not in $own/devwl-run.$pid: $(cat "$T/cgroup")"
[ -e "$T/listed" ] || fail "could not read the cgroup's devices.list"
[ ! -s "$T/list" ] || fail "the baseline allows devices: $(cat "$T/list")"
# The default set, and no more: the same rules the node lists.
DEVWL_BASELINE=v1 "$RUN" -- sh -c "p=\$(awk -F: '\$2 ~ /(^|,)devices(,|\$)/ {print \$3}' \
	/proc/self/cgroup); cat $V1\$p/devices.list" >"$T/list2" || fail "default set: run failed"
want=$(printf '%s\n' 'c 1:3 rwm' 'c 1:5 rwm' 'c 1:7 rwm' 'c 1:8 rwm' 'c 1:9 rwm' \
	'c 5:0 rwm' 'c 5:2 rwm' 'c 136:* rwm')
[ "$(sort "$T/list2")" = "$(sort <<<"$want")" ] ||
	fail "the baseline is not the default set: $(cat "$T/list2")"
[ ! -e "$V1$own/devwl-run.$pid" ] || fail "cgroup $V1$own/devwl-run.$pid left behind"

# --baseline=v1 does the same as the environment variable; --baseline=none does nothing.
"$RUN" --baseline=v1 -- sh -c "cat /proc/self/cgroup >$T/cgroup2" &
pid=$!
wait $pid || fail "--baseline=v1 failed"
grep -q "devices.*:$own/devwl-run\.$pid\$" "$T/cgroup2" || fail "--baseline=v1 not in the cgroup"
err=$("$RUN" --no-baseline -- sh -c "cat /proc/self/cgroup >$T/cgroup3" 2>&1) ||
	fail "--no-baseline failed"
grep -q "devwl-run\." "$T/cgroup3" && fail "--no-baseline still made a cgroup"
grep -q "warning: --no-baseline: no kernel baseline, only deny-only" <<<"$err" ||
	fail "--no-baseline does not warn: '$err'"
echo "PASS"
