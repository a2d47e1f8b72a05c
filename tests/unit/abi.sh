#!/bin/bash
# libdevwl's ABI, as a program compiled against an old devwl.h relies on it:
#  - the shared library exports exactly the functions include/devwl.h declares, each under
#    a version node of lib/libdevwl.map;
#  - every public struct and enum keeps its size and alignment, every struct member its
#    offset and size, every constant its value: LAYOUT (abi-layout.c, built against the
#    header) prints them, and they must equal the committed table of the data model,
#    TABLES/abi-layout-MODEL.txt, which in turn must name everything the header defines.
# A deliberate change updates the table (LAYOUT > TABLE) under the rules of doc/HACKING.md,
# "ABI and SONAME policy".
set -eu
lib=${1:?usage: abi.sh LIBDEVWL.so HEADER LAYOUT TABLES}
header=${2:?}
layout=${3:?}
tables=${4:?}

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
echo "exports: $(echo "$exported" | wc -l) symbols, all versioned"

# What the header defines, read from its text: structs and their members (comments and
# array bounds dropped; "uint32_t major, minor;" is two), enums, and constants: enum
# values and #defines with a value, but the include guard and the version, which change.
defined=$(perl -0777 -ne '
	while (/^(struct|enum) (devwl_\w+) \{(.*?)^\};/msg) {
		my ($kind, $name, $body) = ($1, $2, $3);
		print "$kind $name\n";
		next if $kind ne "struct";
		$body =~ s{/\*.*?\*/}{}gs;
		$body =~ s/\[[^\]]*\]//g;
		for my $decl (split /;/, $body) {
			next if $decl !~ /\S/;
			my @parts = split /,/, $decl;
			for my $p (@parts) {
				print "member $name.$1\n" if $p =~ /(\w+)\s*$/;
			}
		}
	}
	while (/^enum (devwl_\w+) \{([^}]*)\}/mg) { print "enum $1\n" }
	while (/\b(DEVWL_[A-Z0-9_]+) = /g) { print "value $1\n" }
	while (/^#define (DEVWL_[A-Z0-9_]+)[ \t]+\S/mg) {
		print "value $1\n" if $1 ne "DEVWL_H" && $1 !~ /^DEVWL_VERSION_/;
	}' "$header" | sort -u)
out=$("$layout")
listed=$(echo "$out" | awk '$1 != "model" { print $1, $2 }' | sort -u)
if [ "$defined" != "$listed" ]; then
	echo "FAIL: abi-layout.c and the header name different things (< header, > abi-layout.c):" >&2
	diff <(echo "$defined") <(echo "$listed") >&2 || true
	exit 1
fi

model=$(echo "$out" | awk '$1 == "model" { print $2 }')
table="$tables/abi-layout-$model.txt"
if [ ! -f "$table" ]; then
	# The exports were checked; the layout has no reference for this data model yet.
	echo "SKIP: no layout table for data model $model ($table)"
	exit 77
fi
if ! diff -u "$table" <(echo "$out") >&2; then
	echo "FAIL: the layout differs from $table (- table, + now): an ABI break unless" \
		"doc/HACKING.md, \"ABI and SONAME policy\", allows it" >&2
	exit 1
fi
echo "PASS: exports and the layout of $(echo "$listed" | wc -l) names ($model)"
