#!/bin/bash
# Every place that states devwl's version states the one of CMakeLists.txt's
# project(VERSION) (doc/HACKING.md, "ABI and SONAME policy"):
#  - its MAJOR.MINOR is the newest version node of lib/libdevwl.map;
#  - debian/changelog's top entry is that upstream version;
#  - the generated devwl.pc says it, libdevwl.so's file name ends in it, and the loaded
#    library's devwl_version() returns it (VERSION-PRINT, linked against libdevwl.so);
#  - include/devwl.h's DEVWL_VERSION_* and the man pages' headers say it.
#   versions.sh SOURCE BUILD VERSION-PRINT
set -u
src=${1:?usage: versions.sh SOURCE BUILD VERSION-PRINT}
build=${2:?}
print=${3:?}
bad=0
differs() {
	echo "FAIL: $1 says ${2:-nothing}, project(VERSION) $version" >&2
	bad=1
}

version=$(sed -n 's/^project(devwl VERSION \([0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
	{ echo "FAIL: no project(devwl VERSION X.Y.Z ...) in CMakeLists.txt" >&2; exit 1; }

node=$(sed -n 's/^DEVWL_\([0-9]*\.[0-9]*\) {.*/\1/p' "$src/lib/libdevwl.map" | sort -V | tail -1)
[ "$node" = "${version%.*}" ] || differs "lib/libdevwl.map's newest node DEVWL_$node" "$node"

changelog=$(sed -n '1s/^devwl (\([^)]*\)).*/\1/p' "$src/debian/changelog")
changelog=${changelog#*:}
[ "${changelog%-*}" = "$version" ] || differs "debian/changelog's top entry" "$changelog"

pc=$(sed -n 's/^Version: //p' "$build/lib/devwl.pc")
[ "$pc" = "$version" ] || differs "$build/lib/devwl.pc" "$pc"

real=$(basename "$(readlink -f "$build/lib/libdevwl.so")")
[ "$real" = "libdevwl.so.$version" ] || differs "the shared library's file name" "$real"

loaded=$("$print") || { echo "FAIL: $print failed" >&2; exit 1; }
[ "$loaded" = "$version" ] || differs "devwl_version()" "$loaded"

macros=$(for part in MAJOR MINOR MICRO; do
	sed -n "s/^#define DEVWL_VERSION_$part \([0-9]*\)$/\1/p" "$src/include/devwl.h"
done | paste -sd.)
[ "$macros" = "$version" ] || differs "include/devwl.h's DEVWL_VERSION_*" "$macros"

pages=0
for page in "$src"/doc/*.[1-8]; do
	pages=$((pages + 1))
	th=$(sed -n 's/^\.TH .* "devwl \([^"]*\)".*/\1/p' "$page")
	[ "$th" = "$version" ] || differs "${page#"$src"/}'s .TH" "$th"
done

[ $bad = 0 ] || exit 1
echo "PASS: project(VERSION) $version: map node DEVWL_$node, debian/changelog $changelog," \
	"devwl.pc, $real, devwl_version(), devwl.h, $pages man pages"
