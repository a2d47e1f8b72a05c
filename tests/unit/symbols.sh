#!/bin/bash
# libdevwl's names, as a program that embeds it sees them: the installed archive and the
# shared library both define globally exactly the functions include/devwl.h declares.
# Everything else (lib/'s caller_, rules_, target_..., base/'s devwl_array_...) is local
# to the archive's one object, so a program with names of its own like ours links and
# runs. Only a sanitizer or coverage build's compiler-made names ("__asan_...",
# "__odr_asan...", "__sancov...": they start with "__") may be global beside the API, and
# the shared library's version nodes.
#   symbols.sh LIBDEVWL.a LIBDEVWL-INTERNAL.a LIBDEVWL.so HEADER CC [LDFLAG...]
# LIBDEVWL-INTERNAL.a, the build's own archive with the internals global, names the
# internals; LDFLAGs are the build's sanitizer flags, if any.
set -eu
archive=${1:?usage: symbols.sh LIBDEVWL.a LIBDEVWL-INTERNAL.a LIBDEVWL.so HEADER CC [LDFLAG...]}
internal=${2:?}
so=${3:?}
header=${4:?}
cc=${5:?}
shift 5
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

declared=$(grep -ho 'devwl_[a-z_0-9]*(' "$header" | tr -d '(' | sort -u)
globals() { awk 'NF == 3 && $3 !~ /^__/ { print $3 }' | sort -u; }
# same WHAT LIST: LIST is the header's functions, or fail naming WHAT.
same() {
	[ "$declared" = "$2" ] && return 0
	echo "FAIL: the $1's global definitions differ from the header (< header, > $1):" >&2
	diff <(echo "$declared") <(echo "$2") >&2 || true
	exit 1
}
same archive "$(nm -g --defined-only "$archive" | globals)"
# The shared library's version nodes (DEVWL_0.1...) are absolute symbols, not code.
same so "$(nm -D --defined-only "$so" | awk '$2 != "A"' | sed 's/@.*//' | globals)"
echo "ok - libdevwl.a and libdevwl.so define globally the $(echo "$declared" | wc -l)" \
	"functions of devwl.h and nothing else"

# Every internal name, defined again by an embedder.
internals=$(nm -g --defined-only "$internal" | globals | grep -vxF "$declared")
for prefix in caller_ rules_ target_ devwl_; do
	echo "$internals" | grep -q "^$prefix" ||
		{ echo "FAIL: no internal name starting $prefix in $internal" >&2; exit 1; }
done
{
	echo '#include <errno.h>'
	echo '#include <stdio.h>'
	echo '#include <string.h>'
	echo '#include "devwl.h"'
	echo "$internals" | sed 's/.*/int &(void);\nint &(void) { return 1; }/'
	echo 'int main(void) {'
	echo '	int ours = 0;'
	echo "$internals" | sed 's/.*/\tours += &();/'
	cat <<'C'
	struct devwl_rule rule;
	struct devwl_error err;
	struct devwl_policy *policy = NULL;
	char buf[64];
	if (devwl_rule_parse("c 1:3 rwm", 9, &rule, &err) < 0 ||
	    devwl_rule_format(&rule, buf, sizeof(buf)) < 0 || strcmp(buf, "c 1:3 rwm") != 0)
		return 2;
	if (devwl_rule_parse("c 1:3 rwx", 9, &rule, &err) != -EINVAL)
		return 3;
	if (devwl_policy_load_string("{\"version\": 1, \"nodes\": [{\"path\": \"/\", \"rules\": [\"allow c 1:3 rw\"]}]}", "test", &policy, &err) < 0)
		return 4;
	devwl_policy_free(policy);
	printf("%d names of our own, libdevwl %s\n", ours, devwl_version());
	return 0;
}
C
} >"$T/embedder.c"
libs=$(pkg-config --libs libseccomp libcap json-c)
# shellcheck disable=SC2086 # pkg-config's words
if ! "$cc" -I"$(dirname "$header")" "$T/embedder.c" "$archive" $libs "$@" \
	-o "$T/embedder" 2>"$T/link.log"; then
	echo "FAIL: a program with names like libdevwl's internals does not link" \
		"statically:" >&2
	head -20 "$T/link.log" >&2
	exit 1
fi
out=$("$T/embedder") || { echo "FAIL: the embedder ran with status $?: $out" >&2; exit 1; }
echo "ok - an embedder defining $(echo "$internals" | wc -l) internal names" \
	"($(echo "$internals" | grep -E '^(caller|rules|target)_' | head -3 | paste -sd, -)...)" \
	"links with libdevwl.a and runs: $out"

# The control: the same program against the archive with the internals global clashes,
# so the link above proves something.
# shellcheck disable=SC2086
if "$cc" -I"$(dirname "$header")" "$T/embedder.c" "$internal" $libs "$@" \
	-o "$T/embedder-clash" 2>"$T/clash.log"; then
	echo "FAIL: the control links: the embedder does not redefine what the library uses" >&2
	exit 1
fi
grep -q 'multiple definition' "$T/clash.log" ||
	{ echo "FAIL: the control failed, but not with a clash:" >&2; head "$T/clash.log" >&2; exit 1; }
echo "PASS: libdevwl.a exports only the API; the internals' names stay the embedder's"
