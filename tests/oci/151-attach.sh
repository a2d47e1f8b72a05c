# Hot-plug (devwlctl attach/detach, devwld(8) HOT-PLUG) into running RT containers (runc
# by default; 152 runs crun): a loop device the container is refused and does not have is
# attached, read and written by the workload (its data checked on the host), seen by an
# exec'ed process, kept across a reload and a planned restart, shown with who holds it
# open, then detached: node gone, new opens refused, while an fd opened before stays
# valid (the kernel revokes none). The hierarchy bounds it (an attach /lab refuses names
# /lab), bad requests change nothing, a container on a shared node gets a leaf of its
# own, and in kernel mode the device cgroup is reprogrammed before the node appears.
# KM: devwld's --kernel-mode (auto: runc's containers get their device cgroup
# programmed; never: every trapped open is devwld's to answer, on behalf where needed).
RT=${RT:-runc}
KM=${KM:-auto}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PROFILE=$HERE/../../examples/oci-hook/seccomp-mknod-only.json

# The runtimes' default devices, plus the loop driver and FUSE on /lab; each container's
# own node starts without them ("container_rules"), so only an attach gives them.
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/lab",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rwm",
                "allow c 1:9 rwm", "allow c 5:0 rwm", "allow c 5:2 rwm", "allow c 136:* rwm",
                "allow b 7:* rw", "allow c 10:229 rw"],
      "mknod_needs_cap": false } ],
  "containers": { "default_template": "/lab/{id}",
                  "container_rules": ["deny b 7:* rwm", "deny c 10:229 rwm"] } }
JSON
make_loop
lmin=$LMIN
start_devwld --kernel-mode "$KM"
make_rootfs

probe() {
	$RT exec "${2:-$id}" sh -c "$1" >"$T/probe.out" 2>&1 </dev/null
	cat "$T/probe.out"
}
eperm() { grep -q "Operation not permitted" "$T/probe.out"; }
node_of() { ctl containers | awk -v id="$1" '$1 == id {print $2}'; }
# start ID [JQ-FILTER]: a container running until /tmp/stop-ID exists.
start() {
	make_bundle "$1" "echo READY; while [ ! -e /tmp/stop-$1 ]; do sleep 0.1; done" "${2:-.}"
	run_detached "$1" "$T/$1"
	wait_until 60 sh -c '"$0" --socket "$1" containers | grep -q "^$2 "' "$DEVWLCTL" \
		"$T/control.sock" "$1" || fail "$1 never reached devwld: $(cat "$T/$1.out")"
}
# devwlctl itself, not the ctl function: $! must be its pid, for the cleanup to kill it.
"$DEVWLCTL" --socket "$T/control.sock" events --json --follow >"$T/events.out" 2>&1 &
CHILD_PIDS+=("$!")

id=att-$RT-$$
start "$id"
[ "$(node_of "$id")" = "/lab/$id" ] || fail "node: $(ctl containers)"
probe "test -e $LOOP && echo PRESENT; mknod /tmp/l b 7 $lmin && head -c 9 /tmp/l" >/dev/null
grep -q PRESENT "$T/probe.out" && fail "$LOOP in the container before any attach"
eperm || fail "b 7:$lmin before the attach: $(cat "$T/probe.out")"
pass "$RT: before the attach $LOOP is absent and refused (container_rules took it from /lab/$id)"

# Bad requests: each refused with its reason, nothing made.
ln -s / "$T/rootfs/tmp/up"
expect_refused() {
	local want=$1
	shift
	ctl attach "$@" >"$T/ctl.out" 2>&1
	[ $? = 1 ] || fail "attach $*: $(cat "$T/ctl.out")"
	grep -q Usage "$T/ctl.out" && fail "attach $*: $(cat "$T/ctl.out")"
	grep -q -- "$want" "$T/ctl.out" || fail "attach $*: $(cat "$T/ctl.out"), want '$want'"
}
expect_refused "no container" nosuch "$LOOP"
expect_refused "not a device node" "$id" /etc/passwd
expect_refused "/lab" "$id" /dev/kmsg
expect_refused "symbolic link\|symlink" "$id" "$LOOP" /tmp/up/evil-node
[ ! -e /evil-node ] || { rm -f /evil-node; fail "a node was made through the symlink on the host"; }
expect_refused "EEXIST\|exists\|something else" "$id" "$LOOP" /dev/null
expect_refused "access" "$id" "$LOOP" --access rx
expect_refused "char-misc names [0-9]* devices here" "$id" char-misc
expect_refused "lists no block device major named" "$id" block-nosuchdriver
expect_refused "no node on the host\|PATH" "$id" "b 7:1000"
[ "$(ctl containers --devices)" = "" ] || fail "after refusals: $(ctl containers --devices)"
[ "$(probe 'cat /dev/null && echo NULL-OK')" = NULL-OK ] || fail "/dev/null changed: $(cat "$T/probe.out")"
pass "$RT: unknown container, no device, a device /lab refuses (named), a path through a symlink, an occupied path, bad access: refused, nothing attached"

# The explicit way up: --parent-grant allows it on /lab first (a policy change, kept).
ctl attach "$id" /dev/kmsg --access w --parent-grant >"$T/ctl.out" 2>&1 || fail "--parent-grant: $(cat "$T/ctl.out")"
ctl list /lab | grep -qx 'c 1:11 w' || fail "/lab after --parent-grant: $(ctl list /lab)"
[ "$(probe 'echo devwl-attach-test >/dev/kmsg && echo WROTE')" = WROTE ] || fail "/dev/kmsg: $(cat "$T/probe.out")"
ctl detach "$id" /dev/kmsg >/dev/null || fail "detach /dev/kmsg"
ctl list /lab | grep -qx 'c 1:11 w' || fail "detach took the parent's grant: $(ctl list /lab)"
pass "$RT: --parent-grant allowed c 1:11 w on /lab, then on the container; detach left /lab's"

# A driver's name (systemd's block-NAME) where the host has exactly one of its devices.
if grep -qx ' *[0-9]* zram' /proc/devices && [ "$(ls /sys/block | grep -c '^zram')" = 1 ]; then
	zdev=$(awk '$2 == "zram" {print $1; exit}' /proc/devices)
	ctl attach "$id" block-zram --access r --parent-grant >"$T/ctl.out" 2>&1 || fail "block-zram: $(cat "$T/ctl.out")"
	ctl containers --devices | grep -q "^$id b $zdev:[0-9]* r /dev/zram0 " || fail "block-zram: $(ctl containers --devices)"
	[ "$(probe 'true </dev/zram0 && echo OPENED')" = OPENED ] || fail "/dev/zram0: $(cat "$T/probe.out")"
	ctl detach "$id" block-zram >/dev/null || fail "detach block-zram"
	pass "$RT: block-zram, the driver's only device here, attached as /dev/zram0 and detached"
else
	echo "# block-NAME with one device not tried: no single zram disk here"
fi

ctl attach "${id:0:12}" "$LOOP" --mode 0660 >"$T/ctl.out" 2>&1 || fail "attach: $(cat "$T/ctl.out")"
[ "$(probe "head -c 9 $LOOP")" = DEVWLDISK ] || fail "reading $LOOP: $(cat "$T/probe.out")"
probe "printf ATTACHED | dd of=$LOOP bs=512 seek=1 conv=notrunc,fsync 2>&1 && echo WROTE" >/dev/null
grep -q WROTE "$T/probe.out" || fail "writing $LOOP: $(cat "$T/probe.out")"
[ "$(dd if="$T/disk" bs=512 skip=1 count=1 status=none | head -c 8)" = ATTACHED ] ||
	fail "the host's file does not hold what the container wrote"
[ "$(probe "stat -c '%a %t:%T' $LOOP")" = "660 7:$(printf %x "$lmin")" ] ||
	fail "node in the container: $(cat "$T/probe.out")"
ctl metrics | grep -qx 'devwl_attached_devices 1' || fail "metrics: $(ctl metrics | grep attached)"
pass "$RT: attached by id prefix; the workload reads and writes $LOOP (data checked on the host); devwl_attached_devices 1"

# An exec'ed process holds it open: listed, and its fd outlives the detach.
$RT exec -d "$id" sh -c "exec 3<$LOOP; while [ ! -e /tmp/stop-hold ]; do sleep 0.1; done; head -c 9 <&3 >/tmp/held" ||
	fail "exec -d"
wait_until 30 sh -c '"$0" --socket "$1" containers --devices | grep -q "^$2 b 7:$3 rw $4 [0-9]"' \
	"$DEVWLCTL" "$T/control.sock" "$id" "$lmin" "$LOOP" ||
	fail "containers --devices: $(ctl containers --devices)"
pass "$RT: containers --devices lists the attachment and the pid holding it open"

ctl reload >/dev/null || fail "reload"
[ "$(probe "head -c 9 $LOOP")" = DEVWLDISK ] || fail "after a reload: $(cat "$T/probe.out")"
gen() { ctl stats | awk '/^generation / {print $2}'; }
g=$(gen)
if ctl restart >/dev/null 2>&1; then
	wait_until 60 sh -c '[ "$("$0" --socket "$1" stats | awk "/^generation / {print \$2}")" -gt "$2" ]' \
		"$DEVWLCTL" "$T/control.sock" "$g" || fail "no new worker after devwlctl restart"
	ctl containers --devices | grep -q "^$id b 7:$lmin " || fail "after restart: $(ctl containers --devices)"
	[ "$(probe "head -c 9 $LOOP")" = DEVWLDISK ] || fail "after a restart: $(cat "$T/probe.out")"
	pass "$RT: the attachment survives a reload and a planned restart"
else
	pass "$RT: the attachment survives a reload (no keeper here: restart not tried)"
fi

# A reload whose policy no longer allows it: the grant lapses (the node stays, marked),
# and comes back with a policy that allows it again.
cp "$T/policy.json" "$T/policy.keep"
sed -i 's/"allow b 7:\* rw", //' "$T/policy.json"
ctl reload >/dev/null || fail "reload without b 7:*"
ctl containers --devices | grep -q "^$id b 7:$lmin rw $LOOP (lapsed) " || fail "not lapsed: $(ctl containers --devices)"
probe "head -c 9 $LOOP" >/dev/null
eperm || fail "a lapsed attachment still opens: $(cat "$T/probe.out")"
cp "$T/policy.keep" "$T/policy.json"
ctl reload >/dev/null || fail "reload with b 7:*"
[ "$(probe "head -c 9 $LOOP")" = DEVWLDISK ] || fail "after the policy allowed it again: $(cat "$T/probe.out")"
pass "$RT: a reload refusing the device lapses the attachment (marked, refused); one allowing it again restores it"

# A node of the device made from the host, which the container cannot remove: it opens
# while attached, so its refusal after detach is the revoked grant's (a mknod inside
# would be refused for want of m whether the grant went or not).
mknod "$T/rootfs/tmp/l2" b 7 "$lmin"
[ "$(probe "head -c 9 /tmp/l2")" = DEVWLDISK ] || fail "host-made node while attached: $(cat "$T/probe.out")"
ctl detach "$id" "$LOOP" >"$T/ctl.out" 2>&1 || fail "detach: $(cat "$T/ctl.out")"
probe "test -e $LOOP && echo PRESENT; head -c 9 /tmp/l2" >/dev/null
grep -q PRESENT "$T/probe.out" && fail "$LOOP still in the container after detach"
eperm || fail "b 7:$lmin after detach: $(cat "$T/probe.out")"
touch "$T/rootfs/tmp/stop-hold"
wait_until 30 test -s "$T/rootfs/tmp/held" || fail "the holder never read"
[ "$(cat "$T/rootfs/tmp/held")" = DEVWLDISK ] || fail "fd opened before the detach: $(cat "$T/rootfs/tmp/held")"
[ -z "$(ctl containers --devices)" ] || fail "after detach: $(ctl containers --devices)"
pass "$RT: detach removed the node and revoked the grant; an fd opened before stays valid"

wait_until 10 grep -q '"event":"detach"' "$T/events.out" || fail "events: $(cat "$T/events.out")"
for want in '"event":"attach".*"result":"attached"' '"event":"attach".*"result":"refused".*/lab' \
	'"event":"detach".*"result":"detached"'; do
	grep -q "$want" "$T/events.out" || fail "no $want in devwlctl events: $(cat "$T/events.out")"
	grep -q "$want" "$T/audit.jsonl" || fail "no $want in the audit"
done
# The JSON lines: --follow says on stderr (here too) when it subscribes again.
grep '^{' "$T/events.out" | jq -e -s --arg p "$LOOP" --arg d "b 7:$lmin" '
	(map(select(.event == "attach" and .result == "attached" and .path == $p and .device == $d
		and .access == "rw")) | length >= 1) and
	(map(select(.event == "detach" and .result == "detached" and .path == $p and .device == $d
		and .access == "rw")) | length >= 1)' >/dev/null ||
	fail "devwlctl events: $(grep -v '"decision"' "$T/events.out" | head -20)"
pass "$RT: attach, refused attach (with the reason) and detach in devwlctl events and the audit"

# A user-namespace container: the node devwld makes sits on the container's /dev, which
# its runtime mounted inside the user namespace (nodev): an attached device must open all
# the same (authoritative: opened through devwld's node as the caller; kernel mode: a twin
# bound over the node).
u=uns-$$
cp -a "$T/rootfs" "$T/urootfs"
chown -R 100000:100000 "$T/urootfs"
start "$u" "$(printf '%s' '.root.path = "'"$T/urootfs"'" | .linux.namespaces += [{"type": "user"}]
	| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
	| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]')"
ctl attach "$u" "$LOOP" >"$T/ctl.out" 2>&1 || fail "attach to the userns container: $(cat "$T/ctl.out")"
[ "$(probe "stat -c '%u %a' $LOOP" "$u")" = "0 $(stat -c %a "$LOOP")" ] ||
	fail "owner and mode in the userns container: $(cat "$T/probe.out"), the host's: $(stat -c '%u %a' "$LOOP")"
[ "$(probe "head -c 9 $LOOP" "$u")" = DEVWLDISK ] || fail "userns container reading $LOOP: $(cat "$T/probe.out")"
pass "$RT: a user-namespace container opens its attached $LOOP (owned by its root)"
# Detach takes the node out of the user-namespace container too.
ctl detach "$u" "$LOOP" >"$T/ctl.out" 2>&1 || fail "detach from the userns container: $(cat "$T/ctl.out")"
[ "$(probe "test -e $LOOP && echo there || echo gone" "$u")" = gone ] ||
	fail "$LOOP still in the userns container after detach: $(cat "$T/probe.out")"
pass "$RT: detach takes the node out of the user-namespace container"
touch "$T/urootfs/tmp/stop-$u"

# A shared node: the container gets a leaf of its own, its neighbour keeps the node; a
# policy node (/lab) and one made for both (/lab/pod, with the container_rules), which a
# reload makes again as the containers' node, not as the leaf's ancestor.
a=sh-a-$$ b=sh-b-$$ a2=sh-c-$$ b2=sh-d-$$
start "$a" '.linux.seccomp.listenerMetadata = "node=/lab"'
start "$b" '.linux.seccomp.listenerMetadata = "node=/lab"'
start "$a2" '.linux.seccomp.listenerMetadata = "node=/lab/pod"'
start "$b2" '.linux.seccomp.listenerMetadata = "node=/lab/pod"'
ctl attach "$a" /dev/fuse >"$T/ctl.out" 2>&1 || fail "attach to $a: $(cat "$T/ctl.out")"
# /lab/pod itself got the container_rules: it bounds the leaves under it (the kernel's
# rule), so on a node shared so only what it allows can be attached.
expect_refused "the parent /lab/pod" "$a2" /dev/fuse
ctl attach "$a2" /dev/zero /tmp/zero-a2 >"$T/ctl.out" 2>&1 || fail "attach to $a2: $(cat "$T/ctl.out")"
[ "$(node_of "$a")" = "/lab/$a" ] && [ "$(node_of "$b")" = /lab ] &&
	[ "$(node_of "$a2")" = "/lab/pod/$a2" ] && [ "$(node_of "$b2")" = /lab/pod ] ||
	fail "nodes after attach: $(ctl containers)"
ctl reload >/dev/null || fail "reload"
[ "$(probe 'true </dev/fuse && echo OPENED' "$a")" = OPENED ] || fail "$a /dev/fuse: $(cat "$T/probe.out")"
[ "$(probe 'head -c 1 /tmp/zero-a2 | od -An -tx1' "$a2")" = " 00" ] || fail "$a2 /tmp/zero-a2: $(cat "$T/probe.out")"
mknod "$T/rootfs/tmp/fuse-b2" c 10 229
probe 'true </tmp/fuse-b2 && echo OPENED' "$b2" >/dev/null
eperm || fail "$b2, on /lab/pod beside $a2's leaf, after a reload: $(cat "$T/probe.out")"
touch "$T/rootfs/tmp/stop-$a" "$T/rootfs/tmp/stop-$a2"
for x in "$a" "$a2"; do
	wait_until 60 sh -c '! "$0" --socket "$1" containers | grep -q "^$2 "' "$DEVWLCTL" "$T/control.sock" "$x" ||
		fail "$x did not go"
done
ctl list "/lab/$a" >/dev/null 2>&1 && fail "/lab/$a outlived its container"
ctl list "/lab/pod/$a2" >/dev/null 2>&1 && fail "/lab/pod/$a2 outlived its container"
[ -z "$(ctl containers --devices)" ] || fail "attachments of a gone container: $(ctl containers --devices)"
pass "$RT: on shared nodes (/lab, /lab/pod) the attach made a leaf for each alone, bounded by the shared node, kept across a reload that left the neighbour as it was, gone with its container"

# Kernel mode: the cgroup holds the grant before the node appears. Its node is named for
# it, so it is its own (a node=/lab/km of its own would get a leaf, which /lab/km's
# container_rules bound).
k=km-$$
start "$k" "$(jq -c --arg lp "$T/listen.sock" --arg k "$k" '.listenerPath = $lp | .listenerMetadata = "node=/lab/\($k) mode=kernel"' "$PROFILE" |
	sed 's/^/.linux.seccomp = /')"
mode=$(ctl containers | awk -v id="$k" '$1 == id {print $5}')
case $mode in
kernel-v1 | kernel-v2)
	n0=$(stat_of notifications)
	ctl attach "$k" "$LOOP" >"$T/ctl.out" 2>&1 || fail "attach in kernel mode: $(cat "$T/ctl.out")"
	[ "$(probe "head -c 9 $LOOP" "$k")" = DEVWLDISK ] || fail "kernel mode read: $(cat "$T/probe.out")"
	[ "$(stat_of notifications)" = "$n0" ] || fail "the open was trapped in kernel mode"
	mknod "$T/rootfs/tmp/l3" b 7 "$lmin"
	[ "$(probe "head -c 9 /tmp/l3" "$k")" = DEVWLDISK ] || fail "kernel mode, host-made node: $(cat "$T/probe.out")"
	ctl detach "$k" "$LOOP" >/dev/null || fail "detach in kernel mode"
	probe "head -c 9 /tmp/l3" "$k" >/dev/null
	eperm || fail "kernel mode after detach: $(cat "$T/probe.out")"
	pass "$RT: kernel mode ($mode): attach opens natively (no notification), detach refused by the kernel"
	;;
*) echo "# kernel mode not in force here ($mode): $(grep -m1 "container $k: WARNING" "$T/devwld.log")" ;;
esac

# A user-namespace container in kernel mode, with the profile for such containers
# (examples/oci-hook/seccomp-mknod-only-userns.json: mknod, unlink and rename trap): a node
# devwld makes on its nodev /dev gets a twin the kernel opens, and behaves as a plain one.
# An attached device reads, and its detach takes twin and node away (the twin unmounted in
# the container's namespace, whose /proc is another pid namespace's); a node the container
# makes is removed, made again, renamed and removed.
ku=ukm-$$
useccomp=$(jq -c --arg lp "$T/listen.sock" --arg k "$ku" \
	'.listenerPath = $lp | .listenerMetadata = "node=/lab/\($k) mode=kernel"' \
	"$HERE/../../examples/oci-hook/seccomp-mknod-only-userns.json") || fail "jq on the userns profile"
start "$ku" ".linux.seccomp = $useccomp | .root.path = \"$T/urootfs\"
	| .linux.namespaces += [{\"type\": \"user\"}]
	| .linux.uidMappings = [{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}]
	| .linux.gidMappings = [{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}]"
mode=$(ctl containers | awk -v id="$ku" '$1 == id {print $5}')
case $mode in
kernel-v1 | kernel-v2)
	ctl attach "$ku" "$LOOP" >"$T/ctl.out" 2>&1 || fail "attach to $ku: $(cat "$T/ctl.out")"
	[ "$(probe "head -c 9 $LOOP" "$ku")" = DEVWLDISK ] || fail "$ku reading $LOOP: $(cat "$T/probe.out")"
	ctl detach "$ku" "$LOOP" >"$T/ctl.out" 2>&1 || fail "detach from $ku: $(cat "$T/ctl.out")"
	[ "$(probe "test -e $LOOP && echo there || echo gone" "$ku")" = gone ] ||
		fail "$LOOP in $ku after detach: $(cat "$T/probe.out")"
	probe "grep -c ' $LOOP ' /proc/self/mountinfo" "$ku" >/dev/null
	[ "$(cat "$T/probe.out")" = 0 ] || fail "a twin of $LOOP still mounted in $ku: $(cat "$T/probe.out")"
	[ "$(probe 'mknod /dev/dx c 1 3 && true </dev/dx && rm /dev/dx && mknod /dev/dx c 1 3 &&
		mv /dev/dx /dev/dy && true </dev/dy && test ! -e /dev/dx && rm /dev/dy &&
		test ! -e /dev/dy && echo TWIN_OK' "$ku")" = TWIN_OK ] ||
		fail "$ku: a twinned node made, removed, made again, renamed: $(cat "$T/probe.out")"
	pass "$RT: a user-namespace container in $mode: attach reads and detach unmounts the twin; its own twinned node is removed, made again and renamed as a plain one"
	;;
*) echo "# $ku not in kernel mode here ($mode): $(grep -m1 "container $ku: WARNING" "$T/devwld.log")" ;;
esac
touch "$T/urootfs/tmp/stop-$ku"
touch "$T/rootfs/tmp/stop-$id" "$T/rootfs/tmp/stop-$b" "$T/rootfs/tmp/stop-$b2" "$T/rootfs/tmp/stop-$k"
exit 0
