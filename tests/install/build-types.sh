#!/bin/bash
# Every standard build type builds with gcc and clang, warnings as errors: packagers
# pick the type (Debian's debhelper passes None with its own CFLAGS, others Release),
# and gcc's warnings change with the optimiser (-O3 finds what -O2 does not).
#   build-types.sh [--all] SOURCE WORKDIR
# Default (what the test command runs): gcc with every type (RelWithDebInfo is the test
# command's own build), gcc as a Debian package is
# built (None plus dpkg-buildflags with hardening=+all: _FORTIFY_SOURCE finds unused
# results; --all adds LTO, which costs a minute), and clang with Release: clang's warnings come from its front end and
# do not change with -O, and the fuzz build covers clang RelWithDebInfo. --all (or
# DEVWL_BUILD_TYPES=all) builds every type with both compilers. The build trees stay in
# WORKDIR, so a second run rebuilds only what changed.
set -euo pipefail

all=false
if [ "${1:-}" = --all ]; then
	all=true
	shift
fi
[ "${DEVWL_BUILD_TYPES:-}" = all ] && all=true
lto=
$all && lto=yes
src=${1:?usage: build-types.sh [--all] SOURCE WORKDIR}
work=${2:?usage: build-types.sh [--all] SOURCE WORKDIR}

types=(None Debug Release RelWithDebInfo MinSizeRel)
configs=()
# gcc RelWithDebInfo is the test command's own build (build/, and build-asan): skipped
# here unless --all.
for t in "${types[@]}"; do
	$all || [ "$t" != RelWithDebInfo ] && configs+=("gcc:$t")
done
command -v dpkg-buildflags >/dev/null && configs+=("gcc:Debian")
if $all; then
	for t in "${types[@]}"; do configs+=("clang:$t"); done
else
	configs+=("clang:Release")
fi

mkdir -p "$work"
failed=()
for c in "${configs[@]}"; do
	cc=${c%%:*} type=${c#*:}
	if ! command -v "$cc" >/dev/null; then
		echo "SKIP: $cc not installed"
		exit 77
	fi
	dir=$work/$cc-$type
	log=$dir.log
	start=$SECONDS
	env=()
	if [ "$type" = Debian ]; then
		export DEB_BUILD_MAINT_OPTIONS="hardening=+all${lto:+ optimize=+lto}"
		env=(CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
			LDFLAGS="$(dpkg-buildflags --get LDFLAGS)")
		unset DEB_BUILD_MAINT_OPTIONS
	fi
	# CFLAGS only count when the tree is first configured.
	# The test-only hooks are code too; the Debian build is a package's, without them.
	hooks=ON
	[ "$type" = Debian ] && hooks=OFF
	if env "${env[@]}" cmake -S "$src" -B "$dir" -DCMAKE_C_COMPILER="$cc" \
		-DCMAKE_BUILD_TYPE="${type/Debian/None}" -DDEVWL_WERROR=ON \
		-DDEVWL_TEST_HOOKS=$hooks >"$log" 2>&1 &&
		cmake --build "$dir" -j2 >>"$log" 2>&1; then
		echo "ok   $cc $type ($((SECONDS - start)) s)"
	else
		echo "FAIL $cc $type ($((SECONDS - start)) s), from $log:"
		grep -E 'error|warning' "$log" | head -20 | sed 's/^/     /'
		failed+=("$cc $type")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: did not build: ${failed[*]}"
	exit 1
fi
echo "PASS: ${#configs[@]} configurations"
