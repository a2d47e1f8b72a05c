#!/bin/bash
# A grant lifts the device policy and nothing else (doc/DESIGN.md, "Grants"): a command
# that confines itself with Landlock (files read only beneath /usr, /lib, /etc..., written
# nowhere) stays confined for the devices its policy grants and for the files it reaches
# through devwl, as for those it opens itself: under devwl-run, in every mode and as an
# unprivileged user, each open gets the answer it gets natively — a granted device outside
# its Landlock rules EACCES, directly and through /proc/self/root, a file outside them
# EACCES, a file inside them opened. Before, devwl opened granted devices and walked paths
# on the command's behalf, outside its Landlock domain, and they opened.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device nodes of the test's own, the baseline cgroup"
command -v setpriv >/dev/null || skip "no setpriv(1)"
# What nobody runs must be in its reach (a 0700 checkout's build tree is not).
RUN=$(for_others "$RUN") && PROBE=$(for_others "$PROBE") || exit 1
chmod 755 "$T"
mknod -m 666 "$T/zero" c 1 5 || skip "cannot mknod in $T"
echo data >"$T/file" && chmod 644 "$T/file"
dirs="/usr /lib /etc /bin /proc"
[ -d /lib64 ] && dirs="$dirs /lib64"
ops="landlock $dirs ; open $T/zero rdonly ; open /proc/self/root$T/zero rdonly ;"
ops="$ops open /dev/null rdwr ; open /etc/passwd rdonly ; open $T/file rdonly ;"
ops="$ops open /proc/self/root$T/file rdonly"
# shellcheck disable=SC2086 # ops are the probe's words
native=$("$PROBE" $ops | sed 's/ fd=[0-9]*//')
case $(head -1 <<<"$native") in
ok) ;;
ENOSYS | EOPNOTSUPP) skip "no Landlock in this kernel: $(head -1 <<<"$native")" ;;
*) fail "landlock natively: $native" ;;
esac
want=$(printf '%s\n' ok EACCES EACCES EACCES "ok rdev=0:0 type=f cloexec=0" EACCES EACCES)
[ "$native" = "$want" ] || fail "natively, Landlock does not refuse as expected: $native"

nobody() { as_nobody "$@"; }
nobody test -x "$RUN" || fail "nobody cannot run $RUN (build dir permissions)"
for how in authoritative kernel no-baseline nobody; do
	case $how in
	no-baseline) cmd=("$RUN" --no-baseline --allow 'c 1:5 r') ;;
	nobody) cmd=(nobody "$RUN" --allow 'c 1:5 r') ;;
	*) cmd=("$RUN" --mode=$how --allow 'c 1:5 r') ;;
	esac
	# shellcheck disable=SC2086
	out=$("${cmd[@]}" -- "$PROBE" $ops 2>"$T/err" | sed 's/ fd=[0-9]*//') ||
		fail "$how: exited $?: $(cat "$T/err")"
	[ "$out" = "$native" ] || fail "$how: under devwl-run: $(tr '\n' '|' <<<"$out"), natively:" \
		"$(tr '\n' '|' <<<"$native")"
done
echo PASS
