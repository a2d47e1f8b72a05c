# examples/rootless/README.md run as written by an unprivileged user (uid 65534, HOME and
# XDG_RUNTIME_DIR under $T, in a directory of its own): the policy of its section 1 (for
# uid 65534 instead of 1000) behind a root devwld with --allow-uid 65534; the busybox tar
# of examples/oci-hook/README.md; then each sh block: rootless runc, crun through the
# guide's hybrid-host wrapper, rootless podman with runc and with that wrapper. Only the
# profile's listenerPath (this test's devwld) is changed. Each container is
# /users/65534/ID, opens /dev/null, makes /dev/zero2 on its nodev /dev and reads it, and
# is refused mknod c 1:11 EPERM, as the guide says.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
EXAMPLES=$HERE/../../examples
for cmd in runc crun podman setpriv unshare; do
	command -v $cmd >/dev/null || skip "$cmd not installed (the guide runs runc, crun and podman)"
done
as_nobody unshare -Urm true 2>/dev/null || skip "uid 65534 cannot make user namespaces here"
chmod 755 "$T"
U=$T/user
G=$U/guide
mkdir -p "$G" "$U/run"
chmod 700 "$U/run"
chown -R 65534:65534 "$U"

as_user() {
	as_nobody env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$U" XDG_RUNTIME_DIR="$U/run" "$@"
}
guide_cleanup() {
	local st=$? pid
	as_user timeout 60 podman rm -af -t 0 >/dev/null 2>&1
	pid=$(cat "$U/run/libpod/tmp/pause.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
	(exit "$st")
	cleanup
}
trap guide_cleanup EXIT

# guide_block GUIDE LANG N: the Nth ```LANG block of examples/GUIDE/README.md.
guide_block() { md_block "examples/$1/README.md" "$2" "$3"; }
# run_block GUIDE N OUT: that sh block as the user would type it, in $G.
run_block() {
	guide_block "$1" sh "$2" >"$T/block-$1-$2.sh"
	[ -s "$T/block-$1-$2.sh" ] || fail "examples/$1/README.md has no sh block $2"
	as_user timeout 300 bash -c 'cd "$1" && . "$2"' sh "$G" "$T/block-$1-$2.sh" >"$3" 2>&1
}

guide_block rootless json 1 | sed 's|/users/1000|/users/65534|' >"$T/policy.json"
jq -e '.nodes[1].path == "/users/65534"' "$T/policy.json" >/dev/null ||
	fail "the guide's policy: $(cat "$T/policy.json")"
start_devwld --allow-uid 65534
jq --arg lp "$T/listen.sock" '.listenerPath = $lp' "$EXAMPLES/oci-hook/podman-profile.json" \
	>"$G/podman-profile.json" || fail "jq on the profile"
chown 65534:65534 "$G/podman-profile.json"
run_block oci-hook 1 "$T/rootfs.out" && [ -s "$G/busybox.tar" ] ||
	fail "the busybox tar as the user: $(cat "$T/rootfs.out")"

# served OUT ID WHO: the guide's outcomes in OUT, and devwld's for container ID.
served() {
	grep -qx 'null ok' "$1" && grep -qx ' 00 00 00 00' "$1" &&
		grep -q 'mknod: /dev/kmsg: Operation not permitted' "$1" ||
		fail "$3: $(cat "$1")"
	grep -q "container $2: node /users/65534/$2 (created)" "$T/devwld.log" ||
		fail "$3: not /users/65534/$2: $(grep "$2" "$T/devwld.log")"
	jq -e -s --arg id "$2" '
		any(.[]; .container == $id and .syscall == "mknodat" and .device == "c 1:5" and
			 .decision == "allow") and
		any(.[]; .container == $id and .syscall == "mknodat" and .device == "c 1:11" and
			 .decision == "deny" and .reason == "policy")' "$T/audit.jsonl" >/dev/null ||
		fail "$3: the audit of $2: $(grep "\"$2\"" "$T/audit.jsonl")"
	pass "$3: /users/65534/$2; /dev/null opens, /dev/zero2 made on its /dev and read, mknod c 1:11 refused (policy)"
}

# Each block ends with the refused mknod: its status is that of a failed command.
run_block rootless 1 "$T/runc.out"
served "$T/runc.out" demo "rootless runc (section 3)"
run_block rootless 2 "$T/crun.out"
served "$T/crun.out" cdemo "crun through bin/crun-hybrid (section 4)"

run_block rootless 3 "$T/podman.out"
[ "$(grep -cx 'null ok' "$T/podman.out")" = 2 ] || fail "podman: $(cat "$T/podman.out")"
ids=$(sed -n 's/^devwld: container \([0-9a-f]\{64\}\): node .*/\1/p' "$T/devwld.log")
[ "$(wc -w <<<"$ids")" = 2 ] || fail "podman's containers: $(cat "$T/devwld.log")"
who=("rootless podman --runtime runc" "rootless podman --runtime bin/crun-hybrid")
i=0
for id in $ids; do
	served "$T/podman.out" "$id" "${who[$i]} (section 5)"
	i=$((i + 1))
done
exit 0
