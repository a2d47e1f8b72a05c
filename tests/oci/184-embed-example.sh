# The embedding example of libdevwl(3) (examples/embed/devwl-embed.c), built by the build
# against the shared library and the public header only, run for real: its workload opens
# a device its --allow grants, is refused one it does not (EPERM), and a grandchild still
# calling after the workload exited is served too (the loop runs until no task holds the
# filter). It also builds from its file alone with pkg-config, as an embedder builds it.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
EMBED=$BUILD/examples/embed/devwl-embed
[ -x "$EMBED" ] || fail "the example was not built at $EMBED"
host_user_notif || skip "no seccomp user notification in this kernel"

"$EMBED" --allow 'c 1:3 rw' -- sh -c '
echo x > /dev/null && echo NULL_OK
echo x > /dev/full; echo FULL_RC=$?
(sleep 0.5; echo x > /dev/full || echo LATE_DENIED) &
exit 3' >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 3 ] || fail "exit status $rc, not the workload's 3: $(cat "$T/out" "$T/err")"
grep -q NULL_OK "$T/out" && grep -q "openat /dev/null c 1:3: allow" "$T/err" ||
	fail "granted open: $(cat "$T/out" "$T/err")"
grep -q FULL_RC=[12] "$T/out" && grep -q "/dev/full: Operation not permitted" "$T/err" ||
	fail "denied open: $(cat "$T/out" "$T/err")"
pass "example: /dev/null granted, /dev/full refused EPERM, the workload's status returned"
grep -q LATE_DENIED "$T/out" && [ "$(grep -c "openat /dev/full c 1:7: deny" "$T/err")" = 2 ] ||
	fail "the grandchild after the workload's exit: $(cat "$T/out" "$T/err")"
pass "example: a grandchild calling after the workload exited is still decided"

# As an embedder: the file alone, the header and the library found by pkg-config.
if command -v cc >/dev/null && command -v pkg-config >/dev/null; then
	PKG_CONFIG_PATH=$T/pc
	mkdir -p "$T/pc"
	sed -e "s|^includedir=.*|includedir=$(cd "$HERE/../.." && pwd)/include|" \
		-e "s|^libdir=.*|libdir=$BUILD/lib|" "$BUILD/lib/devwl.pc" >"$T/pc/devwl.pc"
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Wextra -Werror -o "$T/embed" "$HERE/../../examples/embed/devwl-embed.c" \
		$(PKG_CONFIG_PATH=$T/pc pkg-config --cflags --libs devwl) 2>"$T/cc.err" ||
		fail "the example does not build alone: $(cat "$T/cc.err")"
	# A sanitizer build's library needs its runtime loaded first; the example has none.
	pre=$(ldd "$BUILD/lib/libdevwl.so" | awk '/libasan/ {print $3}')
	LD_PRELOAD=$pre ASAN_OPTIONS=${pre:+detect_leaks=0} LD_LIBRARY_PATH=$BUILD/lib \
		"$T/embed" --allow 'c 1:3 rw' -- sh -c 'echo > /dev/null' ||
		fail "the example built alone does not run"
	pass "example: builds from its file with pkg-config --cflags --libs devwl, -Wall -Wextra -Werror"
fi
