#!/bin/bash
# An install under another prefix names its own paths: built with
# -DCMAKE_INSTALL_PREFIX=/usr/local and installed into a DESTDIR, the OCI hook's examples
# (hooks.json, the podman hooks.d entries, examples/oci-hook/README.md) and
# devwl-oci-hook(8) name /usr/local/libexec/devwl/devwl-oci-hook, where the hook is, not
# the sources' /usr/libexec/devwl/; devwlctl is in bin (devwlctl batch needs no
# privilege), and the unit runs the programs of this install.
set -euo pipefail

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	exit 1
}
src=${DEVWL_SOURCE:?} build=${DEVWL_BUILD:?}
command -v cmake >/dev/null || skip "cmake not installed"
T=$(mktemp -d /tmp/devwl-prefix.XXXXXX)
trap 'rm -rf "$T"' EXIT
D=$T/root
# build-types' gcc Release tree when it ran first (it is configured for /usr/local),
# else a tree of this test's own.
pkg=$build/tests/install/build-types/gcc-Release
if ! grep -qx 'CMAKE_INSTALL_PREFIX:PATH=/usr/local' "$pkg/CMakeCache.txt" 2>/dev/null; then
	pkg=$build/tests/install/local
	cmake -S "$src" -B "$pkg" -DCMAKE_INSTALL_PREFIX=/usr/local -DBUILD_TESTING=OFF \
		>"$T/configure.log" 2>&1 || {
		tail -20 "$T/configure.log"
		fail "configure with prefix /usr/local"
	}
fi
cmake --build "$pkg" -j2 >"$T/build.log" 2>&1 || {
	tail -20 "$T/build.log"
	fail "build"
}
DESTDIR=$D cmake --install "$pkg" >"$T/install.log" 2>&1 || {
	tail -20 "$T/install.log"
	fail "cmake --install"
}
hook=/usr/local/libexec/devwl/devwl-oci-hook
[ -x "$D$hook" ] || fail "the hook is not at $hook: $(find "$D" -name devwl-oci-hook)"
ex=$D/usr/local/share/doc/devwl/examples/oci-hook
for f in "$ex/hooks.json" "$ex/devwl-hook.podman.json" "$ex/devwl-hook-poststop.podman.json" \
	"$ex/README.md" "$D/usr/local/share/man/man8/devwl-oci-hook.8"; do
	[ -f "$f" ] || fail "${f#"$D"} not installed"
	grep -q "$hook" "$f" || fail "${f#"$D"} does not name $hook"
	! grep -q "/usr/libexec/devwl" "$f" || fail "${f#"$D"} names /usr/libexec/devwl: $(grep /usr/libexec/devwl "$f")"
done
for f in "$ex/hooks.json" "$ex/devwl-hook.podman.json" "$ex/devwl-hook-poststop.podman.json"; do
	if command -v jq >/dev/null; then
		jq -e '[.. | .path? | strings] | length > 0 and all(. == "'"$hook"'")' "$f" >/dev/null ||
			fail "${f#"$D"}: $(cat "$f")"
	fi
done
echo "ok - the hook's examples and page name $hook"

[ -x "$D/usr/local/bin/devwlctl" ] && [ ! -e "$D/usr/local/sbin/devwlctl" ] ||
	fail "devwlctl is not in bin: $(find "$D" -name devwlctl)"
unit=$(find "$D" -name devwld.service | head -1)
[ -n "$unit" ] || fail "no devwld.service installed"
grep -q "^ExecStart=/usr/local/sbin/devwld " "$unit" && grep -q "^ExecReload=/usr/local/bin/devwlctl reload" "$unit" ||
	fail "devwld.service: $(grep ^Exec "$unit")"
echo "ok - devwlctl in /usr/local/bin, and the unit runs this install's programs (built in ${pkg#"$build"/})"
