#!/bin/bash
# devwld survives its unit's sandbox: the runc suite (tests/oci/suite.sh: granted mknod
# and open, denials, the OCI hook, exec, revocation) against a devwld confined the way
# devwld.service confines it, without systemd: its CapabilityBoundingSet (setpriv),
# NoNewPrivileges, and a mount namespace in which everything but /proc, /sys, /dev and
# the sockets' directory is read-only (ProtectSystem=strict, ProtectHome=read-only).
# Not reproduced here: systemd's seccomp-based settings (SystemCallArchitectures=,
# RestrictAddressFamilies=, MemoryDenyWriteExecute=, LockPersonality=,
# RestrictRealtime=), PrivateTmp= and the Protect{Clock,Hostname,KernelModules}= ones.
set -euo pipefail
src=${DEVWL_SOURCE:?} build=${DEVWL_BUILD:?}
unit=$build/supervisor/devwld.service
skip() {
	echo "SKIP: $*"
	exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root"
for cmd in setpriv unshare runc; do
	command -v $cmd >/dev/null || skip "$cmd not installed"
done
[ -f "$unit" ] || { echo "FAIL: $unit not built"; exit 1; }

# The unit's values, continuation lines joined.
value() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$unit" | sed -n "s/^$1=//p" | tr -s ' \t' ' '; }
caps=$(value CapabilityBoundingSet)
[ -n "$caps" ] || { echo "FAIL: no CapabilityBoundingSet in $unit"; exit 1; }
[ "$(value NoNewPrivileges)" = yes ] || { echo "FAIL: NoNewPrivileges is not yes"; exit 1; }
bounding=-all
for c in $caps; do
	c=${c,,}
	bounding+=",+${c#cap_}"
done
echo "bounding set: $caps"

T=$(mktemp -d /tmp/devwl-sandbox.XXXXXX)
trap 'rm -rf "$T"' EXIT
cat >"$T/wrap" <<WRAP
#!/bin/bash
# DEVWLD_WRAP for tests/oci/lib.sh: devwld in the sandbox; the sockets' directory (from
# --listen) is what stays writable, as RuntimeDirectory= is.
set -eu
dir=
for ((i = 1; i < \$#; i++)); do
	[ "\${!i}" = --listen ] && { j=\$((i + 1)); dir=\$(dirname "\${!j}"); }
done
exec unshare -m --propagation slave -- bash -c '
	set -eu
	dir=\$1
	shift
	mount --bind "\$dir" "\$dir"
	awk "{ print \\\$5 }" /proc/self/mountinfo | sort -u | while read -r mp; do
		case \$mp in
		/proc | /proc/* | /sys | /sys/* | /dev | /dev/* | "\$dir" | "\$dir"/*) ;;
		*) mount -o remount,bind,ro "\$mp" 2>/dev/null || true ;;
		esac
	done
	if touch /.devwl-rw-probe 2>/dev/null; then
		rm -f /.devwl-rw-probe
		echo "sandbox: / is still writable" >&2
		exit 1
	fi
	exec setpriv --bounding-set=$bounding --inh-caps=-all --no-new-privs -- "\$@"' \\
	bash "\$dir" "\$@"
WRAP
chmod +x "$T/wrap"
export DEVWLD_WRAP=$T/wrap
export DEVWLD=${DEVWLD:-$build/supervisor/devwld} DEVWLCTL=${DEVWLCTL:-$build/tools/devwlctl}
export OCI_HOOK=${OCI_HOOK:-$build/tools/devwl-oci-hook} OCI_BIN=${OCI_BIN:-$build/tests/oci}
rc=0
bash "$src/tests/oci/10-runc.sh" || rc=$?
[ $rc = 0 ] && echo "PASS: the runc suite against devwld in its unit's sandbox"
exit $rc
