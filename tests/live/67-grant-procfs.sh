#!/bin/bash
# A grant lifts the device policy and nothing else (doc/DESIGN.md, "Grants"): a path that
# devwl walks through a magic link (/proc/self/root/...) to a procfs file is never opened
# with devwl's own privileges. A root command without CAP_SYS_PTRACE gets EACCES natively
# for /proc/PID/mem of a root process that holds every capability, read-write; under
# devwl-run it must get the same through /proc/self/root/proc/PID/mem, in every mode and
# as an unprivileged user, and devwl-run's own memory is such a victim. Before, devwl
# walked the link and opened the file itself, and the command could rewrite the memory of
# any root process, its supervisor's policy included.
set -u
. "$(dirname "$0")/lib.sh"
live_init "a root victim process, the baseline cgroup"
command -v setpriv >/dev/null || skip "no setpriv(1)"
# What nobody runs must be in its reach (a 0700 checkout's build tree is not).
RUN=$(for_others "$RUN") && PROBE=$(for_others "$PROBE") || exit 1
chmod 755 "$T"
sleep 1000 &
victim=$!
trap 'kill $victim 2>/dev/null; rm -rf "$T"' EXIT
grep -q '^CapEff:.*[1-9a-f]' "/proc/$victim/status" || fail "the victim holds no capability"

# without_ptrace CMD...: as root, CAP_SYS_PTRACE gone from every set.
without_ptrace() { setpriv --bounding-set=-sys_ptrace --inh-caps=-all -- "$@"; }
ops="open /proc/$victim/mem rdwr ; open /proc/self/root/proc/$victim/mem rdwr ;"
ops="$ops open /proc/self/root/proc/$victim/mem rdonly"
# shellcheck disable=SC2086 # ops are the probe's words
native=$(without_ptrace "$PROBE" $ops)
[ "$native" = "$(printf 'EACCES\nEACCES\nEACCES')" ] ||
	skip "the kernel lets a root process without CAP_SYS_PTRACE at another's memory: $native"

check() { # check WHAT OUTPUT [OWN]: three EACCES, then devwl-run's own memory: OWN
	local want
	want=$(printf 'EACCES\nEACCES\nEACCES')
	[ "$(sed -n 1,3p <<<"$2")" = "$want" ] || fail "$1: another root process's memory: $2"
	[[ "$(sed -n 4p <<<"$2")" == ${3:-EACCES}* ]] || fail "$1: devwl-run's own memory: $2"
}
inner="exec $PROBE ${ops//;/\';\'} ';' open /proc/self/root/proc/\$PPID/mem rdwr"
for mode in authoritative kernel; do
	# Contained (the default): the command loses CAP_SYS_PTRACE with the others.
	out=$("$RUN" --mode=$mode --audit "$T/audit-$mode" -- sh -c "$inner" 2>"$T/err") ||
		fail "$mode: exited $?: $(cat "$T/err")"
	check "$mode" "$out"
done
grep -q '"decision":"allow"' "$T/audit-authoritative" &&
	fail "the audit says allow: $(grep '"decision":"allow"' "$T/audit-authoritative")"
# No baseline: devwl decides alone what it may walk, the kernel opens.
out=$("$RUN" --no-baseline --drop-cap CAP_SYS_PTRACE -- sh -c "$inner" 2>"$T/err") ||
	fail "--no-baseline: exited $?: $(cat "$T/err")"
check "--no-baseline" "$out"

# An unprivileged user: nothing of root's. devwl-run's own memory is its user's, which the
# kernel lets the same user at (ptrace rules), through devwl as without it.
nobody() { as_nobody "$@"; }
nobody test -x "$RUN" || fail "nobody cannot run $RUN (build dir permissions)"
out=$(nobody "$RUN" -- sh -c "$inner" 2>"$T/err") || fail "nobody: exited $?: $(cat "$T/err")"
own=$(nobody sh -c "sh -c 'exec $PROBE open /proc/self/root/proc/\$PPID/mem rdwr'; :")
check "unprivileged" "$out" "${own%% *}"
echo PASS
