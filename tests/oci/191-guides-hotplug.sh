# The hot-plug block of examples/oci-hook/README.md (section 3), its commands run as
# written against this test's devwld and podman: a disk image on a loop device attached
# to a running podman container by an id prefix, seen by `podman exec`, detached and
# gone. Only what a test must own is changed: the profile's listenerPath, devwlctl's
# socket, podman's storage and cgroup parent; the loop device is noted to be detached at
# the end. The policy is the guide's policy.json with the two edits the section names.
# Then a near miss of the container's podman name: devwlctl names the container
# (devwlctl(1), CONTAINER NAMES), to root and to no other owner.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/clients.sh"

client_cmd podman podman
command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
[ -e /dev/loop-control ] || skip "no /dev/loop-control (loop driver not loaded)"
PODMAN=$(type -P podman)
G=$T/guide
D=$CLIENT_DIR
mkdir -p "$G"

# "allow b 7:* rw" on /containers, "container_rules": ["deny b 7:* rwm"], as the guide says.
jq '(.nodes[] | select(.path == "/containers") | .rules) += ["allow b 7:* rw"]
	| .containers.container_rules = ["deny b 7:* rwm"]' "$EXAMPLES/oci-hook/policy.json" \
	>"$T/policy.json" || fail "jq on the policy"
jq --arg lp "$T/listen.sock" '.listenerPath = $lp' "$EXAMPLES/oci-hook/podman-profile.json" \
	>"$G/podman-profile.json" || fail "jq on podman-profile.json"
start_devwld

pm() {
	timeout 60 "$PODMAN" --root "$D/root" --runroot "$D/run" --tmpdir "$D/tmp" \
		--storage-driver vfs --events-backend none "$@"
}
client_stop() { [ -d "$D/root" ] && pm rm -af -t 0 >/dev/null 2>&1; }
# c/image's blob cache goes to /var/lib/containers/cache whatever --root says.
client_note_paths /var/lib/containers /run/containers /run/libpod
[ -e /var/lib/containers ] || client_own /var/lib/containers/cache/blob-info-cache-v1.boltdb
pm info >/dev/null 2>"$T/info.err" || skip "podman cannot run here: $(cat "$T/info.err")"

# The guide's image, localhost/busybox, with the applets the block runs: the full recipe
# (a link per applet, some 400 processes) is tests/oci/146-guides.sh's.
r=$G/rootfs
mkdir -p "$r"/{bin,dev,proc,sys,tmp} && cp "$BUSYBOX" "$r/bin/busybox" || fail "the image's rootfs"
for a in sh sleep stat head ls; do ln -s busybox "$r/bin/$a" || fail "ln $a"; done
tar --owner=0 --group=0 -C "$r" -cf "$G/busybox.tar" . || fail "tar of the image"
pm import "$G/busybox.tar" busybox >"$T/import.out" 2>&1 || fail "podman import: $(cat "$T/import.out")"
echo "# the image imported, $SECONDS s in"

# --- the hot-plug block, in this shell (its id and loop are what the test checks) -------
sudo() { "$@"; }
podman() {
	local a args=()
	for a; do
		args+=("$a")
		[ "$a" = run ] && args+=(--cgroup-parent "/$CGROUP_PARENT")
	done
	pm "${args[@]}"
}
guide_hotplug oci-hook 4
unset -f sudo podman
grep -q "ls: $loop: No such file or directory" "$T/guide.out" ||
	fail "podman exec after the detach: $(cat "$T/guide.out")"
pass "the guide's hot-plug block: $loop attached by ${id:0:12}, read in podman exec, detached and gone ($SECONDS s in)"

# --- a near miss of its podman name --------------------------------------------------------
# The name podman gave it, as devwlctl containers shows it (its NAME column, last).
name=$(ctl containers | awk -v id="$id" '$1 == id && NF == 7 {print $7}')
[ -n "$name" ] && [ "$name" = "$(pm inspect --format '{{.Name}}' "$id")" ] ||
	fail "devwlctl containers names $id \"$name\": $(ctl containers)"
typo=${name%?}
ctl attach "$typo" "$loop" >"$T/typo.out" 2>&1 && fail "attach to $typo: $(cat "$T/typo.out")"
grep -qF "devwlctl: ENOENT: no container \"$typo\" of uid 0: did you mean $name (${id:0:12}...)?" \
	"$T/typo.out" || fail "devwlctl attach $typo said: $(cat "$T/typo.out")"
ctl detach "${name^^}" "$loop" >"$T/typo.out" 2>&1
grep -qF "did you mean $name (${id:0:12}...)?" "$T/typo.out" ||
	fail "devwlctl detach ${name^^} said: $(cat "$T/typo.out")"
ctl attach --owner 65534 "$typo" "$loop" >"$T/typo.out" 2>&1
grep -qF "no container \"$typo\" of uid 65534" "$T/typo.out" && ! grep -q "did you mean\|$name" "$T/typo.out" ||
	fail "uid 65534 was told of root's container: $(cat "$T/typo.out")"
pass "\"$typo\" and \"${name^^}\": devwlctl asks whether $name is meant; uid 65534 is told of none ($SECONDS s in)"
exit 0
