#!/bin/bash
# devwl installs like a package: a package build (-DBUILD_TESTING=OFF, without cmocka on
# the pkg-config path), `cmake --install` into a DESTDIR with prefix /usr, then the list
# of installed files, the library's SONAME, devwl.pc, the unit, and a program built
# against the installed library with `pkg-config --cflags --libs devwl` only, run.
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
for cmd in cmake pkg-config cc readelf; do
	command -v $cmd >/dev/null || skip "$cmd not installed"
done
# The build tree stays (a rerun rebuilds only what changed); the install is fresh.
pkg=$build/tests/install/pkg
T=$(mktemp -d /tmp/devwl-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
D=$T/root

# pkg-config's own search path without cmocka: the package build must not need it.
mkdir -p "$T/pc"
for dir in $(pkg-config --variable pc_path pkg-config | tr : ' '); do
	for pc in "$dir"/*.pc; do
		[ -e "$pc" ] && [ "${pc##*/}" != cmocka.pc ] && ln -sf "$pc" "$T/pc/"
	done
done
export PKG_CONFIG_LIBDIR=$T/pc
unset PKG_CONFIG_PATH
cmake -S "$src" -B "$pkg" -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF \
	-DDEVWL_WERROR=ON >"$T/configure.log" 2>&1 || {
	tail -20 "$T/configure.log"
	fail "configure without cmocka and tests"
}
cmake --build "$pkg" -j2 >"$T/build.log" 2>&1 || {
	tail -20 "$T/build.log"
	fail "package build"
}
[ ! -e "$pkg/tests" ] && [ ! -e "$pkg/bench" ] || fail "BUILD_TESTING=OFF still built tests or benchmarks"
DESTDIR=$D cmake --install "$pkg" >"$T/install.log" 2>&1 || {
	tail -20 "$T/install.log"
	fail "cmake --install"
}
echo "ok - package build without cmocka, installed into a DESTDIR"

# The list. Directories that follow the machine and the sources: the library directory
# (GNUInstallDirs: lib/x86_64-linux-gnu on Debian), systemd's unit directory, the man pages
# in doc/ and the examples.
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$pkg/CMakeCache.txt")
[[ $libdir = /* ]] || libdir=/usr/$libdir
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null ||
	true)
unitdir=${unitdir:-/usr/lib/systemd/system}
soversion=$(sed -n 's/^project(devwl VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$soversion" ] || fail "no project version in CMakeLists.txt"
{
	printf '%s\n' /etc/devwl/policy.json /usr/bin/devwl-run /usr/include/devwl.h \
		/usr/libexec/devwl/devwl-oci-hook /usr/bin/devwlctl /usr/sbin/devwld \
		/usr/share/doc/devwl/README.md /usr/share/doc/devwl/doc/DESIGN.md \
		/usr/share/doc/devwl/doc/KERNEL-NOTES.md /usr/share/doc/devwl/doc/HACKING.md \
		"$unitdir/devwld.service" \
		"$libdir/libdevwl.a" "$libdir/libdevwl.so" "$libdir/libdevwl.so.${soversion%%.*}" \
		"$libdir/libdevwl.so.$soversion" "$libdir/pkgconfig/devwl.pc" \
		"$libdir/devwl/devwl-plugin.so"
	for page in "$src"/doc/*.[1-8]; do
		echo "/usr/share/man/man${page##*.}/${page##*/}"
	done
	(cd "$src/examples" && find . -type f | sed 's|^\.|/usr/share/doc/devwl/examples|')
} | sort >"$T/want"
(cd "$D" && find . \( -type f -o -type l \) | sed 's|^\.||' | sort) >"$T/got"
if ! diff -u "$T/want" "$T/got" >"$T/diff"; then
	sed 's/^/  /' "$T/diff"
	fail "installed files differ from the expected list (- expected, + installed)"
fi
echo "ok - $(wc -l <"$T/got") files where Debian expects them"

# The installed README's links, and the doc/ files it names, resolve where it is.
doc=$D/usr/share/doc/devwl
for ref in $(grep -o '](\([^)#:]*\))' "$doc/README.md" | sed 's/^](\(.*\))$/\1/') \
	$(grep -o '\bdoc/[A-Z][A-Z-]*\.md' "$doc/README.md"); do
	[ -e "$doc/$ref" ] || fail "the installed README.md names $ref, which is not beside it"
done
echo "ok - the installed README.md's links and doc/ files resolve"

# The shared library: SONAME, links, exports, no RUNPATH anywhere.
so=$D$libdir/libdevwl.so.$soversion
grep -q "(SONAME).*\[libdevwl.so.${soversion%%.*}\]" <<<"$(readelf -d "$so")" ||
	fail "SONAME of libdevwl.so is not libdevwl.so.${soversion%%.*}"
[ "$(readlink "$D$libdir/libdevwl.so")" = "libdevwl.so.${soversion%%.*}" ] &&
	[ "$(readlink "$D$libdir/libdevwl.so.${soversion%%.*}")" = "libdevwl.so.$soversion" ] ||
	fail "libdevwl.so links: $(ls -l "$D$libdir"/libdevwl.so*)"
for f in "$so" "$D"/usr/bin/* "$D"/usr/sbin/* "$D"/usr/libexec/devwl/*; do
	! grep -q 'RPATH\|RUNPATH' <<<"$(readelf -d "$f")" || fail "$f has an RPATH/RUNPATH"
done
echo "ok - libdevwl.so.$soversion, SONAME libdevwl.so.${soversion%%.*}, no RUNPATH"
# The package is built without -DDEVWL_TEST_HOOKS: no test-only hook (DEVWLD_TEST_*, read
# from the environment) is in what it installs.
for f in "$so" "$D"/usr/bin/* "$D"/usr/sbin/* "$D"/usr/libexec/devwl/*; do
	hook=$(grep -aoE -m1 'DEVWLD?_TEST_[A-Z_]+' "$f" || true)
	[ -z "$hook" ] || fail "$f carries the test hook $hook"
done
echo "ok - no test hook in the installed programs and library"

# An embedder's build: pkg-config only, pointed at the DESTDIR.
export PKG_CONFIG_LIBDIR=$D$libdir/pkgconfig:$PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR=$D
[ "$(pkg-config --modversion devwl)" = "$soversion" ] || fail "devwl.pc version"
cflags=$(pkg-config --cflags devwl) libs=$(pkg-config --libs devwl)
[[ " $cflags " = *" -I$D/usr/include "* ]] || fail "pkg-config --cflags devwl: '$cflags'"
[[ " $libs " = *" -L$D$libdir "* ]] || fail "pkg-config --libs devwl: '$libs'"
# shellcheck disable=SC2086 # the flags are words
cc -Wall -Werror $cflags "$src/tests/install/consumer.c" -o "$T/consumer" $libs ||
	fail "cc \$(pkg-config --cflags devwl) consumer.c \$(pkg-config --libs devwl)"
grep -q "libdevwl.so.${soversion%%.*} => $D$libdir/" <<<"$(LD_LIBRARY_PATH=$D$libdir ldd "$T/consumer")" ||
	fail "consumer does not load the installed libdevwl: $(LD_LIBRARY_PATH=$D$libdir ldd "$T/consumer")"
out=$(LD_LIBRARY_PATH=$D$libdir "$T/consumer") || fail "consumer: $out"
[ "$out" = "libdevwl $soversion: c 1:3 rw allowed, c 1:5 r denied" ] || fail "consumer said: $out"
echo "ok - built with pkg-config --cflags --libs devwl, ran: $out"
# shellcheck disable=SC2046
cc -Wall -Werror $(pkg-config --cflags devwl) "$src/tests/install/consumer.c" -o "$T/consumer-static" \
	-Wl,-Bstatic $(pkg-config --static --libs devwl) -Wl,-Bdynamic ||
	fail "static link with pkg-config --static --libs devwl"
! grep -q libdevwl <<<"$(ldd "$T/consumer-static")" || fail "static consumer loads libdevwl.so"
out=$("$T/consumer-static") || fail "static consumer: $out"
echo "ok - static link with pkg-config --static --libs devwl"
unset PKG_CONFIG_SYSROOT_DIR

# The unit: the installed paths, what devwld needs, and systemd's own check.
unit=$D$unitdir/devwld.service
for want in "Type=notify" "RuntimeDirectory=devwl" "ExecStart=/usr/sbin/devwld --policy /etc/devwl/policy.json" \
	"ExecReload=/usr/bin/devwlctl reload" "CapabilityBoundingSet=" "NoNewPrivileges=yes"; do
	grep -q "^$want" "$unit" || fail "devwld.service has no '$want'"
done
! grep -q '@[A-Z_]*@' "$unit" || fail "devwld.service has unconfigured @VARS@"
for exe in $(sed -n 's/^Exec[A-Za-z]*=\([^ ]*\).*/\1/p' "$unit"); do
	[ -x "$D$exe" ] || fail "devwld.service runs $exe, which is not installed"
done
if command -v systemd-analyze >/dev/null; then
	# A copy whose programs point into the DESTDIR, so verify finds them.
	sed "s|=/usr/sbin/|=$D/usr/sbin/|; s|=/usr/bin/|=$D/usr/bin/|" "$unit" >"$T/devwld.service"
	systemd-analyze verify --man=no "$T/devwld.service" >"$T/verify" 2>&1 || {
		cat "$T/verify"
		fail "systemd-analyze verify devwld.service"
	}
	[ ! -s "$T/verify" ] || {
		cat "$T/verify"
		fail "systemd-analyze verify complains"
	}
	exposure=$(systemd-analyze security --offline=yes "$T/devwld.service" 2>/dev/null |
		sed -n 's/.*Overall exposure level for [^:]*: *//p' || true)
	echo "ok - systemd-analyze verify devwld.service (exposure: ${exposure:-not rated})"
else
	echo "ok - devwld.service (systemd-analyze not installed: not verified)"
fi

# The default policy loads, and a second install keeps an administrator's edit.
printf 'list /containers\n' | "$D/usr/bin/devwlctl" batch --policy "$D/etc/devwl/policy.json" \
	>"$T/list" || fail "the installed policy does not load: $(cat "$T/list")"
echo '{"version": 1, "nodes": [{"path": "/mine"}]}' >"$D/etc/devwl/policy.json"
DESTDIR=$D cmake --install "$pkg" >/dev/null 2>&1 || fail "second cmake --install"
grep -q mine "$D/etc/devwl/policy.json" || fail "a second install replaced /etc/devwl/policy.json"
echo "ok - /etc/devwl/policy.json loads and survives a reinstall"
echo "PASS"
