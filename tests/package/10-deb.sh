#!/bin/bash
# The Debian package (debian/) as an administrator gets it: dpkg-buildpackage of a copy
# of the source tree, lintian without an error or a warning, devwl, libdevwl0 and
# libdevwl-dev installed with dpkg -i and used, the policy file a conffile that remove
# keeps, and purge leaving nothing the packages installed. The programs are run from /usr
# by full path, and the consumer is built with /usr/local hidden: a /usr/local install of
# devwl may be on this machine too, and must not stand in for the package.
set -euo pipefail

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	exit 1
}
src=${DEVWL_SOURCE:?}
[ "$(id -u)" -eq 0 ] || skip "not root: the packages are installed with dpkg -i"
for cmd in dpkg-buildpackage dh lintian cc pkg-config unshare deb-systemd-helper; do
	command -v $cmd >/dev/null || skip "$cmd not installed"
done
pkgs=(devwl libdevwl0 libdevwl-dev)
# The test purges what it installs: never a package or a configuration it did not.
for p in "${pkgs[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ -z "$status" ] || [[ $status = *not-installed ]] ||
		fail "$p is on this machine already ($status): purge it first (dpkg --purge $p)"
done
[ ! -e /etc/devwl ] || fail "/etc/devwl exists, from no package: the test would take it over"

T=$(mktemp -d /tmp/devwl-deb.XXXXXX)
installed=
cleanup() {
	if [ -n "$installed" ]; then
		dpkg_wait --purge "${pkgs[@]}" >/dev/null 2>&1 || echo "cleanup: dpkg --purge ${pkgs[*]} failed"
	fi
	rm -rf "$T"
}
trap cleanup EXIT
# Interrupted (ctest's timeout, ^C): exit, so that the EXIT trap purges.
trap 'exit 1' INT TERM HUP

# dpkg ARGS, waiting up to two minutes for a lock that another apt or dpkg holds.
dpkg_wait() {
	for _ in $(seq 60); do
		dpkg "$@" >"$T/dpkg.out" 2>&1 && return 0
		grep -q 'locked by another process' "$T/dpkg.out" || break
		sleep 2
	done
	cat "$T/dpkg.out"
	return 1
}

version=$(sed -n 's/^project(devwl VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
debver=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
[ "${debver%-*}" = "$version" ] ||
	fail "debian/changelog's version $debver is not CMakeLists.txt's $version"

# What the checkout holds, committed or not, without what git ignores (build trees).
tree=$T/devwl-$version
mkdir "$tree"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z -co --exclude-standard |
		tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$tree"
else
	tar -C "$src" --exclude='./build*' --exclude='./obj-*' -cf - . | tar -xf - -C "$tree"
fi
(cd "$tree" && env -u MAKEFLAGS -u DEB_BUILD_PROFILES DEB_BUILD_OPTIONS=parallel=2 \
	nice dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1 || {
	tail -40 "$T/build.log"
	fail "dpkg-buildpackage -us -uc -b"
}
arch=$(dpkg --print-architecture)
debs=()
for p in "${pkgs[@]}"; do
	debs+=("$T/${p}_${debver}_$arch.deb")
	[ -f "${debs[-1]}" ] || fail "dpkg-buildpackage made no ${debs[-1]##*/}: $(ls "$T")"
done
echo "ok - dpkg-buildpackage -us -uc -b: ${debs[*]##*/}"
# The packages for the tests that boot them elsewhere (20-systemd.sh), built once: CTest
# runs this test first (its fixture devwl-deb, tests/package/CMakeLists.txt).
if [ -n "${DEVWL_DEB_DIR:-}" ]; then
	rm -rf "$DEVWL_DEB_DIR"
	mkdir -p "$DEVWL_DEB_DIR"
	cp "${debs[@]}" "$DEVWL_DEB_DIR/" || fail "cannot copy the packages to $DEVWL_DEB_DIR"
fi
# The package's build is not -Werror (a newer compiler must not fail it), but its
# hardened flags (_FORTIFY_SOURCE, -O2) are where unused results and overflows show:
# here, a warning of ours fails the test (tests/install/build-types.sh leaves it to us).
if grep -E '^[^ ]+\.[ch]:[0-9]+:[0-9]+: warning:' "$T/build.log" >"$T/warnings"; then
	cat "$T/warnings"
	fail "the package's build warns"
fi
echo "ok - the hardened package build gives no compiler warning"

# --fail-on none: a finding is judged below; a failure to run is lintian's exit status.
lintian --pedantic --fail-on none "$T/devwl_${debver}_$arch.changes" >"$T/lintian.raw" 2>&1 || {
	cat "$T/lintian.raw"
	fail "lintian failed to run"
}
# It runs as root here, and says it does not recommend that: not a finding.
grep -v 'running with root privileges is not recommended' "$T/lintian.raw" >"$T/lintian.out" ||
	true
sed 's/^/  /' "$T/lintian.out"
! grep -q '^[EW]: ' "$T/lintian.out" || fail "lintian found errors or warnings"
echo "ok - lintian --pedantic: no error, no warning"

installed=1
dpkg_wait -i "${debs[@]}" || fail "dpkg -i ${debs[*]##*/}"
dpkg -L "${pkgs[@]}" | grep -v '^/\.$' | sort -u >"$T/owned"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
while read -r p path; do
	grep -qx -- "$path" <<<"$(dpkg -L "$p")" || fail "$p does not ship $path"
done <<EOF
devwl /usr/sbin/devwld
devwl /usr/bin/devwlctl
devwl /usr/bin/devwl-run
devwl /usr/libexec/devwl/devwl-oci-hook
devwl /usr/lib/$ma/devwl/devwl-plugin.so
devwl /usr/share/man/man7/devwl-plugin.7.gz
devwl /lib/systemd/system/devwld.service
devwl /etc/devwl/policy.json
devwl /usr/share/man/man8/devwld.8.gz
libdevwl0 /usr/lib/$ma/libdevwl.so.$version
libdevwl-dev /usr/lib/$ma/libdevwl.so
libdevwl-dev /usr/lib/$ma/libdevwl.a
libdevwl-dev /usr/lib/$ma/pkgconfig/devwl.pc
libdevwl-dev /usr/include/devwl.h
libdevwl-dev /usr/share/man/man3/libdevwl.3.gz
EOF
# dh_installsystemd's postinst enables the unit, systemd running or not.
[ -L /etc/systemd/system/multi-user.target.wants/devwld.service ] ||
	fail "the installed devwl did not enable devwld.service"
echo "ok - dpkg -i: $(wc -l <"$T/owned") paths, devwld.service enabled"

out=$(/usr/sbin/devwld --version) || fail "/usr/sbin/devwld --version: $out"
[ "$out" = "devwld $version" ] || fail "/usr/sbin/devwld --version said: $out"
out=$(printf 'mkdir /app\ndeny /app a\nallow /app c 1:3 rw\ncheck /app c 1 3 rw\ncheck /app c 1 5 r\n' |
	/usr/bin/devwlctl batch --policy /etc/devwl/policy.json) ||
	fail "/usr/bin/devwlctl batch --policy /etc/devwl/policy.json: $out"
[ "$out" = "$(printf 'ok\nok\nok\nallow\ndeny')" ] || fail "devwlctl batch answered: $out"
echo "ok - $(/usr/bin/devwlctl --version), devwld --version and devwlctl batch on the installed policy"

# An embedder's build: the header, library and devwl.pc of libdevwl-dev and nothing else.
export T ma src
# shellcheck disable=SC2016 # the inner bash expands them
out=$(unshare --mount bash -euc '
	mount -t tmpfs tmpfs /usr/local
	unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
	cc -Wall -Werror $(pkg-config --cflags devwl) "$src/tests/install/consumer.c" \
		-o "$T/consumer" $(pkg-config --libs devwl)
	ldd "$T/consumer" | grep -qE "libdevwl\.so\.0 => (/usr)?/lib/$ma/libdevwl\.so\.0 " ||
		{ ldd "$T/consumer"; exit 1; }
	"$T/consumer"' 2>&1) || fail "consumer built with pkg-config --cflags --libs devwl: $out"
[ "$out" = "libdevwl $version: c 1:3 rw allowed, c 1:5 r denied" ] || fail "consumer said: $out"
echo "ok - consumer built with pkg-config --cflags --libs devwl, ran: $out"

conf=$(dpkg-query -W -f='${Conffiles}' devwl)
grep -qE '^ /etc/devwl/policy.json [0-9a-f]{32}$' <<<"$conf" ||
	fail "/etc/devwl/policy.json is not a conffile of devwl: '$conf'"
mine='{"version": 1, "nodes": [{"path": "/mine"}]}'
echo "$mine" >/etc/devwl/policy.json
dpkg_wait --remove "${pkgs[@]}" || fail "dpkg --remove ${pkgs[*]}"
[ ! -e /usr/sbin/devwld ] || fail "dpkg --remove left /usr/sbin/devwld"
[ "$(cat /etc/devwl/policy.json 2>&1)" = "$mine" ] ||
	fail "dpkg --remove did not keep the edited /etc/devwl/policy.json"
[[ $(dpkg-query -W -f='${Status}' devwl) = *config-files ]] ||
	fail "devwl after dpkg --remove: $(dpkg-query -W -f='${Status}' devwl)"
echo "ok - /etc/devwl/policy.json is a conffile, kept edited by dpkg --remove"

dpkg_wait --purge "${pkgs[@]}" || fail "dpkg --purge ${pkgs[*]}"
installed=
# A directory stays if another package owns it too (/usr/bin, /usr/share/man/man8, ...;
# /lib, a link to usr/lib where /usr is merged).
while read -r path; do
	if [ -d "$path" ]; then
		dpkg-query -S "$path" >/dev/null 2>&1 || fail "dpkg --purge left the directory $path"
	elif [ -e "$path" ] || [ -L "$path" ]; then
		fail "dpkg --purge left $path"
	fi
done <"$T/owned"
for path in /etc/devwl /etc/systemd/system/multi-user.target.wants/devwld.service /var/log/devwl \
	$(find /var/lib/systemd/deb-systemd-helper-enabled -name 'devwld.service*' 2>/dev/null); do
	if [ -e "$path" ] || [ -L "$path" ]; then fail "dpkg --purge left $path"; fi
done
echo "ok - dpkg --purge: nothing of the $(wc -l <"$T/owned") paths is left, nor /etc/devwl"
echo "PASS"
