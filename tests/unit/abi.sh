#!/bin/bash
# The shared library exports exactly the functions include/devwl.h declares, each
# under a version node of lib/libdevwl.map.
set -eu
lib=${1:?usage: abi.sh LIBDEVWL.so HEADER}
header=${2:?}
declared=$(grep -ho 'devwl_[a-z_0-9]*(' "$header" | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u)
unversioned=$(nm -D --defined-only "$lib" | awk '$2 == "T" && $3 !~ /@@DEVWL_/ { print $3 }')
if [ "$declared" != "$exported" ]; then
	echo "FAIL: exports differ from the header:" >&2
	diff <(echo "$declared") <(echo "$exported") >&2 || true
	exit 1
fi
if [ -n "$unversioned" ]; then
	echo "FAIL: exported without a version: $unversioned" >&2
	exit 1
fi
echo "PASS: $(echo "$exported" | wc -l) symbols, all versioned"
