#!/bin/bash
# libdevwl.so against the ABI recorded for its SONAME, as library maintainers check it:
# abi-dumper reads the exported functions and the types they reach (DWARF, so the build
# needs -g: RelWithDebInfo, Debug, the ASan tree) restricted to include/, and
# abi-compliance-checker compares that with tests/unit/abi/SONAME.dump. It fails on a
# binary or source incompatibility (a function removed or retyped, a public struct's
# member moved or resized, an enum value renumbered; #define constants are not in DWARF,
# abi.sh has them), "Low" severity included (-strict: the checker rates a resized struct
# behind a pointer low, but callers allocate devwl_error and devwl_event and the library
# writes them whole); on a released version node that lost or gained a symbol; and on a
# new symbol outside a new node. A break is allowed only with a new SONAME (doc/HACKING.md,
# "ABI and SONAME policy"), whose baseline is then recorded.
#   abi-check.sh [--record] LIBDEVWL.so INCLUDE-DIR BASELINE-DIR VERSION
# --record writes the baseline for the library's SONAME (doc/HACKING.md says when).
set -eu
record=false
if [ "${1:-}" = --record ]; then
	record=true
	shift
fi
lib=${1:?usage: abi-check.sh [--record] LIBDEVWL.so INCLUDE-DIR BASELINE-DIR VERSION}
include=${2:?}
baselines=${3:?}
version=${4:?}

for tool in abi-dumper abi-compliance-checker readelf; do
	command -v $tool >/dev/null ||
		{ echo "SKIP: $tool not installed (Debian: abi-dumper abi-compliance-checker)"; exit 77; }
done
lib=$(readlink -f "$lib")
if ! readelf -S "$lib" | grep -q '\.debug_info'; then
	echo "SKIP: $lib has no debug information (a Release or MinSizeRel build):" \
		"abi-dumper reads the types from DWARF"
	exit 77
fi
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
baseline=$baselines/$soname.dump
include=$(readlink -f "$include")
baseline=$(readlink -f "$baseline")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# Both tools write their logs under the working directory.
cd "$T"

# -sort: the same library gives the same text.
if ! abi-dumper "$lib" -o "$T/now.dump" -lver "$version" -public-headers "$include" \
	-sort -quiet >"$T/dumper.log" 2>&1; then
	echo "SKIP: abi-dumper cannot read $lib:" >&2
	tail -5 "$T/dumper.log" >&2
	exit 77
fi
if $record; then
	# The indentation is three quarters of the text, and means nothing to the checker.
	sed "s/^ *//" "$T/now.dump" >"$baseline"
	echo "recorded $baseline ($(wc -c <"$baseline") bytes) from $lib"
	exit 0
fi
if [ ! -f "$baseline" ]; then
	echo "FAIL: no ABI baseline for $soname ($baseline). A new SONAME records its own:" \
		"tests/unit/abi-check.sh --record (doc/HACKING.md, \"ABI and SONAME policy\")" >&2
	exit 1
fi

bad=0
# Released nodes never change: every symbol the baseline has keeps its node, and a symbol
# the baseline lacks is in a node the baseline lacks.
versioned() { grep -o "[a-z_0-9]*@@DEVWL_[0-9.]*" | sort -u; }
before=$(versioned <"$baseline")
now=$(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | versioned)
lost=$(comm -23 <(echo "$before") <(echo "$now"))
if [ -n "$lost" ]; then
	echo "FAIL: symbols of the baseline gone or moved to another node:" $lost >&2
	bad=1
fi
old_nodes=$(echo "$before" | sed 's/.*@@//' | sort -u)
while read -r added; do
	[ -n "$added" ] || continue
	if echo "$old_nodes" | grep -qxF "${added#*@@}"; then
		echo "FAIL: $added is new, but ${added#*@@} is a released node: it goes into a" \
			"new node (lib/libdevwl.map)" >&2
		bad=1
	fi
done < <(comm -13 <(echo "$before") <(echo "$now"))

# The compatibility of the types and functions, binary and source.
set +e
abi-compliance-checker -l libdevwl -old "$baseline" -new "$T/now.dump" -strict \
	-report-format xml -report-path "$T/report.xml" -quiet >"$T/acc.log" 2>&1
rc=$?
set -e
case $rc in
0) ;;
1)
	echo "FAIL: libdevwl.so is incompatible with $baseline:" >&2
	# What the reports call removed or a problem (of any severity but "Safe"): the
	# symbol or type, and the change's attributes (the report's own words say
	# "@old_value", filled in by its HTML only).
	awk '
		/^<report kind=/ { kind = $2; gsub(/kind=|"/, "", kind) }
		/^<(removed_symbols|problems_with_[a-z]+ severity="(High|Medium|Low)")/ { on = 1; next }
		/^<\/(removed_symbols|problems_with_)/ { on = 0 }
		/<affected>/ { skip = 1 } /<\/affected>/ { skip = 0; next }
		!on || skip { next }
		/<name>/ { gsub(/<[^>]*>| /, ""); print "  " kind ": removed " $0 }
		/<(type|symbol) name=/ { what = $0; sub(/.*name="/, "", what); sub(/".*/, "", what) }
		/<change/ { c = $0; sub(/>.*/, "", c); sub(/.*<change */, "", c)
			print "  " kind ": " what ": " c }
	' "$T/report.xml" | head -30 >&2
	bad=1
	;;
*)
	echo "SKIP: abi-compliance-checker could not compare (status $rc):" >&2
	tail -5 "$T/acc.log" >&2
	exit 77
	;;
esac
if [ $bad != 0 ]; then
	echo "An incompatible change needs a new SONAME, and the compatible ones a new node;" \
		"then re-record the baseline (doc/HACKING.md, \"ABI and SONAME policy\")." >&2
	exit 1
fi
echo "PASS: $soname $version against $baseline: $(echo "$now" | wc -l) symbols," \
	"compatible"
