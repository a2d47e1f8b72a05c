# Helpers of the plugin tests (180-): a bundle whose notifications crun hands to the
# plugin ($PLUGIN) rather than to a listener socket. Sourced after lib.sh.

# plugin_bundle NAME SCRIPT POLICY [JQ-FILTER]: make_bundle's bundle without listenerPath,
# with the plugin annotation and org.devwl.policy POLICY (none when empty).
plugin_bundle() {
	local name=$1 script=$2 policy=$3 extra=${4:-.}
	make_bundle "$name" "$script" "del(.linux.seccomp.listenerPath)
		| .annotations[\"run.oci.seccomp.plugins\"] = \"$PLUGIN\"
		| if \"$policy\" == \"\" then . else .annotations[\"org.devwl.policy\"] = \"$policy\" end
		| $extra"
}

# A sanitizer build's plugin needs the sanitizer's runtime loaded first in a crun that
# has none: crun runs with it preloaded (leak checks off: they would be crun's), and its
# reports go to files that plugin_sanitizer_check turns into a failure.
if ldd "$PLUGIN" 2>/dev/null | grep -q libasan; then
	mkdir -p "$T/bin"
	cat >"$T/bin/crun" <<WRAP
#!/bin/sh
LD_PRELOAD=$(ldd "$PLUGIN" | awk '/libasan/ {print $3}') \
ASAN_OPTIONS=detect_leaks=0:log_path=$T/sanitizer \
UBSAN_OPTIONS=print_stacktrace=1:log_path=$T/sanitizer exec $(command -v crun) "\$@"
WRAP
	chmod +x "$T/bin/crun"
	PATH=$T/bin:$PATH
fi
plugin_sanitizer_check() {
	if ls "$T"/sanitizer.* >/dev/null 2>&1; then
		fail "sanitizer report from the plugin: $(head -60 "$T"/sanitizer.*)"
	fi
	return 0
}
# A failure says what the sanitizer saw, where it saw anything (crun aborted by it fails
# a check first, with the container's ENOSYS).
fail() {
	echo "FAIL: $*" >&2
	if ls "$T"/sanitizer.* >/dev/null 2>&1; then
		echo "sanitizer report from the plugin:" >&2
		head -60 "$T"/sanitizer.* >&2
	fi
	exit 1
}
