#!/bin/bash
# The what-if tool resolves selectors offline: devwlctl batch --sysfs DIR --cdi-dir DIR
# answers check against a policy whose allow lines name devices by what they are, in a
# sysfs tree made here and the unit tests' CDI fixtures (two directories, the later
# winning), with no root, no daemon and nothing of the host's devices; what is worth
# knowing (a spec skipped, a selector matching nothing) goes to stderr, the answers stay
# one per line; --connect refuses the local trees.
set -u
. "$(dirname "$0")/lib.sh"
CTL=${DEVWL_BUILD:?}/tools/devwlctl
[ -x "$CTL" ] || fail "no $CTL: the build should have made it"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# Copied, ours and mode 0644: specs are read only from files and directories of root or
# of the reader's uid that no one else can write, and the checkout may be another uid's
# or made under umask 002.
cp -R "${DEVWL_SOURCE:?}/tests/unit/cdi" "$T/cdi" && chmod -R u=rwX,go=rX "$T/cdi" ||
	fail "cannot copy the CDI fixtures"
CDI=$T/cdi

# One USB serial adapter: the device, its tty below its interface, /sys/dev's links.
usb=$T/sys/devices/pci0000:00/usb1/1-1
mkdir -p "$usb/1-1:1.0/ttyUSB0/tty/ttyUSB0" "$T/sys/dev/char" "$T/sys/dev/block"
printf '0403\n' >"$usb/idVendor"
printf '6001\n' >"$usb/idProduct"
printf 'A12345\n' >"$usb/serial"
ln -s "$T/sys/class/tty" "$usb/1-1:1.0/ttyUSB0/tty/ttyUSB0/subsystem"
ln -s "$usb" "$T/sys/dev/char/189:1"
ln -s "$usb/1-1:1.0/ttyUSB0/tty/ttyUSB0" "$T/sys/dev/char/188:0"

out=$("$CTL" batch --sysfs "$T/sys" --udev-data "$T/none" --dev "$T/dev" \
	--cdi-dir "$CDI/static" --cdi-dir "$CDI/dynamic" 2>"$T/err" <<'EOF_BATCH'
mkdir /c
deny /c a
allow /c usb:0403:6001:A12345 rw
allow /c cdi:example.com/gpu=2 r
allow /c cdi:example.com/conf=x rw
allow /c usb:dead:beef rw
check /c c 188 0 rw
check /c c 189 1 w
check /c c 195 2 r
check /c c 195 92 r
check /c c 195 2 w
list /c
EOF_BATCH
) || fail "batch: $out $(cat "$T/err")"
want="ok
ok
ok
ok
error ENOENT: allow \"cdi:example.com/conf=x rw\" on /c: cdi:example.com/conf=x: CDI device example.com/conf=x is defined twice in one directory (a conflict): ignored
ok
allow
allow
allow
deny
deny
c 188:0 rw
c 189:1 rw
c 195:2 r
."
[ "$out" = "$want" ] || fail "batch answered:
$out
instead of:
$want"
grep -q "warning: CDI: .*bad-perm.json: devices\[0\]" "$T/err" || fail "no spec warning: $(cat "$T/err")"
grep -qF "warning: usb:dead:beef: matches no device now" "$T/err" ||
	fail "no warning for nothing matched: $(cat "$T/err")"

err=$("$CTL" batch --connect "$T/sock" --sysfs "$T/sys" </dev/null 2>&1)
[ $? = 2 ] || fail "--connect with --sysfs: wrong exit status: $err"
grep -qF -- "--connect excludes" <<<"$err" || fail "--connect with --sysfs: '$err'"
echo "PASS"
