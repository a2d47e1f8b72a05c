#!/usr/bin/env bash
# devwld's layers are enforced by the compiler (supervisor/CMakeLists.txt): each layer's
# library sees its own folder and the folders below it, never one above. For every layer
# this compiles, with that layer's own include flags as the build uses them, one line
# that includes a header of its own (must compile) and one that includes a header of
# the layer right above it (must fail: "No such file"). A layer whose flags gained an
# upper folder, or a header moved to the wrong folder, fails here.
# Usage: layers.sh BUILD-DIR SOURCE-DIR
set -euo pipefail
build=$1 src=$2
cc=${CC:-cc}
# Bottom to top, as supervisor/CMakeLists.txt stacks them: layer and one header of it.
layers=(util:log.h format:statefile.h keeper:keeper_link.h loop:loop.h core:devwld.h
	serve:serve.h front:control.h main:options.h)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for i in "${!layers[@]}"; do
	name=${layers[$i]%%:*} own=${layers[$i]#*:}
	flags=$build/supervisor/CMakeFiles/devwld_$name.dir/flags.make
	[ -f "$flags" ] || { echo "FAIL: $flags missing: is devwld_$name still a layer?"; exit 1; }
	# Only the include directories: the layer's own and those of what it links.
	read -ra inc < <(sed -n 's/^C_INCLUDES = //p' "$flags")
	printf '#include "%s"\nint layers_probe;\n' "$own" >"$tmp/own.c"
	if ! "$cc" -fsyntax-only -D_GNU_SOURCE "${inc[@]}" "$tmp/own.c" 2>"$tmp/err"; then
		echo "FAIL: layer $name cannot include its own $own:"; cat "$tmp/err"; fail=1
	fi
	if [ "$i" -eq $((${#layers[@]} - 1)) ]; then
		echo "ok: $name, the top, includes its own $own"
		continue
	fi
	up=${layers[$((i + 1))]#*:} upname=${layers[$((i + 1))]%%:*}
	printf '#include "%s"\nint layers_probe;\n' "$up" >"$tmp/up.c"
	if "$cc" -fsyntax-only -D_GNU_SOURCE "${inc[@]}" "$tmp/up.c" 2>"$tmp/err"; then
		echo "FAIL: layer $name can include $upname's $up: an upward include compiles"
		fail=1
	elif ! grep -q 'No such file' "$tmp/err"; then
		echo "FAIL: layer $name including $up failed, but not for want of the header:"
		cat "$tmp/err"; fail=1
	else
		echo "ok: $name includes its own $own, not $upname's $up"
	fi
done
# No file of devwld includes a header of another part by a path around the include
# directories ("../core/devwld.h" would defeat the check above).
if grep -rnE '#include "\.\./|#include "(util|format|keeper|loop|core|serve|front|main)/' \
	"$src/supervisor" --include='*.[ch]'; then
	echo "FAIL: an include by relative path around the layers"
	fail=1
fi
exit $fail
