# The grant attacks of tests/live/67, 69 and 70, against devwld: workloads handed to it as
# an OCI runtime hands them (devwl-run --connect), by root (every open trapped, and in
# kernel mode) and by an --allow-uid user. A grant lifts the device policy and nothing
# else (devwld(8), GRANTS): /proc/self/root/proc/PID/mem of a root process with every
# capability stays EACCES without CAP_SYS_PTRACE; a workload that confines itself with
# Landlock gets the kernel's answers for a granted device and a walked path; fuse2fs in a
# user namespace mounts through a granted /dev/fuse, host node or its own.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
PROBE=$BUILD/tests/live/probe
[ -x "$RUN" ] && [ -x "$PROBE" ] || fail "devwl-run or the live probe not built"
command -v setpriv >/dev/null || skip "no setpriv"
# What uid 65534 runs must be in its reach (a 0700 checkout's build tree is not).
RUN=$(for_others "$RUN") && PROBE=$(for_others "$PROBE") || exit 1
chmod 755 "$T"
mknod -m 666 "$T/zero" c 1 5 || fail "mknod $T/zero"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:5 r", "allow c 1:3 rw",
                                       "allow c 10:229 rwm", "allow c 1:8 rw", "allow c 1:9 rw"] },
             { "path": "/users", "rules": ["deny a", "allow c 1:5 r", "allow c 1:3 rw"] } ],
  "containers": { "node_metadata": true } }
JSON
start_devwld --allow-uid 65534
sleep 1000 &
victim=$!
CHILD_PIDS+=("$victim")

# served HOW ID: the command that hands a workload to devwld as root with every open
# trapped (full), as root in kernel mode, or as the allowed user (nobody), in cmd.
served() {
	case $1 in
	full) cmd=("$RUN" --connect "$T/listen.sock" --node /w --id "$2") ;;
	kernel) cmd=("$RUN" --connect "$T/listen.sock" --node /w --id "$2" --mode=kernel) ;;
	nobody) cmd=(as_nobody "$RUN" --connect "$T/listen.sock" --id "$2") ;;
	esac
}

# 1. procfs through a magic link: root (contained: no CAP_SYS_PTRACE), both profiles, and
# the allowed user.
mem="open /proc/self/root/proc/$victim/mem rdwr ; open /proc/self/root/proc/$DEVWLD_PID/mem rdwr"
for how in full kernel nobody; do
	served $how m-$how
	# shellcheck disable=SC2086 # the probe's words
	out=$("${cmd[@]}" -- "$PROBE" $mem 2>"$T/err") || fail "$how: $(cat "$T/err")"
	[ "$out" = "$(printf 'EACCES\nEACCES')" ] || fail "$how: another root process's memory: $out"
done
pass "/proc/self/root/proc/PID/mem of root processes (devwld's own among them): EACCES through devwld, root and --allow-uid alike"

# 2. Landlock: the kernel's answers, as natively.
dirs="/usr /lib /etc /bin /proc"
[ -d /lib64 ] && dirs="$dirs /lib64"
ll="landlock $dirs ; open $T/zero rdonly ; open /proc/self/root$T/zero rdonly ; open /dev/null rdwr"
# shellcheck disable=SC2086
native=$("$PROBE" $ll)
[ "$(head -1 <<<"$native")" = ok ] || skip "no Landlock here: $native"
for how in full kernel nobody; do
	served $how l-$how
	# shellcheck disable=SC2086
	out=$("${cmd[@]}" -- "$PROBE" $ll 2>"$T/err") || fail "$how: $(cat "$T/err")"
	[ "$out" = "$native" ] || fail "$how: Landlock under devwld: $(tr '\n' '|' <<<"$out")," \
		"natively $(tr '\n' '|' <<<"$native")"
done
pass "a Landlock-confined workload gets the kernel's answers for granted devices and walked paths"

# 3. FUSE in a user namespace, served by devwld.
if command -v fuse2fs >/dev/null && [ -c /dev/fuse ] && unshare -Urm true 2>/dev/null; then
	mke2fs -q -F -t ext2 "$T/img" 4M || fail "mke2fs"
	mkdir "$T/dev"
	use() {
		mkdir "$T/$1"
		echo "fuse2fs -o fakeroot $T/img $T/$1; awk -v m=$T/$1 '\$2 == m && \$3 ~ /^fuse/ \
			{print \"mounted\"}' /proc/self/mounts; umount $T/$1 && echo unmounted"
	}
	want=$(printf 'mounted\nunmounted')
	for how in full kernel; do
		served $how f-$how
		out=$("${cmd[@]}" -- unshare -Urm sh -c "$(use $how-host)" 2>&1)
		[ "$out" = "$want" ] || fail "$how, the host's /dev/fuse: $out"
		out=$("${cmd[@]}" -- unshare -Urm sh -c "mount -t tmpfs none $T/dev &&
			mknod $T/dev/fuse c 10 229 && mount --bind $T/dev/fuse /dev/fuse && $(use $how-own)" 2>&1)
		[ "$out" = "$want" ] || fail "$how, its own node: $out"
	done
	pass "fuse2fs in a user namespace mounts through a granted /dev/fuse served by devwld, both profiles"
else
	echo "  (fuse2fs, /dev/fuse or user namespaces missing: the FUSE part is tests/live/70's)"
fi
exit 0
