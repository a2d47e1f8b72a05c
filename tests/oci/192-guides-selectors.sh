# The selector and CDI blocks of the guides, run as written against this test's devwld
# and runc, and an unknown container name answered with the near ones:
#   - README.md, "Devices by identity": its policy (json block) and its devwlctl commands
#     (sh block), a runc container on /lab as $ID; `devwlctl selectors` then lists what
#     each binding names, the attached disk opens in the container at /dev/xdisk, and
#     the one line devwl-run runs with a stand-in minicom;
#   - examples/k8s/cdi/README.md, "What a container gets": its policy.json, cdi-spec.yaml
#     and the annotation of its json block on a runc container named disk-jobs/disk-test/
#     main: d0 opens in it, d1 does not, `devwlctl selectors` prints the line the guide
#     shows, and nothing once the container is gone;
#   - devwlctl attach and events --container with near misses of a container's id and
#     Kubernetes name (devwlctl(1), CONTAINER NAMES), never told to another owner.
# Only what a test must own is changed: devwlctl's socket, the image file's path (README:
# /var/lib/images/lab.img) and the spec's loop devices (the guide's /dev/loop0 and 1).
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
[ -e /dev/loop-control ] || skip "no /dev/loop-control (loop driver not loaded)"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] || fail "devwl-run not built at $RUN"

# md_output FILE COMMAND: the lines a plain ``` block of FILE shows after "$ COMMAND".
md_output() {
	awk -v cmd="\$ $2" '/^```$/ {b = !b; f = 0; next} b && $0 == cmd {f = 1; next}
		b && /^\$ / {f = 0} b && f' "$TOP/$1"
}

# loopdev FILE TEXT: a loop device on a 1 MiB FILE starting with TEXT; prints it.
loopdev() {
	truncate -s 1M "$1" && printf '%s' "$2" | dd of="$1" conv=notrunc status=none || return 1
	loop_of "$1"
}
# A root file system with the applets the containers run (make_rootfs links some 400).
mkdir -p "$T/rootfs"/{bin,proc,sys,dev,tmp,etc} && cp "$BUSYBOX" "$T/rootfs/bin/busybox" &&
	ln -s busybox "$T/rootfs/bin/sh" && ln -s busybox "$T/rootfs/bin/sleep" || fail "the rootfs"

# --- README.md: devices by identity ---------------------------------------------------
IMG=$T/lab.img
L=$(loopdev "$IMG" LAB-IMAGE 2>"$T/losetup.err") || skip "no loop device here: $(cat "$T/losetup.err")"
LM=$(($(stat -c '0x%T' "$L")))
md_block README.md json 2 | sed "s|/var/lib/images/lab.img|$IMG|g" >"$T/policy.json"
grep -q '"/lab"' "$T/policy.json" || fail "README.md's second json block is no /lab policy"
# The CDI directory (the CDI part's) keeps the host's /etc/cdi out of the README's part.
mkdir "$T/cdi"
start_devwld --cdi-dir "$T/cdi"

ID=lab-$$
make_bundle lab 'echo READY; while [ ! -e /tmp/stop ]; do sleep 0.1; done' \
	'.linux.seccomp.listenerMetadata = "node=/lab"'
run_detached "$ID" "$T/lab"
wait_until 30 sh -c "'$DEVWLCTL' --socket '$T/control.sock' containers | grep -q '^$ID '" ||
	fail "$ID never reached devwld: $(cat "$T/$ID.out")"
pid=$(runc state "$ID" | jq .pid) || fail "runc state $ID"

text=$(md_block README.md sh 3 | sed "s|/var/lib/images/lab.img|$IMG|g")
grep -q 'devwlctl selectors' <<<"$text" || fail "README.md's third sh block is not the selectors'"
# devwl-run's line: the FTDI adapter is no device of this host, and minicom no program
# of it: its stand-in prints what it was given and whether the node is there.
mkdir "$T/bin"
printf '#!/bin/sh\necho "minicom $*"; test -e /dev/ttyUSB0 || echo "no /dev/ttyUSB0"\n' >"$T/bin/minicom"
chmod 755 "$T/bin/minicom"
devwlctl() { ctl "$@"; }
devwl-run() { PATH=$T/bin:$PATH "$RUN" "$@"; }
eval "$text" >"$T/ids.out" 2>&1
unset -f devwlctl devwl-run
out=$(cat "$T/ids.out")
grep -q "^attached b 7:$LM ($L, by loop:$IMG) r to container $ID at /dev/xdisk" <<<"$out" ||
	fail "devwlctl attach of the loop selector said: $out"
[ "$(head -c 9 "/proc/$pid/root/dev/xdisk" 2>&1)" = LAB-IMAGE ] ||
	fail "/dev/xdisk in the container: $(ls -l "/proc/$pid/root/dev/" 2>&1)"
grep -qx "/lab allow by-id:usb-FTDI_FT232R_USB_UART_A12345-if00-port0 rw \[devwlctl\]: -" <<<"$out" &&
	grep -qx "/lab allow loop:$IMG r \[file\]: b 7:$LM r" <<<"$out" &&
	grep -qx "/lab allow usb:0403:6001:A12345 rw \[file\]: -" <<<"$out" ||
	fail "devwlctl selectors: $out"
grep -qx "minicom -D /dev/ttyUSB0" <<<"$out" || fail "devwl-run's line: $out"
pass "README.md's selectors: policy loaded, by-id bound, loop image attached at /dev/xdisk and read; selectors lists each ($SECONDS s in)"

# --- a near miss of the container's id ---------------------------------------------------
ctl attach "lab_$$" /dev/null >"$T/typo.out" 2>&1 && fail "attach to lab_$$: $(cat "$T/typo.out")"
grep -qF "devwlctl: ENOENT: no container \"lab_$$\" of uid 0: did you mean $ID?" "$T/typo.out" ||
	fail "devwlctl attach lab_$$ said: $(cat "$T/typo.out")"
ctl events --container "LAB-$$" >"$T/typo.out" 2>&1 && fail "events --container LAB-$$: $(cat "$T/typo.out")"
grep -qF "did you mean $ID?" "$T/typo.out" || fail "devwlctl events --container LAB-$$ said: $(cat "$T/typo.out")"
ctl attach --owner 65534 "lab_$$" /dev/null >"$T/typo.out" 2>&1
grep -qF "no container \"lab_$$\" of uid 65534" "$T/typo.out" && ! grep -q "did you mean" "$T/typo.out" ||
	fail "uid 65534 was told of root's container: $(cat "$T/typo.out")"
pass "lab_$$ and LAB-$$: attach and events ask whether $ID is meant; uid 65534 is told of none ($SECONDS s in)"
touch "/proc/$pid/root/tmp/stop"
wait_until 30 sh -c "! '$DEVWLCTL' --socket '$T/control.sock' containers | grep -q '^$ID '" ||
	fail "$ID did not stop: $(ctl containers)"
rm "$T/rootfs/tmp/stop" # the root file system is the next container's too

# --- examples/k8s/cdi/README.md: what a container gets -----------------------------------
CDI=examples/k8s/cdi
L0=$(loopdev "$T/d0.img" DISK-ZERO) && L1=$(loopdev "$T/d1.img" DISK-ONE!) ||
	skip "no two loop devices here"
M0=$(($(stat -c '0x%T' "$L0")))
M1=$(($(stat -c '0x%T' "$L1")))
# devwlctl's binding on /lab outlives a reload (devwlctl(1)): taken back first.
ctl unbind /lab allow 'by-id:usb-FTDI_FT232R_USB_UART_A12345-if00-port0' rw >"$T/unbind.out" 2>&1 ||
	fail "devwlctl unbind: $(cat "$T/unbind.out")"
cp "$TOP/$CDI/policy.json" "$T/policy.json" && ctl reload >"$T/reload.out" 2>&1 ||
	fail "the guide's policy.json: $(cat "$T/reload.out")"
sed "s|/dev/loop0\$|$L0|; t; s|/dev/loop1\$|$L1|" "$TOP/$CDI/cdi-spec.yaml" >"$T/cdi/example-disk.yaml"
ann=$(md_block "$CDI/README.md" json 1)
grep -q 'cdi.k8s.io/' <<<"$ann" || fail "$CDI/README.md's first json block is no annotation"
# The pod of pod.yaml as containerd's CRI names it, d0's node where the runtime puts it
# (the CDI edits), d1's beside it.
CID=cdi-$$
make_bundle cdibox 'head -c 9 /dev/d0 && echo; head -c 9 /dev/d1; echo D1_RC=$?
while [ ! -e /tmp/stop ]; do sleep 0.1; done' "
	.annotations = ({$ann}.annotations + {\"io.kubernetes.pod.namespace\": \"disk-jobs\",
		\"io.kubernetes.pod.name\": \"disk-test\", \"io.kubernetes.container.name\": \"main\"})
	| .linux.devices = [{path: \"/dev/d0\", type: \"b\", major: 7, minor: $M0},
		{path: \"/dev/d1\", type: \"b\", major: 7, minor: $M1}]
	| .linux.resources.devices += [{allow: true, type: \"b\", major: 7, access: \"rw\"}]"
run_detached "$CID" "$T/cdibox"
wait_for "$T/$CID.out" D1_RC= 30 || fail "the CDI container: $(cat "$T/$CID.out")"
[ "$(head -1 "$T/$CID.out")" = DISK-ZERO ] && grep -q "head: /dev/d1: Operation not permitted" "$T/$CID.out" ||
	fail "the CDI container's opens: $(cat "$T/$CID.out")"
want=$(md_output "$CDI/README.md" "devwlctl selectors" | sed "s|b 7:0 |b 7:$M0 |")
[ -n "$want" ] || fail "$CDI/README.md shows no devwlctl selectors"
[ "$(ctl selectors)" = "$want" ] || fail "devwlctl selectors: $(ctl selectors); the guide: $want"
touch "$T/rootfs/tmp/stop"
wait_until 30 sh -c "[ \"\$('$DEVWLCTL' --socket '$T/control.sock' selectors)\" = '' ]" ||
	fail "the binding outlived its container: $(ctl selectors)"
pass "$CDI: d0 opens in the container, d1 is refused, devwlctl selectors prints the guide's line and, the container gone, nothing ($SECONDS s in)"
exit 0
