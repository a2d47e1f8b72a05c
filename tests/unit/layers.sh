#!/usr/bin/env bash
# devwld's layers are enforced by the compiler (supervisor/CMakeLists.txt): each layer's
# library sees its own folder and the folders below it, never one above. For every layer
# this compiles, with that layer's own include flags as the build uses them, one line
# that includes a header of its own (must compile) and one that includes a header of
# the layer right above it (must fail, naming the rule: "core/ may not include serve/
# (serve.h): see supervisor/README.md", from the layer's guard, which the build searches
# after every other directory). A layer whose flags gained an upper folder, a header
# moved to the wrong folder, or a guard gone silent fails here.
# Usage: layers.sh BUILD-DIR SOURCE-DIR
set -euo pipefail
build=$1 src=$2
cc=${CC:-cc}
# Bottom to top, as supervisor/CMakeLists.txt stacks them: layer and one header of it.
layers=(util:log.h format:statefile.h keeper:keeper_link.h loop:notify_loop.h core:devwld.h
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
	# ... and the guard (-idirafter DIR, in the compile flags).
	read -ra guard < <(sed -n 's/^C_FLAGS = .*\(-idirafter [^ ]*\).*/\1/p' "$flags")
	[ "${#guard[@]}" = 2 ] || { echo "FAIL: devwld_$name has no layer guard (-idirafter)"; exit 1; }
	inc+=("${guard[@]}")
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
	elif ! grep -qF "$name/ may not include $upname/ ($up): see supervisor/README.md" "$tmp/err"; then
		echo "FAIL: layer $name including $up failed, but without naming the rule:"
		cat "$tmp/err"; fail=1
	else
		echo "ok: $name includes its own $own, not $upname's $up: $(grep -m1 -o '#error.*' "$tmp/err")"
	fi
	# Any layer above, not only the next: the top's header from the bottom too.
	top=${layers[-1]#*:} topname=${layers[-1]%%:*}
	printf '#include "%s"\nint layers_probe;\n' "$top" >"$tmp/top.c"
	if "$cc" -fsyntax-only -D_GNU_SOURCE "${inc[@]}" "$tmp/top.c" 2>"$tmp/err" ||
		! grep -qF "$name/ may not include $topname/ ($top)" "$tmp/err"; then
		echo "FAIL: layer $name including $topname's $top:"; cat "$tmp/err"; fail=1
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
