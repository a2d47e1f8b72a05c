#!/bin/bash
# Every standard build type builds with gcc and clang, warnings as errors: packagers
# pick the type (Debian's debhelper passes None with its own CFLAGS, others Release),
# and gcc's warnings change with the optimiser (-O3 finds what -O2 does not).
#   build-types.sh [--all] SOURCE WORKDIR
# Default (what the test command runs, cheap enough for CI on a loaded machine):
#   gcc Release     everything, tests included: -O3 is where gcc's flow warnings
#                   (maybe-uninitialized...) appear, and what most packagers pick
#   clang Release   the library and the programs (clang's warnings come from its front
#                   end, the same at every -O; the fuzz build compiles the tests with clang)
# The Debian build (None plus dpkg-buildflags with hardening=+all, where _FORTIFY_SOURCE
# finds unused results) is the package's: tests/package/10-deb.sh fails on its warnings.
# DEVWL_BUILD_TYPES=gcc: gcc Release alone, where clang builds every target elsewhere
# with warnings as errors (scripts/devwl test: its fuzz build).
# --all (or DEVWL_BUILD_TYPES=all), by hand: every type (None, Debug, Release,
# RelWithDebInfo, MinSizeRel) with gcc and clang, everything, and the Debian build, with
# LTO too. Measured on this 2-vCPU machine, fresh trees: the default 33 s idle,
# --all 2 min 27 s idle (11 trees). The build trees stay in WORKDIR, so a second run rebuilds
# only what changed.
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
# cc:type[:targets]; no targets is all of them.
programs="devwl devwl_archive devwl_static devwlctl devwl-run devwld devwl-oci-hook"
configs=()
if $all; then
	for t in "${types[@]}"; do configs+=("gcc:$t" "clang:$t"); done
else
	configs+=("gcc:Release")
	[ "${DEVWL_BUILD_TYPES:-}" = gcc ] || configs+=("clang:Release:$programs")
fi
$all && command -v dpkg-buildflags >/dev/null && configs+=("gcc:Debian")

mkdir -p "$work"
failed=()
for c in "${configs[@]}"; do
	IFS=: read -r cc type targets <<<"$c"
	if ! command -v "$cc" >/dev/null; then
		echo "SKIP: $cc not installed"
		exit 77
	fi
	dir=$work/$cc-$type${lto:+-lto}
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
	# gcc Release is also the tree tests/install/30-prefix.sh installs from: one build
	# less in the test command.
	prefix=/usr
	[ "$cc:$type" = gcc:Release ] && prefix=/usr/local
	if env "${env[@]}" cmake -S "$src" -B "$dir" -DCMAKE_C_COMPILER="$cc" \
		-DCMAKE_BUILD_TYPE="${type/Debian/None}" -DDEVWL_WERROR=ON \
		-DDEVWL_TEST_HOOKS=$hooks -DCMAKE_INSTALL_PREFIX=$prefix >"$log" 2>&1 &&
		cmake --build "$dir" -j2 ${targets:+--target $targets} >>"$log" 2>&1; then
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
