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
